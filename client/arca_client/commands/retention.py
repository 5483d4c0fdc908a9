"""`arca retention set|show|preview|apply|delete NAME`: an artifact's retention policy, its preview and applying it."""

from __future__ import annotations

import argparse
from typing import Any

from arca_client.calls.retention import RetentionDecision
from arca_client.commands.base import Commands, count_arg
from arca_client.output import Result, fields, stamp, table
from arca_client.sdk import Client


def cmd_set(args: argparse.Namespace, client: Client) -> Result:
    policy = client.set_retention(
        args.name,
        keep_last=args.keep_last,
        keep_days=args.keep_days,
        keep_tags=args.keep_tag,
        rollback_window=args.rollback_window,
        expire_after_days=args.expire_after_days,
    )
    return _report(policy)


def cmd_show(args: argparse.Namespace, client: Client) -> Result:
    return _report(client.get_retention(args.name))


def _report(policy: dict[str, Any]) -> Result:
    pairs = [
        ("keep_last", policy.get("keep_last")),
        ("keep_days", policy.get("keep_days")),
        ("keep_tags", ", ".join(policy.get("keep_tags") or []) or None),
        ("rollback_window", policy.get("rollback_window")),
        ("expire_after_days", policy.get("expire_after_days")),
        ("updated", f"{stamp(policy.get('updated_at'))} by {policy.get('updated_by') or '-'}"),
    ]
    return Result(policy, fields(pairs))


def cmd_preview(args: argparse.Namespace, client: Client) -> Result:
    decisions = list(client.preview_retention(args.name))

    def shown() -> str:
        policy = client.get_retention(args.name)
        rows = [(d.version, d.action, _why(d, policy)) for d in decisions]
        return table(("VERSION", "ACTION", "REASONS"), rows)

    return Result([d.raw for d in decisions], shown)


def _why(decision: RetentionDecision, policy: dict[str, Any]) -> str:
    """Why a version stays (the API's reasons), or why it goes, in the policy's own terms."""
    expire_after = f"expire_after_days:{policy.get('expire_after_days', 30)}"
    if decision.deleted:
        if decision.action == "expire":
            return f"(deleted) beyond {expire_after}: expires (only its number stays)"
        return "(deleted) " + (", ".join(decision.reasons) or f"waits for {expire_after}, then expires")
    if decision.action == "delete":
        beyond = [f"newest:{policy.get('keep_last')}"]
        if policy.get("keep_days") is not None:
            beyond.append(f"age:{policy['keep_days']}")
        return "beyond " + ", ".join(beyond)
    return ", ".join(decision.reasons)


def cmd_apply(args: argparse.Namespace, client: Client) -> Result:
    result = client.apply_retention(args.name)
    lines = []
    for verb, numbers in (("deleted", result.deleted), ("expired", result.expired)):
        if numbers:
            listed = ", ".join(str(n) for n in sorted(numbers))
            lines.append(f"{args.name}: {verb} version{'s' if len(numbers) > 1 else ''} {listed}")
    if not result.deleted and not result.expired:
        lines.append(f"{args.name}: nothing to delete or expire")
    return Result({"deleted": result.deleted, "expired": result.expired}, "\n".join(lines))


def cmd_delete(args: argparse.Namespace, client: Client) -> Result:
    client.delete_retention(args.name)
    return Result({"name": args.name, "retention": None}, f"{args.name}: retention policy removed")


def register(commands: Commands) -> None:
    group = commands.group(
        "retention",
        "retention policies: which versions are deleted and expired, and why the others stay",
        "retention: keep the newest, the young, the tagged and everything in use; delete the rest",
        dest="retention_command",
        metavar="RETENTION_COMMAND",
    )

    p = group.add(
        "set",
        cmd_set,
        "set NAME's retention policy (replacing any)",
        example="arca retention set payments/api --keep-last 5 --keep-days 30 --keep-tag env:prod",
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument("--keep-last", type=count_arg, required=True, metavar="N", help="keep the newest N (1-10000)")
    p.add_argument("--keep-days", type=count_arg, metavar="D", help="keep versions younger than D days")
    p.add_argument("--keep-tag", action="append", metavar="KEY:VALUE", help="keep versions with this tag (repeatable)")
    p.add_argument(
        "--rollback-window", type=count_arg, metavar="N", help="keep each alias's last N targets (default 5)"
    )
    p.add_argument("--expire-after-days", type=count_arg, metavar="D", help="expire deleted versions after D days (30)")

    for verb, handler, text in (
        ("show", cmd_show, "NAME's retention policy"),
        ("preview", cmd_preview, "what applying the policy now would do, and why each version stays"),
        ("apply", cmd_apply, "apply NAME's policy now"),
        ("delete", cmd_delete, "remove NAME's retention policy"),
    ):
        p = group.add(verb, handler, text, example=f"arca retention {verb} payments/api")
        p.add_argument("name", metavar="NAME")
