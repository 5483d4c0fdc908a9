"""`arca proxy` against a recording upstream: every request forwarded SigV4-signed, every answer relayed as it came."""

from __future__ import annotations

import hashlib
import http.client
import json
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import requests

from arca_client.cli import main
from arca_client.forwarding import serving
from arca_client.proxy import SigningProxy
from arca_client.transport import Signer
from tests.sigv4 import CREDENTIALS, REGION, assert_signed_as_sent

TIMEOUT = 30
S3_URL = "https://arca-bucket.s3.eu-west-1.amazonaws.com/blobs/ab12?X-Amz-Signature=0f0f&X-Amz-Expires=300"
LARGE = 48 * 1024 * 1024  # far more than any buffer of the proxy's; a body it held whole would show in its memory


@dataclass
class Upstream:
    """A stage's stand-in: records each request; a few paths answer as the API's do."""

    url: str = ""
    seen: list[dict[str, Any]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)

    @property
    def origin(self) -> str:
        return self.url.removesuffix("/prod")


def _pattern(size: int) -> Iterator[bytes]:
    block = hashlib.sha256(b"arca").digest() * 2048  # 64 KiB
    for start in range(0, size, len(block)):
        yield block[: min(len(block), size - start)]


def _digest(size: int) -> str:
    digest = hashlib.sha256()
    for chunk in _pattern(size):
        digest.update(chunk)
    return digest.hexdigest()


