"""Crash points: every multi-call write, failed after each of its AWS calls in turn, then run again.

A botocore `after-call` hook on the service's own clients counts the calls and raises on the k-th, after
AWS has applied it (the worst case: the change is made, the answer is lost). The operation is then sent
again (with the same Idempotency-Key where the route takes one), and the stored state must satisfy the
invariants: gapless unique version numbers, every referenced blob stored without the upload tag (no expiry),
no alias on a missing or deleted version, `pinned_by` equal to the live aliases, no orphan rows, no mark left
behind, and the re-run completes with exactly one change.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

import pytest
from boto3.dynamodb.types import TypeDeserializer
from botocore.exceptions import EndpointConnectionError

from tests.helpers import HandlerApi, hooked

NAME = "team/app"
KEY = {"Idempotency-Key": "crash-sweep"}
# The AWS calls each swept operation makes from the given state; a test below checks the counts, so the
# sweep covers every call, and a new call cannot escape it.
# publish: single-PUT content is found by its HeadObject, with no Query of multipart layouts; purge: one Query
# more, of the (empty) uploads partition, and five more for the retention policy, the blob counts, the consumer
# leases, the OCI upload sessions and the OCI referrers waiting for their subject; prune: no Query of the
# consumer leases (no version was ever leased); alias: the policy's GetItem (a new alias has no item to say it
# has none; an alias that has one reads no policy); policy: LATEST, the policy, the alias it marks, and its
# transaction.
CALLS = {"alias": 7, "policy": 4, "prune": 4, "publish": 7, "purge": 25, "rollback": 5, "tag": 2}
_deserialize = TypeDeserializer().deserialize


def given_an_artifact_with_aliases(api: HandlerApi) -> dict[str, Any]:
    for data in (b"one", b"two", b"three"):
        assert api.publish(NAME, data).status == 201
    assert api.call("PUT", f"/artifacts/{NAME}/aliases/prod", {"version": 2}).status == 201
    assert api.call("PUT", f"/artifacts/{NAME}/aliases/prod", {"version": 3}).status == 200
    assert api.call("PATCH", f"/artifacts/{NAME}/versions/1", {"tags": {"env": "old", "gone": "soon"}}).status == 200
    assert api.call("PATCH", f"/artifacts/{NAME}", {"tags": {"team": "core"}}).status == 200
    return {"sha256": api.upload(NAME, b"four"), "size": 4}


OPERATIONS: dict[str, Any] = {
    "publish": lambda blob: ("POST", f"/artifacts/{NAME}/versions", blob, KEY),
    "alias": lambda blob: (
        "PUT",
        f"/artifacts/{NAME}/aliases/beta",
        {"version": 1, "secondary_version": 2, "secondary_version_weight": 10},
        KEY,
    ),
    "rollback": lambda blob: ("POST", f"/artifacts/{NAME}/aliases/prod/rollback", {}, KEY),
    "policy": lambda blob: ("PUT", f"/artifacts/{NAME}/aliases/prod/policy", {"require_tags": {"env": "old"}}, None),
    "prune": lambda blob: ("POST", f"/artifacts/{NAME}/prune", {"keep_last": 1}, KEY),
    "purge": lambda blob: ("DELETE", f"/artifacts/{NAME}", None, None),
    "tag": lambda blob: ("PATCH", f"/artifacts/{NAME}/versions/1", {"tags": {"env": "new", "gone": None}}, None),
}


@contextmanager
def crash_after_call(k: int) -> Iterator[list[str]]:
    """Raise a connection error right after the k-th AWS call of the services' clients (0: never)."""
    calls: list[str] = []

    def after(event_name: str, **_: Any) -> None:
        calls.append(event_name.rsplit(".", 1)[-1])
        if len(calls) == k:
            raise EndpointConnectionError(endpoint_url=f"crash after call {k} ({calls[-1]})")

    with hooked("after-call.*.*", after):
        yield calls


def send(api: HandlerApi, request: tuple[str, str, Any, dict[str, str] | None], query: dict[str, str] | None) -> Any:
    method, path, body, headers = request
    return api.call(method, path, body, headers=headers, query=query)


def stored(aws: SimpleNamespace) -> list[dict[str, Any]]:
    items = aws.dynamodb.scan(TableName=aws.table, ConsistentRead=True)["Items"]
    return [{k: _deserialize(v) for k, v in item.items()} for item in items]


