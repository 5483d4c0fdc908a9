"""Crash points of retention's apply with expiry: failed after each of its AWS calls in turn, then run again.

Whatever call a crash follows, no bytes that a version or LATEST still references are deleted, and the next
applies finish the clean-up (attestations, unreferenced bytes, markers, counts): nothing is leaked for good.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest

from arca import wiring
from arca.services.collection import LEASE
from tests.helpers import HandlerApi, sha256
from tests.integration.test_crash_points import crash_after_call, stored

NAME = "team/app"
POLICY = f"/artifacts/{NAME}/retention"
# The AWS calls of the swept apply (three expiries, one of them with an attestation, two contents collected: each
# a Query of its multipart layouts, then a listing and a DeleteObjects of its objects); a test checks the count.
CALLS = 39


def given_three_versions_due_to_expire(api: HandlerApi, aws: SimpleNamespace) -> list[datetime]:
    """1 and 3 share content A, 2 has B and an attestation, 4 and LATEST have C; 1-3 soft-deleted by retention.
    Returns the services' clock (its one moment, to move)."""
    moment = [datetime(2026, 1, 1, tzinfo=UTC)]
    wiring.services().policy.clock = lambda: moment[0]
    for data in (b"A", b"B", b"A", b"C"):
        assert api.publish(NAME, data, force=True).status == 201
    aws.dynamodb.put_item(
        TableName=aws.table,
        Item={"pk": {"S": f"__{NAME}-attestations"}, "sk": {"S": "000002#doc"}, "type": {"S": "sbom"}},
    )
    aws.s3.put_object(Bucket=aws.bucket, Key=f"artifacts/{NAME}/_attestations/000002/doc", Body=b"{}")
    assert api.call("PUT", POLICY, {"keep_last": 1, "expire_after_days": 0}).status == 200
    assert sorted(api.call("POST", f"{POLICY}/apply").body["deleted"]) == [1, 2, 3]
    moment[0] += timedelta(seconds=1)
    return moment


def check_safe(aws: SimpleNamespace) -> dict[str, Any]:
    """Every content a version that is not expired or LATEST holds is still stored."""
    items = stored(aws)
    objects = {o["Key"] for o in aws.s3.list_objects_v2(Bucket=aws.bucket).get("Contents", [])}
    holders = [i for i in items if i["pk"] == NAME and not i.get("expired")]
    for item in holders:
        assert f"artifacts/{NAME}/_blobs/{item['sha256']}" in objects, f"{item['sk']}'s bytes were deleted"
    return {"items": items, "objects": objects}


def check_finished(aws: SimpleNamespace) -> None:
    found = check_safe(aws)
    items, objects = found["items"], found["objects"]
    expired = sorted(int(i["sk"]) for i in items if i["pk"] == NAME and i.get("expired"))
    assert expired == [1, 2, 3]
    assert objects == {f"artifacts/{NAME}/_blobs/{sha256(b'C')}"}, "unreferenced bytes left behind"
    assert not [i for i in items if i["pk"] == f"__{NAME}-attestations"]
    assert not [i for i in items if i["pk"] == f"__{NAME}-retention" and i["sk"] != "policy"], "a marker left"
    counts = {i["sk"]: int(i.get("refs", 0)) for i in items if i["pk"] == f"__{NAME}-blobs"}
    assert counts == {sha256(b"C"): 2}


def test_the_sweep_covers_every_aws_call_of_apply(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given
    given_three_versions_due_to_expire(api, aws)
    # When apply runs without a fault
    with crash_after_call(0) as calls:
        reply = api.call("POST", f"{POLICY}/apply")
    # Then it expires all three and cleans up, within the sweep's reach
    assert reply.status == 200 and reply.body["expired"] == [3, 2, 1], reply.body
    check_finished(aws)
    assert len(calls) == CALLS, calls


@pytest.mark.parametrize("k", range(1, CALLS + 1))
def test_crash_after_each_aws_call_of_apply_then_rerun_finishes(api: HandlerApi, aws: SimpleNamespace, k: int) -> None:
    # Given
    moment = given_three_versions_due_to_expire(api, aws)
    # When apply fails right after its k-th AWS call
    with crash_after_call(k) as calls:
        crashed = api.call("POST", f"{POLICY}/apply")
    # Then no referenced bytes are gone
    assert crashed.status == 500, (calls, crashed.body)
    check_safe(aws)
    # And applying again at once finishes what it can (a collection the crash left claimed is its owner's until
    # its lease runs out: nobody else deletes under it), still safe
    again = api.call("POST", f"{POLICY}/apply")
    assert again.status == 200, again.body
    check_safe(aws)
    # And once the lease is over, applying again finishes everything: every expiry, every clean-up, nothing leaked
    moment[0] += LEASE
    again = api.call("POST", f"{POLICY}/apply")
    assert again.status == 200, again.body
    check_finished(aws)
