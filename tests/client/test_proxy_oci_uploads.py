"""`arca proxy`'s own OCI blob upload sessions: the registry's answers, its refusals in OCI's shape, and the
content handed to the SDK's upload only once its digest is checked."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import IO, Any

import pytest
import requests

from arca_client.cli import main
from arca_client.errors import ArcaError
from arca_client.forwarding import serving
from arca_client.proxy import SigningProxy

TIMEOUT = 30
# Nothing listens there: an upload request forwarded to the API would fail (502), not be answered as asserted.
NOWHERE = "http://127.0.0.1:9/prod"


class FakeClient:
    """The SDK's `upload_content`, recording what it was given."""

    def __init__(self) -> None:
        self.stored: list[tuple[str, bytes]] = []
        self.fail: ArcaError | None = None

    def upload_content(self, name: str, source: IO[bytes]) -> tuple[Any, bool]:
        if self.fail is not None:
            raise self.fail
        self.stored.append((name, source.read()))
        return None, True


@pytest.fixture
def client() -> FakeClient:
    return FakeClient()


@pytest.fixture
def proxy(client: FakeClient) -> Iterator[str]:
    with serving(SigningProxy(NOWHERE, port=0, client=client)) as running:  # type: ignore[arg-type]
        yield running.url


def _digest(content: bytes) -> str:
    return "sha256:" + hashlib.sha256(content).hexdigest()


def _error(answer: requests.Response) -> str:
    assert answer.headers["Docker-Distribution-API-Version"] == "registry/2.0"
    [error] = answer.json()["errors"]
    return str(error["code"])


def _start(proxy: str, name: str = "team/model") -> str:
    started = requests.post(f"{proxy}/v2/{name}/blobs/uploads/", timeout=TIMEOUT)
    assert started.status_code == 202
    assert started.headers["Range"] == "0-0"
    assert started.headers["Location"] == f"/v2/{name}/blobs/uploads/{started.headers['Docker-Upload-UUID']}"
    return proxy + started.headers["Location"]


def test_a_session_takes_chunks_and_stores_the_blob_once_its_digest_is_checked(proxy: str, client: FakeClient) -> None:
    location = _start(proxy)
    assert requests.patch(location, data=b"hello ", timeout=TIMEOUT).headers["Range"] == "0-5"
    second = requests.patch(location, data=b"world", headers={"Content-Range": "6-10"}, timeout=TIMEOUT)
    assert second.status_code == 202 and second.headers["Range"] == "0-10"
    status = requests.get(location, timeout=TIMEOUT)
    assert status.status_code == 204 and status.headers["Range"] == "0-10"
    assert not client.stored
    digest = _digest(b"hello world!")
    done = requests.put(location, params={"digest": digest}, data=b"!", timeout=TIMEOUT)
    assert done.status_code == 201
    assert done.headers["Location"] == f"/v2/team/model/blobs/{digest}"
    assert done.headers["Docker-Content-Digest"] == digest
    assert client.stored == [("team/model", b"hello world!")]
    # The session is over
    assert _error(requests.get(location, timeout=TIMEOUT)) == "BLOB_UPLOAD_UNKNOWN"


def test_a_monolithic_post_stores_the_blob(proxy: str, client: FakeClient) -> None:
    content = b"x" * 70_000
    done = requests.post(
        f"{proxy}/v2/team/model/blobs/uploads/", params={"digest": _digest(content)}, data=content, timeout=TIMEOUT
    )
    assert done.status_code == 201 and done.headers["Docker-Content-Digest"] == _digest(content)
    assert client.stored == [("team/model", content)]


def test_a_digest_that_is_not_the_bytes_is_digest_invalid_and_nothing_is_stored(proxy: str, client: FakeClient) -> None:
    location = _start(proxy)
    requests.patch(location, data=b"abc", timeout=TIMEOUT)
    wrong = requests.put(location, params={"digest": _digest(b"abd")}, timeout=TIMEOUT)
    assert wrong.status_code == 400 and _error(wrong) == "DIGEST_INVALID"
    monolithic = requests.post(
        f"{proxy}/v2/team/model/blobs/uploads/", params={"digest": _digest(b"a")}, data=b"b", timeout=TIMEOUT
    )
    assert monolithic.status_code == 400 and _error(monolithic) == "DIGEST_INVALID"
    location = _start(proxy)
    unnamed = requests.put(location, timeout=TIMEOUT)
    assert unnamed.status_code == 400 and _error(unnamed) == "DIGEST_INVALID"
    not_sha256 = requests.put(location, params={"digest": "md5:abc"}, timeout=TIMEOUT)
    assert not_sha256.status_code == 400 and _error(not_sha256) == "DIGEST_INVALID"
    assert client.stored == []


