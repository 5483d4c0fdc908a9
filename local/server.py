"""`python -m local.server [--port N]`: the Arca HTTP API on this machine, served by the real Lambda handlers.

Each request is matched with arca.routes (the table the CDK API is built from), turned into the API
Gateway REST proxy event that the deployed API would send, and passed to `handler(event, context)` of
arca.handlers.<function>; the proxy response is written back as API Gateway would write it.

As on AWS, a warm function serves one request at a time: invocations of the same function are
serialized (Powertools' resolver keeps the current event on a module-level object), while the three
functions and S3 run concurrently.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import importlib
import io
import json
import logging
import os
import re
import secrets
import signal
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any, NoReturn, TextIO
from urllib.parse import parse_qsl, unquote, urlsplit

from arca.domain.names import reserved_word
from arca.protocols.oci.dispatch import LARGE_BLOB_HINT
from arca_client import loopback
from arca_client.config import DEFAULT_ENDPOINT, ENDPOINT_ENV
from local import docs, iam
from local.events import PayloadTooLargeError, api_event, invoke, lambda_context
from local.retention import DEFAULT_INTERVAL, LocalSweeper
from local.rollouts import LocalDriver
from local.services import HOST, ServiceStartError, running_services
from local.stream import consuming_stream
from local.verification import LocalVerifier

log = logging.getLogger("arca.local")

Event = dict[str, Any]
Handler = Callable[[Event, Any], Any]
HandlerLoader = Callable[[str], Handler]

# Local mode has no authentication: a request may name its caller (default `local`) with this header, and the
# function sees the IAM user of that name where API Gateway puts the caller's identity.
LOCAL_USER_HEADER = "X-Arca-Local-User"
LOCAL_USER = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
DEFAULT_LOCAL_USER = "local"
CALLER_ARN = "arn:aws:iam::000000000000:user/local"
MAX_PAYLOAD_BYTES = 10 * 1024 * 1024  # API Gateway refuses larger request bodies with 413
# Connections waiting to be accepted: Python's default of 5 reset a burst of clients on a busy machine.
LISTEN_BACKLOG = 128
_DIGITS = re.compile(rb"[0-9]+")
_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}")
# The web console's static files, served at /console/ beside the API they call with relative URLs.
CONSOLE_DIR = Path(__file__).resolve().parent.parent / "client" / "arca_client" / "console_static"
CONSOLE_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
}


def routes() -> ModuleType:
    """The route table, imported on first use: it imports the handlers' modules, whose Powertools logger reads
    the environment (service name, log level) when created, so not before `main` and `running_services` set it."""
    return importlib.import_module("arca.routes")


def load_handler(function: str) -> Handler:
    handler: Handler = importlib.import_module(f"arca.handlers.{function}").handler
    return handler


def reset_lambda_state() -> None:
    """Forget what warm containers cache (settings, clients), so that it is rebuilt from the current env.

    Other tests in the same process may have run the handlers against another environment (moto in
    process), and must not inherit clients pointing at services this module is about to stop.
    """
    wiring = sys.modules.get("arca.wiring")
    if wiring is not None:
        wiring.reset()


def preload_handlers(load: HandlerLoader = load_handler) -> None:
    """Import every function now (~1 s of boto3, Powertools, pydantic), not on its first request."""
    reset_lambda_state()
    for function in (*routes().FUNCTIONS, "rollout", "retention", "verify"):
        load(function)


def _header(headers: dict[str, list[str]], name: str) -> str | None:
    return next((values[-1] for key, values in headers.items() if key.lower() == name.lower()), None)


# The OCI codes of the answers local mode gives before a function runs (framing, size, origin, unknown method).
_OCI_CODES = {400: "BLOB_UPLOAD_INVALID", 403: "DENIED", 404: "NAME_UNKNOWN", 405: "UNSUPPORTED", 413: "SIZE_INVALID"}


def basic_user(authorization: str | None) -> str | None:
    """The user name of Basic credentials (what an OCI client sends after `login`), or None: local mode acts as that
    user, as with X-Arca-Local-User; credentials it cannot read are anonymous (the default user)."""
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        return base64.b64decode(token.strip(), validate=True).decode("utf-8").partition(":")[0]
    except (ValueError, UnicodeDecodeError):
        return None


def caller_arn(user: str) -> str:
    return f"arn:aws:iam::000000000000:user/{user}"


def request_event(
    method: str,
    target: str,
    headers: list[tuple[str, str]],
    body: bytes,
    *,
    source_ip: str,
    request_id: str,
    identity: str = CALLER_ARN,
) -> dict[str, Any]:
    """The proxy event for a request: local.events builds it; the request adds what only it knows.

    API Gateway passes exactly the headers the client sent, repeated ones included, and adds
    X-Forwarded-* and a trace id. Query values are decoded with `+` as a space, as API Gateway does.
    """
    url = urlsplit(target)
    multi: dict[str, list[str]] = {}
    for name, value in headers:
        multi.setdefault(name, []).append(value)
    now = datetime.now(UTC)
    added_by_api_gateway = {
        "X-Forwarded-For": source_ip,
        "X-Forwarded-Proto": "http",
        "X-Amzn-Trace-Id": f"Root=1-{int(now.timestamp()):08x}-{secrets.token_hex(12)}",
    }
    for name, value in added_by_api_gateway.items():
        if _header(multi, name) is None:
            multi[name] = [value]
    query: dict[str, list[str]] = {}
    for key, value in parse_qsl(url.query, keep_blank_values=True):
        query.setdefault(key, []).append(value)

    event, _ = api_event(
        method, unquote(url.path), body=body, headers=multi, query=query, identity=identity, request_id=request_id
    )
    context = event["requestContext"]
    # The path as the client called it: local mode serves the API at the root, as a custom domain with no base
    # path does (on the stage's own URL it starts with the stage), so an absolute link a function builds is here.
    context["path"] = unquote(url.path)
    context["extendedRequestId"] = request_id
    context["requestTime"] = now.strftime("%d/%b/%Y:%H:%M:%S +0000")
    context["domainName"] = _header(multi, "Host") or HOST
    context["identity"].update(sourceIp=source_ip, userAgent=_header(multi, "User-Agent"))
    return event


_HUNG_UP = (BrokenPipeError, ConnectionResetError)


class _ReplyError(Exception):
    """Answer now with the spec's error shape (the request never reached a function)."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        headers: dict[str, str] | None = None,
        *,
        field: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers or {}
        self.field = field


