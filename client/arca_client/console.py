"""`arca console`: the web console against any Arca API, through a proxy on this machine.

A browser cannot sign requests with the user's AWS credentials, and the API keeps IAM authorization. So a
small HTTP server bound to 127.0.0.1 serves the console's static files (the package data in
`console_static/`) and forwards every other request (`/artifacts…`, `/health`, `/openapi.json`, …) to the
API, SigV4-signed by the SDK's own `Signer` (service execute-api, the standard credential chain), sent by
`arca_client.forwarding` as `arca proxy` sends every request. The endpoint, `--sign`, `--region` and `--profile`
mean what they mean for every other command: local endpoints go out unsigned.

Only this machine can connect, and only the console's own pages can use the proxy: a request must name the
proxy in its Host header (so a DNS-rebound name is refused), an Origin header, when a browser sends one,
must be the proxy's (the rules of `arca_client.loopback`, which the local server applies too), and every
request but GET and HEAD must carry `X-Arca-Console`, a header no page of another origin can add without a
CORS preflight, which the proxy never grants. A request goes only to the endpoint's own host (a
request-target must be a path), and no answer may be framed by another page.
"""

from __future__ import annotations

import argparse
import json
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import requests

from arca_client import forwarding, loopback
from arca_client._version import __version__
from arca_client.forwarding import Refused as _Refusal
from arca_client.forwarding import serving
from arca_client.transport import Signer

if TYPE_CHECKING:
    from arca_client.sdk import Client

__all__ = ["ConsoleProxy", "add_arguments", "cmd_console", "serving", "static_file"]

HOST = loopback.HOST
DEFAULT_PORT = 8700
CONSOLE_HEADER = "X-Arca-Console"
MAX_BODY_BYTES = 10 * 1024 * 1024  # API Gateway's own limit; nothing the console sends comes close
# Only what the API reads; cookies and the browser's other headers stay on this machine.
FORWARDED_HEADERS = forwarding.SIGNED_HEADERS
RETURNED_HEADERS = ("Content-Type", "ETag", "Location", "Retry-After", "Allow", "x-amzn-RequestId", "x-amzn-ErrorType")
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
# No page of another site may frame the console (clickjacking its buttons): every answer says so, both ways.
ANTI_FRAMING = (("X-Frame-Options", "DENY"), ("Content-Security-Policy", "frame-ancestors 'none'"))
_STATIC_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*\.[a-z]+$")


def static_file(path: str) -> tuple[bytes, str] | None:
    """The console file served at a URL path under /console/ (`/console/` is index.html), or None.

    Only plain file names of known types are served: no folders, so no path can climb out of the package.
    """
    name = path.removeprefix("/console/") or "index.html"
    suffix = name[name.rfind(".") :] if "." in name else ""
    if not _STATIC_NAME.match(name) or suffix not in CONTENT_TYPES:
        return None
    file = resources.files("arca_client") / "console_static" / name
    if not file.is_file():
        return None
    return file.read_bytes(), CONTENT_TYPES[suffix]


class ConsoleProxy(ThreadingHTTPServer):
    """Serves the console and forwards API calls to `endpoint`, signed when `signer` is given.

    Binds 127.0.0.1 on creation (port 0 picks a free one); `serve_forever` answers.
    """

    daemon_threads = True

    def __init__(
        self,
        endpoint: str,
        *,
        port: int = DEFAULT_PORT,
        signer: Signer | None = None,
        timeout: float | tuple[float, float] = (10.0, 60.0),
    ) -> None:
        super().__init__((HOST, port), _ProxyHandler)
        self.endpoint = endpoint.rstrip("/")
        self.signer = signer
        self.upstream_timeout = timeout
        self._sessions = forwarding.Sessions()

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def session(self) -> requests.Session:
        """One session per thread (requests' sessions are not thread-safe); each keeps its connections."""
        return self._sessions.get()


