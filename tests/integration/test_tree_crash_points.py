"""Crash points of a tree publish: failed after each of its AWS calls in turn (tests/integration/test_crash_points.py's
harness), then sent again with the same Idempotency-Key.

Decision 98: a tree's file contents are counted before its version is written, and never less than it holds. After
any crash, every file content of every tree the committed state holds (its versions, LATEST) has its bytes and a
count at least its references; after the retry (which succeeds, with exactly one version made), no content is
counted more than once beyond what holds it (the crashed attempt's count, never taken back).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from arca.domain.trees import TREE_MEDIA_TYPE, parse_manifest
from tests.helpers import HandlerApi, sha256
from tests.integration.test_crash_points import KEY, crash_after_call, stored

NAME = "team/model"
# A content a blob version holds too, one two paths of the tree share, and one of its own.
SHARED = b"shared with version 1"
FILES = {"a/shared.bin": SHARED, "b/twice.txt": b"twice", "c/twice.txt": b"twice", "d/own.json": b"{}"}
# The AWS calls of the publish from the given state: the idempotency record's GetItem and LATEST's; each of its 3
# distinct contents' HeadObject, GetObject (a small content's check reads it) and DeleteObjectTagging (uploads are
# young); the manifest's HeadObject and PutObject; the counts' transaction; LATEST read again; the version's
# transaction.
CALLS = 16


def given_a_version_and_the_files_uploaded(api: HandlerApi) -> dict[str, Any]:
    assert api.publish(NAME, SHARED).status == 201
    assert api.publish(NAME, b"newer").status == 201
    for data in FILES.values():
        api.upload(NAME, data)
    return {"files": [{"path": p, "sha256": sha256(d), "size": len(d)} for p, d in FILES.items()]}


def held(aws: SimpleNamespace) -> dict[str, Any]:
    """What the committed state holds: the versions, LATEST, each content's count and the least count each must
    have (the counted versions and LATEST, and one for each distinct tree held that holds it); asserts that every
    content held, and every file content of a tree held, has its bytes."""
    items = [i for i in stored(aws) if i["pk"] in (NAME, f"__{NAME}-blobs")]
    objects = {o["Key"] for o in aws.s3.list_objects_v2(Bucket=aws.bucket).get("Contents", [])}
    latest = next(i for i in items if i["pk"] == NAME and i["sk"] == "LATEST")
    versions = {int(i["sk"]): i for i in items if i["pk"] == NAME and i["sk"] != "LATEST"}
    least: dict[str, int] = {}
    for sha in (*(v["sha256"] for v in versions.values() if v.get("counted")), latest.get("counted_sha256")):
        if sha:
            least[sha] = least.get(sha, 0) + 1
    trees = set()
    for holder in (*versions.values(), latest):
        assert f"artifacts/{NAME}/_blobs/{holder['sha256']}" in objects, f"{holder['sk']}'s bytes are gone"
        if holder.get("content_type") == TREE_MEDIA_TYPE:
            trees.add(holder["sha256"])
    for digest in trees:
        document = aws.s3.get_object(Bucket=aws.bucket, Key=f"artifacts/{NAME}/_blobs/{digest}")["Body"].read()
        for content in parse_manifest(document).contents():
            assert f"artifacts/{NAME}/_blobs/{content}" in objects, f"a file of {content[:8]} has no bytes"
            least[content] = least.get(content, 0) + 1
    counts = {i["sk"]: int(i.get("refs", 0)) for i in items if i["pk"] == f"__{NAME}-blobs"}
    for content, references in least.items():
        assert counts.get(content, 0) >= references, (content[:8], counts.get(content, 0), references)
    return {"newest": int(latest["newest"]), "trees": trees, "counts": counts, "least": least}


def test_the_sweep_covers_every_aws_call_of_a_tree_publish(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given
    body = given_a_version_and_the_files_uploaded(api)
    # When it runs without a fault
    with crash_after_call(0) as calls:
        reply = api.call("POST", f"/artifacts/{NAME}/versions", body, headers=KEY)
    # Then it makes version 3, counts each file content once more, and within the sweep's reach
    assert reply.status == 201, reply.body
    state = held(aws)
    assert state["newest"] == 3 and len(state["trees"]) == 1
    assert {c: state["counts"].get(c, 0) for c in map(sha256, FILES.values())} == {
        sha256(SHARED): 2,  # version 1 and the tree
        sha256(b"twice"): 1,  # two paths, one content: counted once
        sha256(b"{}"): 1,
    }
    assert len(calls) == CALLS, " ".join(calls)


@pytest.mark.parametrize("k", range(1, CALLS + 1))
def test_a_tree_publish_crashed_after_each_aws_call_leaves_its_files_counted_and_a_retry_counts_once_more(
    api: HandlerApi, aws: SimpleNamespace, k: int
) -> None:
    # Given
    body = given_a_version_and_the_files_uploaded(api)
    before = held(aws)["counts"]
    # When the publish fails right after its k-th AWS call
    with crash_after_call(k) as calls:
        crashed = api.call("POST", f"/artifacts/{NAME}/versions", body, headers=KEY)
    # Then whatever it committed holds only counted contents with their bytes (checked by `held`)
    assert crashed.status == 500, (calls, crashed.body)
    held(aws)
    # And the retry makes the one version, and counts no content more than once beyond what holds it
    again = api.call("POST", f"/artifacts/{NAME}/versions", body, headers=KEY)
    assert again.status == 201, (calls, again.body)
    assert again.body["version"] == 3 and again.body["files"] == len(FILES)
    state = held(aws)
    assert state["newest"] == 3 and len(state["trees"]) == 1, calls
    # (twice exactly when the crash fell between the counts' transaction and the version's: the crashed attempt's
    # count stays, decision 98's over-count; a crash after the version's is answered by its idempotency record)
    twice = calls[:k].count("TransactWriteItems") == 1
    for content in map(sha256, set(FILES.values())):
        counted = state["counts"][content] - before.get(content, 0)
        assert counted == (2 if twice else 1), (calls, content[:8], counted)
        assert state["counts"][content] <= state["least"][content] + 1, (calls, content[:8])
