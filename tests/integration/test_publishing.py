"""The publishing side through API Gateway proxy events into the real handlers, under moto."""

from __future__ import annotations

from types import SimpleNamespace
from urllib.parse import parse_qs, urlsplit

from arca.adapters.dynamo import Update
from arca.adapters.s3 import hex_to_b64
from local import iam
from tests.helpers import HandlerApi, sha256


def test_health_answers_ok(api: HandlerApi) -> None:
    # When
    reply = api.call("GET", "/health")
    # Then
    assert reply.status == 200
    assert reply.body == {"status": "ok"}


def test_upload_returns_presigned_put_covering_the_checksum(api: HandlerApi) -> None:
    # Given
    data = b"hello world"
    # When
    reply = api.call("POST", "/artifacts/team/app/uploads", {"sha256": sha256(data), "size": len(data)})
    # Then
    assert reply.status == 201
    upload = reply.body["upload"]
    assert upload["method"] == "PUT"
    assert "x-amz-checksum-sha256" in upload["url"].lower()
    assert upload["headers"] == {
        "Content-Type": "application/octet-stream",
        "x-amz-checksum-sha256": hex_to_b64(sha256(data)),
        "x-amz-tagging": "arca:state=uploaded",
        "If-None-Match": "*",
    }
    signed = parse_qs(urlsplit(upload["url"]).query)["X-Amz-SignedHeaders"][0].split(";")
    assert {"content-type", "x-amz-checksum-sha256", "x-amz-tagging", "if-none-match"} <= set(signed)
    assert "/artifacts/team/app/_blobs/" in upload["url"]


def test_upload_of_stored_blob_says_exists(api: HandlerApi) -> None:
    # Given
    data = b"payload"
    api.upload("app", data)
    # When
    reply = api.call("POST", "/artifacts/app/uploads", {"sha256": sha256(data), "size": len(data)})
    # Then
    assert reply.status == 200
    assert reply.body["exists"] is True


def test_put_latest_then_publish_creates_version_one(api: HandlerApi) -> None:
    # Given
    data = b"v1 bytes"
    latest = api.set_latest("team/app", data, content_type="application/zip", metadata={"commit": "abc"})
    assert latest.status == 200, latest.body
    # When
    reply = api.publish("team/app")
    # Then
    assert reply.status == 201, reply.body
    assert reply.body["version"] == 1
    assert reply.body["sha256"] == sha256(data)
    assert reply.body["content_type"] == "application/zip"
    assert reply.body["metadata"] == {"commit": "abc"}
    assert reply.body["deduplicated"] is False


def test_publish_same_content_returns_existing_version(api: HandlerApi) -> None:
    # Given
    api.publish("app", b"same")
    # When
    again = api.publish("app", b"same")
    # Then
    assert again.status == 200
    assert again.body["version"] == 1
    assert again.body["deduplicated"] is True


def test_publish_with_force_makes_a_new_version_of_same_content(api: HandlerApi) -> None:
    # Given
    api.publish("app", b"same")
    # When
    forced = api.publish("app", b"same", force=True)
    # Then
    assert forced.status == 201
    assert forced.body["version"] == 2


def test_one_step_publish_sets_latest(api: HandlerApi) -> None:
    # Given
    api.publish("app", b"one")
    # When
    api.publish("app", b"two")
    latest = api.call("GET", "/artifacts/app/versions/LATEST")
    # Then
    assert latest.body["sha256"] == sha256(b"two")
    assert latest.body["newest_version"] == 2


def test_publish_without_latest_is_not_found(api: HandlerApi) -> None:
    # When
    reply = api.publish("nothing-here")
    # Then
    assert reply.status == 404
    assert reply.error["code"] == "NotFoundError"


