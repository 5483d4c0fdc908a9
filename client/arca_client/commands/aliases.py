"""`arca alias`: set (with a canary, conditionally), promote, roll back, history, list, show, remove."""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Iterable

from arca_client.commands.base import Commands, UsageError, alias_table, count_arg, limit_arg, target_arg
from arca_client.models import Alias, AliasRevision
from arca_client.output import Result, canary, fields, table, target, when
from arca_client.sdk import Client


def _weight_arg(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 99:
        raise argparse.ArgumentTypeError(f"{text!r} is not a weight (0 to 99, the percentage sent to the canary)")
    return int(text)


def cmd_alias_set(args: argparse.Namespace, client: Client) -> Result:
    if (args.canary is None) != (args.weight is None):
        raise UsageError("--canary and --weight go together")
    alias = client.set_alias(
        args.name,
        args.alias,
        args.version,
        secondary_version=args.canary,
        secondary_version_weight=args.weight,
        description=args.description,
        reason=args.reason,
        expected_version=args.expect_version,
        if_revision=args.if_revision,
        create_only=args.create_only,
    )
    return _reported(args, alias)


def _reported(args: argparse.Namespace, alias: Alias, arrow: str = "->") -> Result:
    return Result(
        alias.raw,
        f"{args.name}: {alias.alias} {arrow} {target(alias.version)}{canary(alias)} (revision {alias.revision})",
    )


def cmd_alias_promote(args: argparse.Namespace, client: Client) -> Result:
    promotion = client.promote(args.name, args.source, args.to, reason=args.reason)
    alias = promotion.alias
    data = {
        **alias.raw,
        "changed": promotion.changed,
        "previous_version": promotion.previous.version if promotion.previous else None,
    }
    if not promotion.changed:
        return Result(data, f"{args.name}: {args.to} already points at version {target(alias.version)}; nothing to do")
    before = target(promotion.previous.version) if promotion.previous else "(new)"
    return Result(
        data,
        f"{args.name}: promoted {args.source} to {args.to}: {before} -> {target(alias.version)} "
        f"(revision {alias.revision})",
    )


def cmd_alias_rollback(args: argparse.Namespace, client: Client) -> Result:
    alias = client.rollback_alias(args.name, args.alias, to_revision=args.to_revision, reason=args.reason)
    return _reported(args, alias, "rolled back to")


def cmd_alias_history(args: argparse.Namespace, client: Client) -> Result:
    found: Iterable[AliasRevision] = client.iter_alias_history(args.name, args.alias)
    if args.limit is not None:
        found = itertools.islice(found, args.limit)
    history = list(found)
    rows = [
        [
            r.revision,
            r.action or "",
            "(deleted)" if r.deleted else target(r.version),
            target(r.secondary_version) if r.secondary_version is not None else "",
            "" if r.secondary_version is None else f"{r.secondary_version_weight or 0}%",
            when(r.updated_at),
            r.updated_by or "",
            r.reason or "",
        ]
        for r in history
    ]
    headers = ["REVISION", "ACTION", "VERSION", "CANARY", "WEIGHT", "UPDATED (UTC)", "BY", "REASON"]
    return Result([r.raw for r in history], lambda: table(headers, rows))


def cmd_alias_ls(args: argparse.Namespace, client: Client) -> Result:
    aliases = list(client.iter_aliases(args.name))
    return Result([a.raw for a in aliases], lambda: alias_table(aliases))


def cmd_alias_show(args: argparse.Namespace, client: Client) -> Result:
    alias = client.get_alias(args.name, args.alias)
    split = None
    if alias.secondary_version is not None:
        split = f"{alias.secondary_version} at {alias.secondary_version_weight or 0}%"
    return Result(
        alias.raw,
        lambda: fields(
            [
                ("alias", alias.alias),
                ("version", target(alias.version)),
                ("canary", split),
                ("revision", alias.revision),
                ("description", alias.description),
                ("updated", alias.updated_at),
                ("updated by", alias.updated_by),
                ("reason", alias.reason),
            ]
        ),
    )


def cmd_alias_rm(args: argparse.Namespace, client: Client) -> Result:
    client.delete_alias(args.name, args.alias, if_revision=args.if_revision)
    return Result({"name": args.name, "alias": args.alias, "deleted": True}, f"{args.name}: alias {args.alias} deleted")


def register(commands: Commands) -> None:
    aliases = commands.group("alias", "manage aliases", "manage aliases", dest="alias_command", metavar="ALIAS_COMMAND")

    p = aliases.add("set", cmd_alias_set, "point ALIAS at VERSION, optionally with a canary")
    p.add_argument("name", metavar="NAME")
    p.add_argument("alias", metavar="ALIAS")
    p.add_argument("version", metavar="VERSION", type=target_arg, help="version number or LATEST")
    p.add_argument("--canary", type=target_arg, metavar="V", help="secondary version")
    p.add_argument("--weight", type=_weight_arg, metavar="W", help="percentage of traffic to the canary (0-99)")
    p.add_argument("--description")
    p.add_argument("--reason", help="recorded in the alias history")
    p.add_argument("--expect-version", type=target_arg, metavar="V", help="only if the alias points at V now")
    p.add_argument("--if-revision", type=count_arg, metavar="N", help="only if the alias is at revision N now")
    p.add_argument("--create-only", action="store_true", help="only if the alias does not exist yet")

    p = aliases.add("promote", cmd_alias_promote, "point --to at the version --from points at")
    p.add_argument("name", metavar="NAME")
    p.add_argument("--from", dest="source", required=True, metavar="ALIAS")
    p.add_argument("--to", required=True, metavar="ALIAS")
    p.add_argument("--reason")

    p = aliases.add("rollback", cmd_alias_rollback, "back to the previous revision (or --to-revision N)")
    p.add_argument("name", metavar="NAME")
    p.add_argument("alias", metavar="ALIAS")
    p.add_argument("--to-revision", type=count_arg, metavar="N")
    p.add_argument("--reason", help="recorded in the alias history")

    p = aliases.add("history", cmd_alias_history, "revisions of ALIAS, newest first")
    p.add_argument("name", metavar="NAME")
    p.add_argument("alias", metavar="ALIAS")
    p.add_argument("--limit", type=limit_arg, help="show at most this many (1 or more)")

    p = aliases.add("ls", cmd_alias_ls, "the aliases of NAME")
    p.add_argument("name", metavar="NAME")

    p = aliases.add("show", cmd_alias_show, "one alias")
    p.add_argument("name", metavar="NAME")
    p.add_argument("alias", metavar="ALIAS")

    p = aliases.add("rm", cmd_alias_rm, "delete ALIAS (kept in its history)")
    p.add_argument("name", metavar="NAME")
    p.add_argument("alias", metavar="ALIAS")
    p.add_argument("--if-revision", type=count_arg, metavar="N", help="only if the alias is at revision N now")
