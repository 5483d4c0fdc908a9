"""The local stand-in for the rollout state machine: Wait(interval) → the `rollout` function → stop once done.

The local server hands each rollout it started (a 201 from PUT …/rollout) to `LocalDriver.schedule`, which runs
the loop on a thread of its own with the same event the state machine passes on AWS, through the same handler.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from local.events import invoke, lambda_context
from local.iam import acting_as

log = logging.getLogger("arca.local")

Handler = Callable[[dict[str, Any], Any], Any]
# A failed step is retried after this many seconds at most (the state machine's retry policy, shortened).
RETRY_SECONDS = 5.0
MAX_FAILURES = 6


def driver_event(rollout: dict[str, Any]) -> dict[str, Any]:
    """The state machine's first input, from the rollout the API answered."""
    return {
        "name": rollout["name"],
        "alias": rollout["alias"],
        "rollout_id": rollout["id"],
        "step": rollout["step"],
        "interval_seconds": rollout["interval_seconds"],
        "done": rollout["state"] != "running",
    }


class LocalDriver:
    """Runs each scheduled rollout's steps until the driver answers `done` or the driver is stopped.

    `handler` loads the `rollout` function's handler; `lock` serialises its invocations, as one warm instance.
    """

    def __init__(self, handler: Callable[[], Handler]) -> None:
        self._handler = handler
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    def schedule(self, rollout: dict[str, Any]) -> None:
        event = driver_event(rollout)
        thread = threading.Thread(target=self._run, args=(event,), name=f"rollout-{event['rollout_id']}", daemon=True)
        self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()

    def stop(self) -> None:
        self._stopped.set()
        for thread in self._threads:
            thread.join(timeout=5)

    def _run(self, event: dict[str, Any]) -> None:
        failures = 0
        while not event.get("done"):
            wait = float(event["interval_seconds"]) if failures == 0 else min(RETRY_SECONDS, event["interval_seconds"])
            if self._stopped.wait(wait):
                return
            try:
                with self._lock, acting_as("rollout"):
                    event = invoke(self._handler(), event, lambda_context("rollout"))
                failures = 0
            except Exception:  # as the state machine retries a failed step; the step is idempotent
                failures += 1
                log.exception("rollout %s: step %s failed (%d)", event["rollout_id"], event["step"], failures)
                if failures >= MAX_FAILURES:
                    return
        log.info("rollout %s ended", event["rollout_id"])
