"""`arca retention set|show|preview|apply|delete NAME`: an artifact's retention policy, its preview and applying it."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from arca_client import cli


def cmd_set(args: argparse.Namespace, client: Any) -> int:
    policy = client.set_retention(
        args.name,
        keep_last=args.keep_last,
        keep_days=args.keep_days,
        keep_tags=args.keep_tag,
        rollback_window=args.rollback_window,
        expire_after_days=args.expire_after_days,
    )
    return _report(args, policy)


def cmd_show(args: argparse.Namespace, client: Any) -> int:
    return _report(args, client.get_retention(args.name))


def _report(args: argparse.Namespace, policy: dict[str, Any]) -> int:
    if args.json:
        cli._print_json(policy)
        return cli.EXIT_OK
    pairs = [
        ("keep_last", policy.get("keep_last")),
        ("keep_days", policy.get("keep_days")),
        ("keep_tags", ", ".join(policy.get("keep_tags") or []) or None),
        ("rollback_window", policy.get("rollback_window")),
        ("expire_after_days", policy.get("expire_after_days")),
        ("updated", f"{cli._when(policy.get('updated_at'))} UTC by {policy.get('updated_by') or '-'}"),
    ]
    print(cli._fields(pairs), file=cli._out())
    return cli.EXIT_OK


def cmd_preview(args: argparse.Namespace, client: Any) -> int:
    decisions = list(client.preview_retention(args.name))
    if args.json:
        cli._print_json([d.raw for d in decisions])
        return cli.EXIT_OK
    rows = [
        (d.version, d.action, ("(deleted) " if d.deleted else "") + (", ".join(d.reasons) or "-")) for d in decisions
    ]
    print(cli.table(("VERSION", "ACTION", "REASONS"), rows), file=cli._out())
    return cli.EXIT_OK


def cmd_apply(args: argparse.Namespace, client: Any) -> int:
    result = client.apply_retention(args.name)
    if args.json:
        cli._print_json({"deleted": result.deleted, "expired": result.expired})
        return cli.EXIT_OK
    for verb, numbers in (("deleted", result.deleted), ("expired", result.expired)):
        if numbers:
            listed = ", ".join(str(n) for n in sorted(numbers))
            print(f"{args.name}: {verb} version{'s' if len(numbers) > 1 else ''} {listed}", file=cli._out())
    if not result.deleted and not result.expired:
        print(f"{args.name}: nothing to delete or expire", file=cli._out())
    return cli.EXIT_OK


def cmd_delete(args: argparse.Namespace, client: Any) -> int:
    client.delete_retention(args.name)
    print(f"{args.name}: retention policy removed", file=cli._out())
    return cli.EXIT_OK


Command = Callable[..., argparse.ArgumentParser]


def register(commands: Any, command: Command, common: argparse.ArgumentParser) -> None:
    """Add `retention` and its sub-commands to the CLI's `commands` (with its `command` helper)."""
    parser = commands.add_parser(
        "retention",
        help="retention policies: which versions are deleted and expired, and why the others stay",
        description="retention: keep the newest, the young, the tagged and everything in use; delete the rest",
        parents=[common],
    )
    group = parser.add_subparsers(dest="retention_command", metavar="RETENTION_COMMAND", required=True)

    p = command(group, "set", cmd_set, "set NAME's retention policy (replacing any)")
    p.add_argument("name", metavar="NAME")
    p.add_argument("--keep-last", type=cli._count_arg, required=True, metavar="N", help="keep the newest N (1-10000)")
    p.add_argument("--keep-days", type=cli._count_arg, metavar="D", help="keep versions younger than D days")
    p.add_argument("--keep-tag", action="append", metavar="KEY:VALUE", help="keep versions with this tag (repeatable)")
    p.add_argument(
        "--rollback-window", type=cli._count_arg, metavar="N", help="keep each alias's last N targets (default 5)"
    )
    p.add_argument(
        "--expire-after-days", type=cli._count_arg, metavar="D", help="expire deleted versions after D days (30)"
    )

    p = command(group, "show", cmd_show, "NAME's retention policy")
    p.add_argument("name", metavar="NAME")

    p = command(group, "preview", cmd_preview, "what applying the policy now would do, and why each version stays")
    p.add_argument("name", metavar="NAME")

    p = command(group, "apply", cmd_apply, "apply NAME's policy now")
    p.add_argument("name", metavar="NAME")

    p = command(group, "delete", cmd_delete, "remove NAME's retention policy")
    p.add_argument("name", metavar="NAME")
