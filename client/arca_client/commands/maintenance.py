"""Removing versions in bulk: prune old ones, purge an artifact entirely."""

from __future__ import annotations

import argparse
import sys

from arca_client.commands.base import Commands, UsageError, count_arg
from arca_client.errors import ConflictError
from arca_client.output import Result, consumers_text
from arca_client.sdk import Client


def cmd_prune(args: argparse.Namespace, client: Client) -> Result:
    result = client.prune(
        args.name, keep_last=args.keep_last, older_than_days=args.older_than_days, dry_run=args.dry_run
    )
    verb = "would delete" if result.dry_run else "deleted"
    if result.deleted:
        listed = ", ".join(str(v) for v in sorted(result.deleted))
        lines = [f"{args.name}: {verb} version{'s' if len(result.deleted) > 1 else ''} {listed}"]
    else:
        lines = [f"{args.name}: nothing to prune"]
    for skipped in result.skipped:
        aliases = ", ".join(skipped.get("aliases") or [])
        lines.append(f"{args.name}: kept version {skipped.get('version')}: alias {aliases} points at it")
    return Result(result.raw, "\n".join(lines))


def cmd_purge(args: argparse.Namespace, client: Client) -> Result:
    if not args.yes:
        _confirm(args, client)
    purged = client.purge(args.name, force=args.force)
    data = {
        "name": args.name,
        "purged": True,
        "released_leases": purged.released_count,
        "released_consumers": purged.released_consumers,
    }
    lines = [f"{args.name}: purged"]
    if purged.released_count:
        released = consumers_text(purged.released_count, purged.released_consumers)
        lines.append(f"{args.name}: released the leases of {released}")
    return Result(data, "\n".join(lines))


def _confirm(args: argparse.Namespace, client: Client) -> None:
    """Ask for the name on a terminal; refuse without one."""
    if not sys.stdin.isatty():
        raise UsageError("purge deletes every version, alias and blob; pass --yes to confirm without a terminal")
    if not args.force:
        # Read first, so that a purge the API would refuse fails before anyone types the name.
        summary = client.get_artifact(args.name)
        live = [a.alias for a in client.iter_aliases(args.name)] if summary.counts.aliases else []
        if live:
            raise ConflictError(
                f"artifact {args.name!r} has aliases ({', '.join(live)}); delete them or purge with force=true",
                code="ConflictError",
                status=409,
                details={"aliases": live},
            )
    sys.stderr.write(f"Purge {args.name}: every version, alias and blob, permanently.\nType the name to confirm: ")
    sys.stderr.flush()
    if sys.stdin.readline().strip() != args.name:
        raise UsageError("not confirmed; nothing purged")


def register(commands: Commands) -> None:
    p = commands.add(
        "prune",
        cmd_prune,
        "soft-delete old versions, never aliased ones",
        example="arca prune payments/api --keep-last 10 --dry-run",
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument("--keep-last", type=count_arg, required=True, metavar="N", help="never prune the newest N")
    p.add_argument("--older-than-days", type=count_arg, metavar="D", help="only versions older than D days")
    p.add_argument("--dry-run", action="store_true", help="report what would be deleted")

    p = commands.add(
        "purge", cmd_purge, "delete NAME entirely: versions, aliases, content", example="arca purge payments/old --yes"
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument("--force", action="store_true", help="purge even while aliases exist")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
