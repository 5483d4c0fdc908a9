"""`arca alias`: set (with a canary, conditionally), copy one alias onto another, roll back, history, list, show,
remove."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from arca_client.calls.guards import AliasPolicy, Promotion
from arca_client.commands.base import (
    Commands,
    UsageError,
    alias_table,
    ask,
    consumers_on,
    count_arg,
    limit_arg,
    limited,
    target_arg,
)
from arca_client.commands.guards import policy_lines
from arca_client.errors import AccessDeniedError, ConflictError, NotFoundError
from arca_client.models import Alias, AliasRevision, VersionConsumers
from arca_client.output import MODE, Result, canary, fields, stamp, still_on, table, target, when
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


def cmd_alias_copy(args: argparse.Namespace, client: Client) -> Result:
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
        f"{args.name}: copied {args.source} to {args.to}: {before} -> {target(alias.version)} "
        f"(revision {alias.revision})",
    )


def cmd_alias_promote(args: argparse.Namespace, client: Client) -> Result:
    """The old spelling of `alias copy`, kept working: `arca promote` is the guarded promotion."""
    print(
        "arca: note: `arca alias promote` is now `arca alias copy` (`arca promote` requests a guarded promotion); "
        "the old name will go",
        file=sys.stderr,
    )
    return cmd_alias_copy(args, client)


def _split(version: int | str | None, secondary: int | str | None, weight: int | None) -> str:
    if secondary is None:
        return target(version)
    return f"{target(version)}, canary {secondary} at {weight or 0}%"


def _rollback_plan(
    client: Client, args: argparse.Namespace
) -> tuple[Alias, AliasRevision | None, list[str], list[VersionConsumers]]:
    """The alias now, the revision a rollback takes the target of (as the API chooses it: `--to-revision`, else the
    newest earlier revision that is not a deletion; None when there is none, which the API refuses), the plan
    in words, warning when the target keeps the version rolled back from as a canary (and naming a revision
    without it), and the consumers still on the versions it leaves and on its target."""
    alias = client.get_alias(args.name, args.alias)
    current = alias.revision or 0
    earlier = [
        r for r in client.iter_alias_history(args.name, args.alias) if (r.revision or 0) < current and not r.deleted
    ]
    wanted = (lambda r: r.revision == args.to_revision) if args.to_revision is not None else (lambda r: True)
    chosen = next((r for r in earlier if wanted(r)), None)
    if chosen is None:
        return alias, None, [], []
    now = _split(alias.version, alias.secondary_version, alias.secondary_version_weight)
    after = _split(chosen.version, chosen.secondary_version, chosen.secondary_version_weight)
    lines = [
        f"{args.name}: {args.alias} now routes {now} (revision {current})",
        f"{args.name}: rolling back to revision {chosen.revision} routes {after} (as revision {current + 1})",
    ]
    rolled_back = {alias.version, alias.secondary_version} - {chosen.version, None}
    kept = chosen.secondary_version if chosen.secondary_version in rolled_back else None
    if kept is not None:
        lines.append(
            f"{args.name}: note: version {kept}, which this rolls back from, keeps "
            f"{chosen.secondary_version_weight or 0}% of {args.alias}'s traffic as its canary"
        )
        clean = next((r for r in earlier if kept not in (r.version, r.secondary_version)), None)
        if clean is not None:
            shown = _split(clean.version, clean.secondary_version, clean.secondary_version_weight)
            lines.append(f"{args.name}: --to-revision {clean.revision} routes {shown}")
    left = [v for v in (alias.version, alias.secondary_version) if v in rolled_back]
    on = consumers_on(client, args.name, [*left, chosen.version])
    lines.extend(still_on(args.name, on))
    return alias, chosen, lines, on


def cmd_alias_rollback(args: argparse.Namespace, client: Client) -> Result | int:
    """Print what the rollback will route, ask on a terminal (unless --yes), then roll back to exactly that
    revision; --dry-run stops after printing."""
    alias, chosen, plan, on = _rollback_plan(client, args)
    if chosen is None:
        # No revision to go back to: the API says why, in its words and with its status (as it always did).
        if args.dry_run:
            raise ConflictError(
                f"alias {args.alias!r} has no earlier revision to roll back to"
                + (f" (--to-revision {args.to_revision})" if args.to_revision else ""),
                code="ConflictError",
                status=409,
            )
        back = client.rollback_alias(args.name, args.alias, to_revision=args.to_revision, reason=args.reason)
        return _reported(args, back, "rolled back to")
    if args.dry_run:
        data: dict[str, Any] = {
            "dry_run": True,
            "alias": alias.raw,
            "to_revision": chosen.revision,
            "after": {
                "version": chosen.version,
                "secondary_version": chosen.secondary_version,
                "secondary_version_weight": chosen.secondary_version_weight,
            },
            "consumers": [{"version": c.version, "count": c.count, "consumers": c.consumers} for c in on],
        }
        return Result(data, "\n".join(plan))
    if not MODE.quiet:
        print("\n".join(plan), file=sys.stderr)
    if not args.yes and sys.stdin.isatty() and not ask("Roll back?"):
        raise UsageError("not confirmed; nothing rolled back")
    back = client.rollback_alias(args.name, args.alias, to_revision=chosen.revision, reason=args.reason)
    return _reported(args, back, "rolled back to")


def cmd_alias_history(args: argparse.Namespace, client: Client) -> Result:
    history = limited(client.iter_alias_history(args.name, args.alias), args.limit, "revisions")
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


def _protection(client: Client, name: str, alias: str) -> tuple[AliasPolicy | None, list[Promotion], str]:
    """The alias's policy, its pending promotions, and both in words ("protected: 3 rules, 1 pending …")."""
    try:
        policy = client.get_policy(name, alias)
    except NotFoundError:
        return None, [], "no policy"
    except AccessDeniedError:
        return None, [], "unknown (not allowed to read the policy)"
    pending = list(client.promotions(name, alias, state="pending"))
    rules = len([line for line in policy_lines(policy) if line != "no rules"])
    text = f"protected: {rules} rule{'' if rules == 1 else 's'}"
    if pending:
        ids = ", ".join(p.id for p in pending)
        text += f", {len(pending)} pending promotion{'' if len(pending) == 1 else 's'} (id {ids})"
    return policy, pending, f"{text}; arca alias policy show {name} {alias}"