class ArcaServer(ThreadingHTTPServer):
    """Binds its port on creation, so a busy port fails before any service is started."""

    daemon_threads = True
    request_queue_size = LISTEN_BACKLOG

    def __init__(
        self, port: int = 0, load: HandlerLoader = load_handler, *, retention_interval: float = DEFAULT_INTERVAL
    ) -> None:
        super().__init__((HOST, port), _RequestHandler)
        self.load = load
        self.locks = {function: threading.Lock() for function in routes().FUNCTIONS}
        # The rollout state machine of AWS: every rollout that starts, it drives (it learns of them from the
        # table's stream, whichever route started them: LocalDriver.observe).
        self.rollouts = LocalDriver(lambda: load("rollout"))
        # The retention schedule of AWS: the sweep, every `retention_interval` seconds while serving.
        self.retention = LocalSweeper(lambda: load("retention"), retention_interval)
        # The verification state machine of AWS: multipart content hashed in the background, it drives.
        self.verifications = LocalVerifier(lambda: load("verify"))

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as API Gateway; every reply carries Content-Length
    # Headers and body leave in two writes; with Nagle on, a keep-alive client waited ~40 ms for each
    # reply (delayed ACK).
    disable_nagle_algorithm = True
    server_version = "arca-local"
    server: ArcaServer

    def do_GET(self) -> None:
        started = time.perf_counter()
        request_id = str(uuid.uuid4())
        status: int | str = 500
        try:
            try:
                status = self._serve(request_id)
            except _ReplyError as reply:
                status = reply.status
                self._send_error(reply, request_id)
        except _HUNG_UP:
            # The client went away (Ctrl-C, a timeout) before its request was read or its answer written: nothing
            # failed here, and a request cut short never reaches a function.
            status = "client hung up"
            self.close_connection = True
        finally:
            elapsed = (time.perf_counter() - started) * 1000
            log.info("%s %s %s %.0f ms", self.command, self.path, status, elapsed)

    def handle(self) -> None:
        with contextlib.suppress(*_HUNG_UP):  # between requests of a kept-alive connection
            super().handle()

    # Every method reaches the route table, which answers 404 or 405 (with Allow) as API Gateway would.
    do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = do_GET

    def __getattr__(self, name: str) -> Any:
        """Any other method (TRACE, QUERY, …) reaches the route table too, for its 404 or 405."""
        if name.startswith("do_"):
            return self.do_GET
        raise AttributeError(name)

    def _serve(self, request_id: str) -> int:
        refused = loopback.refusal(
            self.headers.get("Host"), self.headers.get("Origin"), self.server.port, server="the local Arca server"
        )
        if refused is not None:  # a page in a browser (another origin, or a DNS-rebound name)
            self.close_connection = True  # its body is left unread
            raise _ReplyError(403, "ForbiddenError", refused)
        identity = self._identity()
        body = self._read_body()
        path = unquote(urlsplit(self.path).path)
        if path == docs.PATH and self.command in ("GET", "HEAD"):
            self._write(200, [("Content-Type", "text/html; charset=utf-8")], docs.page(), request_id)
            return 200
        if path == "/console" or path.startswith("/console/"):
            return self._send_console(path, request_id)
        try:
            route, _ = routes().match(self.command, path)
            function = route.function
        except routes().NoRouteError as error:
            if error.function is not None:  # a route family's greedy resource: its function answers
                route, function = None, error.function
            elif error.reserved is not None:
                refusal = reserved_word(error.reserved)
                raise _ReplyError(400, refusal.code, refusal.message, field=refusal.field) from None
            elif error.allowed:
                allow = ", ".join(sorted(set(error.allowed)))
                raise _ReplyError(
                    405, "MethodNotAllowed", f"{self.command} is not allowed on {path}", {"Allow": allow}
                ) from None
            else:
                raise _ReplyError(404, "NotFoundError", f"no route for {path}") from None
        headers = list(self.headers.items())
        event = request_event(
            self.command,
            self.path,
            headers,
            body,
            source_ip=self.client_address[0],
            request_id=request_id,
            identity=identity,
        )
        with self.server.locks[function], iam.acting_as(function):
            try:
                response = invoke(self.server.load(function), event, lambda_context(function))
            except PayloadTooLargeError as too_large:
                # API Gateway's answers: Lambda refusing the invocation is a 500, a function's failure a 502.
                log.error("arca.handlers.%s on %s %s: %s", function, self.command, path, too_large)
                status = 500 if too_large.what == "event" else 502
                message = f"the {function} function failed: {too_large}"
                raise _ReplyError(status, "InternalError", message) from None
            except Exception:
                # API Gateway's answer to a failed invocation; the traceback is the function's log.
                log.exception("arca.handlers.%s failed on %s %s", function, self.command, path)
                raise _ReplyError(502, "InternalError", f"the {function} function failed") from None
        completed = route is not None and route.operation == "complete_upload"
        if completed and isinstance(response, dict) and response.get("statusCode") == 202:
            name = unquote(path.removeprefix("/artifacts/").rsplit("/uploads/", 1)[0])
            self.server.verifications.schedule(json.loads(response["body"]), name)
        return self._send_proxy_response(response, request_id, function)

    def _send_console(self, path: str, request_id: str) -> int:
        """A file of the web console (no folders, so nothing outside CONSOLE_DIR); `/console` gains its slash."""
        if self.command not in ("GET", "HEAD"):
            raise _ReplyError(
                405, "MethodNotAllowed", f"{self.command} is not allowed on {path}", {"Allow": "GET, HEAD"}
            )
        if path == "/console":
            self._write(301, [("Location", "/console/")], b"", request_id)
            return 301
        file = CONSOLE_DIR / (path.removeprefix("/console/") or "index.html")
        if file.parent != CONSOLE_DIR or file.suffix not in CONSOLE_TYPES or not file.is_file():
            raise _ReplyError(404, "NotFoundError", f"no console file {path}")
        headers = [("Content-Type", CONSOLE_TYPES[file.suffix]), ("Cache-Control", "no-cache")]
        self._write(200, headers, file.read_bytes(), request_id)
        return 200

    def _identity(self) -> str:
        """The caller's ARN: the IAM user named by X-Arca-Local-User (a bad name is a 400), by default `local`."""
        user = self.headers.get(LOCAL_USER_HEADER)
        if user is None:
            user = basic_user(self.headers.get("Authorization"))
            return caller_arn(user if user is not None and LOCAL_USER.fullmatch(user) else DEFAULT_LOCAL_USER)
        if not LOCAL_USER.fullmatch(user):
            self.close_connection = True  # its body is left unread
            raise _ReplyError(
                400,
                "ValidationError",
                f"{LOCAL_USER_HEADER} must be a user name: 1 to 64 of a-z 0-9 . _ - starting with a letter or digit",
                field=LOCAL_USER_HEADER,
            )
        return caller_arn(user)

    def _read_body(self) -> bytes:
        """The whole body, or a refusal before any of it reaches a function: 400 for a malformed framing, 413 over
        10 MB (the connection closes: what is left of the body is not read); a client gone midway is a hang-up."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return self._read_chunked()
        declared = (self.headers.get("Content-Length") or "0").strip().encode()
        if not _DIGITS.fullmatch(declared):
            self._refuse_framing("Content-Length must be a number of bytes")
        length = int(declared)
        if length > MAX_PAYLOAD_BYTES:
            self._refuse_too_large()
        return self._read_exactly(length)

    def _read_chunked(self) -> bytes:
        chunks: list[bytes] = []
        total = 0
        while True:
            line = self.rfile.readline(1024)
            if not line:
                raise ConnectionResetError("the client hung up in its body")
            size = line.split(b";")[0].strip()
            if not _CHUNK_SIZE.fullmatch(size) or not line.endswith(b"\n"):
                self._refuse_framing("the chunked body is malformed (a chunk size is not a hexadecimal number)")
            if not (chunk_size := int(size, 16)):
                break
            total += chunk_size
            if total > MAX_PAYLOAD_BYTES:
                self._refuse_too_large()
            chunks.append(self._read_exactly(chunk_size))
            if self.rfile.readline(3) not in (b"\r\n", b"\n"):
                self._refuse_framing("the chunked body is malformed (a chunk is longer than its size)")
        while (trailer := self.rfile.readline(8192)) not in (b"\r\n", b"\n"):
            if not trailer:
                raise ConnectionResetError("the client hung up in its body")
        return b"".join(chunks)

    def _read_exactly(self, length: int) -> bytes:
        data = self.rfile.read(length)
        if len(data) < length:
            raise ConnectionResetError("the client hung up in its body")
        return data

    def _refuse_framing(self, message: str) -> NoReturn:
        self.close_connection = True  # where the next request would start is unknown
        raise _ReplyError(400, "ValidationError", message)

    def _refuse_too_large(self) -> NoReturn:
        self.close_connection = True  # the unread body is still on the socket
        message = f"the request body exceeds {MAX_PAYLOAD_BYTES} bytes"
        if re.match(r"/v2(/|$)", urlsplit(self.path).path):
            message += "; " + LARGE_BLOB_HINT
        raise _ReplyError(413, "PayloadTooLargeError", message)

    def _send_proxy_response(self, response: Any, request_id: str, function: str) -> int:
        """Write a proxy response; `headers` and `multiValueHeaders` merge as in API Gateway."""
        if not isinstance(response, dict) or not isinstance(response.get("statusCode"), int):
            log.error("arca.handlers.%s returned a malformed proxy response: %r", function, response)
            raise _ReplyError(502, "InternalError", "malformed Lambda proxy response")
        multi = {name: [str(v) for v in values] for name, values in (response.get("multiValueHeaders") or {}).items()}
        in_multi = {name.lower() for name in multi}
        headers = [(name, value) for name, values in multi.items() for value in values]
        headers += [(n, str(v)) for n, v in (response.get("headers") or {}).items() if n.lower() not in in_multi]
        body = response.get("body") or ""
        payload = base64.b64decode(body) if response.get("isBase64Encoded") else body.encode("utf-8")
        self._write(response["statusCode"], headers, payload, request_id)
        return int(response["statusCode"])

    def _send_error(self, reply: _ReplyError, request_id: str) -> None:
        if re.match(r"/v2(/|$)", urlsplit(self.path).path):
            # OCI's clients read OCI's error shape under /v2/ (a body over the bound says how to push a larger blob).
            headers = [("Content-Type", "application/json"), ("Docker-Distribution-API-Version", "registry/2.0")]
            body = json.dumps({"errors": [{"code": _OCI_CODES.get(reply.status, "UNKNOWN"), "message": reply.message}]})
            self._write(reply.status, [*headers, *reply.headers.items()], body.encode(), request_id)
            return
        error = {"code": reply.code, "message": reply.message, "request_id": request_id}
        body = {"error": {**error, **({"field": reply.field} if reply.field else {})}}
        headers = [("Content-Type", "application/json"), *reply.headers.items()]
        self._write(reply.status, headers, json.dumps(body).encode(), request_id)

    def _write(self, status: int, headers: list[tuple[str, str]], payload: bytes, request_id: str) -> None:
        self.send_response(status)
        for name, value in headers:
            if name.lower() not in ("content-length", "connection", "transfer-encoding"):
                self.send_header(name, value)
        self.send_header("x-amzn-RequestId", request_id)
        # A HEAD's answer keeps the length the function gave (the entity's size; skopeo reads a blob's size from it).
        given = next((v for n, v in headers if n.lower() == "content-length"), None) if self.command == "HEAD" else None
        if status >= 200 and status != 204:
            self.send_header("Content-Length", given if given is not None else str(len(payload)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD" and status != 204:
            self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        """Silence http.server's access log; do_GET logs one line per request instead."""


