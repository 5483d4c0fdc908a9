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

from local.server import CALLER_ARN, MAX_PAYLOAD_BYTES, ArcaServer, serving
from local.services import REPO_ROOT

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
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
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
    assert event["resource"] == "/artifacts/{n1}/{n2}/{n3}/versions/{version}"
    assert event["path"] == "/artifacts/team/app/server/versions/3"
    assert event["httpMethod"] == "GET"
    assert event["pathParameters"] == {"n1": "team", "n2": "app", "n3": "server", "version": "3"}
    assert event["queryStringParameters"] == {"tag": "b", "q": "x y", "empty": ""}
    assert event["multiValueQueryStringParameters"]["tag"] == ["a", "b"]
    assert event["multiValueHeaders"]["X-Multi"] == ["1", "2"]
    assert event["headers"]["X-Multi"] == "2"
    assert event["headers"]["X-Forwarded-For"] == "127.0.0.1"
    assert (event["body"], event["isBase64Encoded"], event["stageVariables"]) == (None, False, None)
    request_context = event["requestContext"]
    assert request_context["stage"] == "local"
    assert request_context["path"] == "/local/artifacts/team/app/server/versions/3"
    assert request_context["resourcePath"] == event["resource"]
    assert request_context["requestId"] == response.getheader("x-amzn-RequestId")
    assert request_context["identity"]["userArn"] == CALLER_ARN
    assert request_context["identity"]["sourceIp"] == "127.0.0.1"
    assert context.function_name.endswith("resolve")
    assert context.get_remaining_time_in_millis() > 0


def test_request_without_query_or_parameters_has_nulls_as_api_gateway(url: str, stub: StubFunctions) -> None:
    # When
    requests.get(f"{url}/health", timeout=10)
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
    requests.post(f"{url}/artifacts/app/prune", data=sent, timeout=10)
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
    response = requests.post(f"{url}/artifacts/app/versions", timeout=10)
    # Then
    assert response.status_code == 201
    assert response.content == b"\x00\x01binary"
    assert response.headers["X-Multi"] == "a, b"  # requests joins repeated headers
    assert response.headers["Content-Type"] == "application/octet-stream"


def test_no_content_reply_has_no_body(url: str, stub: StubFunctions) -> None:
    # Given
    stub.reply = {"statusCode": 204, "headers": {}, "body": None}
    # When
    response = requests.delete(f"{url}/artifacts/app", timeout=10)
    # Then
    assert response.status_code == 204
    assert response.content == b""


@pytest.mark.parametrize("reply", [RuntimeError("boom"), {"body": "no status"}], ids=["raises", "malformed"])
def test_failed_invocation_is_502_in_the_error_shape(url: str, stub: StubFunctions, reply: Any) -> None:
    # Given
    stub.reply = reply
    # When
    response = requests.get(f"{url}/health", timeout=10)
    # Then
    assert response.status_code == 502
    assert response.json()["error"]["code"] == "InternalError"
    assert response.json()["error"]["request_id"] == response.headers["x-amzn-RequestId"]


def test_body_over_api_gateway_limit_is_413_without_invoking(url: str, stub: StubFunctions) -> None:
    # Given a request announcing more than 10 MB (the body need not follow: it is refused unread)
    host, port = url.removeprefix("http://").split(":")
    head = f"POST /artifacts/app/versions HTTP/1.1\r\nHost: {host}\r\nContent-Length: {MAX_PAYLOAD_BYTES + 1}\r\n\r\n"
    # When
    with socket.create_connection((host, int(port)), timeout=10) as sock:
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
        assert requests.get(f"{base_url}/health", timeout=10).json() == {"status": "ok"}
        # When
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    # Then it exits 0 and leaves no DynamoDB Local behind
    assert process.returncode == 0, stderr
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", dynamodb_port), timeout=1):
        pass
