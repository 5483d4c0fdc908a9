"""`arca console`: the proxy that serves the console on 127.0.0.1 and forwards API calls, signed for AWS."""

from __future__ import annotations

import http.client
import json
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import requests
from playwright.sync_api import Page, expect

from arca_client.console import ConsoleProxy, serving
from arca_client.transport import Signer
from tests import sigv4
from tests.console.conftest import Registry, open_console
from tests.helpers import HTTP_TIMEOUT, PATIENCE

CREDENTIALS, REGION = sigv4.CREDENTIALS, sigv4.REGION


def test_arca_console_serves_the_console_and_forwards_to_the_api(
    page: Page, arca_url: str, registry: Registry, screenshot: Callable[[Page, str], Path]
) -> None:
    # Given `arca console` started against the local server (a local endpoint: forwarded unsigned)
    command = [sys.executable, "-m", "arca_client", "console", "--endpoint", arca_url, "--port", "0"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proxy:
        try:
            banner = proxy.stdout.readline() if proxy.stdout else ""
            found = re.search(r"(http://127\.0\.0\.1:\d+)/console/ -> (\S+) \(unsigned\)", banner)
            assert found, f"unexpected banner {banner!r}"
            proxy_url = found.group(1)
            assert found.group(2) == arca_url

            # When the console is loaded through it, at an alias's page
            open_console(page, proxy_url, f"/a/{registry.api}/aliases/prod")

            # Then the page is drawn from the API behind the proxy, and says which API that is
            expect(page.get_by_role("heading", level=1)).to_contain_text("prod")
            expect(page.get_by_role("region", name="History").get_by_role("listitem")).to_have_count(3)
            expect(page.locator("#endpoint")).to_have_text(arca_url)
            screenshot(page, "proxy")
            # and the API's other routes answer through it too
            assert requests.get(f"{proxy_url}/health", timeout=HTTP_TIMEOUT).status_code == 200
            assert (
                requests.get(proxy_url, timeout=HTTP_TIMEOUT, allow_redirects=False).headers["Location"] == "/console/"
            )
        finally:
            proxy.terminate()
            proxy.wait(timeout=PATIENCE)


# ---- the proxy against a recording upstream: what it forwards, signs and refuses --------------------------


@dataclass
class Upstream:
    """An HTTP server that records each request and answers 200 JSON, standing in for API Gateway."""

    url: str = ""
    seen: list[dict[str, Any]] = field(default_factory=list)


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    record = Upstream()

    class Recorder(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            record.seen.append({"method": self.command, "path": self.path, "headers": self.headers, "body": body})
            payload = json.dumps({"ok": True}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("ETag", '"7"')
            self.send_header("Set-Cookie", "upstream=1")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_POST = do_PUT = do_DELETE = do_GET

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    record.url = f"http://127.0.0.1:{server.server_address[1]}/prod"  # a stage's path, as in API Gateway's URLs
    yield record
    server.shutdown()
    server.server_close()
    thread.join()


def proxy_for(upstream: Upstream, signer: Signer | None) -> ConsoleProxy:
    return ConsoleProxy(upstream.url, port=0, signer=signer)


def assert_signed_as_sent(request: dict[str, Any], upstream: Upstream) -> None:
    sigv4.assert_signed_as_sent(request, upstream.url.removesuffix("/prod"))


def test_proxy_signs_each_request_with_sigv4_for_execute_api(upstream: Upstream) -> None:
    # Given a proxy for a remote stage, signing with known credentials
    with serving(proxy_for(upstream, Signer(REGION, credentials=CREDENTIALS))) as proxy:
        # When the console reads with a query and writes with a body and a condition
        read = requests.get(f"{proxy.url}/artifacts?prefix=team a/&delimiter=/", timeout=HTTP_TIMEOUT)
        write = requests.put(
            f"{proxy.url}/artifacts/team/app/aliases/prod",
            json={"version": 3, "reason": "promote"},
            headers={"X-Arca-Console": "1", "If-Match": '"6"', "Cookie": "session=secret"},
            timeout=HTTP_TIMEOUT,
        )

    # Then both reach the stage's path, signed over exactly what was sent, with the answer passed back
    assert read.status_code == write.status_code == 200
    assert write.headers["ETag"] == '"7"'
    assert "Set-Cookie" not in write.headers
    get, put = upstream.seen
    assert get["path"] == "/prod/artifacts?prefix=team%20a%2F&delimiter=%2F"
    assert put["path"] == "/prod/artifacts/team/app/aliases/prod"
    assert json.loads(put["body"]) == {"version": 3, "reason": "promote"}
    assert put["headers"]["If-Match"] == '"6"'
    # and the browser's own headers (cookies, the console's marker) stay on this machine
    assert put["headers"]["Cookie"] is None
    assert put["headers"]["X-Arca-Console"] is None
    for request in (get, put):
        assert_signed_as_sent(request, upstream)


def test_proxy_forwards_unsigned_without_a_signer(upstream: Upstream) -> None:
    with serving(proxy_for(upstream, None)) as proxy:
        assert requests.get(f"{proxy.url}/health", timeout=HTTP_TIMEOUT).json() == {"ok": True}
        about = requests.get(f"{proxy.url}/console/endpoint.json", timeout=HTTP_TIMEOUT).json()
    assert upstream.seen[0]["headers"]["Authorization"] is None
    assert about == {"endpoint": upstream.url, "signed": False}


def test_proxy_refuses_other_hosts_other_origins_and_unmarked_writes(upstream: Upstream) -> None:
    with serving(proxy_for(upstream, Signer(REGION, credentials=CREDENTIALS))) as proxy:
        # A name that resolves to 127.0.0.1 but is not the proxy's (DNS rebinding)
        rebound = requests.get(
            f"{proxy.url}/artifacts", headers={"Host": f"evil.example:{proxy.port}"}, timeout=HTTP_TIMEOUT
        )
        # A page of another origin: its fetches carry its Origin
        cross = requests.get(f"{proxy.url}/artifacts", headers={"Origin": "https://evil.example"}, timeout=HTTP_TIMEOUT)
        # A write without the console's header (a cross-site form post could send this)
        unmarked = requests.post(
            f"{proxy.url}/artifacts/team/app/aliases/prod/rollback", data="{}", timeout=HTTP_TIMEOUT
        )
        own = requests.get(f"{proxy.url}/health", headers={"Origin": proxy.url}, timeout=HTTP_TIMEOUT)

    assert [r.status_code for r in (rebound, cross, unmarked)] == [403, 403, 403]
    assert unmarked.json()["error"]["code"] == "ForbiddenError"
    assert own.status_code == 200
    assert [seen["path"] for seen in upstream.seen] == ["/prod/health"]


def test_proxy_serves_the_console_files_and_nothing_else() -> None:
    with serving(ConsoleProxy("http://127.0.0.1:9", port=0)) as proxy:
        index = requests.get(f"{proxy.url}/console/", timeout=HTTP_TIMEOUT)
        script = requests.get(f"{proxy.url}/console/app.js", timeout=HTTP_TIMEOUT)
        redirect = requests.get(f"{proxy.url}/console", timeout=HTTP_TIMEOUT, allow_redirects=False)
        missing = requests.get(f"{proxy.url}/console/%2e%2e/console.py", timeout=HTTP_TIMEOUT)
        unreachable = requests.get(f"{proxy.url}/health", timeout=HTTP_TIMEOUT)

    assert index.status_code == 200 and "<title>Arca console</title>" in index.text
    assert script.headers["Content-Type"] == "text/javascript; charset=utf-8"
    assert redirect.headers["Location"] == "/console/"
    assert missing.status_code == 404
    # and an API that does not answer is an error in the API's shape, which the console shows
    assert unreachable.status_code == 502
    assert unreachable.json()["error"]["code"] == "ProxyError"


@pytest.mark.parametrize("target", ["@{host}/prod/health", "health", "*"])
def test_proxy_forwards_only_paths_and_only_to_the_endpoints_host(upstream: Upstream, target: str) -> None:
    # Given a proxy for a path-less endpoint that signs, and another server (the recorder) on another port
    other = upstream.url.removeprefix("http://").removesuffix("/prod")
    with serving(ConsoleProxy("http://127.0.0.1:9", port=0, signer=Signer(REGION, credentials=CREDENTIALS))) as proxy:
        # When a request-target is not a path (`@host/…` appended to the endpoint would name another host)
        connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=HTTP_TIMEOUT)
        connection.request("GET", target.format(host=other), headers={"Host": f"127.0.0.1:{proxy.port}"})
        refused = connection.getresponse()
        body = json.loads(refused.read())
        connection.close()
    # Then it is refused, and nothing (no signature, no session token) reaches the other host
    assert refused.status == 400
    assert body["error"]["code"] == "ValidationError"
    assert upstream.seen == []


def test_every_answer_of_the_proxy_forbids_framing(upstream: Upstream) -> None:
    with serving(proxy_for(upstream, None)) as proxy:
        answers = [
            requests.get(f"{proxy.url}/console/", timeout=HTTP_TIMEOUT),
            requests.get(f"{proxy.url}/health", timeout=HTTP_TIMEOUT),
            requests.get(f"{proxy.url}/console/nothing.html", timeout=HTTP_TIMEOUT),
            requests.get(f"{proxy.url}/artifacts", headers={"Origin": "https://evil.example"}, timeout=HTTP_TIMEOUT),
        ]
    assert [a.status_code for a in answers] == [200, 200, 404, 403]
    for answer in answers:
        assert answer.headers["X-Frame-Options"] == "DENY"
        assert answer.headers["Content-Security-Policy"] == "frame-ancestors 'none'"
