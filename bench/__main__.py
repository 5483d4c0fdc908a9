"""`python -m bench` (`make bench`): run every group, print the tables, exit 1 if an expectation broke."""

from __future__ import annotations

import argparse
import contextlib
import gc
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from bench import cases, coldstart, consumers, events, protocols, retention, trees
from bench.cases import RATIOS, SIZES, Config
from bench.harness import S3_WRITES, BenchFailure, Group, Measurement, Result, Runner
from bench.report import DASH, group_table, ms, notes, ratio, table
from bench.world import MIB, blob, world


@dataclass
class Outcome:
    text: str
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0
    results: dict[str, Result] = field(default_factory=dict)


class _Discard:
    """stdout while handlers run: Powertools Metrics prints its EMF lines there, as on Lambda."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


def run(cfg: Config, progress: Callable[[str], None] | None = None) -> Outcome:
    started = time.perf_counter()
    runner = Runner(cfg.iterations, warmup=cfg.warmup)
    if progress is not None:
        runner.progress = progress
    sections: list[str] = []
    by_id: dict[str, Result] = {}
    failures: list[str] = []
    overhead: list[list[str]] = []
    try:
        with contextlib.ExitStack() as run_scope:
            run_scope.enter_context(contextlib.redirect_stdout(_Discard()))  # type: ignore[type-var]
            shared = None if cfg.isolate_groups else run_scope.enter_context(world())
            for build in cases.GROUPS:
                with contextlib.ExitStack() as group_scope:
                    w = shared or group_scope.enter_context(world())
                    group = build(w, cfg)
                    # The fixtures live to the end of the group: freezing them keeps each collection short.
                    gc.collect()
                    gc.freeze()
                    group_scope.callback(gc.unfreeze)
                    results = runner.run_group(group)
                    by_id.update({r.case.id: r for r in results})
                    overhead += _overhead(cfg, runner, {r.case.id: r for r in results})
                sections.append(_group_section(group, results))
        sections.append(_sizes(cfg, by_id, failures))
        sections.append(_overhead_section(cfg, overhead))
        if cfg.cold_start_runs:
            sections.append(coldstart.section(cfg.cold_start_runs)[0])
        if cfg.retention_versions:
            with world() as w, contextlib.redirect_stdout(_Discard()):  # type: ignore[type-var]
                sections.append(retention.section(w, cfg.retention_versions, cfg.retention_revisions))
        if cfg.consumer_iterations:
            with world() as w, contextlib.redirect_stdout(_Discard()):  # type: ignore[type-var]
                sections.append(consumers.section(w, cfg.consumer_iterations, cfg.resolver_resolves))
        if cfg.protocol_iterations:
            with world() as w, contextlib.redirect_stdout(_Discard()):  # type: ignore[type-var]
                sections.append(protocols.section(w, cfg.protocol_iterations))
        if cfg.tree_iterations:
            with world() as w, contextlib.redirect_stdout(_Discard()):  # type: ignore[type-var]
                sections.append(trees.section(w, cfg.tree_files, cfg.tree_iterations, cfg.tree_client_files)[0])
        if cfg.events_publishes:
            sections.append(events.section(cfg.events_publishes, cfg.events_idle_seconds))
    except BenchFailure as failure:
        failures.append(str(failure))
    finally:
        blob.cache_clear()
    seconds = time.perf_counter() - started
    sections.append(_summary(cfg, by_id, failures, seconds))
    header = (
        f"# Arca bench: in process under moto, {cfg.iterations} calls per row unless `n` says otherwise, "
        "after a warm-up call\n\nAWS calls are counted at the botocore level (before-call), per operation; "
        "times are wall-clock milliseconds of the whole call (handler included for Arca)."
        + (" Each group runs against fresh tables and buckets." if cfg.isolate_groups else "")
    )
    return Outcome("\n\n".join([header, *sections]) + "\n", failures, seconds, by_id)


def _group_section(group: Group, results: list[Result]) -> str:
    lines = [f"## {group.title}", "", group_table(results)]
    if group.note:
        lines += ["", f"Note: {group.note}"]
    if case_notes := notes(results):
        lines += ["", *case_notes]
    return "\n".join(lines)


def _s3_writes(m: Measurement | None) -> str:
    if m is None:
        return DASH
    written = {}
    for call in set().union(*m.calls):
        service, operation = call
        if service == "S3" and operation.split(" ")[0] in S3_WRITES:
            written[operation] = max(c[call] for c in m.calls)
    return ", ".join(f"{op} {count}" for op, count in sorted(written.items())) or "0"


def _sizes(cfg: Config, by_id: dict[str, Result], failures: list[str]) -> str:
    s, b = cfg.small_label, cfg.big_label
    headers = ["operation", "side", f"median ms {s}", f"median ms {b}", f"ratio {b} / {s}", f"S3 writes per call ({b})"]
    rows = []
    for label, small_id, big_id in SIZES:
        small, big = by_id.get(small_id), by_id.get(big_id)
        if small is None or big is None:
            continue
        for side in ("arca", "versioned"):
            small_m, big_m = getattr(small, side), getattr(big, side)
            if small_m is None or big_m is None:
                continue
            name = "Arca" if side == "arca" else "versioned"
            low, high = small_m.median_ms, big_m.median_ms
            rows.append([label, name, ms(low), ms(high), ratio(high, low), _s3_writes(big_m)])
    publish = _publish_ratio(by_id)
    if publish is not None and cfg.max_publish_ratio is not None and publish > cfg.max_publish_ratio:
        failures.append(
            f"Arca publish latency grows with artifact size: {b} / {s} = {publish:.2f}x "
            f"(the limit is {cfg.max_publish_ratio:.2f}x; publishing must not touch the bytes)"
        )
    return "\n".join([f"## Publish and size: {s} vs {b}", "", table(headers, rows)])


def _publish_ratio(by_id: dict[str, Result], side: str = "arca") -> float | None:
    small, big = by_id.get("publish.small"), by_id.get("publish.big")
    small_m = getattr(small, side) if small else None
    big_m = getattr(big, side) if big else None
    if small_m is None or big_m is None or small_m.median_ms <= 0:
        return None
    return float(big_m.median_ms / small_m.median_ms)


def _overhead(cfg: Config, runner: Runner, results: dict[str, Result]) -> list[list[str]]:
    """RATIOS found in one group's results: the handler call and the bare call, interleaved call by call."""
    rows = []
    for label, case_id, base_id in RATIOS:
        case, base = results.get(case_id), results.get(base_id)
        if not (case and base and case.case.arca and base.case.arca):
            continue
        mine, floor = runner.interleaved(case.case.arca, base.case.arca, cfg.iterations)
        per_pair = statistics.median([m / f for m, f in zip(mine.seconds, floor.seconds, strict=True)])
        handler, bare = mine.median_ms, floor.median_ms
        rows.append([label, mine.describe_calls(), ms(handler), ms(bare), ms(handler - bare), f"{per_pair:.2f}x"])
    return rows