def test_an_unknown_session_is_blob_upload_unknown(proxy: str) -> None:
    unknown = f"{proxy}/v2/team/model/blobs/uploads/0123456789abcdef0123456789abcdef"
    for method in ("GET", "PATCH", "PUT", "DELETE"):
        answer = requests.request(method, unknown, params={"digest": _digest(b"")}, timeout=TIMEOUT)
        assert answer.status_code == 404 and _error(answer) == "BLOB_UPLOAD_UNKNOWN", method
    # A session is found only under its own repository
    location = _start(proxy, "team/one")
    other = location.replace("/team/one/", "/team/two/")
    assert _error(requests.get(other, timeout=TIMEOUT)) == "BLOB_UPLOAD_UNKNOWN"


def test_a_cancelled_session_is_gone(proxy: str, client: FakeClient) -> None:
    location = _start(proxy)
    requests.patch(location, data=b"abc", timeout=TIMEOUT)
    assert requests.delete(location, timeout=TIMEOUT).status_code == 204
    assert requests.get(location, timeout=TIMEOUT).status_code == 404
    assert client.stored == []


def test_a_chunk_not_at_the_uploads_end_is_416_with_its_range(proxy: str) -> None:
    location = _start(proxy)
    requests.patch(location, data=b"abcd", timeout=TIMEOUT)
    gap = requests.patch(location, data=b"ef", headers={"Content-Range": "5-6"}, timeout=TIMEOUT)
    assert gap.status_code == 416 and _error(gap) == "BLOB_UPLOAD_INVALID"
    assert gap.headers["Range"] == "0-3"
    short = requests.patch(location, data=b"ef", headers={"Content-Range": "4-9"}, timeout=TIMEOUT)
    assert short.status_code == 416 and _error(short) == "BLOB_UPLOAD_INVALID"
    malformed = requests.patch(location, data=b"ef", headers={"Content-Range": "four"}, timeout=TIMEOUT)
    assert malformed.status_code == 416
    # Nothing refused was appended
    assert requests.get(location, timeout=TIMEOUT).headers["Range"] == "0-3"


def test_a_refused_store_is_answered_in_ocis_shape(proxy: str, client: FakeClient) -> None:
    client.fail = ArcaError("artifact 'team/model' is a link", code="ConflictError", status=409)
    answer = requests.post(
        f"{proxy}/v2/team/model/blobs/uploads/", params={"digest": _digest(b"a")}, data=b"a", timeout=TIMEOUT
    )
    assert answer.status_code == 409 and _error(answer) == "UNKNOWN"
    assert "is a link" in answer.json()["errors"][0]["message"]


def test_without_a_client_uploads_are_forwarded_as_before() -> None:
    with serving(SigningProxy(NOWHERE, port=0)) as running:
        answer = requests.post(f"{running.url}/v2/team/model/blobs/uploads/", timeout=TIMEOUT)
    assert answer.status_code == 502  # nothing listens upstream: the request went there


def test_a_cross_repository_mount_is_forwarded(proxy: str) -> None:
    answer = requests.post(
        f"{proxy}/v2/team/model/blobs/uploads/",
        params={"mount": _digest(b"a"), "from": "team/other"},
        timeout=TIMEOUT,
    )
    assert answer.status_code == 502  # forwarded to the API (nothing listens there)


def test_arca_proxy_answers_uploads_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    # `arca proxy` gives the proxy its client: the uploads are answered here, not forwarded
    started: list[SigningProxy] = []
    monkeypatch.setattr("arca_client.forwarding.serve_until_stopped", started.append)
    assert main(["proxy", "--endpoint", "http://127.0.0.1:9", "--port", "0"]) == 0
    [proxy] = started
    try:
        assert proxy.uploads is not None
        assert proxy.uploads.matches("POST", "/v2/team/model/blobs/uploads/")
        assert proxy.uploads.matches("PATCH", "/v2/team/model/blobs/uploads/0123")
        assert not proxy.uploads.matches("HEAD", "/v2/team/model/blobs/sha256:00")
        assert not proxy.uploads.matches("PUT", "/v2/team/model/manifests/v1")
    finally:
        proxy.server_close()
