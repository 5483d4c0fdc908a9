"""Large transfers in local mode (`make bench-large`, `python -m bench.transfers --mib 1024`): the installed `arca`
publishing and downloading one file in parts with `--parallel 1` and `--parallel 8` (time, throughput, the
client's peak RSS), an upload killed half-way and run again (bytes sent again), and the calls per upload.

Local mode's S3 is moto's server in this process: throughput here says how the client scales with parallel parts
on one machine, not what a link to S3 gives. Each publish goes to an artifact of its own (nothing is deduplicated)
with an empty layout cache, so the time includes hashing the file once.

Checks (the exit status is 1 when one fails): a download with `--parallel 8` takes at most MAX_DOWNLOAD_RATIO times
the upload of the same file with `--parallel 8`, and is faster than a download with `--parallel 1`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

from arca_client import transfer
from bench.report import table

MIB = 1024**2
ARCA = Path(sys.executable).with_name("arca")
PART = 8 * MIB
# Local S3 serves a ranged GET from its range (local/s3_ranges.py): a download is no slower than the upload.
MAX_DOWNLOAD_RATIO = 1.2


@dataclass
class Run:
    seconds: float
    peak_rss_mib: float
    answer: dict[str, Any]


def _env(url: str, cache: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARCA_", "AWS_"))}
    return {**env, "ARCA_ENDPOINT": url, "ARCA_CACHE_DIR": str(cache), **extra}


def _peak_rss_kib(pid: int) -> int | None:
    """The process's resident high-water mark (VmHWM). Read from /proc while it runs: the rusage of a child
    forked from this (large) process would count this process's pages too."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def _arca(env: dict[str, str], cwd: Path, *argv: str) -> Run:
    """One `arca … --json` process: wall time, and its peak resident set."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen([str(ARCA), *argv, "--json"], env=env, cwd=cwd, stdout=out)
        peak = 0
        while process.poll() is None:
            peak = max(peak, _peak_rss_kib(process.pid) or 0)
            time.sleep(0.02)
        seconds = time.perf_counter() - started
        out.seek(0)
        answer = out.read()
    if process.returncode != 0:
        raise RuntimeError(f"arca {' '.join(argv)} failed ({process.returncode})")
    return Run(seconds, peak / 1024, json.loads(answer))


def _rate(size: int, seconds: float) -> str:
    return f"{size / MIB / seconds:.0f}"


def _killed_half_way(url: str, work: Path, name: str, size: int) -> dict[str, Any]:
    """Publish with --parallel 4, stop the process after half the parts (transfer.STALL_ENV: the parts in flight
    then still finish) and kill it; then run it again."""
    parts = -(-size // PART)
    env = _env(url, work / "cache-resume")
    argv = ["publish", name, "data.bin", "--part-size", str(PART), "--parallel", "4"]
    stalled = subprocess.Popen(
        [str(ARCA), *argv], env={**env, transfer.STALL_ENV: str(parts // 2)}, cwd=work, stdout=subprocess.DEVNULL
    )
    cache = transfer.StateCache({"ARCA_CACHE_DIR": str(work / "cache-resume")})
    deadline = time.monotonic() + 600
    uploaded = 0
    while uploaded < parts // 2:
        layout = cache.layout(work / "data.bin", PART)
        if layout is not None:
            from arca.domain.multipart import parts_sha256

            answer = requests.get(f"{url}/artifacts/{name}/uploads/{layout.sha256}.{parts_sha256(layout.parts)}")
            uploaded = len(answer.json()["upload"]["uploaded"]) if answer.status_code == 200 else 0
        if time.monotonic() > deadline or stalled.poll() is not None:
            raise RuntimeError("the stalled upload did not reach half-way")
        time.sleep(0.2)
    stalled.kill()
    stalled.wait()
    resumed = _arca(env, work, *argv)
    return {"parts": parts, "in_s3_at_kill": uploaded, **resumed.answer["transfer"], "seconds": resumed.seconds}


def checks(seconds: dict[tuple[str, str], float]) -> list[str]:
    """The failed checks of one run (the module docstring's), each as a sentence; empty when all pass."""
    failures = []
    ratio = seconds["download", "8"] / seconds["publish", "8"]
    if ratio > MAX_DOWNLOAD_RATIO:
        failures.append(
            f"a download with --parallel 8 took {ratio:.2f} times as long as its upload (at most {MAX_DOWNLOAD_RATIO})"
        )
    if seconds["download", "8"] >= seconds["download", "1"]:
        failures.append("a download with --parallel 8 was not faster than with --parallel 1")
    return failures


def section(mib: int) -> tuple[str, list[str]]:
    """The section's text and its failed checks."""
    from local.server import running_arca

    size = mib * MIB
    rows: list[list[str]] = []
    seconds: dict[tuple[str, str], float] = {}
    with tempfile.TemporaryDirectory(prefix="arca-bench-") as scratch, running_arca(port=0) as url:
        work = Path(scratch)
        with open(work / "data.bin", "wb") as out:
            for _ in range(mib):
                out.write(os.urandom(MIB))
        reports: dict[str, Any] = {}
        for parallel in ("1", "8"):
            env = _env(url, work / f"cache-{parallel}")
            name = f"bench/large-p{parallel}"
            up = _arca(env, work, "publish", name, "data.bin", "--part-size", str(PART), "--parallel", parallel)
            reports[parallel] = up.answer["transfer"]
            seconds["publish", parallel] = up.seconds
            rows.append(["publish", parallel, f"{up.seconds:.1f}", _rate(size, up.seconds), f"{up.peak_rss_mib:.0f}"])
        for parallel in ("1", "8"):
            env = _env(url, work / "cache-dl")
            down = _arca(
                env, work, "download", "bench/large-p8@1", "-o", f"copy-{parallel}.bin", "--parallel", parallel
            )
            seconds["download", parallel] = down.seconds
            rows.append(
                ["download", parallel, f"{down.seconds:.1f}", _rate(size, down.seconds), f"{down.peak_rss_mib:.0f}"]
            )
            (work / f"copy-{parallel}.bin").unlink()
        resume = _killed_half_way(url, work, "bench/large-resume", size)
    headers = ["transfer", "--parallel", "seconds", "MiB/s", "client peak RSS MiB"]
    calls = reports["8"]
    parts = -(-size // PART)
    lines = [
        f"## Large transfers: {mib} MiB in parts of {PART // MIB} MiB, local mode",
        "",
        table(headers, rows),
        "",
        f"Calls per upload: {calls['calls']} API calls (POST uploads, a GET uploads/{{id}} per further round, POST "
        f"complete) + {calls['parts_sent']} part PUTs to S3 + 1 POST versions; {parts} parts, at most 1,000 URLs an "
        "answer.",
        f"Killed half-way: {resume['in_s3_at_kill']} of {resume['parts']} parts in S3 at the kill; the rerun sent "
        f"{resume['sent'] / MIB:.0f} MiB ({resume['parts_sent']} parts) and found {resume['resumed'] / MIB:.0f} MiB "
        f"in S3 already ({resume['seconds']:.1f} s, hashing skipped: the layout was cached).",
        f"Download with --parallel 8: {seconds['download', '8'] / seconds['publish', '8']:.2f} times as long as the "
        f"upload with --parallel 8 (at most {MAX_DOWNLOAD_RATIO}), "
        f"{seconds['download', '1'] / seconds['download', '8']:.2f} times as fast as with --parallel 1.",
        "",
        "Note: moto's S3 runs in this process, sharing its lock with the functions (local mode reads each ranged GET "
        "from its range): throughput here is local mode's, not S3's (docs/local.md).",
    ]
    failures = checks(seconds)
    lines.append("Checks: " + ("FAILED: " + "; ".join(failures) if failures else "all passed"))
    return "\n".join(lines), failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.transfers", description=__doc__)
    parser.add_argument("--mib", type=int, default=1024, help="the file's size in MiB (default 1024: 1 GiB)")
    args = parser.parse_args(argv)
    text, failures = section(args.mib)
    print(text)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
