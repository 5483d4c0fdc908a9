"""Publishing over HTTP against the local server: the handlers on DynamoDB Local and moto's S3 server.

What the handlers answer is tested in process (tests/integration); here, what only HTTP shows: bytes through
the presigned URLs of moto's S3 server, curl's uploads, paths as a server receives them, the request id header."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import requests

from arca.adapters.s3 import hex_to_b64
from tests.helpers import HTTP_TIMEOUT, PATIENCE, sha256

if TYPE_CHECKING:
    from tests.e2e.conftest import ArcaHttp

BLOB_SIZES = [pytest.param(11_000, id="11KB"), pytest.param(3 * 1024 * 1024, id="3MB")]


@pytest.mark.parametrize("size", BLOB_SIZES)
def test_published_version_downloads_byte_identical(arca: ArcaHttp, unique: str, size: int) -> None:
    # Given LATEST pointing at an uploaded blob (PUT latest checks the stored bytes against the sha256)
    name = f"{unique}/app"
    data = os.urandom(size)
    latest = arca.set_latest(name, data, content_type="application/zip")
    assert latest.status_code == 200, latest.text
    assert latest.json()["sha256"] == sha256(data)
    # When
    published = arca.post(f"/artifacts/{name}/versions")
    resolved = arca.get(f"/artifacts/{name}/resolve/1")
    # Then
    assert published.status_code == 201, published.text
    assert published.json()["version"] == 1
    assert resolved.status_code == 200, resolved.text
    assert (resolved.json()["version"], resolved.json()["sha256"]) == (1, sha256(data))
    download = requests.get(resolved.json()["download_url"], timeout=HTTP_TIMEOUT)
    assert download.status_code == 200
    assert download.headers["Content-Type"] == "application/zip"
    assert download.content == data


def test_content_of_latest_redirects_to_its_bytes(arca: ArcaHttp, unique: str) -> None:
    # Given
    name = f"{unique}/site"
    data = b"<html>hello</html>"
    assert arca.set_latest(name, data, content_type="text/html").status_code == 200
    # When
    redirect = arca.get(f"/artifacts/{name}/resolve/LATEST/content", allow_redirects=False)
    # Then
    assert redirect.status_code == 302, redirect.text
    download = requests.get(redirect.headers["Location"], timeout=HTTP_TIMEOUT)
    assert download.content == data


def test_unknown_path_is_404_in_the_error_shape(arca: ArcaHttp) -> None:
    # When
    reply = arca.get("/no/such/thing")
    # Then
    assert reply.status_code == 404
    error = reply.json()["error"]
    assert error["code"] == "NotFoundError"
    assert error["request_id"] == reply.headers["x-amzn-RequestId"]


@pytest.mark.parametrize(
    ("method", "suffix", "word"),
    [
        pytest.param("PUT", "/team/latest/app/latest", "'latest'", id="reserved-latest"),
        pytest.param("POST", "/team/versions/app/versions", "'versions'", id="reserved-versions"),
        pytest.param("PUT", "/team/aliases/app/aliases/prod", "'aliases'", id="reserved-aliases"),
        pytest.param("PUT", "/team//app/latest", "empty segment", id="double-slash"),
        pytest.param("PUT", "/team/app//latest", "", id="double-slash-before-suffix"),
        pytest.param("PUT", "//team/app/latest", "empty segment", id="leading-slash"),
    ],
)
def test_name_with_a_reserved_word_or_empty_segment_is_400_and_writes_nothing(
    arca: ArcaHttp, unique: str, method: str, suffix: str, word: str
) -> None:
    # Given content uploaded under a name that is valid
    digest = arca.upload(f"{unique}/ok", b"content")
    # When the name written holds a reserved word or an empty segment
    reply = arca.request(method, f"/artifacts/{unique}{suffix}", json={"sha256": digest, "size": 7, "version": 1})
    # Then
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert error["code"] == "ValidationError" and error["field"] == "name"
    assert word in error["message"]
    assert arca.get("/artifacts", params={"prefix": f"{unique}/"}).json()["artifacts"] == []


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_presigned_upload_works_with_curl(arca: ArcaHttp, unique: str, tmp_path: Path) -> None:
    # Given the upload instructions for a 1 MB file
    name = f"{unique}/app"
    data = os.urandom(1024 * 1024)
    blob = tmp_path / "blob.bin"
    blob.write_bytes(data)
    reply = arca.post(f"/artifacts/{name}/uploads", json={"sha256": sha256(data), "size": len(data)})
    assert reply.status_code == 201, reply.text
    upload = reply.json()["upload"]
    # When the file is sent the way the README tells users to
    headers = [arg for key, value in upload["headers"].items() for arg in ("-H", f"{key}: {value}")]
    curl = subprocess.run(
        ["curl", "-sS", "--fail-with-body", "-X", "PUT", "--data-binary", f"@{blob}", *headers, upload["url"]],
        capture_output=True,
        text=True,
        timeout=PATIENCE,
        check=False,
    )
    # Then S3 holds every byte: PUT latest hashes the stored blob against the declared sha256
    assert curl.returncode == 0, curl.stdout + curl.stderr
    latest = arca.put(f"/artifacts/{name}/latest", json={"sha256": sha256(data), "size": len(data)})
    assert latest.status_code == 200, latest.text


def test_local_s3_refuses_what_s3_refuses(arca: ArcaHttp, unique: str) -> None:
    # Given the upload instructions for some bytes, from the local server (moto's S3 behind its checks)
    name = f"{unique}/app"
    data = b"the bytes the URL signs"
    upload = arca.post(f"/artifacts/{name}/uploads", json={"sha256": sha256(data), "size": len(data)}).json()["upload"]
    # When other bytes are sent (with the signed checksum, then with their own), then the true ones, then again
    tampered = requests.put(upload["url"], data=b"tampered bytes", headers=upload["headers"], timeout=HTTP_TIMEOUT)
    own_checksum = {**upload["headers"], "x-amz-checksum-sha256": hex_to_b64(sha256(b"tampered bytes"))}
    resigned = requests.put(upload["url"], data=b"tampered bytes", headers=own_checksum, timeout=HTTP_TIMEOUT)
    honest = requests.put(upload["url"], data=data, headers=upload["headers"], timeout=HTTP_TIMEOUT)
    again = requests.put(upload["url"], data=data, headers=upload["headers"], timeout=HTTP_TIMEOUT)
    # Then the tampered body is refused as S3 refuses it (the checksum, or the signature over the checksum header),
    # the honest one stored, and the URL cannot replace it
    assert (tampered.status_code, "<Code>BadDigest</Code>" in tampered.text) == (400, True), tampered.text
    assert (resigned.status_code, "<Code>SignatureDoesNotMatch</Code>" in resigned.text) == (403, True), resigned.text
    assert honest.status_code == 200, honest.text
    assert (again.status_code, "<Code>PreconditionFailed</Code>" in again.text) == (412, True), again.text
    published = arca.post(f"/artifacts/{name}/versions", json={"sha256": sha256(data), "size": len(data)})
    assert published.status_code == 201, published.text
