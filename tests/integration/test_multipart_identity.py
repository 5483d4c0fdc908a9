"""Multipart content is what it claims to be: the assembled object is hashed server-side (inline, or in the
background from a saved SHA-256 state), only content whose SHA-256 is the declared one can be referenced, a layout
never displaces a single PUT, and the signed manifest names the parts."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
import requests

from arca import wiring
from arca.domain import multipart
from arca.domain.verification import VerifyEvent
from arca.handlers import verify
from arca.services import uploads, verification
from local import iam
from local.events import lambda_context
from tests.helpers import HandlerApi, sha256
from tests.integration.test_multipart import DATA, PART, layout, put_part

MIB = 1024**2
NAME = "models/llm"


def uploaded(api: HandlerApi, data: bytes, declared: dict[str, Any] | None = None, name: str = NAME) -> str:
    """Start a multipart upload of `data` (declared as `declared`, by default truly) and PUT its parts; its id."""
    body = declared or layout(data)
    reply = api.call("POST", f"/artifacts/{name}/uploads", body)
    assert reply.status == 201, reply.body
    target = reply.body["upload"]
    for part in target["parts"]:
        assert put_part(part, data, body["part_size"]).status_code == 200
    return str(target["id"])


def lie(data: bytes, claimed: bytes) -> dict[str, Any]:
    """A layout of `data`'s parts that declares the sha256 of `claimed`."""
    return {**layout(data), "sha256": sha256(claimed), "size": len(data)}


def served(api: HandlerApi, ref: str, name: str = NAME) -> bytes:
    url = api.call("GET", f"/artifacts/{name}/resolve/{ref}").body["download_url"]
    return requests.get(url, timeout=30).content


def test_a_layout_of_other_bytes_fails_and_never_serves_content_another_caller_publishes(api: HandlerApi) -> None:
    # Given a caller who declares the sha256 of A over parts of other bytes B, and completes it
    other = bytes(reversed(DATA))
    upload = uploaded(api, other, lie(other, DATA))
    refused = api.call("POST", f"/artifacts/{NAME}/uploads/{upload}/complete")
    # Then the completion fails (the assembled bytes were hashed), and says so from then on
    assert refused.status == 409 and refused.body["error"]["state"] == "failed", refused.body
    status = api.call("GET", f"/artifacts/{NAME}/uploads/{upload}").body
    assert (status["state"], status["exists"]) == ("failed", False)
    assert api.call("POST", f"/artifacts/{NAME}/uploads", lie(other, DATA)).status == 409
    # When another caller uploads the real A by single PUT and publishes it
    published = api.publish(NAME, DATA)
    # Then the version serves A, and says so
    assert published.status == 201, published.body
    assert published.body.get("part_size") is None
    assert sha256(served(api, "1")) == sha256(DATA)


def test_a_single_put_is_never_displaced_by_a_layout_of_the_same_content(api: HandlerApi) -> None:
    # Given content uploaded by single PUT, and the same content completed in parts by another caller
    api.upload(NAME, DATA)
    upload = uploaded(api, DATA)
    assert api.call("POST", f"/artifacts/{NAME}/uploads/{upload}/complete").status == 200
    # When it is published by its sha256
    published = api.call("POST", f"/artifacts/{NAME}/versions", {"sha256": sha256(DATA), "size": len(DATA)})
    # Then the single PUT is what the version serves
    assert published.status == 201 and published.body.get("part_size") is None, published.body
    assert served(api, "1") == DATA


def test_complete_hashes_inline_and_the_states_show_the_way(api: HandlerApi) -> None:
    # Given an upload whose parts went up
    upload = uploaded(api, DATA)
    # Then it is `uploading`, and referencing it is a 409 naming that state
    assert api.call("GET", f"/artifacts/{NAME}/uploads/{upload}").body["state"] == "uploading"
    early = api.call("PUT", f"/artifacts/{NAME}/latest", {"sha256": sha256(DATA), "size": len(DATA)})
    assert early.status == 409 and early.body["error"]["state"] == "uploading", early.body
    # When it is completed: content this small is hashed within the request
    done = api.call("POST", f"/artifacts/{NAME}/uploads/{upload}/complete")
    # Then it is complete at once, and can be referenced
    assert done.status == 200, done.body
    assert (done.body["state"], done.body["verified_bytes"]) == ("complete", len(DATA))
    status = api.call("GET", f"/artifacts/{NAME}/uploads/{upload}").body
    assert (status["state"], status["exists"]) == ("complete", True)
    assert api.call("PUT", f"/artifacts/{NAME}/latest", {"sha256": sha256(DATA), "size": len(DATA)}).status == 200


