"""Cold start of the resolve function, measured as whole processes: a fresh interpreter that imports the
handler and builds its clients (and then serves its first request), against one that imports boto3 and builds the
same two clients.

Each run's figure is the CPU time (user + system) the kernel accounted to the child process: wall time on a
shared machine measures the neighbours as much as the code. Runs alternate (A, B, A, B, …) so that a machine
whose speed drifts affects both sides alike; the ratio is the median of the per-pair ratios. The environment is
the deployed one as far as a cold start sees it: the package as its asset ships it (built by infra/asset.py, with
bytecode compiled by the interpreter that runs it), tracing on for Powertools, fake credentials. The first request
is the hot path, a resolve of an alias, answered by a moto server in this process (its work is not the child's).
Every child, the floor's too, ends as soon as its work is done (`os._exit`): a cold start ends with the answer, and
Lambda never tears the interpreter down within it.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.report import table
from infra import asset
from local.services import FAKE_CREDENTIALS

LAMBDAS = Path(__file__).resolve().parent.parent / "lambdas"
_END = "; import os, sys; sys.stdout.flush(); os._exit(0)"
FLOOR = 'import boto3; boto3.client("dynamodb"); boto3.client("s3")' + _END
RESOLVE = "import arca.handlers.resolve; from arca import wiring; wiring.services()" + _END
# The event is built here (ARCA_BENCH_EVENT): building it in the child would import the whole route table.
FIRST_REQUEST = (
    "import json, os, types; import arca.handlers.resolve as r; from arca import wiring; wiring.services(); "
    "context = types.SimpleNamespace(function_name='arca-resolve', memory_limit_in_mb=512, aws_request_id='cold', "
    "invoked_function_arn='arn:aws:lambda:us-east-1:000000000000:function:arca-resolve'); "
    "answer = r.handler(json.loads(os.environ['ARCA_BENCH_EVENT']), context); "
    "assert answer['statusCode'] == 200, answer" + _END
)
NAME, ALIAS = "bench/cold", "prod"
# The bar both rows are held to: at most this ratio of the floor.
TARGET = 1.3
ENV = {
    **FAKE_CREDENTIALS,
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
    "ARCA_TABLE_NAME": "arca-cold",
    "ARCA_BUCKET_NAME": "arca-cold",
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


def _run(code: str, env: Mapping[str, str]) -> float:
    """CPU seconds of one whole process running `code` (its children's usage, once it has been waited for)."""
    before = _cpu()
    subprocess.run([sys.executable, "-c", code], env={**os.environ, **env}, check=True, stdout=subprocess.DEVNULL)
    return _cpu() - before


def measure(code: str, runs: int, env: Mapping[str, str]) -> tuple[list[float], list[float]]:
    _run(code, env), _run(FLOOR, env)  # warm the page cache
    mine: list[float] = []
    floor: list[float] = []
    for _ in range(runs):
        mine.append(_run(code, env))
        floor.append(_run(FLOOR, env))
    return mine, floor


@contextlib.contextmanager
def deployed() -> Iterator[dict[str, str]]:
    """The environment of the measured processes: the function's asset on the path, and an artifact whose alias
    the first request resolves, in a moto server of this process."""
    from moto.server import ThreadedMotoServer

    from local.services import patched_environ

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request of the seed otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        endpoint = f"http://127.0.0.1:{server.get_host_and_port()[1]}"
        with tempfile.TemporaryDirectory(prefix="arca-asset-") as built:
            asset.build(LAMBDAS, Path(built), sys.executable)
            env = {**ENV, "AWS_ENDPOINT_URL": endpoint, "PYTHONPATH": built}
            with patched_environ({k: v for k, v in env.items() if k != "PYTHONPATH"}, unset=("AWS_PROFILE",)):
                env["ARCA_BENCH_EVENT"] = json.dumps(_seed())
            yield env
    finally:
        server.stop()


def _seed() -> dict[str, object]:
    """An artifact with one version and an alias on it, put through the handlers; the event of resolving it."""
    import boto3
    import requests

    from arca import wiring
    from infra.schema import create_table_request
    from local.events import HandlerApi, api_event
    from local.services import create_signing_key, patched_environ

    boto3.client("dynamodb").create_table(**create_table_request(ENV["ARCA_TABLE_NAME"], stream=False))
    boto3.client("s3").create_bucket(Bucket=ENV["ARCA_BUCKET_NAME"])
    key = create_signing_key(boto3.client("kms"))
    # The handlers print their metrics (EMF) on stdout, as on Lambda: not into the bench's report.
    with patched_environ({"ARCA_SIGNING_KEY_ARN": key}), contextlib.redirect_stdout(io.StringIO()):
        wiring.reset()
        try:
            api = HandlerApi()
            data = b"cold start"
            sha = hashlib.sha256(data).hexdigest()
            upload = api.call("POST", f"/artifacts/{NAME}/uploads", {"sha256": sha, "size": len(data)}).body["upload"]
            requests.put(upload["url"], data=data, headers=upload["headers"], timeout=30).raise_for_status()
            assert api.call("POST", f"/artifacts/{NAME}/versions", {"sha256": sha, "size": len(data)}).status == 201
            assert api.call("PUT", f"/artifacts/{NAME}/aliases/{ALIAS}", {"version": 1}).status == 201
        finally:
            wiring.reset()
    event, _ = api_event("GET", f"/artifacts/{NAME}/resolve/{ALIAS}", query={"routing_key": ["user-42"]})
    return event


def section(runs: int = 15, cases: Sequence[tuple[str, str]] | None = None) -> tuple[str, list[Row]]:
    cases = cases or (
        ("resolve: import + clients", RESOLVE),
        ("resolve: import + clients + first request (resolve of an alias)", FIRST_REQUEST),
    )
    with deployed() as env:
        rows = [Row(label, *measure(code, runs, env)) for label, code in cases]
    floor = statistics.median(s for row in rows for s in row.floor)
    body = table(
        ["whole process", "median CPU ms", "floor median CPU ms", "ratio to the floor", f"within {TARGET}x"],
        [
            [
                row.label,
                f"{statistics.median(row.seconds) * 1000:.0f}",
                f"{floor * 1000:.0f}",
                f"{row.ratio:.2f}x",
                "yes" if row.ratio <= TARGET else "no",
            ]
            for row in rows
        ],
    )
    note = (
        f"The floor is `import boto3` and two clients in a fresh interpreter. CPU time (user + system) of each whole "
        f"process, ended when its work is done; {runs} pairs per row, alternating; the ratio is the median of the "
        "per-pair ratios. The package is the function's asset with its bytecode; the first request resolves an alias "
        "(one Query, answered by moto in the bench's own process, and a presigned URL)."
    )
    return "\n".join(["## Cold start (whole process)", "", body, "", note]), rows