# Answers of fixed paths: an unknown repository; OCI's Locations and Links, which are paths on the stage.
FIXED: dict[str, tuple[int, list[tuple[str, str]], bytes]] = {
    "/hf/api/models/team/absent": (
        404,
        [("X-Error-Code", "RepoNotFound"), ("Content-Type", "application/json")],
        b"{}",
    ),
    "/v2/team/stage/blobs/uploads/": (
        202,
        [
            ("Location", "/prod/v2/team/stage/blobs/uploads/1"),
            ("Link", '</prod/v2/team/stage/tags/list?last=a&n=1>; rel="next"'),
        ],
        b"",
    ),
}


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    record = Upstream()

    class Recorder(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "UpstreamGateway"

        def do_GET(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            record.seen.append({"method": self.command, "path": self.path, "headers": self.headers, "body": body})
            path = self.path.removeprefix("/prod")
            if path.startswith("/hf/team/model/resolve/"):
                # A file: a redirect to S3, with the headers the client reads as the file's metadata
                status = 307 if path.endswith("/moved.bin") else 302
                self._answer(status, [("Location", S3_URL), ("X-Repo-Commit", "00000001aa"), ("X-Linked-Size", "10")])
            elif path.startswith("/hf/api/models/team/model/tree/"):
                link = f'<{record.url}/hf/api/models/team/model/tree/1?cursor=2>; rel="next"'
                self._answer(200, [("Link", link), ("Content-Type", "application/json")], b"[]")
            elif path in FIXED:
                self._answer(*FIXED[path])
            elif path == "/stream":
                self._stream_chunked()
            elif path == "/large":
                self.send_response(200)
                self.send_header("Content-Length", str(LARGE))
                self.end_headers()
                for chunk in _pattern(LARGE):
                    self.wfile.write(chunk)
            else:
                headers = [("Content-Type", "application/json"), ("ETag", '"7"'), ("Set-Cookie", "a=1")]
                self._answer(200, [*headers, ("Set-Cookie", "b=2")], json.dumps({"ok": True}).encode())

        do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_GET

        def _answer(self, status: int, headers: list[tuple[str, str]], body: bytes = b"") -> None:
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _stream_chunked(self) -> None:
            # The first chunk, then nothing until the test has read it through the proxy: a proxy that waited for
            # the whole body before answering would never pass it on.
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for index, chunk in enumerate([b"first", b"second", b"third"]):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
                if index == 0 and not record.release.wait(5):
                    self.close_connection = True  # the rest never comes: the body is cut short
                    return
            self.wfile.write(b"0\r\n\r\n")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    server.daemon_threads = True
    record.url = f"http://127.0.0.1:{server.server_address[1]}/prod"  # a stage's path, as in API Gateway's URLs
    with serving(server):
        yield record
        record.release.set()


def signing_proxy(upstream: Upstream) -> SigningProxy:
    return SigningProxy(upstream.url, port=0, signer=Signer(REGION, credentials=CREDENTIALS))


def test_every_request_is_signed_for_execute_api_and_the_clients_authorization_stays_here(upstream: Upstream) -> None:
    # Given a proxy for a stage, signing with known credentials
    with serving(signing_proxy(upstream)) as proxy:
        # When a Hub client reads with its Bearer token, a query and headers of its own
        read = requests.get(
            f"{proxy.url}/hf/api/models/team/model?expand=siblings&blobs=true",
            headers={"Authorization": "Bearer hf_secret", "X-Client": "hub", "Accept": "application/json"},
            timeout=TIMEOUT,
        )
        # and writes a body of several MiB, once with a length and once chunked (as OCI clients upload)
        body = b"".join(_pattern(3 * 1024 * 1024 + 5))
        sized = requests.put(f"{proxy.url}/v2/team/app/blobs/uploads/1", data=body, timeout=TIMEOUT)
        chunked = requests.patch(
            f"{proxy.url}/v2/team/app/blobs/uploads/2",
            data=iter([body[:1000], body[1000:]]),
            headers={"Authorization": "Basic dXNlcjpwYXNz", "X-Amz-Date": "20000101T000000Z"},
            timeout=TIMEOUT,
        )

    # Then each reached the stage's path with what the client sent, signed over exactly what arrived
    assert [r.status_code for r in (read, sized, chunked)] == [200, 200, 200]
    get, put, patch = upstream.seen
    assert get["path"] == "/prod/hf/api/models/team/model?expand=siblings&blobs=true"
    assert get["headers"]["X-Client"] == "hub" and get["headers"]["Accept"] == "application/json"
    assert put["body"] == patch["body"] == body
    # signed as the SDK signs (the headers the API reads, besides Host and X-Amz-*); the rest travels unsigned
    signed = re.findall(r"SignedHeaders=([^,]+)", get["headers"]["Authorization"])[0].split(";")
    assert {"host", "x-amz-date", "x-amz-security-token", "accept"} <= set(signed)
    assert "x-client" not in signed
    for request in upstream.seen:
        assert_signed_as_sent(request, upstream.origin)
        # and the client's own credentials (a token, a password, a date of its own) never left this machine
        assert request["headers"].get_all("Authorization") == [request["headers"]["Authorization"]]
        assert request["headers"].get_all("X-Amz-Date") == [request["headers"]["X-Amz-Date"]]
        assert "hf_secret" not in str(request["headers"]) and "dXNlcjpwYXNz" not in str(request["headers"])
        assert request["headers"]["X-Amz-Date"] != "20000101T000000Z"


def test_answers_are_relayed_as_they_came_and_redirects_are_not_followed(upstream: Upstream) -> None:
    with serving(signing_proxy(upstream)) as proxy:
        # When a file is resolved (HEAD and GET), a missing repo is asked for, and an answer sets two cookies
        head = requests.head(f"{proxy.url}/hf/team/model/resolve/prod/config.json", timeout=TIMEOUT)
        get = requests.get(f"{proxy.url}/hf/team/model/resolve/prod/moved.bin", timeout=TIMEOUT, allow_redirects=False)
        missing = requests.get(f"{proxy.url}/hf/api/models/team/absent", timeout=TIMEOUT)
        connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=TIMEOUT)
        connection.request("GET", "/health")
        plain = connection.getresponse()
        plain.read()
        connection.close()

    # Then the redirects reach the client untouched (it follows them to S3 itself), with the Hub's headers
    assert head.status_code == 302 and get.status_code == 307
    assert head.headers["Location"] == get.headers["Location"] == S3_URL
    assert head.headers["X-Repo-Commit"] == "00000001aa" and head.headers["X-Linked-Size"] == "10"
    assert [seen["path"].rsplit("/", 1)[1] for seen in upstream.seen][:2] == ["config.json", "moved.bin"]
    assert len(upstream.seen) == 4  # nothing went to S3 through the proxy
    # and a miss is the API's own answer, status and headers
    assert missing.status_code == 404 and missing.headers["X-Error-Code"] == "RepoNotFound"
    # and every header comes back, repeated ones one by one, the upstream's Server among them
    assert plain.getheader("Server", "").startswith("UpstreamGateway")
    assert plain.headers.get_all("Set-Cookie") == ["a=1", "b=2"]
    assert plain.getheader("ETag") == '"7"'


def test_a_link_to_the_next_page_on_the_endpoint_comes_back_naming_the_proxy(upstream: Upstream) -> None:
    with serving(signing_proxy(upstream)) as proxy:
        page = requests.get(f"{proxy.url}/hf/api/models/team/model/tree/1", timeout=TIMEOUT)
    # The next page is asked of the proxy, so it is signed too, not sent unsigned to the API
    assert page.headers["Link"] == f'<{proxy.url}/hf/api/models/team/model/tree/1?cursor=2>; rel="next"'


def test_a_path_on_the_stage_comes_back_naming_the_proxy(upstream: Upstream) -> None:
    with serving(signing_proxy(upstream)) as proxy:
        started = requests.get(f"{proxy.url}/v2/team/stage/blobs/uploads/", timeout=TIMEOUT)
    # Followed on the proxy, not at `/prod/prod/…` on the endpoint
    assert started.headers["Location"] == f"{proxy.url}/v2/team/stage/blobs/uploads/1"
    assert started.headers["Link"] == f'<{proxy.url}/v2/team/stage/tags/list?last=a&n=1>; rel="next"'


def test_an_answer_is_streamed_as_it_arrives(upstream: Upstream) -> None:
    with serving(signing_proxy(upstream)) as proxy:
        # When an answer's first chunk is read while the API holds back the rest
        with requests.get(f"{proxy.url}/stream", stream=True, timeout=TIMEOUT) as answer:
            chunks = answer.iter_content(chunk_size=None)
            first = next(chunks)
            upstream.release.set()
            rest = b"".join(chunks)
        # and a large body with a length is read whole
        digest = hashlib.sha256()
        with requests.get(f"{proxy.url}/large", stream=True, timeout=TIMEOUT) as large:
            for chunk in large.iter_content(chunk_size=1024 * 1024):
                digest.update(chunk)
    # Then the first chunk came before the API sent the rest, and nothing was lost
    assert first == b"first" and rest == b"secondthird"
    assert large.headers["Content-Length"] == str(LARGE)
    assert digest.hexdigest() == _digest(LARGE)


def test_browser_pages_other_hosts_and_non_paths_are_refused_and_nothing_is_sent(upstream: Upstream) -> None:
    with serving(signing_proxy(upstream)) as proxy:
        rebound = requests.get(f"{proxy.url}/hf", headers={"Host": f"evil.example:{proxy.port}"}, timeout=TIMEOUT)
        page = requests.delete(f"{proxy.url}/v2/x", headers={"Origin": "https://evil.example"}, timeout=TIMEOUT)
        connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=TIMEOUT)
        other = upstream.origin.removeprefix("http://")
        connection.request("GET", f"@{other}/prod/health", headers={"Host": f"127.0.0.1:{proxy.port}"})
        not_a_path = connection.getresponse()
        not_a_path.read()
        connection.close()
    assert [rebound.status_code, page.status_code, not_a_path.status] == [403, 403, 400]
    assert page.json()["error"]["code"] == "ForbiddenError"
    assert upstream.seen == []


