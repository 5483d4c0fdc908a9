"""HTTP servers for the OCI client tests, on 127.0.0.1: the dispatcher over the dict registry, the byte server its
blob URLs point at (S3's role), and a recording proxy in front of any registry.

Each records the exchanges it sees (`Exchange`), so that a test can say what a real client sent and was answered.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import http.client
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from arca.protocols.oci import Digest, Request, handle
from arca.protocols.oci.grammar import parse_digest
from tests.oci.fake_backend import FakeRegistry

HOST = "127.0.0.1"


@dataclass(frozen=True)
class Exchange:
    """One request and its answer, as a server saw them (header names as sent; several values kept)."""

    method: str
    path: str
    request_headers: tuple[tuple[str, str], ...]
    request_size: int
    status: int
    response_headers: dict[str, str]

    def request_header(self, name: str) -> list[str]:
        return [v for k, v in self.request_headers if k.lower() == name.lower()]

    def line(self) -> str:
        return f"{self.method} {self.path} -> {self.status}"


@dataclass
class Recorder:
    exchanges: list[Exchange] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, exchange: Exchange) -> None:
        with self.lock:
            self.exchanges.append(exchange)

    def take(self) -> list[Exchange]:
        """The exchanges so far, and a fresh start."""
        with self.lock:
            taken, self.exchanges = self.exchanges, []
            return taken


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the recorder keeps what matters
        pass

    def read_body(self) -> bytes:
        """The body, by Content-Length or chunked (skopeo sends a blob PATCH chunked)."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                pass
            return b"".join(chunks)
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def reply(self, status: int, headers: dict[str, str], body: bytes, request_size: int) -> None:
        # Recorded before the answer leaves: a client that has its answer finds its exchange recorded.
        self.server.recorder.add(
            Exchange(self.command, self.path, tuple(self.headers.items()), request_size, status, dict(headers))
        )
        self.send_response(status)
        head = self.command == "HEAD"
        for name, value in headers.items():
            if name.lower() != "content-length":
                self.send_header(name, value)
        # A HEAD answer keeps the entity's Content-Length; every other answer's is its body's.
        self.send_header("Content-Length", headers.get("Content-Length", "0") if head else str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    recorder: Recorder


def caller_of(authorization: str | None) -> str | None:
    """Local mode's identity: a Basic user name, else anonymous (None). Undecodable credentials are anonymous."""
    if not authorization or not authorization.lower().startswith("basic "):
        return None
    try:
        user = base64.b64decode(authorization[6:].strip(), validate=True).decode().split(":", 1)[0]
    except (binascii.Error, UnicodeDecodeError):
        return None
    return user or None


class _RegistryHandler(_Handler):
    server: _RegistryServer

    def _serve(self) -> None:
        body = self.read_body()
        url = urlsplit(self.path)
        headers: dict[str, list[str]] = {}
        for name, value in self.headers.items():
            headers.setdefault(name, []).append(value)
        request = Request(self.command, url.path, parse_qs(url.query, keep_blank_values=True), headers, body)
        backend = self.server.registry.backend(caller_of(self.headers.get("Authorization")))
        response = handle(request, backend, max_body=self.server.max_body)
        self.reply(response.status, response.headers, response.body, len(body))

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = _serve


class _RegistryServer(_Server):
    registry: FakeRegistry
    max_body: int | None


class _BlobHandler(_Handler):
    server: _BlobServer

    def do_GET(self) -> None:
        name, _, value = urlsplit(self.path).path.lstrip("/").rpartition("/")
        content = self.server.registry.blob(name, _digest_or_none(value) or Digest("0" * 64))
        if content is None:
            self.reply(404, {"Content-Type": "application/xml"}, b"<Error><Code>NoSuchKey</Code></Error>", 0)
        elif self.headers.get("Authorization"):
            # S3 refuses a presigned URL that also carries credentials: a client must not forward them across hosts
            self.reply(400, {"Content-Type": "application/xml"}, b"<Error><Code>InvalidArgument</Code></Error>", 0)
        else:
            self.reply(200, {"Content-Type": "application/octet-stream"}, content, 0)

    do_HEAD = do_GET


class _BlobServer(_Server):
    registry: FakeRegistry


def _digest_or_none(value: str) -> Digest | None:
    try:
        return parse_digest(value)
    except Exception:
        return None


@dataclass
class FakeRegistryServer:
    """The dispatcher and its byte server, running."""

    url: str
    host: str  # host:port, as clients name a registry
    registry: FakeRegistry
    recorder: Recorder
    blob_recorder: Recorder


def _start(server: _Server) -> threading.Thread:
    thread = threading.Thread(target=server.serve_forever, name=f"oci-{server.server_address[1]}", daemon=True)
    thread.start()
    return thread


@contextlib.contextmanager
def serving_fake_registry(max_body: int | None = None) -> Iterator[FakeRegistryServer]:
    """The dispatcher over a fresh dict registry on a free port, its blob GETs redirected (307) to a byte server on
    another port. `max_body` bounds a blob request as Lambda would (None: no bound)."""
    blobs = _BlobServer((HOST, 0), _BlobHandler)
    registry = FakeRegistry(f"http://{HOST}:{blobs.server_address[1]}")
    blobs.registry, blobs.recorder = registry, Recorder()
    front = _RegistryServer((HOST, 0), _RegistryHandler)
    front.registry, front.max_body, front.recorder = registry, max_body, Recorder()
    threads = [_start(blobs), _start(front)]
    host = f"{HOST}:{front.server_address[1]}"
    try:
        yield FakeRegistryServer(f"http://{host}", host, registry, front.recorder, blobs.recorder)
    finally:
        for server in (front, blobs):
            server.shutdown()
            server.server_close()
        for thread in threads:
            thread.join(timeout=10)


class _ProxyHandler(_Handler):
    server: _ProxyServer

    def _forward(self) -> None:
        body = self.read_body()
        upstream = http.client.HTTPConnection(HOST, self.server.upstream_port, timeout=60)
        upstream.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
        for name, value in self.headers.items():  # every value of a repeated header, as sent
            if name.lower() not in ("transfer-encoding", "content-length"):
                upstream.putheader(name, value)
        if body or self.command in ("POST", "PUT", "PATCH"):
            upstream.putheader("Content-Length", str(len(body)))
        upstream.endheaders(body)
        answer = upstream.getresponse()
        content = answer.read()
        headers = {k: v for k, v in answer.getheaders() if k.lower() not in ("transfer-encoding", "connection")}
        upstream.close()
        self.reply(answer.status, headers, content, len(body))

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = _forward


class _ProxyServer(_Server):
    upstream_port: int


@contextlib.contextmanager
def recording_proxy(upstream_port: int) -> Iterator[tuple[str, Recorder]]:
    """A proxy on a free port in front of a registry on 127.0.0.1, recording every exchange; yields its host:port."""
    proxy = _ProxyServer((HOST, 0), _ProxyHandler)
    proxy.upstream_port, proxy.recorder = upstream_port, Recorder()
    thread = _start(proxy)
    try:
        yield f"{HOST}:{proxy.server_address[1]}", proxy.recorder
    finally:
        proxy.shutdown()
        proxy.server_close()
        thread.join(timeout=10)
