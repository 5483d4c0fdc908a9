"""`python -m local.server` as its own process, as `make local` runs it: for tests of what a user sees."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from local.services import free_port
from tests.helpers import PATIENCE, wait_for

REPO = Path(__file__).resolve().parents[2]
READY = "Arca is running at "


@dataclass
class LocalServer:
    url: str
    stdout: Path
    stderr: Path

    def output(self) -> tuple[str, str]:
        return self.stdout.read_text(), self.stderr.read_text()


@contextlib.contextmanager
def local_server(
    workdir: Path, *flags: str, timeout: float = PATIENCE, python: str = sys.executable
) -> Iterator[LocalServer]:
    """Start the local server on a free port, wait for its banner, and stop it (SIGTERM, as Ctrl-C) on exit.

    `python`: the interpreter (of another virtualenv) that runs it."""
    port = free_port()
    server = LocalServer(f"http://127.0.0.1:{port}", workdir / "server.out", workdir / "server.err")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "ARCA_", "POWERTOOLS_"))}
    with server.stdout.open("w") as out, server.stderr.open("w") as err:
        process = subprocess.Popen(
            [python, "-m", "local.server", "--port", str(port), *flags],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )

    def ready() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"the local server exited before its banner:\n{server.stderr.read_text()}")
        return READY in server.stdout.read_text()

    try:
        wait_for(ready, timeout=timeout, what=f"the local server's banner (its errors: {server.stderr})")
        yield server
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=PATIENCE)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
