"""Local mode's changes to moto, each applied once per process whoever asks first (the local server, the tests'
in-process moto, the bench)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable


def once(install: Callable[[], None]) -> Callable[[], None]:
    """`install`, run at the first call only; later calls (from any thread) return at once."""
    lock = threading.Lock()
    done: list[bool] = []

    @functools.wraps(install)
    def installed() -> None:
        with lock:
            if not done:
                install()
                done.append(True)

    return installed
