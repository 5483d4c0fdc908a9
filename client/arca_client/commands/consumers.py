"""Consumer leases: who runs which version (`arca consumers`), and taking or releasing one (`arca lease`,
`arca release`); resolving as a consumer that holds its lease is `arca consume` (commands/resolving.py)."""

from __future__ import annotations

import argparse

from arca_client.commands.base import Commands, UsageError, split_ref, tag_set_arg
from arca_client.models import Lease
from arca_client.output import Result, table, when
from arca_client.sdk import Client

HEADERS = ("CONSUMER", "VERSION", "EXPIRES (UTC)", "LABELS", "BY")


def _row(lease: Lease) -> list[str]:
    labels = lease.labels if isinstance(lease.labels, dict) else {}
    shown = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    return [lease.consumer, str(lease.version), when(lease.expires_at), shown, lease.by or ""]


def cmd_consumers(args: argparse.Namespace, client: Client) -> Result:
    """The live leases of NAME (lapsed ones are never listed), optionally only those on one version."""
    leases = list(client.iter_consumers(args.name, version=args.version))
    return Result(
        [lease.raw for lease in leases],
        lambda: table(HEADERS, [_row(lease) for lease in leases]) if leases else f"{args.name}: no live leases",
    )


def cmd_lease(args: argparse.Namespace, client: Client) -> Result:
    """Resolve NAME@REF to its version, then take or renew CONSUMER's lease on it."""
    name, ref = split_ref(args.ref)
    version = client.resolve(name, ref or "LATEST", routing_key=args.consumer).version
    if not isinstance(version, int):
        raise UsageError(f"{args.ref} resolves to LATEST, the working copy: a lease names a version number")
    labels = dict(args.label) if args.label else None
    lease = client.lease(name, args.consumer, version, ttl_seconds=args.ttl, labels=labels)
    return Result(lease.raw, f"{name}@{lease.version}: leased by {lease.consumer} until {when(lease.expires_at)}")


def cmd_release(args: argparse.Namespace, client: Client) -> Result:
    client.release(args.name, args.consumer)
    return Result(
        {"name": args.name, "consumer": args.consumer, "released": True}, f"{args.name}: {args.consumer} released"
    )


def register(commands: Commands) -> None:
    p = commands.add(
        "consumers",
        cmd_consumers,
        "who runs which version of NAME: its live consumer leases",
        example="arca consumers payments/api --version 7",
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument("--version", type=int, metavar="N", help="only the leases on version N")

    p = commands.add(
        "lease",
        cmd_lease,
        "record that CONSUMER runs NAME@REF (resolved to its version) until the lease lapses; run again to renew",
        example="arca lease payments/api@prod ecs:prod.payments --ttl 86400 --label region=eu-west-1",
    )
    p.add_argument("ref", metavar="NAME@REF", help="a version number or an alias (canary split by CONSUMER)")
    p.add_argument("consumer", metavar="CONSUMER", help="the consumer's id, e.g. ecs:prod.payments")
    p.add_argument("--ttl", type=int, metavar="SECONDS", help="seconds until the lease lapses (60 to 2592000; a day)")
    p.add_argument(
        "--label", type=tag_set_arg, action="append", metavar="KEY=VALUE", help="a label of the lease (repeatable)"
    )

    p = commands.add(
        "release", cmd_release, "end CONSUMER's lease on NAME", example="arca release payments/api ecs:prod.payments"
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument("consumer", metavar="CONSUMER")
