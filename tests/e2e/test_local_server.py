"""The local server itself: HTTP in, API Gateway REST proxy event to the function, proxy response out.

Stub functions stand in for the handlers here (no backing services), except in the last test, which
runs `python -m local.server` as `make local` does.
"""

from __future__ import annotations

import base64
import http.client
import re
import select
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import requests

from local.events import LAMBDA_PAYLOAD_BYTES
from local.server import CALLER_ARN, MAX_PAYLOAD_BYTES, ArcaServer, serving
from local.services import REPO_ROOT
from tests.helpers import HTTP_TIMEOUT, PATIENCE

READY_LINE = (
    r"Arca is running at (http://127\.0\.0\.1:\d+) \(DynamoDB Local on :(\d+), S3 and CloudWatch on :\d+\)\. "
    r"Ctrl-C stops\.\n"
)


@dataclass
class StubFunctions:
    """Records each invocation and answers with `reply` (raised if it is an exception)."""

    reply: Any = field(default_factory=lambda: {"statusCode": 200, "headers": {}, "body": "{}"})
    calls: list[tuple[str, dict[str, Any], Any]] = field(default_factory=list)

    def load(self, function: str) -> Any:
        def handler(event: dict[str, Any], context: Any) -> Any:
            self.calls.append((function, event, context))
            if isinstance(self.reply, Exception):
                raise self.reply
            return self.reply

        return handler

    @property
    def event(self) -> dict[str, Any]:
        return self.calls[-1][1]


@pytest.fixture
def stub() -> StubFunctions:
    return StubFunctions()


@pytest.fixture
def url(stub: StubFunctions) -> Iterator[str]:
    with ArcaServer(0, stub.load) as server, serving(server):
        yield server.url


def test_request_becomes_the_rest_proxy_event_of_its_resource(url: str, stub: StubFunctions) -> None:
    # Given a nested name, a repeated query key, a `+` for a space and a repeated header
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=HTTP_TIMEOUT)
    connection.putrequest("GET", "/artifacts/team/app/server/versions/3?tag=a&tag=b&q=x+y&empty=")
    connection.putheader("X-Multi", "1")
    connection.putheader("X-Multi", "2")
    connection.endheaders()
    # When
    response = connection.getresponse()
    response.read()
    # Then
    assert response.status == 200
    function, event, context = stub.calls[-1]
    assert function == "resolve"
    # (the versions family's greedy resource at the name's depth, as API Gateway matches it)
    assert event["resource"] == "/artifacts/{n1}/{n2}/{n3}/versions/{proxy+}"
    assert event["path"] == "/artifacts/team/app/server/versions/3"
    assert event["httpMethod"] == "GET"
    assert event["pathParameters"] == {"n1": "team", "n2": "app", "n3": "server", "proxy": "3"}
    assert event["queryStringParameters"] == {"tag": "b", "q": "x y", "empty": ""}
    assert event["multiValueQueryStringParameters"]["tag"] == ["a", "b"]
    assert event["multiValueHeaders"]["X-Multi"] == ["1", "2"]
    assert event["headers"]["X-Multi"] == "2"
    assert event["headers"]["X-Forwarded-For"] == "127.0.0.1"
    assert (event["body"], event["isBase64Encoded"], event["stageVariables"]) == (None, False, None)
    request_context = event["requestContext"]
    assert request_context["stage"] == "local"
    # The path as called: local mode serves at the root, as a custom domain with no base path does
    assert request_context["path"] == "/artifacts/team/app/server/versions/3"
    assert request_context["resourcePath"] == event["resource"]
    assert request_context["requestId"] == response.getheader("x-amzn-RequestId")
    assert request_context["identity"]["userArn"] == CALLER_ARN
    assert request_context["identity"]["sourceIp"] == "127.0.0.1"
    assert context.function_name.endswith("resolve")
    assert context.get_remaining_time_in_millis() > 0


def test_request_without_query_or_parameters_has_nulls_as_api_gateway(url: str, stub: StubFunctions) -> None:
    # When
    requests.get(f"{url}/health", timeout=HTTP_TIMEOUT)
    # Then
    assert stub.event["queryStringParameters"] is None
    assert stub.event["multiValueQueryStringParameters"] is None
    assert stub.event["pathParameters"] is None


