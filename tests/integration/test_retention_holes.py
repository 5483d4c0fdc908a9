"""Retention where its reads and its writes meet other writers: what a deleted alias could roll back to, an expired
version's tags, and LATEST or a kept tag that changed after apply read the roots and the versions."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from arca import wiring
from arca.domain.errors import ContentionError
from local import iam
from tests.helpers import HandlerApi, sha256
from tests.integration.test_retention import NAME, POLICY, Clock, apply, clock, publish_many, rows

__all__ = ["clock"]


def test_a_deleted_aliass_rollback_window_still_protects_its_versions(api: HandlerApi, clock: Clock) -> None:
    # Given prod on 1, then on 2, then deleted; 1 and 2 soft-deleted; a policy that expires deletions at once
    publish_many(api, 3)
    for version in (1, 2):
        assert api.call("PUT", f"/artifacts/{NAME}/aliases/prod", {"version": version}).status in (200, 201)
    assert api.call("DELETE", f"/artifacts/{NAME}/aliases/prod").status in (200, 204)
    for version in (1, 2):
        assert api.call("DELETE", f"/artifacts/{NAME}/versions/{version}").status == 200
    assert api.call("PUT", POLICY, {"keep_last": 1, "rollback_window": 5, "expire_after_days": 0}).status == 200
    clock.advance(seconds=1)
    # When retention applies
    applied = apply(api)
    # Then neither expires: a rollback re-creates prod on what it served
    assert applied["expired"] == [], applied
    assert rows(api)[2] == ("keep", ["history:prod"])
    assert api.call("POST", f"/artifacts/{NAME}/versions/2/restore").status == 200
    rolled = api.call("POST", f"/artifacts/{NAME}/aliases/prod/rollback", {})
    assert rolled.status == 200 and rolled.body["version"] == 2, rolled.body


def _tagged_and_expired(api: HandlerApi, clock: Clock) -> None:
    publish_many(api, 2)
    assert api.call("PATCH", f"/artifacts/{NAME}/versions/1", {"tags": {"env": "qa", "team": "core"}}).status == 200
    assert api.call("DELETE", f"/artifacts/{NAME}/versions/1").status == 200
    assert api.call("PUT", POLICY, {"keep_last": 1, "expire_after_days": 0}).status == 200
    clock.advance(seconds=1)
    assert apply(api)["expired"] == [1]


def test_an_expired_version_carries_no_tags_and_no_search_finds_it(
    api: HandlerApi, aws: SimpleNamespace, clock: Clock
) -> None:
    # Given version 1, tagged, soft-deleted and then expired
    _tagged_and_expired(api, clock)
    # Then its tag rows went in the expiry, and no search answers it
    items = aws.dynamodb.scan(TableName=aws.table, ConsistentRead=True)["Items"]
    assert not [i for i in items if i["pk"]["S"] == f"__{NAME}-tags"], "tag rows outlived the expiry"
    version = next(i for i in items if i["pk"]["S"] == NAME and i["sk"]["S"] == "000001")
    assert "tags" not in version
    assert api.call("GET", "/versions", query={"tag": "env:qa"}).body["versions"] == []
    found = api.call("GET", f"/artifacts/{NAME}/versions", query={"tag": "env:qa", "include_deleted": "true"})
    assert found.body["versions"] == []


def test_a_tag_write_on_an_expired_version_is_a_409_and_writes_nothing(
    api: HandlerApi, aws: SimpleNamespace, clock: Clock
) -> None:
    # Given an expired version
    _tagged_and_expired(api, clock)
    events = len(api.call("GET", f"/artifacts/{NAME}/events").body["events"])
    # When its tags are patched
    reply = api.call("PATCH", f"/artifacts/{NAME}/versions/1", {"tags": {"env": "prod"}})
    # Then a 409 says it expired, and no tag row nor event was written
    assert reply.status == 409, reply.body
    assert "expired" in reply.body["error"]["message"]
    assert api.call("GET", "/versions", query={"tag": "env:prod"}).body["versions"] == []
    assert len(api.call("GET", f"/artifacts/{NAME}/events").body["events"]) == events


def test_keep_tags_take_an_empty_value(api: HandlerApi, clock: Clock) -> None:
    # Given version 1 tagged `hold` with an empty value (tags allow it)
    publish_many(api, 3)
    assert api.call("PATCH", f"/artifacts/{NAME}/versions/1", {"tags": {"hold": ""}}).status == 200
    # When a policy keeps `hold:`
    put = api.call("PUT", POLICY, {"keep_last": 1, "keep_tags": ["hold:"]})
    # Then it is accepted, and it keeps version 1 while 2 goes
    assert put.status == 200, put.body
    assert put.body["keep_tags"] == ["hold:"]
    found = rows(api)
    assert found[1] == ("keep", ["tag:hold:"]) and found[2][0] == "delete"
    assert apply(api)["deleted"] == [2]


def test_content_latest_took_after_the_roots_were_read_is_not_expired(
    api: HandlerApi, aws: SimpleNamespace, clock: Clock
) -> None:
    # Given version 1 soft-deleted and due to expire; LATEST on 2's content
    publish_many(api, 2)
    assert api.call("DELETE", f"/artifacts/{NAME}/versions/1").status == 200
    assert api.call("PUT", POLICY, {"keep_last": 1, "expire_after_days": 0}).status == 200
    clock.advance(seconds=1)
    retention = wiring.services().retention
    roots = retention.roots

    def then_latest_moves(*args: Any, **kwargs: Any) -> Any:
        found = roots(*args, **kwargs)
        assert api.set_latest(NAME, b"v1").status == 200  # LATEST takes version 1's content
        return found

    # When LATEST takes version 1's content right after apply read the roots
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(retention, "roots", then_latest_moves)
        applied = apply(api)
    # Then version 1 is not expired (the expiry is conditioned on LATEST not holding its content)
    assert applied["expired"] == [], applied
    assert rows(api)[1] == ("keep", ["latest"])
    assert api.call("GET", f"/artifacts/{NAME}/versions/1").body["sha256"] == sha256(b"v1")


@pytest.mark.parametrize("batch", [True, False])
def test_a_kept_tag_added_after_the_versions_were_read_stops_the_soft_delete(
    api: HandlerApi, clock: Clock, batch: bool
) -> None:
    # Given a policy that keeps the newest and versions tagged qa:passed; 1 and 2 untagged
    publish_many(api, 3)
    assert api.call("PUT", POLICY, {"keep_last": 1, "keep_tags": ["qa:passed"]}).status == 200
    versions = wiring.services().retention.versions
    chunk = versions.versions_chunk

    def then_tagged(*args: Any, **kwargs: Any) -> Any:
        found = chunk(*args, **kwargs)
        assert api.call("PATCH", f"/artifacts/{NAME}/versions/1", {"tags": {"qa": "passed"}}).status == 200
        return found

    # When version 1 gets the kept tag right after apply read it (in one batch, or one by one after a batch failed)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(versions, "versions_chunk", then_tagged)
        if not batch:
            commit = versions.commit

            def batch_refused(change: Any) -> None:  # as if a version was pinned meanwhile
                if len(change.announced) > 1:
                    raise ContentionError("a version of the batch changed")
                commit(change)

            patch.setattr(versions, "commit", batch_refused)
        applied = apply(api)
    # Then version 1 stays live (its tags changed since they were judged); 2 goes
    assert 1 not in applied["deleted"] and 2 in applied["deleted"], applied
    assert api.call("GET", f"/artifacts/{NAME}/versions/1").body["deleted"] is False


def test_an_interrupted_collection_answers_the_same_story_to_uploads_and_publishes(
    api: HandlerApi, aws: SimpleNamespace, clock: Clock
) -> None:
    # Given version 1's content due to be collected, and a collection of it interrupted right after its claim
    publish_many(api, 2)
    assert api.call("DELETE", f"/artifacts/{NAME}/versions/1").status == 200
    assert api.call("PUT", POLICY, {"keep_last": 1, "expire_after_days": 0}).status == 200
    clock.advance(seconds=1)
    collection = wiring.services().collection

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the function stopped here")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(collection, "_remove", interrupted)
        assert api.call("POST", f"{POLICY}/apply").status == 500
    blob = {"sha256": sha256(b"v1"), "size": 2}
    # When the content is uploaded and published again while the claim may still be its owner's
    upload = api.call("POST", f"/artifacts/{NAME}/uploads", blob)
    publish = api.call("POST", f"/artifacts/{NAME}/versions", blob)
    # Then both say that retention is removing it (no `exists: true` that a publish then refuses)
    assert upload.status == 409 and "retention is removing" in upload.body["error"]["message"], upload.body
    assert publish.status == 409 and "retention is removing" in publish.body["error"]["message"], publish.body
    # And once the claim's lease is over, the upload finishes the abandoned collection and the content goes up again
    clock.advance(minutes=20)
    assert api.published(NAME, b"v1") == 3
    assert api.call("GET", f"/artifacts/{NAME}/resolve/3").status == 200


def test_a_collection_taken_over_deletes_only_the_object_versions_it_claimed(
    api: HandlerApi, aws: SimpleNamespace, clock: Clock
) -> None:
    # Given a versioned bucket (as retained stages have) and version 1's content due to be collected
    aws.s3.put_bucket_versioning(Bucket=aws.bucket, VersioningConfiguration={"Status": "Enabled"})
    publish_many(api, 2)
    assert api.call("DELETE", f"/artifacts/{NAME}/versions/1").status == 200
    assert api.call("PUT", POLICY, {"keep_last": 1, "expire_after_days": 0}).status == 200
    clock.advance(seconds=1)
    store = wiring.services().collection.store
    release = store.release

    def stops_before_releasing(*args: Any, token: str | None, **kwargs: Any) -> Any:
        if token is not None:
            raise RuntimeError("the function stopped here")
        return release(*args, token=token, **kwargs)

    # And a collection that deleted the versions it claimed, then stopped before its release
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(store, "release", stops_before_releasing)
        assert api.call("POST", f"{POLICY}/apply").status == 500
    key = f"artifacts/{NAME}/_blobs/{sha256(b'v1')}"
    assert "Contents" not in aws.s3.list_objects_v2(Bucket=aws.bucket, Prefix=key)
    # When the same content is uploaded again meanwhile, and the abandoned collection is taken over later
    assert api.upload(NAME, b"v1") == sha256(b"v1")
    clock.advance(minutes=20)
    assert api.call("POST", f"{POLICY}/apply").status == 200
    # Then the new upload is still there (only the claimed versions were deleted), and it publishes
    assert aws.s3.get_object(Bucket=aws.bucket, Key=key)["Body"].read() == b"v1"
    assert api.published(NAME, b"v1") == 3


def test_the_sweep_reads_an_artifacts_roots_once_a_pass(
    api: HandlerApi, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an artifact whose versions take several apply requests (pages of 2, one page a request)
    publish_many(api, 9)
    assert api.call("PUT", POLICY, {"keep_last": 1}).status == 200
    from arca.services import retention as module
    from arca.services.retry import Budget

    monkeypatch.setattr(module, "DELETE_BATCH", 2)
    monkeypatch.setattr(module, "APPLY_PAGES", 1)
    service = wiring.services().retention
    reads: list[str] = []
    roots = service.roots
    monkeypatch.setattr(service, "roots", lambda name, *a: reads.append(name) or roots(name, *a))
    # When the sweep makes a pass
    with iam.acting_as("retention"):
        progress = service.sweep(start=None, budget=Budget())
    # Then it took five requests, and read the roots once
    assert (progress.artifacts, progress.deleted) == (1, 8)
    assert reads == [NAME]
