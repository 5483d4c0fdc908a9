"""A one-line progress bar for stderr, fed by the SDK's (phase, done, total) progress callback."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

LABELS = {"hash": "hashing", "upload": "uploading", "download": "downloading", "verify": "verifying"}
_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def human_size(size: float) -> str:
    for unit in _UNITS:
        if abs(size) < 1024 or unit == _UNITS[-1]:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def _clock(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


class ProgressBar:
    """Draws `label [#####-----]  42%  8.4 MiB/20.0 MiB  35.1 MiB/s  ETA 0:00:03`, redrawn at most every
    `interval` s.

    Each phase gets its own line, finished when the next phase starts or on `close`. The throughput counts the
    bytes moved since the phase began (a resumed transfer starts part-way), and the ETA follows from it.
    """

    def __init__(
        self,
        stream: TextIO,
        *,
        width: int = 24,
        interval: float = 0.1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.width = width
        self.interval = interval
        self.clock = clock
        self.phase: str | None = None
        self.started = 0.0
        self.base = 0
        self.drawn_at: float | None = None

    def __call__(self, phase: str, done: int, total: int) -> None:
        now = self.clock()
        if phase != self.phase:
            self._end_line()
            self.phase, self.started, self.drawn_at, self.base = phase, now, None, done
        finished = done >= total
        if not finished and self.drawn_at is not None and now - self.drawn_at < self.interval:
            return
        self.drawn_at = now
        share = done / total if total else 1.0
        filled = int(share * self.width)
        elapsed = now - self.started
        speed = (done - self.base) / elapsed if elapsed > 0 else 0.0
        rate = f"{human_size(speed)}/s" if elapsed > 0 else ""
        if speed > 0 and not finished:
            rate += f"  ETA {_clock((total - done) / speed)}"
        label = LABELS.get(phase, phase)
        line = (
            f"{label:<11} [{'#' * filled}{'-' * (self.width - filled)}] {share:4.0%}  "
            f"{human_size(done)}/{human_size(total)}  {rate}"
        )
        self.stream.write(f"\r{line:<79}")
        self.stream.flush()

    def _end_line(self) -> None:
        if self.drawn_at is not None:
            self.stream.write("\n")
            self.stream.flush()
            self.drawn_at = None

    def close(self) -> None:
        self._end_line()
        self.phase = None

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
