"""The steps every state machine shares: the door (requests to the real handlers, as one of several
identities), the settling of each answer against the model, the steps on content, versions and tags, the reads,
and the invariants after every step.

Each step sends one request (a few for an upload) through the tests' door, in process, and settles it against
the answers the model allows (tests/model/spec.py `Option`): the status, for a 403 the violated rules, the
fields the contract defines; then the model follows the answer. After every step the invariants are read from
the table and the bucket themselves (tests/model/invariants.py). Each example starts on an empty table and
bucket, with an artifact of its own.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from arca import wiring
from infra.schema import create_table_request
from local.events import Reply
from tests.door import sha256
from tests.helpers import HandlerApi
from tests.model import invariants
from tests.model.registry import Registry
from tests.model.spec import IDENTITIES, Content, Options

BLOBS = (b"alpha\n", b"bravo\n", b"charlie\n", b"delta\n", b"echo\n", b"foxtrot\n")
ALIASES = ("prod", "staging")
# A version is drawn as a pick among the versions there are, and one more (which does not exist): see `pick`.
VERSIONS = st.integers(min_value=0, max_value=7)
TARGETS = st.one_of(VERSIONS, st.just("LATEST"))
# The first value of each is what Hypothesis tries first and shrinks towards: a guarded prod that others can
# request and approve, so that short runs reach approvals.
POLICY_GLOBS = st.sampled_from(["anyone", "users", "alice+bob", "alice", "star"])
APPROVALS = st.sampled_from([1, 0, 2])
UPLOAD_FIRST = st.sampled_from([True, True, True, False])
WHO = st.sampled_from(sorted(IDENTITIES))
# Tag writes, as (key, value): "ok" stands for the example's own passing value (so that registry-wide searches
# see only this example's versions); None removes the key.
TAG_WRITES = st.sampled_from([("qa", "ok"), ("qa", ""), ("qa", None), ("env", "prod"), ("env", None)])


class Clock:
    """The services' clock: a millisecond a reading, and 25 hours a day (so days never fall on a boundary)."""

    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=1)
        return self.now

    def next_day(self) -> None:
        self.now += timedelta(hours=25)


@dataclass
class World:
    """What the examples of one run share: moto's clients, fresh artifact names, what has been hashed, and the
    pending rules the unfixed code was seen to break."""

    aws: SimpleNamespace
    names: itertools.count[int] = field(default_factory=itertools.count)
    hashed: dict[tuple[str, str], str] = field(default_factory=dict)
    tolerated: Counter[str] = field(default_factory=Counter)
    # Each kind of request by the status it got, and other events worth counting (expiries): what a run covered.
    seen: Counter[str] = field(default_factory=Counter)

    def coverage(self) -> str:
        return ", ".join(f"{k}: {v}" for k, v in sorted(self.seen.items()))


def acting(identity: str | None) -> HandlerApi:
    api = HandlerApi()
    api.identity = identity
    return api


