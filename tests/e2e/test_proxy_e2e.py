"""The real `huggingface_hub` through `arca proxy` to a local Arca: every call it makes reaches the API SigV4-signed
(its own token left behind), and the files come back byte-identical, each fetched from S3 by the client itself.

Local mode does not check signatures (it has no authentication), so the signatures are checked here as they left
the proxy: recomputed over each request as sent, they match only if the proxy sent exactly what it signed."""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import huggingface_hub
import pytest
import requests
from huggingface_hub import HfApi, hf_hub_download, snapshot_download
from requests.structures import CaseInsensitiveDict

from arca_client import Client
from arca_client.forwarding import serving
from arca_client.proxy import SigningProxy
from arca_client.transport import Signer
from arca_client.trees import HashCache
from tests.oci.harness import Registry, oras_pull, oras_push
from tests.oci.servers import Recorder
from tests.sigv4 import CREDENTIALS, REGION, assert_signed_as_sent

FILES = {
    "config.json": b'{"hidden": 64}\n',
    "tokenizer/vocab.txt": b"a\nb\nc\n",
    "weights/model.safetensors": bytes(range(256)) * 4096,
}


class RecordingProxy(SigningProxy):
    """The proxy, keeping each request as it left for the API."""

    def __init__(self, endpoint: str) -> None:
        super().__init__(endpoint, port=0, signer=Signer(REGION, credentials=CREDENTIALS))
        self.sent: list[requests.PreparedRequest] = []

    def session(self) -> requests.Session:
        session = super().session()
        if not session.hooks["response"]:
            session.hooks["response"].append(lambda response, *args, **kwargs: self.sent.append(response.request))
        return session


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    huggingface_hub.utils.disable_progress_bars()
    yield
    huggingface_hub.utils.enable_progress_bars()


@pytest.fixture
def proxy(arca_url: str) -> Iterator[RecordingProxy]:
    with serving(RecordingProxy(arca_url)) as running:
        yield running


def _write(root: Path, files: dict[str, bytes]) -> Path:
    for path, data in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    return root


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _assert_all_signed(proxy: RecordingProxy, arca_url: str) -> None:
    assert proxy.sent
    for request in proxy.sent:
        parts = urlsplit(request.url)
        as_sent: dict[str, Any] = {
            "method": request.method,
            "path": parts.path + (f"?{parts.query}" if parts.query else ""),
            "headers": CaseInsensitiveDict({**request.headers, "Host": parts.netloc}),  # urllib3 adds Host
            "body": request.body,
        }
        assert f"{parts.scheme}://{parts.netloc}" == arca_url
        assert_signed_as_sent(as_sent, arca_url)
        assert "hf_not_for_arca" not in str(request.headers)


def test_snapshot_download_through_the_proxy_is_signed_and_byte_identical(
    arca_url: str, proxy: RecordingProxy, unique: str, tmp_path: Path
) -> None:
    # Given a tree version with `prod` on it
    name = f"{unique}/model"
    with Client(arca_url) as client:
        client.publish_directory(name, _write(tmp_path / "v1", FILES), cache=HashCache.disabled())
        client.set_alias(name, "prod", 1)

    # When huggingface_hub downloads it through the proxy, sending a Hub token of its own
    endpoint = f"{proxy.url}/hf"
    folder = snapshot_download(
        name, revision="prod", endpoint=endpoint, cache_dir=tmp_path / "cache", token="hf_not_for_arca"
    )
    one = hf_hub_download(
        name, "config.json", revision="1", endpoint=endpoint, cache_dir=tmp_path / "c2", token="hf_not_for_arca"
    )

    # Then the files are the version's, byte-identical
    assert _files(Path(folder)) == FILES
    assert Path(one).read_bytes() == FILES["config.json"]
    # and every call reached the API signed, without the client's token; the files came from S3, not through it
    _assert_all_signed(proxy, arca_url)
    assert not any("/_blobs/" in request.url or "X-Amz-Signature" in request.url for request in proxy.sent)
    assert any("/resolve/" in request.url for request in proxy.sent)


