"""The state machine: random sequences of requests to the real handlers, each answer compared with the model.

Every step sends one request (a few for an upload) through the tests' door, in process, as one of several
identities, and settles it against the answers the model allows (tests/model/spec.py `Option`): the status,
for a 403 the violated rules, the fields the contract defines; then the model follows the answer. After every
step the invariants are read from the table and the bucket themselves (`invariants`). Each example works on an
artifact of its own, so the examples of one run share moto without seeing each other.
"""

from __future__ import annotations

import hashlib
import itertools
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from arca import wiring
from infra.schema import create_table_request
from local.events import Reply
from tests.door import sha256
from tests.helpers import HandlerApi
from tests.model import invariants
from tests.model.pending import pending
from tests.model.registry import Registry
from tests.model.spec import GLOBS, IDENTITIES, Content, Options, Policy, Promotion, Retention

BLOBS = (b"alpha\n", b"bravo\n", b"charlie\n", b"delta\n")
ALIASES = ("prod", "staging")
# A version is drawn as a pick among the versions there are, and one more (which does not exist): see `pick`.
VERSIONS = st.integers(min_value=0, max_value=7)
TARGETS = st.one_of(VERSIONS, st.just("LATEST"))
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


def acting(identity: str | None) -> HandlerApi:
    api = HandlerApi()
    api.identity = identity
    return api


