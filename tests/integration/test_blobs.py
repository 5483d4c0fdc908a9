"""Blobs in S3: presigned URLs for every Region, headers nobody signed, a wrong blob at a blob's key, upload tags."""

from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

from arca import wiring
from arca.adapters import keys
from arca.adapters.s3 import hex_to_b64
from arca.domain.entities import UploadTarget
from local import iam
from tests.helpers import FAKE_AWS_ENV, HandlerApi, hooked, sha256

SHA = "ab" * 32


@pytest.mark.parametrize("region", ["af-south-1", "eu-west-1", "us-east-1"])
def test_presigned_urls_use_the_regions_own_virtual_hosted_endpoint(
    monkeypatch: pytest.MonkeyPatch, region: str
) -> None:
    # Given the functions' environment in a Region, with no custom S3 endpoint
    for key, value in {**FAKE_AWS_ENV, "AWS_REGION": region, "AWS_DEFAULT_REGION": region}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("ARCA_TABLE_NAME", "t")
    monkeypatch.setenv("ARCA_BUCKET_NAME", "arca-blobs")
    for key in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(key, raising=False)
    wiring.reset()
    blobs = wiring.services().blobs
    # When an upload and a download are presigned (locally: no call is made)
    upload = blobs.presign_upload("artifacts/app/_blobs/x", SHA).url
    download, _ = blobs.presign_download("artifacts/app/_blobs/x", content_type="text/plain", filename="app-1")
    wiring.reset()
    # Then both name the bucket in the host of the Region's endpoint, never the legacy global one
    for url in (upload, download):
        parts = urlsplit(url)
        assert (parts.scheme, parts.netloc) == ("https", f"arca-blobs.s3.{region}.amazonaws.com")
        assert parts.path == "/artifacts/app/_blobs/x"
        assert parse_qs(parts.query)["X-Amz-Algorithm"] == ["AWS4-HMAC-SHA256"]