class _ProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "arca-console"
    disable_nagle_algorithm = True
    server: ConsoleProxy

    def do_GET(self) -> None:
        try:
            self._handle()
        except _Refusal as refusal:
            self._send_error(refusal.status, refusal.code, refusal.message, refusal.headers)

    do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = do_GET

    def _handle(self) -> None:
        refused = loopback.refusal(
            self.headers.get("Host"), self.headers.get("Origin"), self.server.port, server="the console proxy"
        )
        if refused is not None:
            raise _Refusal(403, "ForbiddenError", refused)
        path = urlsplit(self.path).path
        if path == "/":
            self._send(302, [("Location", "/console/")], b"")
        elif path == "/console":
            self._send(301, [("Location", "/console/")], b"")
        elif path.startswith("/console/"):
            self._send_static(path)
        else:
            self._forward()

    def _send_static(self, path: str) -> None:
        if self.command not in ("GET", "HEAD"):
            raise _Refusal(405, "MethodNotAllowed", f"{self.command} is not allowed on {path}", {"Allow": "GET, HEAD"})
        if path == "/console/endpoint.json":
            # Lets the page say which API it acts on: a write against a production stage should look like one.
            about = {"endpoint": self.server.endpoint, "signed": self.server.signer is not None}
            self._send(200, [("Content-Type", "application/json")], json.dumps(about).encode())
            return
        found = static_file(path)
        if found is None:
            raise _Refusal(404, "NotFoundError", f"no console file {path}")
        content, content_type = found
        self._send(200, [("Content-Type", content_type), ("Cache-Control", "no-cache")], content)

    def _forward(self) -> None:
        if self.command not in ("GET", "HEAD") and self.headers.get(CONSOLE_HEADER) is None:
            raise _Refusal(403, "ForbiddenError", f"writes through the console proxy carry the {CONSOLE_HEADER} header")
        body = self._read_body()
        url = forwarding.upstream_url(self.server.endpoint, self.path)
        headers = {"User-Agent": f"arca-console/{__version__}"}
        headers.update({name: value for name in FORWARDED_HEADERS if (value := self.headers.get(name)) is not None})
        response = forwarding.send(
            self.server.session(),
            self.server.signer,
            self.command,
            url,
            headers,
            body,
            endpoint=self.server.endpoint,
            timeout=self.server.upstream_timeout,
        )
        returned = [(name, value) for name in RETURNED_HEADERS if (value := response.headers.get(name)) is not None]
        self._send(response.status_code, returned, response.content)

    def _read_body(self) -> bytes:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY_BYTES or "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self.close_connection = True
            raise _Refusal(
                413, "PayloadTooLargeError", f"the console proxy forwards bodies of at most {MAX_BODY_BYTES} bytes"
            )
        return self.rfile.read(length)

    def _send_error(self, status: int, code: str, message: str, headers: dict[str, str]) -> None:
        # The API's error shape, so the console shows the proxy's refusals like any other error.
        body = _Refusal(status, code, message).body("console")
        self._send(status, [("Content-Type", "application/json"), *headers.items()], body)

    def _send(self, status: int, headers: list[tuple[str, str]], payload: bytes) -> None:
        self.send_response(status)
        for name, value in [*headers, *ANTI_FRAMING]:
            self.send_header(name, value)
        if status not in (204, 304):
            self.send_header("Content-Length", str(len(payload)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD" and status not in (204, 304):
            self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the terminal shows where the console is, not every request of the page."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port on 127.0.0.1 (default {DEFAULT_PORT}; 0 picks a free one)"
    )


def cmd_console(args: argparse.Namespace, client: Client) -> int:
    """Serve until Ctrl-C. The client's endpoint and signer (from --endpoint, --sign, --region, --profile) are used."""
    signer: Signer | None = client.transport.signer
    forwarding.check_credentials(signer, client.endpoint)
    try:
        proxy = ConsoleProxy(client.endpoint, port=args.port, signer=signer)
    except OSError as error:
        raise forwarding.listen_error(HOST, args.port, error) from None
    how = "signing with your AWS credentials" if signer is not None else "unsigned"
    print(f"Arca console: {proxy.url}/console/ -> {client.endpoint} ({how}). Ctrl-C stops.", flush=True)
    forwarding.serve_until_stopped(proxy)
    return 0