@pytest.mark.parametrize(
    ("sent", "body", "is_base64"),
    [
        pytest.param(b'{"keep_last": 3}', '{"keep_last": 3}', False, id="utf8-as-text"),
        pytest.param(b"\xff\xfe\x00", base64.b64encode(b"\xff\xfe\x00").decode(), True, id="binary-as-base64"),
    ],
)
def test_request_body_arrives_as_api_gateway_passes_it(
    url: str, stub: StubFunctions, sent: bytes, body: str, is_base64: bool
) -> None:
    # When
    requests.post(f"{url}/artifacts/app/prune", data=sent, timeout=HTTP_TIMEOUT)
    # Then
    assert stub.calls[-1][0] == "publish"
    assert (stub.event["body"], stub.event["isBase64Encoded"]) == (body, is_base64)


def test_proxy_response_is_written_back_with_merged_headers_and_decoded_body(url: str, stub: StubFunctions) -> None:
    # Given
    stub.reply = {
        "statusCode": 201,
        "headers": {"Content-Type": "application/octet-stream", "X-Multi": "ignored"},
        "multiValueHeaders": {"X-Multi": ["a", "b"]},
        "body": base64.b64encode(b"\x00\x01binary").decode(),
        "isBase64Encoded": True,
    }
    # When
    response = requests.post(f"{url}/artifacts/app/versions", timeout=HTTP_TIMEOUT)
    # Then
    assert response.status_code == 201
    assert response.content == b"\x00\x01binary"
    assert response.headers["X-Multi"] == "a, b"  # requests joins repeated headers
    assert response.headers["Content-Type"] == "application/octet-stream"


def test_no_content_reply_has_no_body(url: str, stub: StubFunctions) -> None:
    # Given
    stub.reply = {"statusCode": 204, "headers": {}, "body": None}
    # When
    response = requests.delete(f"{url}/artifacts/app", timeout=HTTP_TIMEOUT)
    # Then
    assert response.status_code == 204
    assert response.content == b""


@pytest.mark.parametrize("reply", [RuntimeError("boom"), {"body": "no status"}], ids=["raises", "malformed"])
def test_failed_invocation_is_502_in_the_error_shape(url: str, stub: StubFunctions, reply: Any) -> None:
    # Given
    stub.reply = reply
    # When
    response = requests.get(f"{url}/health", timeout=HTTP_TIMEOUT)
    # Then
    assert response.status_code == 502
    assert response.json()["error"]["code"] == "InternalError"
    assert response.json()["error"]["request_id"] == response.headers["x-amzn-RequestId"]


def test_body_over_api_gateway_limit_is_413_without_invoking(url: str, stub: StubFunctions) -> None:
    # Given a request announcing more than 10 MB (the body need not follow: it is refused unread)
    host, port = url.removeprefix("http://").split(":")
    length = MAX_PAYLOAD_BYTES + 1
    head = f"POST /artifacts/app/versions HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Length: {length}\r\n\r\n"
    # When
    with socket.create_connection((host, int(port)), timeout=HTTP_TIMEOUT) as sock:
        sock.sendall(head.encode())
        status_line = sock.makefile("rb").readline()
    # Then
    assert status_line.split()[1] == b"413"
    assert stub.calls == []


def test_cli_prints_one_ready_line_and_stops_cleanly_on_ctrl_c() -> None:
    # Given `make local`'s command on a free port
    process = subprocess.Popen(
        [sys.executable, "-m", "local.server", "--port", "0"],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        readable, _, _ = select.select([process.stdout], [], [], 60)
        ready = process.stdout.readline() if readable else "(no ready line within 60 s)"
        found = re.fullmatch(READY_LINE, ready)
        assert found, ready
        base_url, dynamodb_port = found.group(1), int(found.group(2))
        assert requests.get(f"{base_url}/health", timeout=HTTP_TIMEOUT).json() == {"status": "ok"}
        # When
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=PATIENCE)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    # Then it exits 0 and leaves no DynamoDB Local behind
    assert process.returncode == 0, stderr
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", dynamodb_port), timeout=1):
        pass


