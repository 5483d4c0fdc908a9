"""Multipart uploads through the API: part URLs that sign each part's checksum, resume, complete, abort, and
versions of multipart content that carry their parts."""

from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import pytest
import requests

from arca import wiring
from arca.adapters import keys
from arca.domain import multipart
from local import iam
from tests.helpers import HandlerApi, hooked, sha256
from tests.integration.conftest import snapshot

MIB = 1024**2
PART = 5 * MIB
# Two parts: a full one and a short last one.
DATA = bytes(range(256)) * (PART // 256) + b"tail" * 25


def layout(data: bytes, part_size: int = PART) -> dict[str, Any]:
    parts = [sha256(data[i : i + part_size]) for i in range(0, len(data), part_size)]
    return {"sha256": sha256(data), "size": len(data), "part_size": part_size, "parts": parts}


def put_part(target: dict[str, Any], data: bytes, part_size: int = PART) -> requests.Response:
    start = (target["number"] - 1) * part_size
    return requests.put(target["url"], data=data[start : start + part_size], headers=target["headers"], timeout=30)


def start(api: HandlerApi, name: str, data: bytes, **body: Any) -> dict[str, Any]:
    reply = api.call("POST", f"/artifacts/{name}/uploads", {**layout(data), **body})
    assert reply.status == 201, reply.body
    return dict(reply.body["upload"])


def test_a_multipart_upload_is_published_by_its_sha256_and_the_version_carries_its_parts(
    api: HandlerApi, aws: SimpleNamespace
) -> None:
    # Given a multipart upload of two parts, each part PUT to its URL with the headers it names
    upload = start(api, "models/llm", DATA)
    assert [p["number"] for p in upload["parts"]] == [1, 2]
    assert upload["parts"][0]["headers"]["x-amz-checksum-sha256"] == keys_b64(layout(DATA)["parts"][0])
    for target in upload["parts"]:
        assert put_part(target, DATA).status_code == 200
    # When it is completed, then published by its sha256 as any content
    done = api.call("POST", f"/artifacts/models/llm/uploads/{upload['id']}/complete")
    published = api.call("POST", "/artifacts/models/llm/versions", {"sha256": sha256(DATA), "size": len(DATA)})
    # Then the version carries its part size and part hashes, in the publish answer and in GET version
    assert done.status == 200, done.body
    assert (done.body["part_size"], done.body["part_count"]) == (PART, 2)
    assert published.status == 201, published.body
    version = api.call("GET", "/artifacts/models/llm/versions/1").body
    for answer in (published.body, version):
        assert (answer["part_size"], answer["part_count"], answer["parts"]) == (PART, 2, layout(DATA)["parts"])
    # And listings carry the summary, not the hashes; the bytes served are the content's
    listed = api.call("GET", "/artifacts/models/llm/versions").body["versions"][0]
    assert (listed["part_count"], "parts" in listed) == (2, False)
    assert api.call("PUT", "/artifacts/models/llm/aliases/prod", {"version": 1}).status == 201
    for ref in ("1", "prod"):
        url = api.call("GET", f"/artifacts/models/llm/resolve/{ref}").body["download_url"]
        assert sha256(requests.get(url, timeout=30).content) == sha256(DATA)
    # And the object lost its upload tag on publish (the lifecycle rule will not expire it)
    key = keys.multipart_blob_key("models/llm", sha256(DATA), multipart.parts_sha256(layout(DATA)["parts"]))
    assert aws.s3.get_object_tagging(Bucket=aws.bucket, Key=key)["TagSet"] == []


def keys_b64(hex_digest: str) -> str:
    from arca.adapters.s3 import hex_to_b64

    return hex_to_b64(hex_digest)


def test_an_interrupted_upload_resumes_from_the_parts_s3_has(api: HandlerApi) -> None:
    # Given an upload of which only part 1 reached S3
    upload = start(api, "data/set", DATA)
    assert put_part(upload["parts"][0], DATA).status_code == 200
    # When the client asks for its state, and completes too early
    status = api.call("GET", f"/artifacts/data/set/uploads/{upload['id']}")
    early = api.call("POST", f"/artifacts/data/set/uploads/{upload['id']}/complete")
    # Then S3's part 1 is reported and only part 2 gets a (fresh) URL; completing names the missing part
    body = status.body["upload"]
    assert status.status == 200, status.body
    assert (body["uploaded"], [p["number"] for p in body["parts"]], body["missing"]) == (
        [{"number": 1, "size": PART}],
        [2],
        1,
    )
    assert (early.status, early.body["error"]["field"], early.body["error"]["missing"]) == (409, "parts", [2])
    # And a second client starting the same upload resumes the same session
    again = start(api, "data/set", DATA)
    assert (again["id"], [p["number"] for p in again["parts"]]) == (upload["id"], [2])
    # When the last part is sent, completion succeeds, and again (idempotent)
    assert put_part(body["parts"][0], DATA).status_code == 200
    first = api.call("POST", f"/artifacts/data/set/uploads/{upload['id']}/complete")
    second = api.call("POST", f"/artifacts/data/set/uploads/{upload['id']}/complete")
    assert (first.status, second.status, first.body) == (200, 200, second.body)


def test_s3_refuses_a_part_that_is_not_the_declared_one(api: HandlerApi) -> None:
    # Given an upload's URL for part 2
    upload = start(api, "app", DATA)
    target = upload["parts"][1]
    # When other bytes are sent to it
    wrong = requests.put(target["url"], data=b"x" * 100, headers=target["headers"], timeout=30)
    # Then S3 refuses them (the URL signs the part's SHA-256)
    assert (wrong.status_code, "BadDigest" in wrong.text) == (400, True)


def test_exists_only_for_the_same_parts_so_a_wrong_layout_never_blocks_the_true_one(api: HandlerApi) -> None:
    # Given a client that declared the content's sha256 over a part of other bytes: its completion fails (the
    # assembled bytes are hashed), and says so from then on
    other = b"not the content" * 10
    lie = {"sha256": sha256(DATA), "size": len(other), "part_size": len(other), "parts": [sha256(other)]}
    made = api.call("POST", "/artifacts/app/uploads", lie).body["upload"]
    requests.put(made["parts"][0]["url"], data=other, headers=made["parts"][0]["headers"], timeout=30)
    refused = api.call("POST", f"/artifacts/app/uploads/{made['id']}/complete")
    assert (refused.status, refused.body["error"]["field"], refused.body["error"]["state"]) == (409, "sha256", "failed")
    assert api.call("GET", f"/artifacts/app/uploads/{made['id']}").body["state"] == "failed"
    assert api.call("POST", "/artifacts/app/versions", {"sha256": sha256(DATA), "size": len(other)}).status == 409
    # When the true content is uploaded in its own parts
    reply = api.call("POST", "/artifacts/app/uploads", layout(DATA))
    # Then it is not answered `exists`: it gets an upload of its own, which completes beside the wrong one
    assert (reply.status, reply.body["exists"]) == (201, False)
    for target in reply.body["upload"]["parts"]:
        put_part(target, DATA)
    assert api.call("POST", f"/artifacts/app/uploads/{reply.body['upload']['id']}/complete").status == 200
    # And asking again for the true layout is now `exists` (200), with no URL
    again = api.call("POST", "/artifacts/app/uploads", layout(DATA))
    assert (again.status, again.body["exists"], again.body.get("upload")) == (200, True, None)
    # And publishing the sha256 takes the newest completed layout: the true bytes
    published = api.call("POST", "/artifacts/app/versions", {"sha256": sha256(DATA), "size": len(DATA)})
    assert (published.status, published.body["parts"]) == (201, layout(DATA)["parts"])


def test_abort_frees_the_parts_and_forgets_the_upload(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given an upload with one part in S3
    upload = start(api, "app", DATA)
    put_part(upload["parts"][0], DATA)
    before = aws.s3.list_multipart_uploads(Bucket=aws.bucket).get("Uploads", [])
    # When it is aborted
    aborted = api.call("DELETE", f"/artifacts/app/uploads/{upload['id']}")
    # Then 204, S3 has no such upload any more, and the session is gone (404), so is a second abort
    assert aborted.status == 204, aborted.body
    assert len(before) == 1
    assert aws.s3.list_multipart_uploads(Bucket=aws.bucket).get("Uploads", []) == []
    assert api.call("GET", f"/artifacts/app/uploads/{upload['id']}").status == 404
    assert api.call("DELETE", f"/artifacts/app/uploads/{upload['id']}").status == 404


def test_a_completed_upload_cannot_be_aborted(api: HandlerApi) -> None:
    # Given a completed upload (one small part: an only part may be under 5 MiB)
    data = b"small" * 100
    reply = api.call("POST", "/artifacts/app/uploads", layout(data, part_size=len(data)))
    target = reply.body["upload"]["parts"][0]
    requests.put(target["url"], data=data, headers=target["headers"], timeout=30)
    upload_id = reply.body["upload"]["id"]
    assert api.call("POST", f"/artifacts/app/uploads/{upload_id}/complete").status == 200
    # When it is aborted
    refused = api.call("DELETE", f"/artifacts/app/uploads/{upload_id}")
    # Then 409: the content is assembled; GET says it exists
    assert refused.status == 409
    assert api.call("GET", f"/artifacts/app/uploads/{upload_id}").body["exists"] is True


def test_ten_thousand_parts_fit_one_session_and_answers_carry_at_most_a_thousand_urls(api: HandlerApi) -> None:
    # Given the largest layout S3 allows: 10,000 parts (their hashes are 320 KB of the session's item)
    parts = [f"{n:064x}" for n in range(10_000)]
    body = {"sha256": "ab" * 32, "size": 10_000 * PART, "part_size": PART, "parts": parts}
    # When its upload is started
    reply = api.call("POST", "/artifacts/big/uploads", body)
    # Then the answer holds the first 1,000 URLs and says how many parts are missing
    upload = reply.body["upload"]
    assert reply.status == 201, reply.body
    assert (len(upload["parts"]), upload["parts"][-1]["number"], upload["missing"]) == (1000, 1000, 10_000)
    assert upload["part_count"] == 10_000


HEX = "cd" * 32


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"part_size": PART}, 400, "parts"),
        ({"parts": [HEX]}, 400, "part_size"),
        ({"size": 3 * MIB, "part_size": MIB, "parts": [HEX] * 3}, 400, "part_size"),
        ({"size": 6 * 1024**3, "part_size": 6 * 1024**3, "parts": [HEX]}, 400, "part_size"),
        ({"size": 6 * 1024**4, "part_size": 5 * 1024**3, "parts": [HEX] * 1229}, 413, "size"),
        ({"size": 2 * PART, "part_size": PART, "parts": [HEX] * 3}, 400, "parts"),
        ({"size": 10_001 * PART, "part_size": PART, "parts": [HEX] * 10_001}, 400, "parts"),
        ({"size": PART, "part_size": PART, "parts": ["CD" * 32]}, 400, "parts"),
        ({"size": PART, "part_size": PART, "parts": ["cd" * 31]}, 400, "parts"),
        ({"size": 0, "part_size": PART, "parts": []}, 400, "size"),
        ({"size": PART, "part_size": 0, "parts": [HEX]}, 400, "part_size"),
        ({"size": 6 * 1024**3}, 413, "size"),
    ],
)
def test_a_refused_layout_names_its_field_and_writes_nothing(
    api: HandlerApi, aws: SimpleNamespace, body: dict[str, Any], status: int, field: str
) -> None:
    # Given an artifact with a version
    api.publish("app", b"v1")
    before = snapshot(aws)
    # When an upload is asked for with a layout S3 would refuse
    reply = api.call("POST", "/artifacts/app/uploads", {"sha256": HEX, "size": PART, **body})
    # Then it is refused naming the field, and nothing was written (no item, no object, no S3 upload)
    assert (reply.status, reply.body["error"]["field"]) == (status, field), reply.body
    assert snapshot(aws) == before
    assert aws.s3.list_multipart_uploads(Bucket=aws.bucket).get("Uploads", []) == []


