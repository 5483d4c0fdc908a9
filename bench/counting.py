"""AWS API calls counted at the botocore level.

One `before-call` handler is added to botocore's built-in handlers, so every client of every session
created afterwards (boto3's, pynamodb's, s3pathlib's) reports each API call once, before it is sent and
whatever answers it (moto here). `attach` registers the same handler on a client built earlier; a mark in
the call's context keeps a call from being counted twice when both registrations reach it.

Presigned requests do not pass through botocore: the harness records those itself (`record`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import botocore.handlers

Call = tuple[str, str]  # (service id, operation name): ("DynamoDB", "GetItem")
_MARK = "arca_bench_counted"


class CallCounter:
    def __init__(self) -> None:
        self._calls: Counter[Call] | None = None

    def on_call(self, model: Any, context: dict[str, Any] | None = None, **_: Any) -> None:
        if context is not None:
            if context.get(_MARK):
                return
            context[_MARK] = True
        if self._calls is not None:
            self._calls[(model.service_model.service_id, model.name)] += 1

    def record(self, service: str, operation: str) -> None:
        """A call that botocore does not see (a presigned URL used by the client)."""
        if self._calls is not None:
            self._calls[(service, operation)] += 1

    @contextmanager
    def counting(self) -> Iterator[Counter[Call]]:
        """Count the calls made inside the block into the yielded Counter (not re-entrant)."""
        if self._calls is not None:
            raise RuntimeError("CallCounter.counting() is not re-entrant")
        calls: Counter[Call] = Counter()
        self._calls = calls
        try:
            yield calls
        finally:
            self._calls = None

    def attach(self, client: Any) -> None:
        client.meta.events.register("before-call.*.*", self.on_call, unique_id="arca-bench-call-counter")


COUNTER = CallCounter()
_installed = False


def install() -> CallCounter:
    """Hook every botocore session created from now on (idempotent)."""
    global _installed
    if not _installed:
        botocore.handlers.BUILTIN_HANDLERS.append(("before-call", COUNTER.on_call))
        _installed = True
    return COUNTER