def check_invariants(aws: SimpleNamespace, *, crashed: bool = False) -> dict[str, Any]:
    """Assert the registry's invariants over everything stored; returns a digest for the per-operation checks.

    After a crash (`crashed`) a purge may have stopped midway: the artifact then keeps its mark (every
    other write is refused until a purge finishes), and only what the deletion order guarantees holds:
    history goes before aliases, aliases before versions, rows before blobs.
    """
    items = stored(aws)
    by_pk: dict[str, dict[str, dict[str, Any]]] = {}
    for item in items:
        by_pk.setdefault(item["pk"], {})[item["sk"]] = item
    latest = by_pk[NAME]["LATEST"]
    versions = {int(sk): v for sk, v in by_pk.get(NAME, {}).items() if sk != "LATEST"}
    aliases = by_pk.get(f"__{NAME}-alias", {})
    history = {sk: i for sk, i in by_pk.get(f"__{NAME}-history", {}).items() if i["kind"] == "alias-history"}
    timed = {sk: i for sk, i in by_pk.get(f"__{NAME}-history", {}).items() if i["kind"] == "alias-history-time"}
    assert len(history) + len(timed) == len(by_pk.get(f"__{NAME}-history", {}))
    live = {a: item for a, item in aliases.items() if not item.get("deleted")}
    objects = {o["Key"] for o in aws.s3.list_objects_v2(Bucket=aws.bucket).get("Contents", [])}
    if "purging" in latest:
        assert crashed, "a purge mark was left behind"
        assert {sk.split("#")[0] for sk in history} <= set(aliases), "history without its alias"
        assert {sk.split("@")[0] for sk in timed} <= set(aliases), "time rows without their alias"
        for alias in live.values():
            assert all(int(t) in versions for t in (alias.get("version"), alias.get("secondary_version")) if t)
        assert not aliases or len(versions) == int(latest["version_count"]), "versions deleted before aliases"
        for version in versions.values():
            assert f"artifacts/{NAME}/_blobs/{version['sha256']}" in objects, "a blob deleted before its version"
        return {"purging": True}
    if latest.get("purged"):
        assert not versions and not aliases and not history and not timed, "rows survived the purge"
        assert not by_pk.get(f"__{NAME}-tags"), "tag rows survived the purge"
        assert not any(o.startswith(f"artifacts/{NAME}/") for o in objects)
        assert ("__names", NAME) not in {(i["pk"], i["sk"]) for i in items}
        return {"purged": True}
    # Gapless, unique numbers, counted on LATEST
    assert sorted(versions) == list(range(1, int(latest["newest"]) + 1))
    assert int(latest["version_count"]) == len(versions)
    assert int(latest["deleted_count"]) == sum(1 for v in versions.values() if v["deleted"])
    # Every version's content is stored, and never carries the upload tag the lifecycle rule expires
    for item in (*versions.values(), latest):
        key = f"artifacts/{NAME}/_blobs/{item['sha256']}"
        assert key in objects
        assert aws.s3.get_object_tagging(Bucket=aws.bucket, Key=key)["TagSet"] == [], f"{key} would expire"
    # No alias on a missing or deleted version; pins are exactly the live aliases
    pins: dict[int, set[str]] = {n: set() for n in versions}
    for name, alias in live.items():
        for target in (alias.get("version"), alias.get("secondary_version")):
            if isinstance(target, int) or (target is not None and str(target).isdigit()):
                number = int(target)
                assert number in versions and not versions[number]["deleted"], (name, number)
                pins[number].add(name)
    assert {n: set(v.get("pinned_by") or ()) for n, v in versions.items()} == pins
    assert int(latest.get("alias_count", 0)) == len(live)
    # History: gapless per alias, up to the alias's revision, and never without its alias
    for alias_name, alias in aliases.items():
        revisions = sorted(int(sk.split("#")[1]) for sk in history if sk.split("#")[0] == alias_name)
        assert revisions == list(range(1, int(alias["revision"]) + 1)), alias_name
    assert {sk.split("#")[0] for sk in history} <= set(aliases)
    # Each record has its time row, written in its transaction, and no time row is without its record
    record = ("alias", "revision", "updated_at", "version", "secondary_version", "deleted", "action")
    assert sorted(tuple(i.get(f) for f in record) for i in timed.values()) == sorted(
        tuple(i.get(f) for f in record) for i in history.values()
    )
    # Tags: one index row per tag of a version or of the artifact, with its value, and no other row
    rows = {sk: row["value"] for sk, row in by_pk.get(f"__{NAME}-tags", {}).items()}
    tagged = {f"v#{n:06d}#{k}": value for n, v in versions.items() for k, value in (v.get("tags") or {}).items()}
    tagged.update({f"a#{k}": value for k, value in (latest.get("tags") or {}).items()})
    assert rows == tagged
    # Blob counts: each content counts the versions that hold it and LATEST, in the transactions that change them
    expected_refs: dict[str, int] = {}
    for holder in (*(v["sha256"] for v in versions.values() if v.get("counted")), latest.get("counted_sha256")):
        if holder:
            expected_refs[holder] = expected_refs.get(holder, 0) + 1
    counts = {sk: int(i.get("refs", 0)) for sk, i in by_pk.get(f"__{NAME}-blobs", {}).items()}
    assert {k: v for k, v in counts.items() if v} == expected_refs
    # Listing rows exist for a live artifact
    assert ("__names", NAME) in {(i["pk"], i["sk"]) for i in items}
    policies = check_policy_marks(by_pk, aliases)
    digest = {
        "newest": int(latest["newest"]),
        "aliases": {a: int(i["revision"]) for a, i in aliases.items()},
        "deleted": sorted(n for n, v in versions.items() if v["deleted"]),
        "tags": tagged,
    }
    if policies:
        digest["policies"] = {a: int(p["revision"]) for a, p in policies.items()}
    return digest


