"""Blobs in S3: presigned URLs for every Region, metadata nobody signed, and a wrong blob at a blob's key."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from arca import wiring
from tests.helpers import FAKE_AWS_ENV

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
