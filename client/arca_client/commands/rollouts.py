"""`arca rollout`: start a progressive rollout of an alias, follow its state, abort it."""

from __future__ import annotations

import argparse

from arca_client.commands.base import Commands, count_arg, version_arg
from arca_client.models import Rollout
from arca_client.output import EXIT_NOT_COMPLETED, EXIT_OK, MODE, Result, note, out, still_on, target, when
from arca_client.sdk import Client


def steps_arg(text: str) -> list[int]:
    """`10,50,90`: the canary's weights in turn (the API checks 1-99, strictly increasing)."""
    try:
        return [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of weights, e.g. 10,50") from None


def _state(rollout: Rollout) -> str:
    where = f"step {min(rollout.step, len(rollout.steps))}/{len(rollout.steps)} at {rollout.weight}%"
    if rollout.state == "running":
        return f"{rollout.state}: {where}, next step {when(rollout.next_at)} UTC"
    cause = f" (alarm {rollout.alarm})" if rollout.alarm else ""
    return f"{rollout.state}{cause} at {when(rollout.ended_at)} UTC"


def _line(args: argparse.Namespace, rollout: Rollout) -> str:
    return (
        f"{args.name}: {args.alias} rollout of version {rollout.version} (from {target(rollout.from_version)}): "
        f"{_state(rollout)}"
    )


def _consumer_lines(args: argparse.Namespace, rollout: Rollout) -> list[str]:
    """`3 consumers still on v7 (a, b, c)` for the version rolled out from and the one rolled out."""
    return still_on(args.name, rollout.consumers or [])


def cmd_rollout_start(args: argparse.Namespace, client: Client) -> Result:
    rollout = client.start_rollout(
        args.name,
        args.alias,
        args.version,
        steps=args.steps,
        interval_seconds=args.interval,
        alarms=args.alarm,
        reason=args.reason,
    )
    for warning in rollout.warnings:
        note(f"warning: {warning}")
    return Result(rollout.raw, _line(args, rollout))


def cmd_rollout_status(args: argparse.Namespace, client: Client) -> Result | None:
    if not args.watch:
        rollout = client.get_rollout(args.name, args.alias)
        return Result(rollout.raw, "\n".join([_line(args, rollout), *_consumer_lines(args, rollout)]))

    def changed(rollout: Rollout) -> None:
        if not MODE.json:  # with --json, only the final state is printed
            print("\n".join([_line(args, rollout), *_consumer_lines(args, rollout)]), file=out())

    try:
        final = client.watch_rollout(args.name, args.alias, poll_seconds=args.poll, on_change=changed)
    except KeyboardInterrupt:  # stopping to watch is how a watch ends early, as for events --follow
        return None
    # Each state was printed as it came. As `kubectl rollout status` does, a rollout that did not complete is a
    # non-zero exit, so that a pipeline step waiting on it fails.
    return Result(final.raw, code=EXIT_OK if final.state == "completed" else EXIT_NOT_COMPLETED)


def cmd_rollout_abort(args: argparse.Namespace, client: Client) -> Result:
    rollout = client.abort_rollout(args.name, args.alias)
    return Result(rollout.raw, _line(args, rollout))


def register(commands: Commands) -> None:
    rollouts = commands.group(
        "rollout",
        "progressive rollouts of an alias",
        "progressive rollouts: a canary moved through weights, promoted, or rolled back on an alarm",
        dest="rollout_command",
        metavar="ROLLOUT_COMMAND",
    )

    p = rollouts.add(
        "start",
        cmd_rollout_start,
        "VERSION as ALIAS's canary at each weight of --steps, then its primary",
        example="arca rollout start payments/api prod 3 --steps 10,50 --interval 300 --alarm api-errors",
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument("alias", metavar="ALIAS")
    p.add_argument("version", metavar="VERSION", type=version_arg)
    p.add_argument("--steps", type=steps_arg, required=True, metavar="W1,W2,...", help="weights in %%, e.g. 10,50")
    p.add_argument("--interval", type=count_arg, required=True, metavar="SECONDS", help="between steps (1-86400)")
    p.add_argument(
        "--alarm", action="append", metavar="NAME", help="CloudWatch alarm read before each step (repeatable)"
    )
    p.add_argument("--reason", help="recorded with the rollout")

    p = rollouts.add(
        "status",
        cmd_rollout_status,
        "the state of ALIAS's latest rollout; --watch follows it and exits 7 unless it completes",
        example="arca rollout status payments/api prod --watch",
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument("alias", metavar="ALIAS")
    p.add_argument(
        "--watch",
        action="store_true",
        help="follow each step until the rollout ends: exit 0 when it completed, 7 when it was rolled back, aborted "
        "or superseded",
    )
    p.add_argument("--poll", type=float, default=2.0, metavar="SECONDS", help="with --watch (default 2)")

    p = rollouts.add(
        "abort",
        cmd_rollout_abort,
        "abort the running rollout: ALIAS keeps its primary",
        example="arca rollout abort payments/api prod",
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument("alias", metavar="ALIAS")