def test_a_custom_s3_endpoint_keeps_path_style_urls(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given local mode's environment: S3 at an address that cannot carry the bucket in its host name
    for key, value in FAKE_AWS_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("ARCA_TABLE_NAME", "t")
    monkeypatch.setenv("ARCA_BUCKET_NAME", "arca-blobs")
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:4566")
    wiring.reset()
    # When a download is presigned
    url, _ = wiring.services().blobs.presign_download("artifacts/app/_blobs/x", content_type="a/b", filename="f")
    wiring.reset()
    # Then the bucket is the first segment of the path on that endpoint
    assert url.startswith("http://127.0.0.1:4566/arca-blobs/artifacts/app/_blobs/x?")


def _blob_key(name: str, data: bytes) -> str:
    return keys.blob_key(name, sha256(data))


def test_other_bytes_at_a_blobs_key_are_refused_and_never_replaced(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given other bytes of the same size stored directly at the key of the true blob
    data = b"the true bytes"
    key = _blob_key("app", data)
    aws.s3.put_object(Bucket=aws.bucket, Key=key, Body=b"x" * len(data))
    # When an upload of the true bytes is asked for, and they are published
    answer = api.call("POST", "/artifacts/app/uploads", {"sha256": sha256(data), "size": len(data)})
    published = api.call("POST", "/artifacts/app/versions", {"sha256": sha256(data), "size": len(data)})
    # Then no URL is issued (it could not replace the object), nothing is published, the object is untouched
    assert (answer.status, answer.error["field"]) == (409, "sha256"), answer.body
    assert (published.status, published.error["field"]) == (400, "sha256"), published.body
    assert api.call("GET", "/artifacts/app").status == 404
    assert aws.s3.get_object(Bucket=aws.bucket, Key=key)["Body"].read() == b"x" * len(data)


def test_a_blob_with_unsigned_headers_is_stored_and_publishing_rewrites_it_without_them(
    api: HandlerApi, aws: SimpleNamespace
) -> None:
    # Given the true bytes stored with a Content-Encoding nobody signed
    data = b"true bytes, gzip claimed"
    aws.s3.put_object(Bucket=aws.bucket, Key=_blob_key("app", data), Body=data, ContentEncoding="gzip")
    # When an upload is asked for
    answer = api.call("POST", "/artifacts/app/uploads", {"sha256": sha256(data), "size": len(data)})
    # Then the bytes count as stored (no URL could replace them), and publishing drops the header
    assert answer.body["exists"] is True
    assert api.publish("app", data).status == 201
    assert "ContentEncoding" not in aws.s3.head_object(Bucket=aws.bucket, Key=_blob_key("app", data))


@pytest.mark.parametrize(
    ("attributes", "header"),
    [
        ({"ContentEncoding": "gzip"}, "ContentEncoding"),
        ({"CacheControl": "public, max-age=31536000"}, "CacheControl"),
        ({"ContentDisposition": "inline"}, "ContentDisposition"),
        ({"Metadata": {"owner": "mallory"}}, "Metadata"),
    ],
)
def test_publishing_a_blob_with_unsigned_headers_repairs_it_in_place(
    api: HandlerApi, aws: SimpleNamespace, attributes: dict[str, Any], header: str
) -> None:
    # Given the true bytes, uploaded through a presigned PUT with a header the URL did not sign
    data = b"bytes another team will publish"
    key = _blob_key("app", data)
    upload = api.call("POST", "/artifacts/app/uploads", {"sha256": sha256(data), "size": len(data)}).body["upload"]
    extra = {"ContentEncoding": "Content-Encoding", "CacheControl": "Cache-Control"}
    extra |= {"ContentDisposition": "Content-Disposition", "Metadata": "x-amz-meta-owner"}
    value = attributes[header] if header != "Metadata" else "mallory"
    put = requests.put(upload["url"], data=data, headers={**upload["headers"], extra[header]: value}, timeout=10)
    assert put.status_code == 200, put.text
    assert aws.s3.head_object(Bucket=aws.bucket, Key=key).get(header) == attributes[header]
    # When they are published
    reply = api.call("POST", "/artifacts/app/versions", {"sha256": sha256(data), "size": len(data)})
    # Then the version is made, and its blob holds the same bytes without the header and without the upload tag
    assert reply.status == 201, reply.body
    assert not aws.s3.head_object(Bucket=aws.bucket, Key=key).get(header)
    assert aws.s3.get_object(Bucket=aws.bucket, Key=key)["Body"].read() == data
    assert aws.s3.get_object_tagging(Bucket=aws.bucket, Key=key)["TagSet"] == []


def test_a_refused_publish_of_a_blob_with_unsigned_headers_leaves_the_blob(
    api: HandlerApi, aws: SimpleNamespace
) -> None:
    # Given a published version whose blob carries a header nobody signed
    data = b"bytes a version already points at"
    key = _blob_key("app", data)
    assert api.publish("app", data).status == 201
    aws.s3.copy_object(
        Bucket=aws.bucket,
        Key=key,
        CopySource={"Bucket": aws.bucket, "Key": key},
        MetadataDirective="REPLACE",
        Metadata={"owner": "mallory"},
    )
    # When a publish of the same content is refused by its check (a wrong size)
    reply = api.call("POST", "/artifacts/app/versions", {"sha256": sha256(data), "size": len(data) + 1})
    # Then the blob the version points at is still there, and still serves its bytes
    assert reply.status == 400, reply.body
    assert aws.s3.get_object(Bucket=aws.bucket, Key=key)["Body"].read() == data
    resolved = api.call("GET", "/artifacts/app/resolve/1")
    assert requests.get(resolved.body["download_url"], timeout=10).content == data


def test_an_upload_url_cannot_replace_a_published_blob(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given an upload URL, used once, and the blob published
    data = b"published bytes"
    key = _blob_key("app", data)
    upload = api.call("POST", "/artifacts/app/uploads", {"sha256": sha256(data), "size": len(data)}).body["upload"]
    assert requests.put(upload["url"], data=data, headers=upload["headers"], timeout=10).status_code == 200
    assert api.call("POST", "/artifacts/app/versions", {"sha256": sha256(data), "size": len(data)}).status == 201
    # When the URL, still live, is used again
    again = requests.put(upload["url"], data=data, headers=upload["headers"], timeout=10)
    # Then S3 refuses it (the URL signs If-None-Match: *), and the blob stays published: no upload tag
    assert upload["headers"]["If-None-Match"] == "*"
    assert again.status_code == 412, again.text
    assert aws.s3.get_object_tagging(Bucket=aws.bucket, Key=key)["TagSet"] == []


def test_an_upload_target_is_typed_and_answers_the_same_json(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given the presigned PUT the blobs adapter makes for some bytes
    data = b"bytes to upload"
    with iam.acting_as("publish"):
        target = wiring.services().blobs.presign_upload(_blob_key("app", data), sha256(data))
    # Then it is an UploadTarget (not a map), and the upload answer is its JSON, field for field and in order
    assert isinstance(target, UploadTarget)
    body = api.call("POST", "/artifacts/app/uploads", {"sha256": sha256(data), "size": len(data)}).body
    assert list(body) == ["exists", "sha256", "size", "upload"] and body["exists"] is False
    upload = body["upload"]
    assert list(upload) == ["url", "method", "headers", "expires_at"] and upload["method"] == "PUT"
    assert upload["headers"] == {
        "Content-Type": "application/octet-stream",
        "x-amz-checksum-sha256": hex_to_b64(sha256(data)),
        "x-amz-tagging": "arca:state=uploaded",
        "If-None-Match": "*",
    }
    assert list(upload["headers"]) == list(target.headers)


def test_a_body_that_does_not_match_the_signed_checksum_is_refused(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given an upload URL for some bytes
    data = b"the bytes the URL was issued for"
    upload = api.call("POST", "/artifacts/app/uploads", {"sha256": sha256(data), "size": len(data)}).body["upload"]
    # When other bytes are sent to it
    put = requests.put(upload["url"], data=b"other bytes, same URL", headers=upload["headers"], timeout=10)
    # Then S3's answer is BadDigest, nothing is stored, and the true bytes can still be uploaded
    assert put.status_code == 400
    assert "<Code>BadDigest</Code>" in put.text
    assert "Contents" not in aws.s3.list_objects_v2(Bucket=aws.bucket, Prefix=_blob_key("app", data))
    assert requests.put(upload["url"], data=data, headers=upload["headers"], timeout=10).status_code == 200


def test_a_part_that_does_not_match_its_signed_checksum_is_refused(aws: SimpleNamespace) -> None:
    # Given a multipart upload and a presigned URL for its part 1, signing the part's SHA-256
    part = b"part one" * 1000
    key = "artifacts/app/_blobs/multi"
    upload_id = aws.s3.create_multipart_upload(Bucket=aws.bucket, Key=key, ChecksumAlgorithm="SHA256")["UploadId"]
    checksum = hex_to_b64(sha256(part))
    url = aws.s3.generate_presigned_url(
        "upload_part",
        Params={"Bucket": aws.bucket, "Key": key, "UploadId": upload_id, "PartNumber": 1, "ChecksumSHA256": checksum},
    )
    headers = {"x-amz-checksum-sha256": checksum}
    # When other bytes are sent as the part, then the true ones
    wrong = requests.put(url, data=b"x" * len(part), headers=headers, timeout=10)
    right = requests.put(url, data=part, headers=headers, timeout=10)
    # Then the wrong part is refused with BadDigest, and the true part is accepted
    assert (wrong.status_code, "<Code>BadDigest</Code>" in wrong.text) == (400, True)
    assert right.status_code == 200, right.text


def test_download_urls_pin_the_headers_a_client_acts_on(api: HandlerApi) -> None:
    # Given a published version
    api.publish("team/app", b"payload", content_type="application/zip")
    # When it is resolved
    url = api.call("GET", "/artifacts/team/app/resolve/1").body["download_url"]
    # Then the signed URL fixes type, disposition, encoding and caching, whatever is stored with the object
    query = parse_qs(urlsplit(url).query)
    assert query["response-content-type"] == ["application/zip"]
    assert query["response-content-disposition"] == ['attachment; filename="app-1"']  # no file name recorded
    assert query["response-content-encoding"] == ["identity"]
    assert query["response-cache-control"] == ["private, no-store"]


def test_an_upload_is_tagged_until_it_is_published(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given bytes uploaded through a presigned PUT (which signs the upload tag)
    data = b"uploaded, not yet published"
    api.upload("app", data)
    key = _blob_key("app", data)
    before = aws.s3.get_object_tagging(Bucket=aws.bucket, Key=key)["TagSet"]
    # When they become LATEST
    assert api.call("PUT", "/artifacts/app/latest", {"sha256": sha256(data), "size": len(data)}).status == 200
    # Then the tag that lets the lifecycle expire unpublished uploads is gone
    assert before == [{"Key": "arca:state", "Value": "uploaded"}]
    assert aws.s3.get_object_tagging(Bucket=aws.bucket, Key=key)["TagSet"] == []


def test_a_refused_publish_leaves_the_upload_tag(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given an upload
    data = b"uploaded bytes"
    api.upload("app", data)
    # When a publish of it declares the wrong size
    reply = api.call("POST", "/artifacts/app/versions", {"sha256": sha256(data), "size": len(data) + 1})
    # Then it is refused and the blob is still an unpublished upload
    assert reply.status == 400
    tags = aws.s3.get_object_tagging(Bucket=aws.bucket, Key=_blob_key("app", data))["TagSet"]
    assert tags == [{"Key": "arca:state", "Value": "uploaded"}]


def test_a_blob_deleted_between_its_check_and_keeping_it_is_a_conflict_naming_the_content(aws: SimpleNamespace) -> None:
    # Given S3 answering that the object is gone when its upload tag is removed (a purge ran in between)
    import boto3
    from botocore.stub import Stubber

    from arca.adapters.s3 import Blobs, BlobStat
    from arca.domain.errors import ConflictError

    client = boto3.client("s3")
    blobs = Blobs(client, aws.bucket, clock=wiring.services().policy.clock)
    stub = Stubber(client)
    stub.add_client_error("delete_object_tagging", "NoSuchKey", http_status_code=404)
    # When / Then
    with stub, pytest.raises(ConflictError) as gone:
        blobs.keep(keys.blob_key("app", sha256(b"x")), BlobStat(size=1, sha256_b64=None))
    assert gone.value.field == "sha256"


def test_a_blob_collected_between_its_head_and_its_hashing_is_a_conflict_naming_the_content(
    aws: SimpleNamespace,
) -> None:
    # Given S3 answering HeadObject without a checksum (hash the bytes), then NoSuchKey: retention collected it
    import boto3
    from botocore.stub import Stubber

    from arca.adapters.s3 import Blobs
    from arca.domain.errors import ConflictError

    client = boto3.client("s3")
    blobs = Blobs(client, aws.bucket, clock=wiring.services().policy.clock)
    stub = Stubber(client)
    stub.add_response("head_object", {"ContentLength": 1, "ETag": '"e"'})
    stub.add_client_error("get_object", "NoSuchKey", http_status_code=404)
    # When / Then: a conflict naming the content, as if it had never been uploaded (never a 500)
    with stub, pytest.raises(ConflictError) as gone:
        blobs.verify(keys.blob_key("app", sha256(b"x")), sha256(b"x"), 1)
    assert gone.value.field == "sha256"


def _days_later(days: float) -> None:
    blobs = wiring.services().blobs
    now = blobs.clock()
    blobs.clock = lambda: now + timedelta(days=days)  # type: ignore[method-assign]


def test_an_upload_near_its_expiry_is_rewritten_when_published(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given an upload six and a half days old, a day before the lifecycle rule may expire it
    data = b"uploaded last week"
    key = _blob_key("app", data)
    api.upload("app", data)
    _days_later(6.5)
    calls: list[str] = []
    # When it is published
    with hooked("before-call.s3.*", lambda model, **_: calls.append(model.name)):
        reply = api.call("POST", "/artifacts/app/versions", {"sha256": sha256(data), "size": len(data)})
    # Then the blob was copied onto itself untagged (its age and its tag both start over, so no rule applies)
    assert reply.status == 201, reply.body
    assert "CopyObject" in calls
    assert "DeleteObjectTagging" not in calls
    assert aws.s3.get_object_tagging(Bucket=aws.bucket, Key=key)["TagSet"] == []
    assert aws.s3.get_object(Bucket=aws.bucket, Key=key)["Body"].read() == data


def test_an_expired_upload_is_never_published_nor_reported_stored(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given an upload nobody published for more than a week (S3 may have queued it for removal)
    data = b"abandoned upload"
    key = _blob_key("app", data)
    api.upload("app", data)
    _days_later(7.5)
    # When it is published, or an upload of it is asked for
    published = api.call("POST", "/artifacts/app/versions", {"sha256": sha256(data), "size": len(data)})
    asked = api.call("POST", "/artifacts/app/uploads", {"sha256": sha256(data), "size": len(data)})
    # Then both are refused, and the upload is left to the lifecycle rule, tag and all
    assert (published.status, published.error["field"]) == (409, "sha256"), published.body
    assert (asked.status, asked.error["field"]) == (409, "sha256"), asked.body
    assert api.call("GET", "/artifacts/app").status == 404
    tags = aws.s3.get_object_tagging(Bucket=aws.bucket, Key=key)["TagSet"]
    assert tags == [{"Key": "arca:state", "Value": "uploaded"}]


def test_a_published_blob_a_month_old_is_published_again_without_a_copy(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given a blob published a month ago
    data = b"long published"
    api.publish("app", data)
    _days_later(30)
    calls: list[str] = []
    # When it is published again (force: a new version of the same content)
    with hooked("before-call.s3.*", lambda model, **_: calls.append(model.name)):
        reply = api.publish("app", data, force=True)
    # Then its tags are read, and nothing is rewritten
    assert reply.status == 201, reply.body
    assert "GetObjectTagging" in calls
    assert "CopyObject" not in calls


def test_an_upload_leaving_out_a_signed_header_is_refused(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given an upload URL that signs If-None-Match among its headers
    data = b"bytes sent without the create-only condition"
    upload = api.call("POST", "/artifacts/app/uploads", {"sha256": sha256(data), "size": len(data)}).body["upload"]
    headers = {k: v for k, v in upload["headers"].items() if k != "If-None-Match"}
    # When the bytes are sent without it
    put = requests.put(upload["url"], data=data, headers=headers, timeout=10)
    # Then S3 refuses the request as it would a wrong signature, and nothing is stored
    assert (put.status_code, "<Code>SignatureDoesNotMatch</Code>" in put.text) == (403, True), put.text
    assert "Contents" not in aws.s3.list_objects_v2(Bucket=aws.bucket, Prefix=_blob_key("app", data))


def test_an_upload_sending_another_checksum_than_the_signed_one_is_refused(
    api: HandlerApi, aws: SimpleNamespace
) -> None:
    # Given an upload URL issued for some bytes (its signature covers their checksum)
    data = b"the bytes the URL was issued for"
    upload = api.call("POST", "/artifacts/app/uploads", {"sha256": sha256(data), "size": len(data)}).body["upload"]
    other = b"other bytes, sent with their own checksum"
    # When other bytes are sent with a checksum header that matches them, not the signed one
    headers = {**upload["headers"], "x-amz-checksum-sha256": hex_to_b64(sha256(other))}
    put = requests.put(upload["url"], data=other, headers=headers, timeout=10)
    # Then S3 refuses the signature, and nothing is stored; the URL still takes the bytes it was issued for
    assert (put.status_code, "<Code>SignatureDoesNotMatch</Code>" in put.text) == (403, True), put.text
    assert "Contents" not in aws.s3.list_objects_v2(Bucket=aws.bucket, Prefix="artifacts/app/")
    assert requests.put(upload["url"], data=data, headers=upload["headers"], timeout=10).status_code == 200


@pytest.mark.parametrize(
    ("header", "value"),
    [("x-amz-tagging", "arca:state=published"), ("Content-Type", "text/html"), ("If-None-Match", "")],
)
def test_an_upload_changing_any_signed_header_is_refused(
    api: HandlerApi, aws: SimpleNamespace, header: str, value: str
) -> None:
    # Given an upload URL and the headers it signed
    data = b"bytes with a signed header changed"
    upload = api.call("POST", "/artifacts/app/uploads", {"sha256": sha256(data), "size": len(data)}).body["upload"]
    # When one signed header is sent with another value
    put = requests.put(upload["url"], data=data, headers={**upload["headers"], header: value}, timeout=10)
    # Then the signature does not match, and nothing is stored
    assert (put.status_code, "<Code>SignatureDoesNotMatch</Code>" in put.text) == (403, True), put.text
    assert "Contents" not in aws.s3.list_objects_v2(Bucket=aws.bucket, Prefix="artifacts/app/")


def test_a_part_sent_with_another_checksum_than_its_signed_one_is_refused(aws: SimpleNamespace) -> None:
    # Given a part URL of a multipart upload, as Arca signs it (SigV4, the part's SHA-256 signed)
    part, other = b"part one" * 1000, b"part two" * 1000
    key = "artifacts/app/_blobs/multi"
    upload_id = aws.s3.create_multipart_upload(Bucket=aws.bucket, Key=key, ChecksumAlgorithm="SHA256")["UploadId"]
    with iam.acting_as("publish"):
        target = wiring.services().uploads.multipart.presign_part(key, upload_id, 1, sha256(part))
    # When other bytes are sent as the part with their own checksum
    headers = {**target.headers, "x-amz-checksum-sha256": hex_to_b64(sha256(other))}
    wrong = requests.put(target.url, data=other, headers=headers, timeout=10)
    right = requests.put(target.url, data=part, headers=target.headers, timeout=10)
    # Then the signature does not match, and the signed part is accepted
    assert (wrong.status_code, "<Code>SignatureDoesNotMatch</Code>" in wrong.text) == (403, True), wrong.text
    assert right.status_code == 200, right.text
    listed = aws.s3.list_parts(Bucket=aws.bucket, Key=key, UploadId=upload_id)["Parts"]
    assert [p["ChecksumSHA256"] for p in listed] == [hex_to_b64(sha256(part))]


def test_local_s3_answers_the_tags_of_a_missing_object_with_no_such_key_as_s3_does(aws: SimpleNamespace) -> None:
    # Given no object at a key (moto alone fails this call with a 500)
    from botocore.exceptions import ClientError

    # When its tags are removed / Then S3's 404 NoSuchKey, which publishing reads as "collected meanwhile"
    with pytest.raises(ClientError) as missing:
        aws.s3.delete_object_tagging(Bucket=aws.bucket, Key=keys.blob_key("app", sha256(b"gone")))
    assert missing.value.response["Error"]["Code"] == "NoSuchKey"