def test_a_listing_of_more_than_a_page_follows_its_next_page_through_the_proxy(
    arca_url: str, proxy: RecordingProxy, unique: str, tmp_path: Path
) -> None:
    # Given a tree of 1,001 files (the Hub pages a listing by 1,000)
    files = {f"shards/{i:04d}.txt": f"{i}\n".encode() for i in range(1001)}
    with Client(arca_url) as client:
        client.publish_directory(unique, _write(tmp_path / "many", files), cache=HashCache.disabled())
    # When the client lists the repo's files through the proxy
    listed = HfApi(endpoint=f"{proxy.url}/hf", token=False).list_repo_files(unique, revision="1")
    # Then it read both pages, the second one through the proxy too (its link named the proxy), signed
    assert sorted(listed) == sorted(files)
    assert sum("cursor=" in request.url for request in proxy.sent) == 1
    _assert_all_signed(proxy, arca_url)


# OCI blob uploads of any size: answered by the proxy, stored in S3 through the SDK


def test_oras_pushes_a_blob_over_one_requests_bound_through_the_proxy_and_pulls_it_back(
    arca_url: str, tmp_path: Path
) -> None:
    # Given files over what local mode takes in one request (10 MB; pushed directly, that is 413, see
    # tests/e2e/test_oci_e2e.py::test_a_blob_over_one_requests_bound_is_413_in_ocis_shape_naming_the_proxy)
    big = tmp_path / "in" / "weights.bin"
    big.parent.mkdir()
    big.write_bytes(os.urandom(12 * 1024 * 1024))
    small = tmp_path / "in" / "config.json"
    small.write_bytes(b'{"layers": 2}')
    name = f"oci/proxy-{uuid.uuid4().hex[:10]}"
    with Client(arca_url) as client, serving(SigningProxy(arca_url, port=0, client=client)) as proxy:
        through = Registry(urlsplit(proxy.url).netloc, Recorder(), "arca proxy")
        # When oras-py pushes them through the proxy
        answer = oras_push(through, f"{name}:v1", [big, small])
        # Then the manifest push found both blobs, and they come back byte-identical, through the proxy and directly
        assert answer.status_code == 201
        pulled = oras_pull(through, f"{name}:v1", tmp_path / "out")
    assert pulled == {"weights.bin": big.read_bytes(), "config.json": small.read_bytes()}
    direct = Registry(urlsplit(arca_url).netloc, Recorder(), "arca")
    assert oras_pull(direct, f"{name}:v1", tmp_path / "direct") == pulled
    digest = "sha256:" + hashlib.sha256(big.read_bytes()).hexdigest()
    head = requests.head(f"{arca_url}/v2/{name}/blobs/{digest}", timeout=30)
    assert head.status_code == 200 and int(head.headers["Content-Length"]) == 12 * 1024 * 1024


def test_a_chunked_upload_through_the_proxy_checks_its_digest_and_ranges(arca_url: str, tmp_path: Path) -> None:
    name = f"oci/proxy-{uuid.uuid4().hex[:10]}"
    content = os.urandom(3 * 1024 * 1024)
    digest = "sha256:" + hashlib.sha256(content).hexdigest()
    with Client(arca_url) as client, serving(SigningProxy(arca_url, port=0, client=client)) as proxy:
        # Given a session opened at the proxy
        started = requests.post(f"{proxy.url}/v2/{name}/blobs/uploads/", timeout=30)
        assert started.status_code == 202 and started.headers["Range"] == "0-0"
        location = proxy.url + started.headers["Location"]
        # When two chunks are appended, the second with its Content-Range
        first = requests.patch(location, data=content[:1000], timeout=30)
        assert first.status_code == 202 and first.headers["Range"] == "0-999"
        rest = requests.patch(
            location, data=content[1000:], headers={"Content-Range": f"1000-{len(content) - 1}"}, timeout=30
        )
        assert rest.status_code == 202
        assert requests.get(location, timeout=30).headers["Range"] == f"0-{len(content) - 1}"
        # Then the closing PUT stores it, answered as the registry answers
        done = requests.put(location, params={"digest": digest}, timeout=30)
        assert done.status_code == 201, done.text
        assert done.headers["Location"] == f"/v2/{name}/blobs/{digest}"
        assert done.headers["Docker-Content-Digest"] == digest
        # and the registry holds it: HEAD (forwarded) finds it, GET serves its bytes
        assert requests.head(f"{proxy.url}/v2/{name}/blobs/{digest}", timeout=30).status_code == 200
        assert requests.get(f"{proxy.url}/v2/{name}/blobs/{digest}", timeout=30).content == content
        # and the session is gone
        assert requests.get(location, timeout=30).json()["errors"][0]["code"] == "BLOB_UPLOAD_UNKNOWN"