def _raw(url: str, head: str, body: bytes = b"") -> tuple[socket.socket, bytes]:
    """Send a request as raw bytes on a connection left open; the status line and headers answered, at once."""
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=HTTP_TIMEOUT)
    sock.sendall(head.replace("{host}", f"{host}:{port}").encode() + body)
    reply = b""
    while b"\r\n\r\n" not in reply and (data := sock.recv(65536)):
        reply += data
    return sock, reply


@pytest.mark.parametrize(
    ("framing", "body"),
    [
        pytest.param("Content-Length: -1", b"{}", id="negative-length"),
        pytest.param("Content-Length: 1_0", b"{}", id="not-digits"),
        pytest.param("Transfer-Encoding: chunked", b"zz\r\n{}\r\n", id="chunk-size-not-hex"),
        pytest.param("Transfer-Encoding: chunked", b"-2\r\n{}\r\n", id="negative-chunk-size"),
        pytest.param("Transfer-Encoding: chunked", b"2\r\n{}}\r\n0\r\n\r\n", id="chunk-longer-than-its-size"),
    ],
)
def test_malformed_body_framing_is_400_at_once_without_invoking(
    url: str, stub: StubFunctions, framing: str, body: bytes
) -> None:
    # When a client sends a body the server cannot delimit, and waits (the connection stays open)
    sock, reply = _raw(url, f"POST /artifacts/app/versions HTTP/1.1\r\nHost: {{host}}\r\n{framing}\r\n\r\n", body)
    with sock:
        # Then it is answered 400 without waiting for the client to hang up, and the connection is closed
        assert reply.split(b"\r\n", 1)[0] == b"HTTP/1.1 400 Bad Request", reply
        assert b"\r\nConnection: close\r\n" in reply
    assert stub.calls == []


def test_a_request_whose_client_hangs_up_midway_through_its_body_invokes_nothing(url: str, stub: StubFunctions) -> None:
    # Given a client announcing 10 bytes that sends 3 and hangs up
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=HTTP_TIMEOUT) as sock:
        sock.sendall(
            f"POST /artifacts/app/versions HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Length: 10\r\n\r\n{{}}".encode()
        )
        sock.shutdown(socket.SHUT_WR)
        # When the server has read what there is
        assert sock.recv(1024) == b""
    # Then no function saw the truncated body, and the server goes on serving
    assert requests.get(f"{url}/health", timeout=HTTP_TIMEOUT).status_code == 200
    assert [function for function, _, _ in stub.calls] == ["resolve"]


def test_a_burst_of_16_clients_is_queued_not_refused_while_the_server_is_busy(stub: StubFunctions) -> None:
    # Given a server that is not accepting yet (a loaded machine: its accept loop has not run)
    with ArcaServer(0, stub.load) as server:
        # When 16 clients connect at once
        clients = [socket.create_connection(("127.0.0.1", server.port), timeout=HTTP_TIMEOUT) for _ in range(16)]
        with serving(server):
            for sock in clients:
                sock.sendall(f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode())
            replies = [sock.recv(1024).split(b"\r\n", 1)[0] for sock in clients]
        for sock in clients:
            sock.close()
    # Then every one of them waited in the listen queue and was answered
    assert replies == [b"HTTP/1.1 200 OK"] * 16


