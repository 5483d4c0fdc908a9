"""The local stand-in for the rollout state machine: Wait(interval) → the `rollout` function → stop once done.

On AWS the function that starts a rollout (PUT …/rollout, or a promotion applied by its request or by an approval)
starts the rollout's state machine. Locally the driver learns of rollouts from the table instead, whoever started
them: the stream consumer (local/stream.py) shows it every record, and each rollout item that appears running
under a new id (`started`) is handed to `LocalDriver.schedule`, which runs the loop on a thread of its own with
the same event the state machine passes on AWS, through the same handler.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from boto3.dynamodb.types import TypeDeserializer

from local.events import invoke, lambda_context
from local.iam import acting_as

log = logging.getLogger("arca.local")

Handler = Callable[[dict[str, Any], Any], Any]
# A failed step is retried after this many seconds at most (the state machine's retry policy, shortened).
RETRY_SECONDS = 5.0
MAX_FAILURES = 6
_deserialize = TypeDeserializer().deserialize


def driver_event(rollout: dict[str, Any]) -> dict[str, Any]:
    """The state machine's first input, from a rollout (as the API answers it, or as its item holds it)."""
    return {
        "name": rollout["name"],
        "alias": rollout["alias"],
        "rollout_id": rollout["id"],
        "step": int(rollout["step"]),
        "interval_seconds": int(rollout["interval_seconds"]),
        "done": rollout["state"] != "running",
    }


def started(record: dict[str, Any]) -> dict[str, Any] | None:
    """The rollout a stream record shows starting, or None: a rollout item (one per alias, its latest rollout)
    written running under an id it did not hold before. Its later steps keep the id, so they start nothing."""
    change = record.get("dynamodb", {})
    new, old = change.get("NewImage") or {}, change.get("OldImage") or {}
    if new.get("kind", {}).get("S") != "rollout" or new.get("state", {}).get("S") != "running":
        return None
    if old.get("id") == new.get("id"):
        return None
    return {key: _deserialize(value) for key, value in new.items()}


class LocalDriver:
    """Runs each scheduled rollout's steps until the driver answers `done` or the driver is stopped.

    `handler` loads the `rollout` function's handler; `lock` serialises its invocations, as one warm instance.
    A rollout is driven once, however often it is scheduled (as a state machine execution named after it).
    """

    def __init__(self, handler: Callable[[], Handler]) -> None:
        self._handler = handler
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._scheduled: set[str] = set()
        self._scheduling = threading.Lock()  # not `_lock`: a step may hold that for a while

    def observe(self, record: dict[str, Any]) -> None:
        """A stream record: drive the rollout it shows starting, if any."""
        rollout = started(record)
        if rollout is not None:
            self.schedule(rollout)

    def schedule(self, rollout: dict[str, Any]) -> None:
        event = driver_event(rollout)
        with self._scheduling:
            if event["rollout_id"] in self._scheduled or self._stopped.is_set():
                return
            self._scheduled.add(event["rollout_id"])
            thread = threading.Thread(
                target=self._run, args=(event,), name=f"rollout-{event['rollout_id']}", daemon=True
            )
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()

    def stop(self) -> None:
        with self._scheduling:
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