@pytest.fixture
def background(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing is hashed inline, and the background reads 1 MiB ranges, so a step can stop between them."""
    monkeypatch.setattr(uploads, "INLINE_LIMIT", 0)
    monkeypatch.setattr(verification, "CHUNK", MIB)


def step(name: str, upload: str, *, chunks: int) -> dict[str, Any]:
    """One invocation of the `verify` function that has time for `chunks` ranges."""
    left = iter([100.0] * chunks + [0.0] * 1000)
    context = lambda_context("verify")
    context.get_remaining_time_in_millis = lambda: int(next(left) * 1000)  # type: ignore[method-assign]
    with iam.acting_as("verify"):
        answer: dict[str, Any] = verify.handler({"name": name, "upload": upload}, context)
    return answer


@pytest.mark.usefixtures("background")
def test_larger_content_is_hashed_in_the_background_across_invocations(api: HandlerApi) -> None:
    # Given an upload completed as content too large to hash within the request
    upload = uploaded(api, DATA)
    done = api.call("POST", f"/artifacts/{NAME}/uploads/{upload}/complete")
    # Then it answers 202 `verifying`, and may not be referenced yet
    assert (done.status, done.body["state"], done.body["verified_bytes"]) == (202, "verifying", 0), done.body
    refused = api.call("POST", f"/artifacts/{NAME}/versions", {"sha256": sha256(DATA), "size": len(DATA)})
    assert refused.status == 409 and refused.body["error"]["state"] == "verifying", refused.body
    # When the background steps run, each stopping after three 1 MiB ranges (the state is saved between them)
    answers = []
    while not (answers and answers[-1]["done"]):
        answers.append(step(NAME, upload, chunks=2))
        status = api.call("GET", f"/artifacts/{NAME}/uploads/{upload}").body
        if not answers[-1]["done"]:
            assert (status["state"], status["verified_bytes"]) == ("verifying", answers[-1]["hashed"]), status
    # Then it took two invocations (3 MiB, then the rest), and the content is complete: it publishes, with its
    # parts signed
    assert [a["hashed"] for a in answers] == [3 * MIB, len(DATA)], answers
    assert api.call("GET", f"/artifacts/{NAME}/uploads/{upload}").body["state"] == "complete"
    published = api.call("POST", f"/artifacts/{NAME}/versions", {"sha256": sha256(DATA), "size": len(DATA)})
    assert published.status == 201, published.body
    signed = json.loads(published.body["manifest"])
    assert (signed["part_size"], signed["parts_sha256"]) == (PART, multipart.parts_sha256(layout(DATA)["parts"]))
    assert served(api, "1") == DATA


@pytest.mark.usefixtures("background")
def test_a_background_check_of_other_bytes_fails(api: HandlerApi) -> None:
    # Given a lying layout completed as content hashed in the background
    other = bytes(reversed(DATA))
    upload = uploaded(api, other, lie(other, DATA))
    assert api.call("POST", f"/artifacts/{NAME}/uploads/{upload}/complete").status == 202
    # When the background hashes it all
    assert step(NAME, upload, chunks=100)["done"] is True
    # Then it failed, and nothing can reference it
    assert api.call("GET", f"/artifacts/{NAME}/uploads/{upload}").body["state"] == "failed"
    refused = api.call("POST", f"/artifacts/{NAME}/versions", {"sha256": sha256(DATA), "size": len(other)})
    assert refused.status == 409 and refused.body["error"]["state"] == "failed", refused.body
    assert api.call("POST", f"/artifacts/{NAME}/uploads/{upload}/complete").status == 409


@pytest.mark.usefixtures("background")
def test_two_verifiers_at_once_never_both_count(api: HandlerApi) -> None:
    # Given content verifying in the background, and a step that read the session before another one moved it on
    upload = uploaded(api, DATA)
    assert api.call("POST", f"/artifacts/{NAME}/uploads/{upload}/complete").status == 202
    with iam.acting_as("verify"):
        stale = wiring.services().stores.uploads.get(NAME, upload)
    assert stale is not None
    assert step(NAME, upload, chunks=2)["done"] is False
    # When the stale one goes on from what it read
    service = wiring.services().verification
    with iam.acting_as("verify"), pytest.raises(Exception, match="moved on"):
        service.run(stale, time_left=iter([100.0, 100.0, 0.0]).__next__, reserve=1.0)
    # Then its progress was refused; the other one's stands, and finishes the content
    assert step(NAME, upload, chunks=100)["done"] is True
    assert api.call("GET", f"/artifacts/{NAME}/uploads/{upload}").body["state"] == "complete"


def test_a_malformed_verify_event_is_refused_before_anything_is_read() -> None:
    with pytest.raises(Exception, match="upload"):
        verify.handler({"name": NAME, "upload": "not-an-id"}, lambda_context("verify"))
    assert VerifyEvent(name=NAME, upload=f"{'a' * 64}.{'b' * 64}").done is False


def test_content_assembled_before_verification_is_verified_before_it_is_referenced(
    api: HandlerApi, aws: SimpleNamespace
) -> None:
    # Given an upload completed before Arca hashed multipart content (its item `complete`, with no `verified_at`)
    upload = uploaded(api, DATA)
    assert api.call("POST", f"/artifacts/{NAME}/uploads/{upload}/complete").status == 200
    aws.dynamodb.update_item(
        TableName=aws.table,
        Key={"pk": {"S": f"__{NAME}-uploads"}, "sk": {"S": upload}},
        UpdateExpression="REMOVE verified_at, hashed",
    )
    # Then it reads as `verifying`, and may not be referenced until it is verified
    assert api.call("GET", f"/artifacts/{NAME}/uploads/{upload}").body["state"] == "verifying"
    refused = api.call("POST", f"/artifacts/{NAME}/versions", {"sha256": sha256(DATA), "size": len(DATA)})
    assert refused.status == 409 and refused.body["error"]["state"] == "verifying", refused.body
    # When it is completed again (as the client's next publish does)
    assert api.call("POST", f"/artifacts/{NAME}/uploads/{upload}/complete").status == 200
    # Then it is verified and publishes
    assert api.call("POST", f"/artifacts/{NAME}/versions", {"sha256": sha256(DATA), "size": len(DATA)}).status == 201