def _overhead_section(cfg: Config, rows: list[list[str]]) -> str:
    headers = ["Arca handler / bare call", "Arca calls", "median ms", "bare median ms", "difference ms", "ratio"]
    note = (
        f"Each row alternates the handler call and the bare call, {cfg.iterations} times; the ratio is the "
        "median of the per-pair ratios. The bare call is the same boto3 client without the handler, so the "
        "difference is what the handler adds (event parsing, validation, presigning, metrics) plus any extra "
        "call it makes."
    )
    return "\n".join(["## Handler overhead", "", table(headers, rows), "", note])


def _summary(cfg: Config, by_id: dict[str, Result], failures: Sequence[str], seconds: float) -> str:
    lines = []
    small, big = by_id.get("publish.small"), by_id.get("publish.big")
    if small and big and small.arca and big.arca:
        arca_ratio = _publish_ratio(by_id)
        lines.append(
            f"Summary: Arca publish = {small.arca.describe_calls()}, S3 writes {_s3_writes(big.arca)}, "
            f"{cfg.big_label}/{cfg.small_label} latency ratio {arca_ratio:.2f}x"
        )
        if small.versioned and big.versioned:
            copied = big.versioned.count("S3", "CopyObject")[1] * cfg.big_size / MIB
            lines.append(
                f"versioned publish_artifact_version = {small.versioned.describe_calls()}, copying {copied:g} MiB "
                f"in S3 per publish at {cfg.big_label}, ratio {_publish_ratio(by_id, 'versioned'):.2f}x"
            )
    verdict = "FAILED: " + "; ".join(failures) if failures else "all checks passed"
    lines.append(f"Checks: {verdict}. Run time {seconds:.1f} s.")
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> Config:
    default = Config()
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("-n", "--iterations", type=int, default=default.iterations, help="calls per row")
    parser.add_argument("--big-iterations", type=int, default=default.big_iterations, help="calls per big-blob row")
    parser.add_argument(
        "--big-put-iterations", type=int, default=default.big_put_iterations, help="calls per big-upload row"
    )
    parser.add_argument(
        "--write-iterations", type=int, default=default.write_iterations, help="calls per row that needs many writes"
    )
    parser.add_argument(
        "--cold-start-runs", type=int, default=default.cold_start_runs, help="process pairs per cold-start row; 0 skips"
    )
    parser.add_argument("--big-mib", type=float, default=default.big_size / MIB, help="the big blob, in MiB")
    parser.add_argument(
        "--max-publish-ratio", type=float, default=default.max_publish_ratio, help="0 disables the size check"
    )
    args = parser.parse_args(argv)
    return replace(
        default,
        iterations=args.iterations,
        big_iterations=args.big_iterations,
        big_put_iterations=args.big_put_iterations,
        write_iterations=args.write_iterations,
        big_size=int(args.big_mib * MIB),
        max_publish_ratio=args.max_publish_ratio or None,
        cold_start_runs=args.cold_start_runs,
    )


def main(argv: Sequence[str] | None = None) -> int:
    cfg = parse_args(argv)
    outcome = run(cfg)
    sys.stdout.write(outcome.text)
    for failure in outcome.failures:
        print(f"bench FAILED: {failure}", file=sys.stderr)
    return 1 if outcome.failures else 0


if __name__ == "__main__":
    sys.exit(main())
