"""The local stand-in for the retention schedule: every `interval` seconds, the `retention` function.

AWS invokes it hourly and it starts a pass once a day; here each tick invokes the same handler with
`every_seconds` 0, so every tick goes on with the current pass or starts the next one.
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
DEFAULT_INTERVAL = 3600.0


class LocalSweeper:
    """Invokes the retention handler (loaded by `handler`) on a thread of its own, every `interval` seconds."""

    def __init__(self, handler: Callable[[], Handler], interval: float = DEFAULT_INTERVAL) -> None:
        self._handler = handler
        self.interval = interval
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None
        self.runs = 0

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="retention-sweep", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def sweep(self) -> Any:
        """One invocation, as the schedule makes it."""
        with acting_as("retention"):
            return invoke(self._handler(), {"every_seconds": 0}, lambda_context("retention"))

    def _run(self) -> None:
        while not self._stopped.wait(self.interval):
            try:
                result = self.sweep()
                log.info("retention sweep: %s", result)
            except Exception:  # as the schedule's next invocation would, the next tick tries again
                log.exception("retention sweep failed")
            self.runs += 1
