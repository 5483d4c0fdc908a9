"""The invariants, read from the table and the bucket themselves after every step (consistent Queries of the
example's partitions, and the bucket's listing), and compared with the model:

- LATEST and every version hold what the model says (content, deleted, expired, tags); the numbers are 1 to
  the newest, none skipped or reused; an expired version carries no tags and no tag row; a tag row exists
  exactly while its tag does;
- every live alias is the model's (targets, weight, revision) and points at no deleted version;
- every blob count equals the references to its content (versions not expired, and LATEST), and no collection
  is left marked;
- every committed version and LATEST has its bytes in S3 with the right SHA-256; bytes nobody references are
  there exactly when the model says they were uploaded and not collected;
- resolving an alias answers one of its targets, with that target's content, on the side it says.
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.types import TypeDeserializer

from arca.adapters import keys
from tests.door import sha256
from tests.model.pending import pending

if TYPE_CHECKING:
    from tests.model.steps import Steps

_deserialize = TypeDeserializer().deserialize


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, set)):
        return [_plain(v) for v in value]
    return value


def query(machine: Steps, pk: str) -> list[dict[str, Any]]:
    aws = machine.world.aws
    found: list[dict[str, Any]] = []
    start: dict[str, Any] | None = None
    while True:
        extra = {"ExclusiveStartKey": start} if start else {}
        page = aws.dynamodb.query(
            TableName=aws.table,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": pk}},
            ConsistentRead=True,
            **extra,
        )
        found += [{k: _plain(_deserialize(v)) for k, v in item.items()} for item in page["Items"]]
        start = page.get("LastEvaluatedKey")
        if not start:
            return found


def check(machine: Steps) -> None:
    versions, latest = _artifact(machine)
    _aliases(machine, versions)
    references = _counts(machine, versions, latest)
    _tag_rows(machine, versions)
    _bytes(machine, references)
    _resolves(machine)


def _artifact(machine: Steps) -> tuple[dict[int, dict[str, Any]], dict[str, Any] | None]:
    model = machine.model
    items = query(machine, machine.name)
    latest = next((i for i in items if i["sk"] == "LATEST"), None)
    versions = {int(i["sk"]): i for i in items if i["sk"] != "LATEST"}
    if model.latest is None:
        assert latest is None, f"LATEST exists: {latest}"
    else:
        assert latest is not None, "no LATEST"
        held = (latest["sha256"], latest["size"], latest["content_type"], latest.get("metadata") or {})
        wanted = model.latest
        assert held == (wanted.sha256, wanted.size, wanted.content_type, dict(wanted.metadata)), f"LATEST {held}"
        assert int(latest.get("newest", 0)) == model.newest, f"newest {latest.get('newest')}, model {model.newest}"
    assert sorted(versions) == list(range(1, model.newest + 1)), f"version numbers {sorted(versions)}"
    assert sorted(versions) == sorted(model.versions), f"versions {sorted(versions)}, model {sorted(model.versions)}"
    for number, item in versions.items():
        version = model.versions[number]
        assert item["sha256"] == version.content.sha256, f"version {number}: sha256 {item['sha256']}"
        expired = bool(item.get("expired"))
        assert (bool(item.get("deleted")), expired) == (version.deleted, version.expired), (
            f"version {number}: deleted {item.get('deleted')}, expired {expired}; model {version}"
        )
        tags = item.get("tags") or {}
        if expired and pending("expired-no-tags"):
            continue
        assert tags == version.tags, f"version {number}: tags {tags}, model {version.tags}"
    return versions, latest


def _aliases(machine: Steps, versions: dict[int, dict[str, Any]]) -> None:
    model = machine.model
    items = {i["sk"]: i for i in query(machine, f"__{machine.name}-alias") if i["sk"] != "~link"}
    live = {a: i for a, i in items.items() if not i.get("deleted")}
    expected = {a for a in model.aliases if model.live_alias(a) is not None}
    assert set(live) == expected, f"live aliases {sorted(live)}, model {sorted(expected)}"
    for alias, item in live.items():
        revision = model.live_alias(alias)
        assert revision is not None
        held = (item["version"], item.get("secondary_version"), item.get("secondary_version_weight"))
        assert held == revision.serves(), f"alias {alias}: {held}, model {revision.serves()}"
        assert item["revision"] == len(model.aliases[alias]), f"alias {alias}: revision {item['revision']}"
        for target in (item["version"], item.get("secondary_version")):
            if isinstance(target, int):
                assert not versions[target].get("deleted"), f"alias {alias} points at deleted version {target}"


def _counts(machine: Steps, versions: dict[int, dict[str, Any]], latest: dict[str, Any] | None) -> dict[str, int]:
    """Each blob count against the references the table holds; returns those references."""
    references: dict[str, int] = {}
    for item in versions.values():
        if not item.get("expired"):
            references[item["sha256"]] = references.get(item["sha256"], 0) + 1
    if latest is not None:
        references[latest["sha256"]] = references.get(latest["sha256"], 0) + 1
    counts = {i["sk"]: i for i in query(machine, f"__{machine.name}-blobs")}
    for digest in set(references) | set(counts):
        held = int(counts.get(digest, {}).get("refs", 0))
        assert held == references.get(digest, 0), f"blob count of {digest[:12]}: {held}, references {references}"
        assert "collecting" not in counts.get(digest, {}), f"blob count of {digest[:12]} left collecting"
    assert references == {k: v for k, v in machine.model.references().items() if v}, "references"
    return references


def _tag_rows(machine: Steps, versions: dict[int, dict[str, Any]]) -> None:
    rows = {
        (int(i["version"]), i["tag"], i["value"])
        for i in query(machine, f"__{machine.name}-tags")
        if i["sk"].startswith("v#")
    }
    expected = set()
    for number, item in versions.items():
        if item.get("expired") and pending("expired-no-tags"):
            rows = {r for r in rows if r[0] != number}
            continue
        expected |= {(number, k, v) for k, v in (item.get("tags") or {}).items()}
    assert rows == expected, f"tag rows {sorted(rows)}, tags {sorted(expected)}"


def _bytes(machine: Steps, references: dict[str, int]) -> None:
    from tests.model.steps import BLOBS, blob_hash

    aws = machine.world.aws
    prefix = keys.blob_prefix(machine.name)
    listed = aws.s3.list_objects_v2(Bucket=aws.bucket, Prefix=prefix).get("Contents", [])
    objects = {o["Key"]: o["ETag"] for o in listed}
    for data in BLOBS:
        digest = sha256(data)
        key = keys.blob_key(machine.name, digest)
        if references.get(digest):
            assert key in objects, f"{digest[:12]} is referenced ({references[digest]}) and not in S3"
            assert blob_hash(machine.world, key, objects[key]) == digest, f"{key} holds other bytes"
        else:
            stored = digest in machine.model.stored
            assert (key in objects) == stored, f"{digest[:12]}: in S3 {key in objects}, the model says {stored}"


def _resolves(machine: Steps) -> None:
    model = machine.model
    for alias in sorted(model.aliases):
        revision = model.live_alias(alias)
        if revision is None:
            continue
        reply = machine.local.call("GET", f"{machine.base}/resolve/{alias}", query={"routing_key": "model"})
        assert reply.status == 200, f"resolve {alias}: {reply.status} {reply.body}"
        body = reply.body
        assert body["version"] in revision.targets(), f"resolve {alias}: {body['version']}, model {revision}"
        content = model.content_of(body["version"])
        assert content is not None and body["sha256"] == content.sha256, f"resolve {alias}: {body}"
        side = "primary" if body["version"] == revision.primary else "secondary"
        assert body["route"] == side, f"resolve {alias}: route {body['route']} for {body['version']}"
        if not revision.weight:
            assert side == "primary", f"resolve {alias}: the secondary at weight 0"