def test_versions_list_in_order_with_opaque_pagination(api: HandlerApi) -> None:
    # Given
    for i in range(5):
        api.publish("app", f"content {i}".encode())
    # When
    first = api.call("GET", "/artifacts/app/versions", query={"limit": "2", "order": "asc"})
    second = api.call(
        "GET", "/artifacts/app/versions", query={"limit": "2", "order": "asc", "next_token": first.body["next_token"]}
    )
    third = api.call(
        "GET", "/artifacts/app/versions", query={"limit": "2", "order": "asc", "next_token": second.body["next_token"]}
    )
    newest_first = api.call("GET", "/artifacts/app/versions")
    # Then
    assert [v["version"] for v in first.body["versions"]] == [1, 2]
    assert [v["version"] for v in second.body["versions"]] == [3, 4]
    assert [v["version"] for v in third.body["versions"]] == [5]
    assert third.body["next_token"] is None
    assert [v["version"] for v in newest_first.body["versions"]] == [5, 4, 3, 2, 1]


def test_tampered_or_foreign_token_is_a_400_naming_next_token(api: HandlerApi) -> None:
    # Given
    for i in range(3):
        api.publish("app", f"c{i}".encode())
    token = api.call("GET", "/artifacts/app/versions", query={"limit": "1"}).body["next_token"]
    api.publish("other", b"x")
    # When
    foreign = api.call("GET", "/artifacts/other/versions", query={"next_token": token})
    garbage = api.call("GET", "/artifacts/app/versions", query={"next_token": "not-a-token"})
    # Then
    assert foreign.status == garbage.status == 400
    assert foreign.error["field"] == garbage.error["field"] == "next_token"


def test_soft_delete_hides_version_and_restore_brings_it_back(api: HandlerApi) -> None:
    # Given
    api.publish("app", b"a")
    api.publish("app", b"b")
    # When
    deleted = api.call("DELETE", "/artifacts/app/versions/1")
    listed = api.call("GET", "/artifacts/app/versions")
    with_deleted = api.call("GET", "/artifacts/app/versions", query={"include_deleted": "true"})
    summary = api.call("GET", "/artifacts/app")
    restored = api.call("POST", "/artifacts/app/versions/1/restore")
    # Then
    assert deleted.status == 200 and deleted.body["deleted"] is True
    assert [v["version"] for v in listed.body["versions"]] == [2]
    assert [v["version"] for v in with_deleted.body["versions"]] == [2, 1]
    assert summary.body["counts"] == {"versions": 1, "deleted_versions": 1, "aliases": 0}
    assert restored.status == 200 and restored.body["deleted"] is False


