"""Cold start of the resolve function, measured as whole processes: a fresh interpreter that imports the
handler and builds its clients, against one that imports boto3 and builds the same two clients.

Each run's figure is the CPU time (user + system) the kernel accounted to the child process: wall time on a
shared machine measures the neighbours as much as the code. Runs alternate (A, B, A, B, …) so that a machine
whose speed drifts affects both sides alike; the ratio is the median of the per-pair ratios. The environment is
the deployed one as far as a cold start sees it (tracing on for Powertools, fake credentials, no network is
touched: building a client makes no call; no bytecode cache for Arca's modules, as the asset ships none).
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from bench.report import table
from local.services import FAKE_CREDENTIALS

FLOOR = 'import boto3; boto3.client("dynamodb"); boto3.client("s3")'
RESOLVE = "import arca.handlers.resolve; from arca import wiring; wiring.services()"
# The first request after a cold start also builds the route's validation model: /health touches no AWS service.
FIRST_REQUEST = (
    "import arca.handlers.resolve as r; from arca import wiring; wiring.services(); "
    "from local.events import api_event, lambda_context; "
    "r.handler(api_event('GET', '/health')[0], lambda_context('resolve'))"
)
ENV = {
    **FAKE_CREDENTIALS,
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
    "ARCA_TABLE_NAME": "arca",
    "ARCA_BUCKET_NAME": "arca",
    "POWERTOOLS_SERVICE_NAME": "arca-resolve",
    "POWERTOOLS_METRICS_NAMESPACE": "Arca",
    "PYTHONDONTWRITEBYTECODE": "1",
}


@dataclass(frozen=True)
class Row:
    label: str
    seconds: list[float]
    floor: list[float]

    @property
    def ratio(self) -> float:
        return statistics.median(a / b for a, b in zip(self.seconds, self.floor, strict=True))


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _run(code: str) -> float:
    """CPU seconds of one whole process running `code` (its children's usage, once it has been waited for)."""
    env = {**os.environ, **ENV}
    before = _cpu()
    subprocess.run([sys.executable, "-c", code], env=env, check=True, stdout=subprocess.DEVNULL)
    return _cpu() - before


def measure(code: str, runs: int) -> tuple[list[float], list[float]]:
    _run(code), _run(FLOOR)  # warm the page cache and the bytecode caches
    mine: list[float] = []
    floor: list[float] = []
    for _ in range(runs):
        mine.append(_run(code))
        floor.append(_run(FLOOR))
    return mine, floor


def section(runs: int = 15, cases: Sequence[tuple[str, str]] | None = None) -> tuple[str, list[Row]]:
    cases = cases or (
        ("resolve: import + clients", RESOLVE),
        ("resolve: import + clients + first request (/health)", FIRST_REQUEST),
    )
    rows = [Row(label, *measure(code, runs)) for label, code in cases]
    floor = statistics.median(s for row in rows for s in row.floor)
    body = table(
        ["whole process", "median CPU ms", "floor median CPU ms", "ratio to the floor"],
        [
            [row.label, f"{statistics.median(row.seconds) * 1000:.0f}", f"{floor * 1000:.0f}", f"{row.ratio:.2f}x"]
            for row in rows
        ],
    )
    note = (
        f"The floor is `{FLOOR}` in a fresh interpreter. CPU time (user + system) of each whole process; {runs} "
        "pairs per row, alternating; the ratio is the median of the per-pair ratios."
    )
    return "\n".join(["## Cold start (whole process)", "", body, "", note]), rows