def test_an_unknown_upload_id_is_404_and_a_malformed_one_400(api: HandlerApi) -> None:
    api.publish("app", b"v1")
    unknown = api.call("GET", f"/artifacts/app/uploads/{'ab' * 32}.{'cd' * 32}")
    malformed = api.call("POST", "/artifacts/app/uploads/nope/complete")
    assert unknown.status == 404
    assert (malformed.status, malformed.body["error"]["field"]) == (400, "id")


def test_purge_removes_the_uploads_of_an_artifact(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given an artifact with a published multipart version
    data = b"small" * 100
    reply = api.call("POST", "/artifacts/app/uploads", layout(data, part_size=len(data)))
    target = reply.body["upload"]["parts"][0]
    requests.put(target["url"], data=data, headers=target["headers"], timeout=30)
    api.call("POST", f"/artifacts/app/uploads/{reply.body['upload']['id']}/complete")
    api.call("POST", "/artifacts/app/versions", {"sha256": sha256(data), "size": len(data)})
    # When it is purged
    assert api.call("DELETE", "/artifacts/app").status == 204
    # Then no upload item and no object of it is left
    left = snapshot(aws)
    assert [i for i in left["items"] if i[0] == keys.uploads_pk("app")] == []
    assert left["objects"] == []


def _part_uploaded(aws: SimpleNamespace, key: str, body: bytes) -> str:
    from arca.adapters.s3 import hex_to_b64

    upload = aws.s3.create_multipart_upload(Bucket=aws.bucket, Key=key, ChecksumAlgorithm="SHA256")["UploadId"]
    aws.s3.upload_part(
        Bucket=aws.bucket, Key=key, UploadId=upload, PartNumber=1, Body=body, ChecksumSHA256=hex_to_b64(sha256(body))
    )
    return str(upload)


def test_local_s3_lists_each_parts_checksum_as_s3_does(aws: SimpleNamespace) -> None:
    # Given a part uploaded with its SHA-256
    upload = _part_uploaded(aws, "k", b"part")
    # When the parts are listed
    parts = aws.s3.list_parts(Bucket=aws.bucket, Key="k", UploadId=upload)["Parts"]
    # Then the part carries its checksum (moto alone lists none)
    assert [p.get("ChecksumSHA256") for p in parts] == [keys_b64(sha256(b"part"))]


def test_local_s3_refuses_a_completion_listing_another_checksum(aws: SimpleNamespace) -> None:
    # Given a part uploaded with its SHA-256
    upload = _part_uploaded(aws, "k", b"part")
    etag = aws.s3.list_parts(Bucket=aws.bucket, Key="k", UploadId=upload)["Parts"][0]["ETag"]
    listed = {"PartNumber": 1, "ETag": etag, "ChecksumSHA256": keys_b64(sha256(b"other"))}
    # When the upload is completed listing another checksum for it
    with pytest.raises(Exception) as refused:
        aws.s3.complete_multipart_upload(
            Bucket=aws.bucket, Key="k", UploadId=upload, MultipartUpload={"Parts": [listed]}
        )
    # Then S3's refusal: InvalidPart, and no object
    assert "InvalidPart" in str(refused.value)
    assert aws.s3.list_objects_v2(Bucket=aws.bucket).get("KeyCount") == 0


def _s3_upload_of(target: dict[str, Any]) -> str:
    from urllib.parse import parse_qs, urlsplit

    return parse_qs(urlsplit(target["url"]).query)["uploadId"][0]


def test_two_clients_starting_one_upload_keep_one_session(
    api: HandlerApi, aws: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a first client's upload, and a second client that read no session before the first recorded it
    first = start(api, "app", DATA)
    from arca.adapters.store.uploads import UploadStore as Store

    real, reads = Store.get, []

    def blind(self: Store, name: str, upload: str) -> Any:
        reads.append(upload)
        return None if len(reads) == 1 else real(self, name, upload)

    monkeypatch.setattr(Store, "get", blind)
    # When the second client starts the same layout
    second = start(api, "app", DATA)
    # Then it gets the first session's S3 upload, and its own was aborted: one upload in S3
    assert (second["id"], _s3_upload_of(second["parts"][0])) == (first["id"], _s3_upload_of(first["parts"][0]))
    assert len(aws.s3.list_multipart_uploads(Bucket=aws.bucket)["Uploads"]) == 1


def test_an_upload_s3_has_aborted_is_started_again(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given an upload whose S3 upload the bucket's lifecycle rule aborted
    first = start(api, "app", DATA)
    key = keys.multipart_blob_key("app", sha256(DATA), multipart.parts_sha256(layout(DATA)["parts"]))
    aws.s3.abort_multipart_upload(Bucket=aws.bucket, Key=key, UploadId=_s3_upload_of(first["parts"][0]))
    # When a client asks for it, by its id and by its layout
    gone = api.call("GET", f"/artifacts/app/uploads/{first['id']}")
    again = start(api, "app", DATA)
    # Then its id answers 404 until a new S3 upload takes the session's place, under the same id
    assert gone.status == 404
    assert again["id"] == first["id"] and _s3_upload_of(again["parts"][0]) != _s3_upload_of(first["parts"][0])
    for target in again["parts"]:
        assert put_part(target, DATA).status_code == 200
    assert api.call("POST", f"/artifacts/app/uploads/{again['id']}/complete").status == 200


def test_publishing_ten_thousand_parts_again_with_an_idempotency_key_is_deduplicated(
    api: HandlerApi, aws: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a version of content in 10,000 parts (their hex hashes alone are 650 KB; an item holds 400 KB),
    # assembled by hand as S3 would have (moto keeps parts in memory: one byte a part stands for each)
    from arca.adapters.store.uploads import UploadSession
    from arca.adapters.store.uploads import UploadStore as Store

    parts = [f"{n:064x}" for n in range(10_000)]
    session = UploadSession("app", "ab" * 32, 10_000 * PART, PART, parts, "s3-upload", "2026-01-01T00:00:00.000Z")
    key = keys.multipart_blob_key("app", session.sha256, session.parts_sha256)
    aws.s3.put_object(Bucket=aws.bucket, Key=key, Body=b"")
    with iam.acting_as("publish"):
        store = Store(wiring.services().stores.table)
        assert store.start(session, ttl=0) is not None
        store.verified(session, now="2026-01-01T00:00:01.000Z")  # as if its bytes had been hashed
        stat = wiring.services().blobs.stat(key)
    monkeypatch.setattr(wiring.services().publishing.multipart, "verify", lambda *_: stat)
    body = {"sha256": session.sha256, "size": session.size}
    first = api.call("POST", "/artifacts/app/versions", body)
    # When it is published again with an Idempotency-Key, twice
    again = api.call("POST", "/artifacts/app/versions", body, headers={"Idempotency-Key": "k1"})
    replay = api.call("POST", "/artifacts/app/versions", body, headers={"Idempotency-Key": "k1"})
    # Then it is deduplicated with its parts, and the replay answers without the hashes (the record stays small)
    assert first.status == 201, first.body
    assert (again.status, again.body["deduplicated"], len(again.body["parts"])) == (200, True, 10_000)
    assert (replay.status, replay.body["part_count"], "parts" in replay.body) == (200, 10_000, False)


def test_multipart_content_published_near_its_expiry_keeps_its_layout(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given multipart content uploaded six and a half days ago, never published
    upload = start(api, "models/old", DATA)
    for target in upload["parts"]:
        assert put_part(target, DATA).status_code == 200
    assert api.call("POST", f"/artifacts/models/old/uploads/{upload['id']}/complete").status == 200
    blobs = wiring.services().blobs
    moment = blobs.clock()
    blobs.clock = lambda: moment + timedelta(days=6.5)  # type: ignore[method-assign]
    calls: list[str] = []
    # When it is published
    with hooked("before-call.s3.*", lambda model, **_: calls.append(model.name)):
        reply = api.call("POST", "/artifacts/models/old/versions", {"sha256": sha256(DATA), "size": len(DATA)})
    # Then its upload tag is removed in place: no copy, which would replace S3's composite checksum of the parts
    assert reply.status == 201, reply.body
    assert "CopyObject" not in calls and "DeleteObjectTagging" in calls, calls
    key = keys.multipart_blob_key("models/old", sha256(DATA), multipart.parts_sha256(layout(DATA)["parts"]))
    assert aws.s3.get_object_tagging(Bucket=aws.bucket, Key=key)["TagSet"] == []
    # And the layout is still the one S3 holds: the same parts are stored, and publishing it again works
    again = api.call("POST", "/artifacts/models/old/uploads", layout(DATA))
    assert (again.status, again.body["exists"]) == (200, True), again.body
    forced = {"sha256": sha256(DATA), "size": len(DATA), "force": True}
    assert api.call("POST", "/artifacts/models/old/versions", forced).status == 201