def test_pages_of_other_origins_and_rebound_names_are_refused_before_any_function(
    url: str, stub: StubFunctions
) -> None:
    port = url.rsplit(":", 1)[1]
    rollback = f"{url}/artifacts/team/app/aliases/prod/rollback"
    # When a page of another site posts to the local registry, or reaches it under a name rebound to 127.0.0.1
    cross = requests.post(rollback, json={}, headers={"Origin": "https://evil.example"}, timeout=HTTP_TIMEOUT)
    null = requests.post(rollback, json={}, headers={"Origin": "null"}, timeout=HTTP_TIMEOUT)
    rebound = requests.post(rollback, json={}, headers={"Host": f"evil.example:{port}"}, timeout=HTTP_TIMEOUT)
    rebound_read = requests.get(f"{url}/artifacts", headers={"Host": f"evil.example:{port}"}, timeout=HTTP_TIMEOUT)
    # Then each is refused in the error shape, and no function ran
    assert [r.status_code for r in (cross, null, rebound, rebound_read)] == [403] * 4
    assert cross.json()["error"]["code"] == "ForbiddenError"
    assert "evil.example" in cross.json()["error"]["message"]
    assert stub.calls == []
    # While the command line (no Origin) and the server's own pages (the console) are served, by either name
    cli = requests.post(rollback, json={}, timeout=HTTP_TIMEOUT)
    own_page = requests.post(rollback, json={}, headers={"Origin": url}, timeout=HTTP_TIMEOUT)
    by_localhost = requests.post(rollback, json={}, headers={"Host": f"localhost:{port}"}, timeout=HTTP_TIMEOUT)
    assert [r.status_code for r in (cli, own_page, by_localhost)] == [200] * 3
    assert len(stub.calls) == 3


def test_the_local_user_header_names_the_caller_in_the_event(url: str, stub: StubFunctions) -> None:
    # When
    named = requests.get(f"{url}/health", headers={"X-Arca-Local-User": "alice.o-b_1"}, timeout=HTTP_TIMEOUT)
    named_identity = stub.event["requestContext"]["identity"]["userArn"]
    anonymous = requests.get(f"{url}/health", timeout=HTTP_TIMEOUT)
    anonymous_identity = stub.event["requestContext"]["identity"]["userArn"]
    # Then
    assert named.status_code == anonymous.status_code == 200
    assert named_identity == "arn:aws:iam::000000000000:user/alice.o-b_1"
    assert anonymous_identity == CALLER_ARN == "arn:aws:iam::000000000000:user/local"


@pytest.mark.parametrize("user", ["Alice", "-alice", "a" * 65, "al ice", "alice/admin", ""])
def test_a_bad_local_user_is_400_naming_the_header(url: str, stub: StubFunctions, user: str) -> None:
    # When
    response = requests.post(
        f"{url}/artifacts/team/app/versions", json={}, headers={"X-Arca-Local-User": user}, timeout=HTTP_TIMEOUT
    )
    # Then
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "X-Arca-Local-User"
    assert response.json()["error"]["request_id"] == response.headers["x-amzn-RequestId"]
    assert stub.calls == []


def test_a_response_over_lambda_payload_limit_is_502_as_from_api_gateway(url: str, stub: StubFunctions) -> None:
    # Given a function answering a body that makes its response just over 6 MB
    stub.reply = {"statusCode": 200, "headers": {}, "body": "x" * LAMBDA_PAYLOAD_BYTES}
    # When
    response = requests.get(f"{url}/artifacts/team/app/versions", timeout=HTTP_TIMEOUT)
    # Then the function ran, but its answer does not reach the client
    assert response.status_code == 502
    error = response.json()["error"]
    assert error["code"] == "InternalError" and "payload limit" in error["message"]
    assert error["request_id"] == response.headers["x-amzn-RequestId"]
    assert len(stub.calls) == 1
    # And just under the limit it does
    stub.reply = {"statusCode": 200, "headers": {}, "body": "x" * (LAMBDA_PAYLOAD_BYTES - 1000)}
    assert requests.get(f"{url}/artifacts/team/app/versions", timeout=HTTP_TIMEOUT).status_code == 200


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"{" + b" " * (7 * 1024 * 1024) + b"}", id="7MB-text"),
        pytest.param(b"\xff" * (5 * 1024 * 1024), id="5MB-binary-is-6.7MB-of-base64"),
    ],
)
def test_a_body_under_api_gateway_limit_but_over_lambda_limit_is_500_without_invoking(
    url: str, stub: StubFunctions, body: bytes
) -> None:
    # When
    response = requests.post(f"{url}/artifacts/team/app/versions", data=body, timeout=HTTP_TIMEOUT)
    # Then Lambda refuses the event: API Gateway answers 500, and the function never ran
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "InternalError"
    assert "payload limit" in response.json()["error"]["message"]
    assert stub.calls == []
