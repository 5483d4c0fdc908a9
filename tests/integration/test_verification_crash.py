"""Crash points of the writes multipart identity and collection ownership added: a completion that hashes inline, a
background verification step, and an upload that finishes an abandoned collection, each failed after every one of
its AWS calls in turn, then run again: it finishes, and nothing referenceable is left unverified or without bytes."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
import requests

from arca import wiring
from arca.services import uploads, verification
from arca.services.collection import LEASE
from tests.helpers import HandlerApi, sha256
from tests.integration.test_crash_points import crash_after_call
from tests.integration.test_multipart import DATA
from tests.integration.test_multipart_identity import NAME, step, uploaded
from tests.integration.test_retention import NAME as RETAINED
from tests.integration.test_retention import POLICY, Clock, clock, publish_many

__all__ = ["clock"]
MIB = 1024**2
# The AWS calls of each swept operation; a test checks the counts, so the sweep covers every call.
# complete: GetItem the session, ListParts, CompleteMultipartUpload, HeadObject, one ranged GetObject (the content
# is one 16 MiB range), UpdateItem `complete`. step: GetItem, six 1 MiB ranges, UpdateItem `complete`. upload:
# GetItem LATEST, HeadObject and GetObject (moto keeps no checksum: the bytes are hashed), GetItem the count,
# UpdateItem (the takeover), Query the layouts (none to delete), DeleteObjects, TransactWriteItems (the release),
# HeadObject again (bytes uploaded after the claim would still be there).
CALLS = {"complete": 6, "step": 8, "upload": 9}


def published_and_served(api: HandlerApi) -> None:
    reply = api.call("POST", f"/artifacts/{NAME}/versions", {"sha256": sha256(DATA), "size": len(DATA)})
    assert reply.status == 201, reply.body
    url = api.call("GET", f"/artifacts/{NAME}/resolve/1").body["download_url"]
    assert requests.get(url, timeout=30).content == DATA


@pytest.mark.parametrize("k", range(CALLS["complete"] + 1))
def test_a_completion_crashed_after_any_call_completes_when_sent_again(api: HandlerApi, k: int) -> None:
    # Given an upload whose parts went up
    upload = uploaded(api, DATA)
    # When its completion fails right after its k-th AWS call (0: it does not fail)
    with crash_after_call(k) as calls:
        first = api.call("POST", f"/artifacts/{NAME}/uploads/{upload}/complete")
    if k == 0:
        assert first.status == 200 and len(calls) == CALLS["complete"], calls
    else:
        assert first.status == 500, (calls, first.body)
        # Then nothing can reference it until a completion finishes (unless the crash followed its last write),
        # and sending it again does
        early = api.call("POST", f"/artifacts/{NAME}/versions", {"sha256": sha256(DATA), "size": len(DATA)})
        assert early.status == (201 if k == CALLS["complete"] else 409), early.body
        if early.status == 201:
            return
        again = api.call("POST", f"/artifacts/{NAME}/uploads/{upload}/complete")
        assert (again.status, again.body["state"]) == (200, "complete"), again.body
    published_and_served(api)


@pytest.mark.parametrize("k", range(CALLS["step"] + 1))
def test_a_background_step_crashed_after_any_call_is_finished_by_the_next(
    api: HandlerApi, monkeypatch: pytest.MonkeyPatch, k: int
) -> None:
    # Given content verifying in the background, 1 MiB a range
    monkeypatch.setattr(uploads, "INLINE_LIMIT", 0)
    monkeypatch.setattr(verification, "CHUNK", MIB)
    upload = uploaded(api, DATA)
    assert api.call("POST", f"/artifacts/{NAME}/uploads/{upload}/complete").status == 202
    # When a step fails right after its k-th AWS call (0: it does not fail)
    with crash_after_call(k) as calls:
        try:
            done = step(NAME, upload, chunks=100)["done"]
        except Exception:
            done = False
    assert k > 0 or (done and len(calls) == CALLS["step"]), calls
    # Then the next steps finish it (the state machine retries a failed step), and it publishes
    while not done:
        done = step(NAME, upload, chunks=100)["done"]
    assert api.call("GET", f"/artifacts/{NAME}/uploads/{upload}").body["state"] == "complete"
    published_and_served(api)


def given_an_abandoned_collection(api: HandlerApi, clock: Clock) -> None:
    """Version 1's content claimed by a collection that stopped before deleting anything, its lease now over."""
    publish_many(api, 2)
    assert api.call("DELETE", f"/artifacts/{RETAINED}/versions/1").status == 200
    assert api.call("PUT", POLICY, {"keep_last": 1, "expire_after_days": 0}).status == 200
    clock.advance(seconds=1)
    collection = wiring.services().collection

    def stopped(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the function stopped here")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(collection, "_remove", stopped)
        assert api.call("POST", f"{POLICY}/apply").status == 500
    clock.advance(seconds=LEASE.total_seconds())


@pytest.mark.parametrize("k", range(CALLS["upload"] + 1))
def test_an_upload_finishing_an_abandoned_collection_crashed_after_any_call_is_finished_when_sent_again(
    api: HandlerApi, aws: SimpleNamespace, clock: Clock, k: int
) -> None:
    # Given an abandoned collection of the content `v1`
    given_an_abandoned_collection(api, clock)
    blob = {"sha256": sha256(b"v1"), "size": 2}
    # When its upload fails right after its k-th AWS call (0: it does not fail)
    with crash_after_call(k) as calls:
        first = api.call("POST", f"/artifacts/{RETAINED}/uploads", blob)
    assert first.status == (201 if k == 0 else 500), (calls, first.body)
    assert k > 0 or len(calls) == CALLS["upload"], calls
    # Then uploading and publishing it again (later, for a takeover that crashed) finishes the collection, and the
    # content goes up: at once, or, when the crash left the objects deleted and the claim held, once more (the
    # publish is refused while the claim holds; the next upload finishes the collection)
    clock.advance(seconds=LEASE.total_seconds() + 1)
    digest = api.upload(RETAINED, b"v1")
    reply = api.call("POST", f"/artifacts/{RETAINED}/versions", {"sha256": digest, "size": 2})
    if reply.status == 409:
        assert "retention is removing" in reply.body["error"]["message"], reply.body
        assert api.published(RETAINED, b"v1") == 3
    else:
        assert reply.status == 201 and reply.body["version"] == 3, reply.body
    items = aws.dynamodb.scan(TableName=aws.table, ConsistentRead=True)["Items"]
    counts = {i["sk"]["S"]: int(i["refs"]["N"]) for i in items if i["pk"]["S"] == f"__{RETAINED}-blobs"}
    assert counts == {sha256(b"v1"): 2, sha256(b"v2"): 1}, counts  # version 3 and LATEST; version 2
    assert "collecting" not in str(items)
    url = api.call("GET", f"/artifacts/{RETAINED}/resolve/3").body["download_url"]
    assert requests.get(url, timeout=30).content == b"v1"
