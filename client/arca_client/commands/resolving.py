"""Resolving for scripts through the SDK's `Resolver` (arca_client.resolver): `arca consume NAME@REF --consumer ID`
here, and the watch that `arca resolve NAME@REF --watch` (commands/transfer.py) shares with it.

Both print the answer as one JSON object per line (whatever --output: these are for scripts), a new line only
when the answer changes: another version or content, the answer turning stale (Arca unreachable: the last good
answer, kept in memory and on disk, is served with `stale` and the reason in `error`) or fresh again, and for a
consumer its lease taken or renewed. The download URL is short-lived and changes with every refresh, so it alone
prints no line. Ctrl-C ends them quietly, exit 0.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from arca_client.commands.base import Commands, UsageError, full_ref, split_ref, tag_set_arg
from arca_client.output import Result, out, when
from arca_client.resolver import DEFAULT_FRESH_FOR, DEFAULT_LEASE_TTL, MAX_STALE_BOUND, Resolved, Resolver, unreachable
from arca_client.sdk import Client

# How a watch waits between two looks at its answer (tests replace it).
PAUSE: Callable[[float], None] = time.sleep
INTERVAL_HELP = (
    f"seconds an answer is kept before Arca is asked again (default {DEFAULT_FRESH_FOR:.0f}; at most 86400); "
    "a look at a kept answer sends no request"
)
CACHE_HELP = "the folder that keeps the last good answer for an outage (default ~/.cache/arca/resolver)"


def interval_arg(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds <= MAX_STALE_BOUND:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds (more than 0, at most 86400)")
    return seconds


def resolver(
    client: Client,
    name: str,
    ref: str,
    *,
    interval: float | None,
    cache: str | None,
    consumer: str | None = None,
    routing_key: str | None = None,
    ttl: int | None = None,
    labels: Mapping[str, str] | None = None,
) -> Resolver:
    """A Resolver that asks Arca once its answer is `interval` seconds old, in the caller's thread (a watch looks
    at it every `interval` seconds, so every look past the first asks; a stale answer is asked again every few
    seconds, as the Resolver does)."""
    every = interval if interval is not None else DEFAULT_FRESH_FOR
    return Resolver(
        client,
        name,
        ref,
        consumer=consumer,
        routing_key=routing_key,
        fresh_for=every,
        max_stale=every,
        lease_ttl=ttl if ttl is not None else DEFAULT_LEASE_TTL,
        labels=labels,
        cache_dir=cache,
        background=False,
    )


def answer_data(resolver: Resolver, answer: Resolved) -> dict[str, Any]:
    """One line of a watch: the answer, whether it is stale (and why), and the consumer's lease."""
    resolution = answer.resolution
    data: dict[str, Any] = {
        "name": resolution.name,
        "ref": resolution.ref,
        "version": resolution.version,
        "sha256": resolution.sha256,
        "route": resolution.route,
        "alias_revision": resolution.alias_revision,
        "download_url": resolution.download_url,
        "expires_at": resolution.expires_at,
        "fetched_at": datetime.fromtimestamp(answer.fetched_at, UTC).isoformat(timespec="milliseconds"),
        "stale": answer.stale,
        "error": answer.error,
    }
    if resolver.consumer is not None:
        lease = resolver.lease
        data["consumer"] = resolver.consumer
        data["lease"] = None if lease is None else {"version": lease.version, "expires_at": lease.expires_at}
        data["lease_error"] = None if resolver.lease_error is None else str(resolver.lease_error)
    return data


def _changed(data: Mapping[str, Any]) -> tuple[Any, ...]:
    """What makes a new line: not the download URL (new with every refresh) nor when it was fetched."""
    return tuple(v for k, v in data.items() if k not in ("download_url", "expires_at", "fetched_at", "error"))


def emit(data: Mapping[str, Any]) -> None:
    print(json.dumps(data), file=out(), flush=True)


def first_answer(resolver: Resolver) -> Resolved:
    """The first answer, refusing what a consumer cannot lease: LATEST (no version number), or a lease Arca
    refused with authority (a bad consumer id, access denied): raised, not retried forever."""
    answer = resolver.resolve()
    if resolver.consumer is not None:
        if not isinstance(answer.version, int):
            raise UsageError(
                f"{resolver.name}@{resolver.ref} resolves to LATEST, the working copy: a lease names a version number"
            )
        error = resolver.lease_error
        if error is not None and not unreachable(error):
            raise error
    return answer


def watch(resolver: Resolver, every: float) -> None:
    """Print the answer, then a line each time it changes, looking every `every` seconds, until Ctrl-C."""
    with resolver:
        try:
            answer = first_answer(resolver)
            last: tuple[Any, ...] | None = None
            while True:
                data = answer_data(resolver, answer)
                if _changed(data) != last:
                    emit(data)
                    last = _changed(data)
                PAUSE(every)
                answer = resolver.resolve()
        except KeyboardInterrupt:
            return


def cmd_consume(args: argparse.Namespace, client: Client) -> Result | None:
    """Resolve NAME@REF through the SDK's Resolver, holding the consumer's lease on the version it serves: --once
    answers and exits; otherwise a JSON line per change (a new version, stale or fresh again, the lease renewed)
    until Ctrl-C."""
    name, ref = split_ref(args.ref)
    labels = dict(args.label) if args.label else None
    every = args.interval if args.interval is not None else DEFAULT_FRESH_FOR
    consuming = resolver(
        client,
        name,
        full_ref(client, name, ref or "LATEST"),
        interval=every,
        cache=args.cache,
        consumer=args.consumer,
        ttl=args.ttl,
        labels=labels,
    )
    if not args.once:
        watch(consuming, every)
        return None
    with consuming:
        answer = first_answer(consuming)
        data = answer_data(consuming, answer)
    lease = consuming.lease
    text = f"{name}@{answer.version}"
    if answer.stale:
        text += f" (stale: {answer.error}; the answer kept from {when(data['fetched_at'])})"
    text += f": leased by {lease.consumer} until {when(lease.expires_at)}" if lease else ": not leased"
    return Result(data, text)


def register(commands: Commands) -> None:
    p = commands.add(
        "consume",
        cmd_consume,
        "resolve NAME@REF as consumer ID through the SDK's Resolver, holding ID's lease on the version it serves "
        "(--once: answer and exit; else a JSON line per change, renewing the lease, until Ctrl-C)",
        example="arca consume payments/api@prod --consumer ecs:prod.payments --once --json\n"
        "arca consume payments/api@prod --consumer ecs:prod.payments --ttl 3600 --cache /var/cache/arca",
    )
    p.add_argument("ref", metavar="NAME@REF", help="a version number or an alias (canary split by the consumer's id)")
    p.add_argument("--consumer", required=True, metavar="ID", help="the consumer's id, e.g. ecs:prod.payments")
    p.add_argument("--ttl", type=int, metavar="SECONDS", help="seconds until the lease lapses (60 to 2592000; a day)")
    p.add_argument(
        "--label", type=tag_set_arg, action="append", metavar="KEY=VALUE", help="a label of the lease (repeatable)"
    )
    p.add_argument("--cache", metavar="DIR", help=CACHE_HELP)
    p.add_argument("--interval", type=interval_arg, metavar="SECONDS", help=INTERVAL_HELP)
    p.add_argument("--once", action="store_true", help="resolve and lease once, print the answer, exit")