class ArcaMachine(RuleBasedStateMachine):
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

    @initialize(blobs=st.lists(st.integers(0, len(BLOBS) - 1), max_size=3))
    def published(self, blobs: list[int]) -> None:
        """Start from a few published versions (possibly none), so that short runs reach aliases and policies."""
        for blob in blobs:
            self.upload(blob)
            self.publish(blob, None, None, force=False)

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
    )
    def put_latest(self, blob: int, content_type: str | None, build: str | None) -> None:
        content, body = self.content(blob, content_type, build)
        reply = self.local.call("PUT", f"{self.base}/latest", body)
        self.settle("PUT latest", self.model.put_latest(content), reply)

    @rule(
        blob=st.integers(0, len(BLOBS) - 1),
        content_type=st.sampled_from([None, "text/plain"]),
        build=st.sampled_from([None, "1"]),
        force=st.booleans(),
    )
    def publish(self, blob: int, content_type: str | None, build: str | None, force: bool) -> None:
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

    # Aliases.

    @rule(
        alias=st.sampled_from(ALIASES),
        primary=TARGETS,
        secondary=st.one_of(st.none(), TARGETS),
        weight=st.sampled_from([0, 10, 50, 90]),
        who=WHO,
    )
    def set_alias(self, alias: str, primary: Any, secondary: Any, weight: int, who: str) -> None:
        primary, secondary = self.pick(primary), self.pick(secondary)
        body: dict[str, Any] = {"version": primary}
        if secondary is not None:
            body.update(secondary_version=secondary, secondary_version_weight=weight)
        reply = self.apis[who].call("PUT", f"{self.base}/aliases/{alias}", body)
        options = self.model.set_alias(alias, primary, secondary, weight, IDENTITIES[who])
        self.settle(f"set {alias} as {who}", options, reply)

    @rule(alias=st.sampled_from(ALIASES), who=WHO)
    def delete_alias(self, alias: str, who: str) -> None:
        reply = self.apis[who].call("DELETE", f"{self.base}/aliases/{alias}")
        self.settle(f"delete {alias} as {who}", self.model.delete_alias(alias, IDENTITIES[who]), reply)

    @rule(alias=st.sampled_from(ALIASES), back=st.one_of(st.none(), st.integers(1, 8)), who=WHO)
    def rollback(self, alias: str, back: int | None, who: str) -> None:
        """Back to the revision before (None), or `back` revisions before the current one."""
        current = len(self.model.aliases.get(alias, []))
        to = None if back is None or current == 0 else max(1, current - back)
        if to is not None and to >= current:
            to = None
        body = {} if to is None else {"to_revision": to}
        reply = self.apis[who].call("POST", f"{self.base}/aliases/{alias}/rollback", body)
        self.settle(f"roll {alias} back to {to} as {who}", self.model.rollback(alias, to, IDENTITIES[who]), reply)

    # Policies and promotions.

    @rule(
        alias=st.sampled_from(ALIASES),
        globs=st.sampled_from(sorted(GLOBS)),
        tagged=st.booleans(),
        approvals=st.sampled_from([0, 1, 2]),
        who=WHO,
    )
    def put_policy(self, alias: str, globs: str, tagged: bool, approvals: int, who: str) -> None:
        if globs == "star" and pending("no-lock-out"):
            globs = "anyone"  # the unfixed code reads a lone * as a segment: nobody; see tests/model/pending.py
        policy = Policy(GLOBS[globs], (("qa", self.ok),) if tagged else (), approvals)
        body = {
            "allowed_principals": list(policy.allowed),
            "require_tags": dict(policy.require_tags),
            "approvals": approvals,
        }
        reply = self.apis[who].call("PUT", f"{self.base}/aliases/{alias}/policy", body)
        self.settle(f"policy of {alias} as {who}", self.model.put_policy(alias, policy, IDENTITIES[who]), reply)

    @rule(alias=st.sampled_from(ALIASES), who=WHO)
    def delete_policy(self, alias: str, who: str) -> None:
        reply = self.apis[who].call("DELETE", f"{self.base}/aliases/{alias}/policy")
        self.settle(f"remove the policy of {alias} as {who}", self.model.delete_policy(alias, IDENTITIES[who]), reply)

    @rule(alias=st.sampled_from(ALIASES), number=VERSIONS, who=WHO)
    def request_promotion(self, alias: str, number: int, who: str) -> None:
        number = self.pick(number)
        reply = self.apis[who].call("POST", f"{self.base}/aliases/{alias}/promotions", {"version": number})
        options = self.model.request_promotion(alias, number, IDENTITIES[who])
        self.settle(f"promote {number} to {alias} as {who}", options, reply)

    @precondition(lambda self: self.model.promotions)
    @rule(which=st.integers(0, 7), who=WHO)
    def approve(self, which: int, who: str) -> None:
        promotion = self.promotion(which)
        path = f"{self.base}/aliases/{promotion.alias}/promotions/{promotion.id}/approve"
        reply = self.apis[who].call("POST", path, {})
        self.settle(f"approve {promotion.id} as {who}", self.model.approve(promotion, IDENTITIES[who]), reply)
        if reply.status == 200:
            self.check_approved_event(promotion.id, IDENTITIES[who], promotion.requested_by)

    @precondition(lambda self: self.model.promotions)
    @rule(which=st.integers(0, 7), who=WHO)
    def reject(self, which: int, who: str) -> None:
        promotion = self.promotion(which)
        path = f"{self.base}/aliases/{promotion.alias}/promotions/{promotion.id}/reject"
        reply = self.apis[who].call("POST", path, {})
        self.settle(f"reject {promotion.id} as {who}", self.model.reject(promotion, IDENTITIES[who]), reply)

    def promotion(self, which: int) -> Promotion:
        """A pending promotion when there is one (most are applied at once), else any."""
        pending_ones = [p for p in self.model.promotions if self.model.promotion_state(p) == "pending"]
        found = pending_ones or self.model.promotions
        return found[which % len(found)]

    def check_approved_event(self, promotion_id: str, approver: str, requester: str) -> None:
        """The promotion.approved event of that approval names the approver as `by`."""
        events = self.events()
        found = [e for e in events if e["type"] == "promotion.approved" and e["detail"]["id"] == promotion_id]
        assert found, f"no promotion.approved event for {promotion_id}"
        by = found[-1]["by"]
        if by != approver and by == requester and pending("approved-by"):
            self.world.tolerated["approved-by"] += 1
            return
        assert by == approver, f"promotion.approved: by {by!r}, the approver is {approver!r}"

    def events(self) -> list[dict[str, Any]]:
        """The artifact's events since the last read."""
        found: list[dict[str, Any]] = []
        token = None
        while True:
            query = {"limit": "1000", **({"after": self.last_event} if self.last_event else {})}
            if token:
                query = {"limit": "1000", "next_token": token}
            reply = self.local.call("GET", f"{self.base}/events", query=query)
            assert reply.status == 200, reply.body
            found += reply.body["events"]
            token = reply.body["next_token"]
            if not token:
                break
        if found:
            self.last_event = found[-1]["id"]
        return found

    # Retention.

    @rule(
        keep_last=st.integers(1, 3),
        keep_days=st.sampled_from([None, 1, 2]),
        keep_tag=st.sampled_from([None, "ok", ""]),
        window=st.sampled_from([0, 1, 2, 5]),
        expire_after=st.sampled_from([0, 1]),
    )
    def put_retention(
        self, keep_last: int, keep_days: int | None, keep_tag: str | None, window: int, expire_after: int
    ) -> None:
        keep_tags = () if keep_tag is None else (("qa", self.tag_value(keep_tag) or ""),)
        policy = Retention(keep_last, keep_days, keep_tags, window, expire_after)
        body = {
            "keep_last": keep_last,
            "keep_tags": [f"{k}:{v}" for k, v in keep_tags],
            "rollback_window": window,
            "expire_after_days": expire_after,
            **({"keep_days": keep_days} if keep_days is not None else {}),
        }
        reply = self.local.call("PUT", f"{self.base}/retention", body)
        self.settle("PUT retention", self.model.put_retention(policy), reply)

    @rule()
    def delete_retention(self) -> None:
        reply = self.local.call("DELETE", f"{self.base}/retention")
        self.settle("DELETE retention", self.model.delete_retention(), reply)

    @rule()
    def apply_retention(self) -> None:
        reply = self.local.call("POST", f"{self.base}/retention/apply")
        self.settle("apply retention", self.model.apply_retention(), reply)

    @precondition(lambda self: self.model.retention is not None)
    @rule()
    def preview_retention(self) -> None:
        reply = self.local.call("GET", f"{self.base}/retention/preview", query={"limit": "100"})
        assert reply.status == 200, reply.body
        self.model.check_preview(reply.body["versions"])

    @rule()
    def a_day_passes(self) -> None:
        self.clock.next_day()
        self.model.day += 1

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
