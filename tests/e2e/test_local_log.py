"""What `make local` prints: one line per request by default, handler logs and metrics with --verbose, and no
traceback when a client hangs up."""

from __future__ import annotations

import logging
import re
import socket
import struct
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import requests

from local.server import ArcaServer, serving
from tests.e2e.processes import REPO, local_server
from tests.helpers import HTTP_TIMEOUT, PATIENCE

REQUEST_LINE = r"^(GET|POST|PUT|DELETE|PATCH) \S+ (\d{3}|client hung up) \d+ ms$"


def test_a_client_that_hangs_up_is_one_quiet_line(
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    # Given a function that answers after the client is gone
    answered = threading.Event()

    def slow_handler(function: str) -> Any:
        def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
            answered.wait(PATIENCE)
            return {"statusCode": 200, "headers": {"Content-Type": "application/json"}, "body": "{}" * 100_000}

        return handler

    caplog.set_level(logging.INFO, logger="arca.local")
    with serving(ArcaServer(0, load=slow_handler)) as server:
        port = server.server_address[1]
        # When the client sends a request, then resets the connection (SO_LINGER 0: an RST, as a killed process)
        client = socket.create_connection(("127.0.0.1", port))
        client.sendall(f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        client.close()
        # and another one hangs up in the middle of its request line
        half = socket.create_connection(("127.0.0.1", port))
        half.sendall(b"GET /hea")
        half.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        half.close()
        answered.set()
        # Then the server goes on serving
        assert requests.get(f"http://127.0.0.1:{port}/nowhere", timeout=HTTP_TIMEOUT).status_code == 404
    lines = [r.getMessage() for r in caplog.records if r.name == "arca.local"]
    assert any(line.startswith("GET /health client hung up ") for line in lines), lines
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert "Traceback" not in capfd.readouterr().err


@pytest.mark.parametrize("verbose", [False, True])
def test_the_request_log_is_one_line_per_request_unless_verbose(verbose: bool, tmp_path: Path) -> None:
    # Given the local server as `make local` starts it
    with local_server(tmp_path, *(["--verbose"] if verbose else [])) as server:
        # When: requests the API refuses (the handlers log those) and one it answers; each counts a metric
        requests.put(f"{server.url}/artifacts/demo/aliases/prod", json={"version": 1}, timeout=HTTP_TIMEOUT)
        requests.get(f"{server.url}/artifacts/demo", timeout=HTTP_TIMEOUT)
        requests.get(f"{server.url}/health", timeout=HTTP_TIMEOUT)
    out, err = server.output()
    # Then
    err_lines = err.splitlines()
    assert err_lines[0].startswith("started in ")
    assert err_lines[-1] == "stopped"
    assert all(re.match(REQUEST_LINE, line) for line in err_lines[1:-1]), err_lines
    assert [line.split()[:3] for line in err_lines[1:-1]] == [
        ["PUT", "/artifacts/demo/aliases/prod", "404"],
        ["GET", "/artifacts/demo", "404"],
        ["GET", "/health", "200"],
    ]
    out_lines = out.splitlines()
    assert out_lines[0].startswith("Arca is running at ")
    assert out_lines[1].startswith("API reference: ")
    assert out_lines[2].startswith("Events: bus ")
    # The CLI walkthrough's lines: this virtualenv's activation (`.venv/bin/activate` in a checkout), and the
    # endpoint (the port is not 3000)
    activate = Path(sys.executable).with_name("activate")
    assert out_lines[3:6] == [
        "CLI: in the shell where you type `arca`, run:",
        f"  source {activate.relative_to(REPO) if activate.is_relative_to(REPO) else activate}",
        f"  export ARCA_ENDPOINT={server.url}",
    ]
    if verbose:
        assert any(line.startswith('{"_aws":') for line in out_lines)
        assert any('"message":"request refused"' in line for line in out_lines)
    else:
        assert out_lines == out_lines[:6]
