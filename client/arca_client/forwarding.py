"""What `arca console` and `arca proxy` share: a request received on this machine sent on to the API, SigV4-signed.

The request-target must be a path, appended to the endpoint (the stage's base URL, its stage path included), so
a request and its signature go to the endpoint's host and nowhere else; its query is put in SigV4's canonical
encoding, so the URL sent is the URL signed. The signature is the SDK's own (`transport.Signer`: service
execute-api, the standard credential chain); redirects are never followed, the caller sees them. A refusal is
`Refused`, which both servers answer in the API's error shape.
"""

from __future__ import annotations

import contextlib
import json
import signal
import sys
import threading
import uuid
from collections.abc import Iterator, Mapping
from http.server import HTTPServer
from types import FrameType
from typing import IO, TypeVar
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

import requests

from arca_client.errors import ArcaError, CredentialsError
from arca_client.transport import Signer

Server = TypeVar("Server", bound=HTTPServer)


# The request headers the API reads, which the SDK signs when it sends them (as well as Host and X-Amz-*).
SIGNED_HEADERS = ("Accept", "Content-Type", "If-Match", "If-None-Match", "Idempotency-Key")


class Refused(Exception):
    """A request the proxy answers itself: `status`, the API's error `code` and `message`, extra `headers`."""

    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers or {}

    def body(self, prefix: str) -> bytes:
        """The API's error shape; the request id starts with `prefix`, naming the proxy that refused."""
        error = {"code": self.code, "message": self.message, "request_id": f"{prefix}-{uuid.uuid4()}"}
        return json.dumps({"error": error}).encode()


def canonical_query(query: str) -> str:
    """The query as SigV4 signs it (RFC 3986, `+` read as a space as API Gateway reads it), order kept."""
    pairs = parse_qsl(query, keep_blank_values=True)
    return urlencode(pairs, quote_via=quote, safe="-_.~")


def upstream_url(endpoint: str, target: str) -> str:
    """The URL on `endpoint` that the request-target `target` (a path and query) names; Refused (400) otherwise."""
    if not target.startswith("/") or target.startswith("//"):
        # `@other.host/…` would read as a user and another host once appended to the endpoint, and `//host/…`
        # as another host: the request and its signature must go to the endpoint's host, nowhere else.
        raise Refused(400, "ValidationError", "the request target must be a path starting with one /")
    parts = urlsplit(target)
    url = endpoint + parts.path
    if parts.query:
        url += "?" + canonical_query(parts.query)
    if urlsplit(url)[:2] != urlsplit(endpoint)[:2]:
        raise Refused(400, "ValidationError", f"{target} does not lead to {endpoint}")
    return url


def send(
    session: requests.Session,
    signer: Signer | None,
    method: str,
    url: str,
    headers: Mapping[str, str],
    body: bytes | IO[bytes] | None,
    *,
    endpoint: str,
    timeout: float | tuple[float, float],
    stream: bool = False,
    unsigned: Mapping[str, str] | None = None,
) -> requests.Response:
    """Send one request to the API, signed over `headers` and `body` as sent when `signer` is given; `unsigned`
    headers go with it outside the signature.

    A body may be a seekable file (hashed for the signature, then rewound and streamed). Redirects are not
    followed. Refused 502 when the credentials cannot be had or nothing answered.
    """
    sent = dict(headers)
    try:
        if signer is not None:
            sent = signer.sign(method, url, sent, body)
        sent = {**(unsigned or {}), **sent}
        return session.request(
            method, url, headers=sent, data=body or None, timeout=timeout, allow_redirects=False, stream=stream
        )
    except CredentialsError as error:
        raise Refused(502, error.code, error.message) from None
    except requests.RequestException as lost:
        raise Refused(502, "ProxyError", f"{endpoint} did not answer ({type(lost).__name__})") from None


class Sessions:
    """One requests session per thread (requests' sessions are not thread-safe); each keeps its connections.

    Without `default_headers`, a request carries only the headers given (no User-Agent, Accept-Encoding, … of
    requests' own), so what a proxied client sent is what arrives.
    """

    def __init__(self, *, default_headers: bool = True) -> None:
        self._local = threading.local()
        self._default_headers = default_headers

    def get(self) -> requests.Session:
        session: requests.Session | None = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = requests.Session()
            if not self._default_headers:
                session.headers.clear()
        return session


def check_credentials(signer: Signer | None, endpoint: str) -> None:
    """Resolve the signer's credentials now: missing ones should fail at start, not on every request."""
    if signer is not None:
        signer.sign("GET", endpoint + "/health", {}, None)


def listen_error(host: str, port: int, error: OSError) -> ArcaError:
    """The error for a port that cannot be bound."""
    return ArcaError(
        f"cannot listen on {host}:{port}: {error.strerror or error} (choose another with --port)",
        code="PortUnavailable",
    )


@contextlib.contextmanager
def serving(server: Server) -> Iterator[Server]:
    """Serve in a background thread until exit, then close the socket."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _stop(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def serve_until_stopped(server: HTTPServer) -> None:
    """Serve in this thread until Ctrl-C or SIGTERM, then close the socket."""
    if threading.current_thread() is threading.main_thread():
        # SIGINT explicitly too: a shell starts background jobs with it ignored. SIGTERM stops as quietly.
        signal.signal(signal.SIGINT, _stop)
        signal.signal(signal.SIGTERM, _stop)
    with server:
        try:
            server.serve_forever(poll_interval=0.5)
        except KeyboardInterrupt:
            print("", file=sys.stderr)