class Steps(RuleBasedStateMachine):
    """The door, the settling of answers, the steps on content, versions and tags, the reads, and the
    invariants: what every machine shares (tests/model/machine.py composes them)."""

    def __init__(self, world: World) -> None:
        super().__init__()
        self.world = world
        self.run = next(world.names)
        self.name = f"model/m{self.run}"
        self.ok = f"passed-{self.run}"
        self.model = Registry()
        self.local = acting("arca:local")
        self.apis = {who: acting(arn) for who, arn in IDENTITIES.items()}
        self.clock = Clock()
        wiring.services().policy.clock = self.clock
        self.last_event: str | None = None

    # The door.

    @property
    def base(self) -> str:
        return f"/artifacts/{self.name}"

    def settle(self, what: str, options: Options, reply: Reply) -> Any:
        """The first option the answer matches: its effect is applied to the model. AssertionError otherwise."""
        if reply.status >= 400:
            error = reply.body["error"]
            assert error["code"] and error["message"] and error["request_id"], reply.body
        kind = re.sub(r"\b([0-9a-f]{24}|\d+|None)\b", "N", what.split(" as ")[0])
        self.world.seen[f"{kind} {reply.status}"] += 1
        misses = []
        for option in options:
            if option.status != reply.status:
                continue
            if option.status == 403:
                rules = {v["rule"] for v in reply.body["error"]["violations"]}
                if not rules or not option.must <= rules <= option.must | option.may:
                    misses.append(f"rules {sorted(rules)} vs must {sorted(option.must)} may {sorted(option.may)}")
                    continue
            if option.check is not None:
                try:
                    option.check(reply.body)
                except AssertionError as failed:
                    misses.append(str(failed))
                    continue
            if option.effect is not None:
                option.effect(reply.body)
            if option.pending:
                self.world.tolerated[option.pending] += 1
            return reply.body
        allowed = ", ".join(f"{o.status}{' ' + o.why if o.why else ''}" for o in options)
        raise AssertionError(f"{what}: answered {reply.status} {reply.body}; the model allows {allowed}; {misses}")

    def content(self, blob: int, content_type: str | None, build: str | None) -> tuple[Content, dict[str, Any]]:
        data = BLOBS[blob]
        body: dict[str, Any] = {"sha256": sha256(data), "size": len(data)}
        if content_type:
            body["content_type"] = content_type
        if build:
            body["metadata"] = {"build": build}
        content = Content(
            sha256(data),
            len(data),
            content_type or "application/octet-stream",
            (("build", build),) if build else (),
        )
        return content, body

    def pick(self, drawn: Any) -> Any:
        """A drawn pick as a version number: 1 to the newest, or the next (no such version); LATEST as itself.
        Most requests then name versions that exist, as a user's do."""
        if not isinstance(drawn, int):
            return drawn
        return drawn % (self.model.newest + 1) + 1

    def tag_value(self, value: str | None) -> str | None:
        return self.ok if value == "ok" else value

    # Uploads, LATEST, publishing.

    @rule(blob=st.integers(0, len(BLOBS) - 1))
    def upload(self, blob: int) -> None:
        """POST …/uploads, then the bytes to the presigned URL when they are not stored: also a tree-less upload,
        content that no LATEST or version may ever reference."""
        data = BLOBS[blob]
        reply = self.local.call("POST", f"{self.base}/uploads", {"sha256": sha256(data), "size": len(data)})
        body = self.settle("upload", self.model.upload(sha256(data)), reply)
        if not body["exists"]:
            from tests.door import put_blob

            put_blob(body["upload"], data)

    @rule(
        blob=st.integers(0, len(BLOBS) - 1),
        content_type=st.sampled_from([None, "text/plain"]),
        build=st.sampled_from([None, "1"]),
        upload=UPLOAD_FIRST,
    )
    def put_latest(self, blob: int, content_type: str | None, build: str | None, upload: bool = False) -> None:
        """PUT …/latest, after the upload (as a client does) or on its own (content perhaps never uploaded)."""
        if upload:
            self.upload(blob)
        content, body = self.content(blob, content_type, build)
        reply = self.local.call("PUT", f"{self.base}/latest", body)
        self.settle("PUT latest", self.model.put_latest(content), reply)

    @rule(
        blob=st.integers(0, len(BLOBS) - 1),
        content_type=st.sampled_from([None, "text/plain"]),
        build=st.sampled_from([None, "1"]),
        force=st.booleans(),
        upload=UPLOAD_FIRST,
    )
    def publish(
        self, blob: int, content_type: str | None, build: str | None, force: bool, upload: bool = False
    ) -> None:
        """A one-step publish, after the upload or on its own."""
        if upload:
            self.upload(blob)
        content, body = self.content(blob, content_type, build)
        reply = self.local.call("POST", f"{self.base}/versions", {**body, **({"force": True} if force else {})})
        self.settle("publish", self.model.publish(content, force=force), reply)

    @rule(force=st.booleans())
    def publish_latest(self, force: bool) -> None:
        reply = self.local.call("POST", f"{self.base}/versions", {"force": True} if force else None)
        self.settle("publish LATEST", self.model.publish(None, force=force), reply)

    # Versions and tags.

    @rule(number=VERSIONS)
    def delete_version(self, number: int) -> None:
        number = self.pick(number)
        reply = self.local.call("DELETE", f"{self.base}/versions/{number}")
        self.settle(f"delete version {number}", self.model.delete_version(number), reply)

    @rule(number=VERSIONS)
    def restore_version(self, number: int) -> None:
        number = self.pick(number)
        reply = self.local.call("POST", f"{self.base}/versions/{number}/restore")
        self.settle(f"restore version {number}", self.model.restore_version(number), reply)

    @rule(number=VERSIONS, write=TAG_WRITES)
    def tag_version(self, number: int, write: tuple[str, str | None]) -> None:
        number = self.pick(number)
        key, value = write[0], self.tag_value(write[1])
        reply = self.local.call("PATCH", f"{self.base}/versions/{number}", {"tags": {key: value}})
        self.settle(f"tag version {number}", self.model.tag_version(number, key, value), reply)

    # Reads.

    @precondition(lambda self: self.model.exists)
    @rule(write=TAG_WRITES, include_deleted=st.booleans())
    def search_by_tag(self, write: tuple[str, str | None], include_deleted: bool) -> None:
        """The artifact's listing filtered by a tag, and (for this example's own value) the registry-wide
        search: each answers the versions carrying the tag, never an expired one."""
        key, value = write[0], self.tag_value(write[1]) or ""
        query = {"tag": f"{key}:{value}", "include_deleted": str(include_deleted).lower(), "limit": "100"}
        listed = self.local.call("GET", f"{self.base}/versions", query=query)
        assert listed.status == 200, listed.body
        must, may = self.model.tag_hits(key, value, include_deleted=include_deleted)
        got = {v["version"] for v in listed.body["versions"]}
        assert must <= got <= must | may, f"versions tagged {key}:{value}: {sorted(got)}, the model says {must}"
        if got & may:
            self.world.tolerated["expired-no-tags"] += 1
        if value == self.ok:
            found = self.local.call("GET", "/versions", query={"tag": f"{key}:{value}", "limit": "100"})
            assert found.status == 200, found.body
            must, may = self.model.tag_hits(key, value, include_deleted=True)
            got = {v["version"] for v in found.body["versions"] if v["name"] == self.name}
            assert must <= got <= must | may, f"search {key}:{value}: {sorted(got)}, the model says {must}"

    @precondition(lambda self: self.model.exists)
    @rule(number=VERSIONS)
    def read_version(self, number: int) -> None:
        number = self.pick(number)
        reply = self.local.call("GET", f"{self.base}/versions/{number}")
        version = self.model.versions.get(number)
        if version is None:
            assert reply.status == 404, reply.body
            return
        assert reply.status == 200, reply.body
        if version.expired:
            assert reply.body == {"version": number, "expired": True}, reply.body
            return
        body = reply.body
        assert (body["sha256"], body["deleted"]) == (version.content.sha256, version.deleted), body
        assert body["tags"] == version.tags, f"tags {body['tags']}, the model says {version.tags}"
        assert sorted(body["aliases"]) == self.model.pinned_by(number), body["aliases"]

    @invariant()
    def consistent(self) -> None:
        invariants.check(self)

    def teardown(self) -> None:
        """Start the next example on an empty table and bucket: moto reads a whole table for every Query and
        copies it for every transaction, so a table that kept every example's items would slow each step."""
        aws = self.world.aws
        aws.dynamodb.delete_table(TableName=aws.table)
        aws.dynamodb.create_table(**create_table_request(aws.table, stream=False))
        listed = aws.s3.list_objects_v2(Bucket=aws.bucket).get("Contents", [])
        if listed:
            objects = [{"Key": o["Key"]} for o in listed]
            aws.s3.delete_objects(Bucket=aws.bucket, Delete={"Objects": objects})


def blob_hash(world: World, key: str, etag: str) -> str:
    """The SHA-256 of the object at `key` as S3 holds it now (read once per ETag)."""
    if (key, etag) not in world.hashed:
        data = world.aws.s3.get_object(Bucket=world.aws.bucket, Key=key)["Body"].read()
        world.hashed[(key, etag)] = hashlib.sha256(data).hexdigest()
    return world.hashed[(key, etag)]
