"""The one compare-and-set loop: every write that reads, decides and writes under a condition retries here."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypeVar

from arca.domain.errors import ConflictError, ContentionError
from arca.domain.moments import to_iso

T = TypeVar("T")


@dataclass
class Policy:
    """How long to keep trying when a compare-and-set loses a race, and the clock the services share."""

    max_attempts: int = 100
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))

    def now(self) -> str:
        return to_iso(self.clock())

    def compare_and_set(self, attempt: Callable[[], T]) -> T:
        """Run `attempt` (read, decide, conditional write) until it does not raise ContentionError.

        Between tries a short jittered pause; once `max_attempts` are spent, a 409 ConflictError.
        """
        for number in range(1, self.max_attempts + 1):
            try:
                return attempt()
            except ContentionError:
                if number == self.max_attempts:
                    raise ConflictError("too many concurrent writers on this artifact; retry") from None
                self.sleep(random.uniform(0, 0.002 * min(number, 20)))
        raise AssertionError("unreachable")


@dataclass
class Budget:
    """How much work one request may do before answering "continue later" (a purge's 202).

    `calls` caps the batch calls (BatchWriteItem, DeleteObjects); `time_left` (seconds, e.g. from the
    Lambda context) stops the work while `reserve` seconds remain, so the answer is sent before the
    function or API Gateway times out.
    """

    calls: int = 1_000_000
    time_left: Callable[[], float] | None = None
    reserve: float = 20.0
    spent: int = 0

    def spend(self) -> bool:
        """Take one call from the budget; False when none is left."""
        if self.spent >= self.calls or (self.time_left is not None and self.time_left() < self.reserve):
            return False
        self.spent += 1
        return True
