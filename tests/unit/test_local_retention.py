"""The local retention schedule: the same handler, on a thread, every `--retention-interval` seconds."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from local import server
from local.retention import LocalSweeper
from tests.helpers import PATIENCE


def test_the_local_sweeper_invokes_the_handler_every_interval_as_the_schedule_does() -> None:
    # Given a handler that records its events
    seen: list[dict[str, Any]] = []
    twice = threading.Event()

    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        seen.append(event)
        if len(seen) >= 2:
            twice.set()
        return {"idle": False}

    sweeper = LocalSweeper(lambda: handler, interval=0.01)
    # When it runs for a while
    sweeper.start()
    try:
        assert twice.wait(PATIENCE)
    finally:
        sweeper.stop()
    # Then each tick invoked the retention handler with a pass allowed at once
    assert seen[:2] == [{"every_seconds": 0}, {"every_seconds": 0}]


def test_a_failed_sweep_is_tried_again_at_the_next_tick() -> None:
    calls = threading.Semaphore(0)

    def handler(event: dict[str, Any], context: Any) -> None:
        calls.release()
        raise RuntimeError("table unavailable")

    sweeper = LocalSweeper(lambda: handler, interval=0.01)
    sweeper.start()
    try:
        assert calls.acquire(timeout=PATIENCE) and calls.acquire(timeout=PATIENCE)
    finally:
        sweeper.stop()


def test_the_server_takes_a_retention_interval_and_refuses_a_bad_one(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        server.main(["--retention-interval", "0"])
    assert "--retention-interval must be more than 0" in capsys.readouterr().err
    built = server.ArcaServer(0, retention_interval=12.5)
    try:
        assert built.retention.interval == 12.5
    finally:
        built.server_close()
