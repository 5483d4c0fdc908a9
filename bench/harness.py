"""Cases, their measurement, and the checks that fail the bench.

A case is one row of a table: a label, the Arca callable and (when the library has the operation) the
`versioned` callable. Each callable takes the iteration index (unique across warm-up and measured runs
of that case, so a case can pick fresh content per call). Optional per-side setups run before each call,
untimed and uncounted. Adding a row is one `Case(...)` line in bench/cases.py.
"""

from __future__ import annotations

import gc
import math
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.counting import COUNTER, Call

Step = Callable[[int], Any]
Check = Callable[[Counter[Call]], "str | None"]


class BenchFailure(Exception):
    """A broken expectation (a call count, a ratio, an unexpected HTTP status): `make bench` exits 1."""


@dataclass
class Case:
    label: str
    arca: Step | None
    versioned: Step | None = None
    n: int | None = None  # measured iterations; None: the run's default
    warmup: int = 1
    arca_setup: Step | None = None
    versioned_setup: Step | None = None
    check: Check | None = None  # on Arca's calls of every iteration; returns what is wrong, or None
    key: str | None = None  # for the size and ratio tables; defaults to the label
    note: str = ""

    @property
    def id(self) -> str:
        return self.key or self.label


@dataclass
class Group:
    title: str
    cases: Sequence[Case | Pair]
    note: str = ""


@dataclass
class Measurement:
    seconds: list[float]
    calls: list[Counter[Call]]

    @property
    def n(self) -> int:
        return len(self.seconds)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.seconds) * 1000

    @property
    def p90_ms(self) -> float:
        ordered = sorted(self.seconds)
        return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)] * 1000  # nearest rank

    def count(self, service: str, operation: str) -> tuple[int, int]:
        values = [c[(service, operation)] for c in self.calls]
        return min(values), max(values)

    def describe_calls(self) -> str:
        """`4: DynamoDB GetItem 2, TransactWriteItems 1; S3 HeadObject 1` (a range where iterations differ)."""
        keys = sorted(set().union(*self.calls))
        if not keys:
            return "0"
        by_service: dict[str, list[str]] = {}
        for service, operation in keys:
            by_service.setdefault(service, []).append(f"{operation} {_span(*self.count(service, operation))}")
        totals = [sum(c.values()) for c in self.calls]
        parts = "; ".join(f"{service} {', '.join(ops)}" for service, ops in by_service.items())
        return f"{_span(min(totals), max(totals))}: {parts}"


def _span(low: int, high: int) -> str:
    return str(low) if low == high else f"{low}-{high}"


@dataclass
class Result:
    case: Case
    arca: Measurement | None
    versioned: Measurement | None


@dataclass
class Pair:
    """Two cases measured in turn, call by call (`first`, `second`, `first`, ...): both see the same table
    size and the same machine noise, so the ratio between them is fair. For a row at two sizes."""

    first: Case
    second: Case
    n: int | None = None


@dataclass
class _Track:
    """One side of one case: what to call, what to prepare before, what to check after."""

    label: str
    step: Step
    setup: Step | None = None
    check: Check | None = None


@dataclass
class Runner:
    iterations: int
    warmup: int | None = None  # overrides every case's warm-up calls (the smoke test: 0)
    progress: Callable[[str], None] = field(default=lambda line: print(line, file=sys.stderr, flush=True))

    def run_group(self, group: Group) -> list[Result]:
        started = time.perf_counter()
        results: list[Result] = []
        for item in group.cases:
            results += self.run_pair(item) if isinstance(item, Pair) else [self.run_case(item)]
        self.progress(f"  {group.title}: {time.perf_counter() - started:.1f} s")
        return results

    def run_case(self, case: Case) -> Result:
        n = case.n or self.iterations
        sides = [
            self._measure([_track(case, side)], n, case.warmup)[0] if _step(case, side) else None for side in SIDES
        ]
        return Result(case, *sides)

    def run_pair(self, pair: Pair) -> list[Result]:
        n = pair.n or self.iterations
        warmup = max(pair.first.warmup, pair.second.warmup) if self.warmup is None else self.warmup
        measured: dict[tuple[int, str], Measurement | None] = {}
        for side in SIDES:
            cases = [c for c in (pair.first, pair.second) if _step(c, side)]
            for case, measurement in zip(
                cases, self._measure([_track(c, side) for c in cases], n, warmup), strict=True
            ):
                measured[(id(case), side)] = measurement
        return [Result(c, *(measured.get((id(c), side)) for side in SIDES)) for c in (pair.first, pair.second)]

    def interleaved(self, step: Step, base: Step, n: int) -> tuple[Measurement, Measurement]:
        """`base` and `step` in turn, `n` times each after one warm-up pair (both without setup)."""
        warmup = 1 if self.warmup is None else self.warmup
        floor, mine = self._measure([_Track("bare call", base), _Track("handler call", step)], n, warmup)
        return mine, floor

    def _measure(self, tracks: Sequence[_Track], n: int, warmup: int) -> list[Measurement]:
        """Each iteration runs every track in turn: its setup (untimed, uncounted), then its timed call."""
        measured = [Measurement([], []) for _ in tracks]
        gc.collect()
        for index in range(warmup + n):
            for track, into in zip(tracks, measured, strict=True):
                if track.setup is not None:
                    track.setup(index)
                elapsed, counted = _timed(track, index)
                if track.check is not None and (problem := track.check(counted)):
                    raise BenchFailure(f"{track.label}: {problem} (calls: {dict(counted)})")
                if index >= warmup:
                    into.seconds.append(elapsed)
                    into.calls.append(counted)
        return measured


SIDES = ("arca", "versioned")


def _step(case: Case, side: str) -> Step | None:
    return case.arca if side == "arca" else case.versioned


def _track(case: Case, side: str) -> _Track:
    step = _step(case, side)
    assert step is not None
    if side == "arca":
        return _Track(f"Arca / {case.label}", step, case.arca_setup, case.check)
    return _Track(f"versioned / {case.label}", step, case.versioned_setup)


def _timed(track: _Track, index: int) -> tuple[float, Counter[Call]]:
    gc.disable()  # as timeit does: a collection lands between calls, not inside one
    try:
        with COUNTER.counting() as counted:
            started = time.perf_counter()
            try:
                track.step(index)
            except BenchFailure:
                raise
            except Exception as error:
                raise BenchFailure(f"{track.label}: {type(error).__name__}: {error}") from error
            return time.perf_counter() - started, counted
    finally:
        gc.enable()


S3_WRITES = ("PutObject", "CopyObject", "UploadPart", "UploadPartCopy", "CreateMultipartUpload")


def publish_check(counted: Counter[Call]) -> str | None:
    """The issue's rule: a publish is exactly one TransactWriteItems and writes nothing to S3."""
    problems = []
    transactions = counted[("DynamoDB", "TransactWriteItems")]
    if transactions != 1:
        problems.append(f"publish must make exactly one DynamoDB TransactWriteItems, made {transactions}")
    s3_writes = {op: counted[("S3", op)] for op in S3_WRITES if counted[("S3", op)]}
    if s3_writes:
        problems.append(f"publish must not put or copy bytes in S3, made {s3_writes}")
    return "; ".join(problems) or None