def test_deleting_a_version_that_never_existed_is_404_and_writes_nothing(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given
    from tests.integration.conftest import snapshot

    api.publish("app", b"a")
    before = snapshot(aws)
    # When
    reply = api.call("DELETE", "/artifacts/app/versions/7")
    # Then
    assert reply.status == 404
    assert snapshot(aws) == before


def test_numbers_are_not_reused_after_delete(api: HandlerApi) -> None:
    # Given
    api.publish("app", b"a")
    api.publish("app", b"b")
    api.call("DELETE", "/artifacts/app/versions/2")
    # When
    reply = api.publish("app", b"c")
    # Then
    assert reply.body["version"] == 3


def test_purge_removes_everything_and_numbers_continue_after_recreate(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given
    api.publish("team/app", b"a")
    api.publish("team/app", b"b")
    # When
    purged = api.call("DELETE", "/artifacts/team/app")
    gone = api.call("GET", "/artifacts/team/app")
    listing = api.call("GET", "/artifacts", query={"prefix": "team/", "delimiter": "/"})
    objects = aws.s3.list_objects_v2(Bucket=aws.bucket).get("Contents", [])
    again = api.publish("team/app", b"c")
    # Then
    assert purged.status == 204
    assert gone.status == 404
    assert listing.body["artifacts"] == [] and listing.body["prefixes"] == []
    assert objects == []
    assert again.body["version"] == 3


def test_listing_folds_deeper_names_into_prefixes(api: HandlerApi) -> None:
    # Given
    for name in ("payments/api/server", "payments/api/worker", "payments/web", "tools"):
        api.publish(name, name.encode())
    # When
    root = api.call("GET", "/artifacts", query={"delimiter": "/"})
    payments = api.call("GET", "/artifacts", query={"prefix": "payments/", "delimiter": "/"})
    flat = api.call("GET", "/artifacts", query={"prefix": "payments/"})
    # Then
    assert root.body["prefixes"] == ["payments/"]
    assert [a["name"] for a in root.body["artifacts"]] == ["tools"]
    assert payments.body["prefixes"] == ["payments/api/"]
    assert [a["name"] for a in payments.body["artifacts"]] == ["payments/web"]
    assert [a["name"] for a in flat.body["artifacts"]] == ["payments/api/server", "payments/api/worker", "payments/web"]


def test_prune_keeps_newest_and_reports(api: HandlerApi) -> None:
    # Given
    for i in range(5):
        api.publish("app", f"c{i}".encode())
    # When
    dry = api.call("POST", "/artifacts/app/prune", {"keep_last": 2, "dry_run": True})
    real = api.call("POST", "/artifacts/app/prune", {"keep_last": 2})
    listed = api.call("GET", "/artifacts/app/versions")
    # Then
    assert dry.body["deleted"] == [3, 2, 1] and dry.body["dry_run"] is True
    assert real.body["deleted"] == [3, 2, 1]
    assert [v["version"] for v in listed.body["versions"]] == [5, 4]


def test_put_latest_refuses_blob_with_wrong_size(api: HandlerApi) -> None:
    # Given
    digest = api.upload("app", b"12345")
    # When
    reply = api.call("PUT", "/artifacts/app/latest", {"sha256": digest, "size": 4})
    # Then
    assert reply.status == 400
    assert reply.error["field"] == "size"


def test_put_latest_without_upload_is_409(api: HandlerApi) -> None:
    # When
    reply = api.call("PUT", "/artifacts/app/latest", {"sha256": sha256(b"never"), "size": 5})
    # Then
    assert reply.status == 409
    assert reply.error["field"] == "sha256"


def test_unknown_route_is_404_and_wrong_method_is_405(api: HandlerApi) -> None:
    # When
    unknown = api.call("GET", "/nope")
    wrong = api.call("PATCH", "/artifacts/app/versions")
    # Then
    assert unknown.status == 404 and unknown.error["code"] == "NotFoundError"
    assert wrong.status == 405 and wrong.error["code"] == "MethodNotAllowed"
    assert set(wrong.headers["Allow"].split(", ")) == {"GET", "POST"}


def test_publish_snapshot_of_a_purged_artifact_is_404(api: HandlerApi) -> None:
    # Given
    api.publish("app", b"a")
    api.call("DELETE", "/artifacts/app")
    # When
    reply = api.publish("app")
    deleted = api.call("DELETE", "/artifacts/app/versions/1")
    # Then
    assert reply.status == 404
    assert deleted.status == 404


def test_purge_is_safe_to_rerun_after_a_crash_midway(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given a purge that crashed after marking LATEST and deleting the blobs
    from arca import wiring

    api.publish("team/app", b"a")
    services = wiring.services()
    with iam.acting_as("publish"):
        services.stores.table.update({"pk": "team/app", "sk": "LATEST"}, Update(set={"purging": "x"}))
        services.blobs.delete_prefix("artifacts/team/app/_blobs/")
    blocked = api.publish("team/app", b"b")
    # When it runs again
    again = api.call("DELETE", "/artifacts/team/app")
    # Then it finishes, and the artifact can be made anew with the next number
    assert blocked.status == 409
    assert again.status == 204
    assert api.call("GET", "/artifacts", query={"prefix": "team/"}).body["artifacts"] == []
    assert api.publish("team/app", b"c").body["version"] == 2