@contextlib.contextmanager
def serving(server: ArcaServer) -> Iterator[ArcaServer]:
    """Serve in a background thread until exit; then stop accepting, finish, and close the socket."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    server.retention.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
        server.rollouts.stop()
        server.verifications.stop()
        server.retention.stop()


@contextlib.contextmanager
def running_arca(
    port: int = 0, load: HandlerLoader = load_handler, *, retention_interval: float = DEFAULT_INTERVAL
) -> Iterator[str]:
    """The whole local stack (services, environment, HTTP server); yields the base URL."""
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(ArcaServer(port, load, retention_interval=retention_interval))
        stack.callback(reset_lambda_state)
        stack.enter_context(iam.checking())
        services = stack.enter_context(running_services(warm_up=lambda: preload_handlers(load)))
        stack.enter_context(
            consuming_stream(services, load("events"), lambda_context("events"), observe=server.rollouts.observe)
        )
        stack.enter_context(serving(server))
        yield server.url


class _WithoutMetrics(io.TextIOBase):
    """stdout without the handlers' metrics: the EMF lines CloudWatch reads on AWS drown the request log here.

    Lines are put together per thread (print writes a line and its newline separately; handlers run in threads).
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.pending = threading.local()

    def write(self, text: str) -> int:
        *lines, self.pending.text = (getattr(self.pending, "text", "") + text).split("\n")
        for line in lines:
            if not line.startswith('{"_aws":'):
                self.stream.write(line + "\n")
        return len(text)

    def flush(self) -> None:
        self.stream.flush()