def check_policy_marks(by_pk: dict[str, dict[str, dict[str, Any]]], aliases: dict[str, Any]) -> dict[str, Any]:
    """An alias item's mark of its policy is its live policy's revision (0: none); returns the live policies."""
    policies = {a: p for a, p in by_pk.get(f"__{NAME}-policy", {}).items() if not p.get("deleted")}
    for alias_name, alias in aliases.items():
        if "policy_revision" in alias:
            policy = policies.get(alias_name)
            assert int(alias["policy_revision"]) == (int(policy["revision"]) if policy else 0), alias_name
    return policies


TAGGED = {"v#000001#env": "old", "v#000001#gone": "soon", "a#team": "core"}
EXPECTED = {
    "publish": {"newest": 4, "aliases": {"prod": 2}, "deleted": [], "tags": TAGGED},
    "alias": {"newest": 3, "aliases": {"prod": 2, "beta": 1}, "deleted": [], "tags": TAGGED},
    "rollback": {"newest": 3, "aliases": {"prod": 3}, "deleted": [], "tags": TAGGED},
    "policy": {"newest": 3, "aliases": {"prod": 2}, "deleted": [], "tags": TAGGED, "policies": {"prod": 1}},
    "prune": {"newest": 3, "aliases": {"prod": 2}, "deleted": [1, 2], "tags": TAGGED},
    "purge": {"purged": True},
    "tag": {"newest": 3, "aliases": {"prod": 2}, "deleted": [], "tags": {"v#000001#env": "new", "a#team": "core"}},
}


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
def test_the_sweep_covers_every_aws_call_of_each_operation(
    api: HandlerApi, aws: SimpleNamespace, operation: str
) -> None:
    # Given
    request = OPERATIONS[operation](given_an_artifact_with_aliases(api))
    query = {"force": "true"} if operation == "purge" else None
    # When it runs without a fault
    with crash_after_call(0) as calls:
        reply = send(api, request, query)
    # Then it succeeds, makes the one expected change, within the sweep's reach
    assert reply.status in (200, 201, 204), reply.body
    assert check_invariants(aws) == EXPECTED[operation]
    assert len(calls) == CALLS[operation], calls


@pytest.mark.parametrize(("operation", "k"), [(op, k) for op, n in sorted(CALLS.items()) for k in range(1, n + 1)])
def test_crash_after_each_aws_call_then_rerun_keeps_the_invariants(
    api: HandlerApi, aws: SimpleNamespace, operation: str, k: int
) -> None:
    # Given
    request = OPERATIONS[operation](given_an_artifact_with_aliases(api))
    query = {"force": "true"} if operation == "purge" else None
    # When the operation fails right after its k-th AWS call (if it makes that many)
    with crash_after_call(k) as calls:
        crashed = send(api, request, query)
    # Then what is stored keeps the invariants
    assert crashed.status == 500, (calls, crashed.body)
    check_invariants(aws, crashed=True)
    # And running it again completes, with exactly one change made in all
    again = send(api, request, query)
    assert again.status in (200, 201, 204), (calls, again.body)
    assert check_invariants(aws) == EXPECTED[operation], calls
