"""The local stand-in for the verification state machine: invoke the `verify` function until it answers `done`.

The local server hands each upload whose completion answered 202 (`verifying`: hashed in the background) to
`LocalVerifier.schedule`, which runs the loop on a thread of its own with the event the state machine passes on
AWS, through the same handler.
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
# A failed step is tried again after this many seconds (the state machine's retry policy, shortened).
RETRY_SECONDS = 2.0
MAX_FAILURES = 6


class LocalVerifier:
    """Runs each scheduled verification's steps until the function answers `done` or the verifier is stopped.

    `handler` loads the `verify` function's handler; `lock` serialises its invocations, as one warm instance.
    """

    def __init__(self, handler: Callable[[], Handler]) -> None:
        self._handler = handler
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    def schedule(self, completed: dict[str, Any], name: str) -> None:
        """Drive the verification of the upload `completed` (the complete answer) of artifact `name`."""
        event = {"name": name, "upload": completed["id"], "done": False}
        thread = threading.Thread(target=self._run, args=(event,), name=f"verify-{completed['id'][:12]}", daemon=True)
        self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()

    def stop(self) -> None:
        self._stopped.set()
        for thread in self._threads:
            thread.join(timeout=5)

    def _run(self, event: dict[str, Any]) -> None:
        failures = 0
        while not event.get("done") and not self._stopped.is_set():
            try:
                with self._lock, acting_as("verify"):
                    event = invoke(self._handler(), event, lambda_context("verify"))
                failures = 0
            except Exception:  # as the state machine retries a failed step; a step is safe to repeat
                failures += 1
                log.exception("verification of %s failed (%d)", event["upload"], failures)
                if failures >= MAX_FAILURES or self._stopped.wait(RETRY_SECONDS):
                    return
        log.info("verification of %s ended", event["upload"])