def cli_lines(url: str, python: str = sys.executable, cwd: Path | None = None) -> list[str]:
    """The banner's lines for the `arca` walkthrough, typed in another shell: how to put `arca` on PATH (the
    activation of the virtual environment that runs this server, or its bin folder), and the endpoint when it is
    not the CLI's default. Nothing to say: no lines."""
    commands = []
    bin_dir = Path(python).parent
    activate = bin_dir / "activate"
    if activate.is_file():
        commands.append(f"source {_shown(activate, cwd or Path.cwd())}")
    elif (bin_dir / "arca").is_file():
        commands.append(f'export PATH="{bin_dir}:$PATH"')
    if url != DEFAULT_ENDPOINT:
        commands.append(f"export {ENDPOINT_ENV}={url}")
    if not commands:
        return []
    return ["CLI: in the shell where you type `arca`, run:", *(f"  {command}" for command in commands)]


def _shown(path: Path, cwd: Path) -> str:
    """`path` relative to `cwd` when it is inside it (`.venv/bin/activate` after `make local`), else absolute."""
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)


def _stop(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # one shutdown path for Ctrl-C and `kill`


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m local.server", description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "3000")), help="default: $PORT or 3000")
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="also the handlers' own logs and metrics (EMF) on stdout"
    )
    parser.add_argument(
        "--retention-interval",
        type=float,
        default=DEFAULT_INTERVAL,
        metavar="SECONDS",
        help=f"apply every retention policy this often (default: {DEFAULT_INTERVAL:.0f})",
    )
    args = parser.parse_args(argv)
    if args.retention_interval <= 0:
        parser.error("--retention-interval must be more than 0")
    if not args.verbose:  # one line per request: the handlers' INFO logs and metrics only on request
        os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
        sys.stdout = _WithoutMetrics(sys.stdout)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    log.setLevel(logging.INFO)  # our one line per request; botocore and friends stay at WARNING
    # Set SIGINT too: a shell starts background jobs with SIGINT ignored, and Python keeps it ignored.
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    started = time.perf_counter()
    try:
        server = ArcaServer(args.port, retention_interval=args.retention_interval)
    except OSError as error:
        log.error(
            "cannot listen on %s:%d: %s (choose another with --port or PORT)", HOST, args.port, error.strerror or error
        )
        return 1
    try:
        with server, contextlib.ExitStack() as stack:
            stack.callback(reset_lambda_state)
            stack.enter_context(iam.checking())
            services = stack.enter_context(running_services(warm_up=preload_handlers))
            stack.enter_context(
                consuming_stream(
                    services, load_handler("events"), lambda_context("events"), observe=server.rollouts.observe
                )
            )
            stack.enter_context(serving(server))
            dynamodb_port = services.dynamodb_endpoint.rsplit(":", 1)[1]
            s3_port = services.s3_endpoint.rsplit(":", 1)[1]
            log.info("started in %.1f s", time.perf_counter() - started)
            print(
                f"Arca is running at {server.url} (DynamoDB Local on :{dynamodb_port}, "
                f"S3 and CloudWatch on :{s3_port}). Ctrl-C stops.",
                flush=True,
            )
            print(f"API reference: {server.url}{docs.PATH} (OpenAPI document: {server.url}/openapi.json)", flush=True)
            print(
                f"Events: bus {services.event_bus_name}, each copied to the SQS queue {services.events_queue_name} "
                f"on {services.s3_endpoint}",
                flush=True,
            )
            for line in cli_lines(server.url):
                print(line, flush=True)
            while True:
                time.sleep(3600)
    except KeyboardInterrupt:
        log.info("stopped")
        return 0
    except ServiceStartError as error:
        log.error("cannot start: %s", error)
        return 1


if __name__ == "__main__":
    sys.exit(main())