def test_bound_to_another_address_any_host_is_served_but_no_browser_page(upstream: Upstream) -> None:
    with serving(SigningProxy(upstream.url, port=0, bind="0.0.0.0")) as proxy:
        named = requests.get(f"{proxy.url}/health", headers={"Host": "proxy.internal:8787"}, timeout=TIMEOUT)
        page = requests.get(f"{proxy.url}/health", headers={"Origin": proxy.url}, timeout=TIMEOUT)
    assert proxy.url.startswith("http://127.0.0.1:")
    assert [named.status_code, page.status_code] == [200, 403]
    assert len(upstream.seen) == 1


def test_an_api_that_does_not_answer_is_a_502_in_the_apis_error_shape() -> None:
    with serving(SigningProxy("http://127.0.0.1:9/prod", port=0)) as proxy:
        answer = requests.get(f"{proxy.url}/hf/api/models/team/model", timeout=TIMEOUT)
    assert answer.status_code == 502
    assert answer.json()["error"]["code"] == "ProxyError"


@pytest.mark.parametrize("spelling", [["proxy"], ["oci", "proxy"]], ids=["arca proxy", "arca oci proxy"])
def test_arca_proxy_prints_the_url_for_huggingface_hub_and_forwards(upstream: Upstream, spelling: list[str]) -> None:
    # Given `arca proxy` (or its OCI spelling) started against a local endpoint (forwarded unsigned)
    command = [sys.executable, "-m", "arca_client", *spelling, "--endpoint", upstream.url, "--port", "0"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        try:
            banner = [process.stdout.readline() for _ in range(2)] if process.stdout else []
            found = re.search(r"Arca proxy: (http://127\.0\.0\.1:\d+) -> (\S+) \(unsigned\)", banner[0])
            assert found, banner
            assert found.group(2) == upstream.url
            assert banner[1].split() == ["huggingface_hub:", f"HF_ENDPOINT={found.group(1)}/hf"]
            # When a client calls it
            answer = requests.get(f"{found.group(1)}/hf/api/models/team/absent", timeout=TIMEOUT)
        finally:
            process.terminate()
            process.wait(timeout=TIMEOUT)
    # Then the call reached the endpoint
    assert answer.status_code == 404
    assert upstream.seen[0]["path"] == "/prod/hf/api/models/team/absent"
    assert upstream.seen[0]["headers"]["Authorization"] is None


def test_a_port_in_use_is_an_error_naming_the_option(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = main(["proxy", "--endpoint", "http://127.0.0.1:9", "--port", str(port)])
    assert code == 4
    assert "--port" in capsys.readouterr().err


def test_the_cli_docs_show_the_commands_help_as_it_is(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["proxy", "--help"]) == 0
    shown = capsys.readouterr().out.split("\n\nGlobal options")[0]
    docs = (Path(__file__).parents[2] / "docs" / "cli.md").read_text()
    assert f"$ arca proxy --help\n{shown}\n```" in docs
