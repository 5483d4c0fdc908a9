"""`arca proxy`: any HTTP client on this machine reaches an IAM-authorized Arca API, each request SigV4-signed.

On AWS the API takes only SigV4-signed calls, and the protocol clients teams already run (`huggingface_hub`
under `/hf/`, OCI clients under `/v2/`) cannot sign: they send no credentials or a Bearer token. This server
listens on 127.0.0.1 (`--bind` to choose) and forwards every request, whatever its method, path, query and
headers, to the endpoint (the stage's base URL, its stage path included), signed with the caller's AWS
credentials exactly as the SDK signs (`arca_client.forwarding`); the client's own Authorization, the hop-by-hop
headers and those naming this proxy stay here. The answer comes back as the API gave it: status, headers
(a redirect's Location to a presigned S3 URL included, for the client to follow itself) and body, streamed as
it arrives. Only a URL that names the endpoint itself (a `Location`, a listing's next-page `Link`) is rewritten
to name the proxy, so the client's next request comes back through it rather than unsigned to the API.

OCI blob uploads (`/v2/<name>/blobs/uploads/…`) are the exception: one request's body is bounded at the API,
so `arca proxy` answers them itself, keeping the sessions here and storing each verified blob in S3 as `arca
publish` uploads content, whatever its size (`arca_client.oci_uploads`); the manifest push that follows is
forwarded and finds the blobs by digest.

A request body is spooled (in memory up to 1 MiB, then to a temporary file) before it is sent: SigV4 signs its
SHA-256, which must be known before the first byte leaves. Chunked bodies are accepted.

When bound to 127.0.0.1 (the default), only this machine's programs can connect, and `arca_client.loopback`'s
rules keep the user's browser pages out: the Host header must name the proxy (no DNS rebinding) and an
Origin header, which browsers add to cross-origin requests and writes, must be the proxy's own. Bound to
another address, an Origin is always refused, and anyone who can reach the port acts with your credentials.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import socket
import sys
import tempfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import IO, TYPE_CHECKING, Any
from urllib.parse import urlsplit

import requests
import urllib3

from arca_client import forwarding, loopback
from arca_client.forwarding import Refused
from arca_client.oci_uploads import Uploads
from arca_client.transport import Signer

if TYPE_CHECKING:
    from arca_client.sdk import Client

HOST = loopback.HOST
DEFAULT_PORT = 8787
CHUNK = 64 * 1024
IN_MEMORY_BODY = 1024 * 1024
HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer", "transfer-encoding"}
    | {"upgrade", "proxy-connection"}
)
# Not sent on: what the proxy itself sets (Host, Content-Length), what carries the client's own credentials or a
# signature of its own (the proxy signs), the Origin naming the proxy, and Expect (answered here).
NOT_FORWARDED = HOP_BY_HOP | {
    "host",
    "content-length",
    "authorization",
    "origin",
    "expect",
    "x-amz-date",
    "x-amz-security-token",
    "x-amz-content-sha256",
}
# Signed as the SDK signs: Host, X-Amz-Date, the session token and the headers the API reads; every other header
# goes along unsigned (TLS carries it intact), so an intermediary that rewrites one (a CDN in front of an
# edge-optimized API normalizing Accept-Encoding, say) cannot break the signature.
_SIGNED = frozenset(name.lower() for name in forwarding.SIGNED_HEADERS)
# Answer headers that may hold a URL on the endpoint, which must name the proxy instead.
REWRITTEN = frozenset({"location", "content-location", "link"})
_LINK_TARGET = re.compile(r"<([^>]*)>")
_WILDCARDS = frozenset({"0.0.0.0", "::", ""})


class SigningProxy(ThreadingHTTPServer):
    """Forwards every request to `endpoint`, signed when `signer` is given, and relays the answers.

    Binds `bind`:`port` on creation (port 0 picks a free one); `serve_forever` answers.
    """

    daemon_threads = True

    def __init__(
        self,
        endpoint: str,
        *,
        port: int = DEFAULT_PORT,
        bind: str = HOST,
        signer: Signer | None = None,
        timeout: float | tuple[float, float] = (10.0, 120.0),
        client: Client | None = None,
    ) -> None:
        # With a client, OCI blob uploads are answered here and stored through it (any size); else forwarded. Set
        # before binding: a failed bind closes the server, which closes the uploads.
        self.uploads = Uploads(client) if client is not None else None
        if ":" in bind:
            self.address_family = socket.AF_INET6
        super().__init__((bind, port), _Handler)
        self.endpoint = endpoint.rstrip("/")
        self.bind = bind
        self.signer = signer
        self.upstream_timeout = timeout
        self._sessions = forwarding.Sessions(default_headers=False)

    def server_close(self) -> None:
        super().server_close()
        if self.uploads is not None:
            self.uploads.close()

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        """The proxy's URL for a client on this machine."""
        host = HOST if self.bind in _WILDCARDS else self.bind
        return f"http://{f'[{host}]' if ':' in host else host}:{self.port}"

    def session(self) -> requests.Session:
        return self._sessions.get()

    def refusal(self, host: str | None, origin: str | None) -> str | None:
        """Why a request with these Host and Origin headers must be refused (403), or None to forward it."""
        if self.bind == HOST:
            return loopback.refusal(host, origin, self.port, server="the Arca proxy")
        if origin is not None:
            return f"the Arca proxy refuses requests from pages of {origin}"
        return None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "arca-proxy"
    disable_nagle_algorithm = True
    server: SigningProxy

    def do_GET(self) -> None:
        try:
            self._forward()
        except Refused as refused:
            self.close_connection = True  # a body may be left unread
            self._refuse(refused)

    do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_GET

    def _forward(self) -> None:
        refused = self.server.refusal(self.headers.get("Host"), self.headers.get("Origin"))
        if refused is not None:
            raise Refused(403, "ForbiddenError", refused)
        if self.server.uploads is not None and self.server.uploads.matches(self.command, self.path):
            self._answer_upload(self.server.uploads)
            return
        url = forwarding.upstream_url(self.server.endpoint, self.path)
        headers = self._forwarded_headers()
        with self._body() as body:
            response = forwarding.send(
                self.server.session(),
                self.server.signer,
                self.command,
                url,
                {name: value for name, value in headers.items() if name.lower() in _SIGNED},
                body,
                endpoint=self.server.endpoint,
                timeout=self.server.upstream_timeout,
                stream=True,
                unsigned={name: value for name, value in headers.items() if name.lower() not in _SIGNED},
            )
        with contextlib.closing(response):
            self._relay(response)

    def _forwarded_headers(self) -> dict[str, str]:
        named_by_connection = {
            token.strip().lower() for value in self.headers.get_all("Connection", []) for token in value.split(",")
        }
        headers: dict[str, str] = {}
        for name in dict.fromkeys(self.headers.keys()):
            if name.lower() in NOT_FORWARDED or name.lower() in named_by_connection:
                continue
            headers[name] = ", ".join(self.headers.get_all(name, []))
        return headers

    def _answer_upload(self, uploads: Uploads) -> None:
        """An OCI blob upload request, answered here (`arca_client.oci_uploads`)."""
        chunks, length = self._body_chunks()
        answer = uploads.handle(self.command, self.path, self.headers, chunks, length)
        if answer.status >= 400:
            self.close_connection = True  # a body may be left unread
        self.send_response(answer.status)
        for name, value in answer.headers.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD" and answer.body:
            self.wfile.write(answer.body)

    def _body_chunks(self) -> tuple[Iterator[bytes], int | None]:
        """The request body's chunks as they are read, and its Content-Length (None when chunked)."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return self._chunks(), None
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0:
            raise Refused(400, "ValidationError", "Content-Length must be a whole number of bytes")
        return self._exactly(length), length

    @contextlib.contextmanager
    def _body(self) -> Iterator[bytes | IO[bytes] | None]:
        """The request's body, read whole before it is sent (its hash is signed): bytes, or a temporary file."""
        chunks, _ = self._body_chunks()
        with _Spool() as spool:
            for chunk in chunks:
                spool.write(chunk)
            yield spool.body()

    def _exactly(self, length: int) -> Iterator[bytes]:
        while length > 0:
            chunk = self.rfile.read(min(CHUNK, length))
            if not chunk:
                raise Refused(400, "ValidationError", "the request body ended before its Content-Length")
            length -= len(chunk)
            yield chunk

    def _chunks(self) -> Iterator[bytes]:
        while True:
            line = self.rfile.readline(1024)
            try:
                size = int(line.split(b";")[0].strip(), 16)
            except ValueError:
                raise Refused(400, "ValidationError", "a chunked request body is malformed") from None
            if size == 0:
                while self.rfile.readline(1024).strip():  # trailers, dropped
                    pass
                return
            yield from self._exactly(size)
            self.rfile.readline(8)

    def _relay(self, response: requests.Response) -> None:
        """Status, headers and body as the API answered; the body streamed as it arrives, undecoded."""
        raw: urllib3.HTTPResponse = response.raw
        self.send_response_only(response.status_code, response.reason)
        own = f"http://{self.headers.get('Host') or self.server.url.removeprefix('http://')}"
        length = None
        for name, value in raw.headers.items():
            lower = name.lower()
            if lower == "content-length":
                length = value
            elif lower not in HOP_BY_HOP:
                self.send_header(name, self._named_here(value, own) if lower in REWRITTEN else value)
        bodiless = self.command == "HEAD" or response.status_code in (204, 304) or response.status_code < 200
        if length is not None:
            self.send_header("Content-Length", length)
        elif not bodiless:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if bodiless:
            return
        try:
            for chunk in raw.stream(CHUNK, decode_content=False):
                if not chunk:
                    continue
                if length is None:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                else:
                    self.wfile.write(chunk)
            if length is None:
                self.wfile.write(b"0\r\n\r\n")
        except (urllib3.exceptions.HTTPError, requests.RequestException, OSError):
            # The API's answer broke off, or the client went away: the client sees a body cut short.
            self.close_connection = True

    def _named_here(self, value: str, own: str) -> str:
        """`value` with every URL on the endpoint (a Location, each target of a Link) made a URL on the proxy: an
        absolute one, and a path that starts with the endpoint's own (the stage's: OCI's Locations are paths)."""
        endpoint = self.server.endpoint
        base = urlsplit(endpoint).path

        def here(url: str) -> str:
            for start in (endpoint, base) if base else (endpoint,):
                if url == start or url.startswith((start + "/", start + "?")):
                    return own + url[len(start) :]
            return url

        if value.lstrip().startswith("<"):
            return _LINK_TARGET.sub(lambda found: f"<{here(found.group(1))}>", value)
        return here(value)

    def _refuse(self, refused: Refused) -> None:
        # The API's error shape: a client shows the proxy's refusals as it shows the API's.
        body = refused.body("proxy")
        self.send_response(refused.status)
        for name, value in [("Content-Type", "application/json"), *refused.headers.items()]:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the terminal shows where the proxy is, not every request a client makes."""


class _Spool:
    """A body being read: in memory up to IN_MEMORY_BODY bytes, then in a temporary file (deleted on exit)."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self._size = 0
        self._file: IO[bytes] | None = None

    def __enter__(self) -> _Spool:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._file is not None:
            self._file.close()

    def write(self, chunk: bytes) -> None:
        if self._file is None and self._size + len(chunk) > IN_MEMORY_BODY:
            self._file = tempfile.TemporaryFile()  # noqa: SIM115 -- closed by __exit__
            self._file.write(b"".join(self._parts))
            self._parts = []
        if self._file is not None:
            self._file.write(chunk)
        else:
            self._parts.append(chunk)
        self._size += len(chunk)

    def body(self) -> bytes | IO[bytes] | None:
        if self._file is not None:
            self._file.seek(0)
            return self._file
        return b"".join(self._parts) or None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port to listen on (default {DEFAULT_PORT}; 0 picks a free one)"
    )
    parser.add_argument(
        "--bind",
        default=HOST,
        metavar="ADDRESS",
        help=f"address to listen on (default {HOST}: this machine only; on any other, whoever reaches the port "
        "acts with your AWS credentials)",
    )


def cmd_proxy(args: argparse.Namespace, client: Client) -> int:
    """Serve until Ctrl-C. The client's endpoint and signer (from --endpoint, --sign, --region, --profile) are used."""
    signer: Signer | None = client.transport.signer
    forwarding.check_credentials(signer, client.endpoint)
    try:
        proxy = SigningProxy(client.endpoint, port=args.port, bind=args.bind, signer=signer, client=client)
    except OSError as error:
        raise forwarding.listen_error(args.bind, args.port, error) from None
    how = "signing with your AWS credentials" if signer is not None else "unsigned"
    print(f"Arca proxy: {proxy.url} -> {client.endpoint} ({how}). Ctrl-C stops.", flush=True)
    print(f"  huggingface_hub: HF_ENDPOINT={proxy.url}/hf", flush=True)
    print(f"  OCI clients:     {proxy.url.removeprefix('http://')}", flush=True)
    if args.bind != HOST:
        print(
            f"arca proxy: listening on {args.bind}: whoever reaches port {proxy.port} acts with your AWS credentials",
            file=sys.stderr,
            flush=True,
        )
    forwarding.serve_until_stopped(proxy)
    return 0
