"""Blobs in S3: presigned URLs for every Region, headers nobody signed, a wrong blob at a blob's key, upload tags."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

from arca import wiring
from arca.adapters import keys
from tests.helpers import FAKE_AWS_ENV, HandlerApi, sha256

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
    upload = blobs.presign_upload("artifacts/app/_blobs/x", SHA)["url"]
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


def test_a_wrong_blob_at_the_key_never_blocks_the_upload_of_the_true_bytes(
    api: HandlerApi, aws: SimpleNamespace
) -> None:
    # Given other bytes of the same size stored directly at the key of the true blob
    data = b"the true bytes"
    aws.s3.put_object(Bucket=aws.bucket, Key=_blob_key("app", data), Body=b"x" * len(data))
    # When the true bytes go through the upload flow and are published
    answer = api.call("POST", "/artifacts/app/uploads", {"sha256": sha256(data), "size": len(data)})
    published = api.publish("app", data)
    # Then the upload was not skipped, the true bytes replaced the wrong ones, and they are what is served
    assert (answer.status, answer.body["exists"]) == (201, False)
    assert published.status == 201, published.body
    resolved = api.call("GET", "/artifacts/app/resolve/1")
    assert requests.get(resolved.body["download_url"], timeout=10).content == data


def test_a_blob_with_unsigned_headers_is_not_reported_as_stored(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given the true bytes stored with a Content-Encoding nobody signed
    data = b"true bytes, gzip claimed"
    aws.s3.put_object(Bucket=aws.bucket, Key=_blob_key("app", data), Body=data, ContentEncoding="gzip")
    # When an upload is asked for
    answer = api.call("POST", "/artifacts/app/uploads", {"sha256": sha256(data), "size": len(data)})
    # Then it must be uploaded again, and the upload replaces the object and its headers
    assert answer.body["exists"] is False
    assert api.publish("app", data).status == 201
    assert "ContentEncoding" not in aws.s3.head_object(Bucket=aws.bucket, Key=_blob_key("app", data))


@pytest.mark.parametrize(
    ("attributes", "header"),
    [
        ({"ContentEncoding": "gzip"}, "Content-Encoding"),
        ({"CacheControl": "public, max-age=31536000"}, "Cache-Control"),
        ({"ContentDisposition": "inline"}, "Content-Disposition"),
        ({"Metadata": {"owner": "mallory"}}, "x-amz-meta-owner"),
    ],
)
def test_publishing_a_blob_with_unsigned_headers_deletes_it_and_asks_for_a_new_upload(
    api: HandlerApi, aws: SimpleNamespace, attributes: dict[str, Any], header: str
) -> None:
    # Given the true bytes stored with a header the upload URL did not sign
    data = b"bytes another team will publish"
    key = _blob_key("app", data)
    aws.s3.put_object(Bucket=aws.bucket, Key=key, Body=data, **attributes)
    # When they are published
    reply = api.call("POST", "/artifacts/app/versions", {"sha256": sha256(data), "size": len(data)})
    # Then the publish is refused naming the header, nothing is published, and the object is gone
    assert reply.status == 409, reply.body
    assert reply.error["headers"] == [header]
    assert reply.error["field"] == "sha256"
    assert api.call("GET", "/artifacts/app").status == 404
    assert "Contents" not in aws.s3.list_objects_v2(Bucket=aws.bucket, Prefix=key)
    # And an honest upload afterwards goes through
    assert api.publish("app", data).status == 201


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

    from arca.adapters.s3 import Blobs
    from arca.domain.errors import ConflictError

    client = boto3.client("s3")
    blobs = Blobs(client, aws.bucket, clock=wiring.services().policy.clock)
    stub = Stubber(client)
    stub.add_client_error("delete_object_tagging", "NoSuchKey", http_status_code=404)
    # When / Then
    with stub, pytest.raises(ConflictError) as gone:
        blobs.mark_published(keys.blob_key("app", sha256(b"x")))
    assert gone.value.field == "sha256"