def cmd_alias_show(args: argparse.Namespace, client: Client) -> Result:
    alias = client.get_alias(args.name, args.alias)
    policy, pending, protection = _protection(client, args.name, args.alias)
    split = None
    if alias.secondary_version is not None:
        split = f"{alias.secondary_version} at {alias.secondary_version_weight or 0}%"
    data = {**alias.raw, "policy": policy.raw if policy else None, "pending_promotions": [p.raw for p in pending]}
    return Result(
        data,
        lambda: fields(
            [
                ("alias", alias.alias),
                ("version", target(alias.version)),
                ("canary", split),
                ("revision", alias.revision),
                ("description", alias.description),
                ("updated", stamp(alias.updated_at)),
                ("updated by", alias.updated_by),
                ("reason", alias.reason),
                ("protection", protection),
            ]
        ),
    )


def cmd_alias_rm(args: argparse.Namespace, client: Client) -> Result:
    client.delete_alias(args.name, args.alias, if_revision=args.if_revision)
    return Result({"name": args.name, "alias": args.alias, "deleted": True}, f"{args.name}: alias {args.alias} deleted")


def register(commands: Commands) -> None:
    aliases = commands.group("alias", "manage aliases", "manage aliases", dest="alias_command", metavar="ALIAS_COMMAND")

    p = aliases.add(
        "set",
        cmd_alias_set,
        "point ALIAS at VERSION, optionally with a canary",
        example='arca alias set payments/api prod 1 --canary 2 --weight 10 --reason "canary 2 on 10%"',
    )
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

    for verb, handler, hidden in (("copy", cmd_alias_copy, False), ("promote", cmd_alias_promote, True)):
        p = aliases.add(
            verb,
            handler,
            "point --to at the version --from points at (conditional on --to's revision); a guarded promotion is "
            "arca promote",
            example="arca alias copy payments/api --from staging --to prod",
            hidden=hidden,
        )
        p.add_argument("name", metavar="NAME")
        p.add_argument("--from", dest="source", required=True, metavar="ALIAS", help="the alias to copy")
        p.add_argument("--to", required=True, metavar="ALIAS", help="the alias that then points where --from does")
        p.add_argument("--reason", help="recorded in the alias history")

    p = aliases.add(
        "rollback",
        cmd_alias_rollback,
        "back to the previous revision's target (or --to-revision N): says what it will route, asks on a terminal",
        example="arca alias rollback payments/api prod --dry-run",
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument("alias", metavar="ALIAS")
    p.add_argument("--to-revision", type=count_arg, metavar="N", help="the revision whose target to restore")
    p.add_argument("--reason", help="recorded in the alias history")
    p.add_argument("--dry-run", action="store_true", help="print what the rollback would route; change nothing")
    p.add_argument("-y", "--yes", action="store_true", help="do not ask on a terminal")

    p = aliases.add(
        "history", cmd_alias_history, "revisions of ALIAS, newest first", example="arca alias history payments/api prod"
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument("alias", metavar="ALIAS")
    p.add_argument("--limit", type=limit_arg, help="show at most this many (1 or more)")

    p = aliases.add("ls", cmd_alias_ls, "the aliases of NAME", example="arca alias ls payments/api")
    p.add_argument("name", metavar="NAME")

    p = aliases.add(
        "show",
        cmd_alias_show,
        "one alias, with its protection (policy rules, pending promotions)",
        example="arca alias show payments/api prod",
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument("alias", metavar="ALIAS")

    p = aliases.add("rm", cmd_alias_rm, "delete ALIAS (kept in its history)", example="arca alias rm payments/api qa")
    p.add_argument("name", metavar="NAME")
    p.add_argument("alias", metavar="ALIAS")
    p.add_argument("--if-revision", type=count_arg, metavar="N", help="only if the alias is at revision N now")
