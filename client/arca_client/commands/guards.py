"""`arca alias policy set|show|rm`, `arca promote`, `arca approve|reject`, `arca promotions`: guarded promotion."""

from __future__ import annotations

import argparse
import re
from typing import Any

from arca_client.calls.guards import AliasPolicy, Promotion
from arca_client.commands.base import Commands, UsageError, count_arg, version_arg
from arca_client.commands.rollouts import steps_arg
from arca_client.output import Result, table, when
from arca_client.sdk import Client


def _tag(value: str) -> tuple[str, str]:
    key, sep, tag_value = value.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{value!r} is not KEY=VALUE")
    return key, tag_value


def _soak(value: str) -> tuple[str, int]:
    alias, sep, seconds = value.partition(":")
    if not sep or not seconds.isdigit():
        raise argparse.ArgumentTypeError(f"{value!r} is not ALIAS:SECONDS")
    return alias, int(seconds)


def policy_lines(policy: AliasPolicy) -> list[str]:
    """The policy in words, one rule a line."""
    lines = []
    if policy.allowed_principals:
        lines.append(f"only {', '.join(policy.allowed_principals)} may write it, promote or change this policy")
    if policy.require_tags:
        lines.append("versions must be tagged " + ", ".join(f"{k}={v}" for k, v in policy.require_tags.items()))
    if policy.require_attestations:
        lines.append("versions must have attestations of type " + ", ".join(policy.require_attestations))
    if policy.require_soak:
        soak = policy.require_soak
        lines.append(f"versions must have been the primary of {soak['alias']} for {soak['seconds']} s")
    if policy.require_rollout:
        lines.append("a new version arrives only through a rollout")
    if policy.approvals:
        lines.append(f"moves only through a promotion approved by {_others(policy.approvals)}")
    return lines or ["no rules"]


def _others(count: int) -> str:
    return f"{count} other identit{'y' if count == 1 else 'ies'}"


def violation_hint(violation: dict[str, Any], name: str | None, alias: str | None, version: object) -> str:
    """A policy's refusal in the CLI's words: the command that does what the rule asks, not the API's route."""
    message = re.sub(r"\s*\((?:POST|PUT|GET|DELETE) [^)]*\)", "", str(violation.get("message", "")))
    where = f"{name or 'NAME'} {alias or 'ALIAS'} {version if isinstance(version, int) else 'VERSION'}"
    if violation.get("rule") == "approvals":
        message += f"; request one: arca promote {where}"
    elif violation.get("rule") == "require_rollout":
        message += f"; start one: arca rollout start {where} --steps 10,50 --interval 300"
    return message


def _policy(args: argparse.Namespace, policy: AliasPolicy) -> Result:
    lines = [f"{args.name}: policy of {args.alias} (revision {policy.revision}, by {policy.updated_by})"]
    lines += [f"  - {line}" for line in policy_lines(policy)]
    return Result(policy.raw, "\n".join(lines))


def cmd_policy_set(args: argparse.Namespace, client: Client) -> Result:
    policy = client.set_policy(
        args.name,
        args.alias,
        require_tags=dict(args.require_tag or []),
        require_attestations=args.require_attestation or [],
        require_soak=args.require_soak,
        require_rollout=args.require_rollout,
        allowed_principals=args.allow or [],
        approvals=args.approvals,
    )
    return _policy(args, policy)


def cmd_policy_show(args: argparse.Namespace, client: Client) -> Result:
    return _policy(args, client.get_policy(args.name, args.alias))


def cmd_policy_rm(args: argparse.Namespace, client: Client) -> Result:
    client.delete_policy(args.name, args.alias)
    return Result(
        {"name": args.name, "alias": args.alias, "policy": None}, f"{args.name}: policy of {args.alias} removed"
    )


def promotion_id(client: Client, args: argparse.Namespace) -> str:
    """ID as given, or the one promotion of the alias whose id starts with it (tables print ids whole, but a
    prefix is what people type)."""
    found = [p.id for p in client.promotions(args.name, args.alias) if p.id.startswith(args.id)]
    if args.id in found or not found:
        return str(args.id)
    if len(found) > 1:
        raise UsageError(f"{args.id!r} is the start of {len(found)} promotion ids ({', '.join(found)}): give more")
    return found[0]


def _promotion(args: argparse.Namespace, promotion: Promotion) -> Result:
    approvals = ", ".join(a.by for a in promotion.approvals) or "none"
    return Result(
        promotion.raw,
        f"{args.name}: promotion {promotion.id} of {promotion.alias} to version {promotion.version}: "
        f"{promotion.state} (approvals {len(promotion.approvals)}/{promotion.required_approvals}: {approvals})",
    )


def cmd_promote(args: argparse.Namespace, client: Client) -> Result:
    promotion = client.request_promotion(
        args.name,
        args.alias,
        args.version,
        reason=args.reason,
        steps=args.rollout,
        interval_seconds=args.interval,
        alarms=args.alarm,
    )
    return _promotion(args, promotion)


def cmd_approve(args: argparse.Namespace, client: Client) -> Result:
    found = promotion_id(client, args)
    return _promotion(args, client.approve_promotion(args.name, args.alias, found, reason=args.reason))


def cmd_reject(args: argparse.Namespace, client: Client) -> Result:
    found = promotion_id(client, args)
    return _promotion(args, client.reject_promotion(args.name, args.alias, found, reason=args.reason))


def cmd_promotions(args: argparse.Namespace, client: Client) -> Result:
    found = list(client.promotions(args.name, args.alias, state=args.state))
    rows = [
        (p.id, p.version, p.state, p.requested_by, f"{len(p.approvals)}/{p.required_approvals}", when(p.requested_at))
        for p in found
    ]
    return Result(
        [p.raw for p in found],
        lambda: table(("ID", "VERSION", "STATE", "REQUESTED BY", "APPROVALS", "REQUESTED (UTC)"), rows),
    )


def register(commands: Commands) -> None:
    """`policy` under `alias` (registered before), the others at the top level."""
    policies = commands.existing("alias").group(
        "policy",
        "an alias's policy: set, show or rm",
        "an alias's policy",
        dest="policy_command",
        metavar="POLICY_COMMAND",
    )
    p = policies.add(
        "set",
        cmd_policy_set,
        "set ALIAS's policy (replacing any)",
        example="arca alias policy set payments/api prod --require-tag qa=passed --approvals 1",
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument("alias", metavar="ALIAS")
    p.add_argument("--require-tag", type=_tag, action="append", metavar="KEY=VALUE", help="repeatable")
    p.add_argument("--require-attestation", action="append", metavar="TYPE", help="repeatable")
    p.add_argument("--require-soak", type=_soak, metavar="ALIAS:SECONDS", help="primary of ALIAS that long")
    p.add_argument("--require-rollout", action="store_true", help="new versions only through a rollout")
    p.add_argument("--allow", action="append", metavar="GLOB", help="an identity glob allowed to write (repeatable)")
    p.add_argument("--approvals", type=int, default=0, choices=range(6), metavar="N", help="approvals needed (0-5)")
    for verb, handler, text in (("show", cmd_policy_show, "ALIAS's policy"), ("rm", cmd_policy_rm, "remove it")):
        p = policies.add(verb, handler, text, example=f"arca alias policy {verb} payments/api prod")
        p.add_argument("name", metavar="NAME")
        p.add_argument("alias", metavar="ALIAS")

    p = commands.add(
        "promote",
        cmd_promote,
        "ask to move ALIAS to VERSION, or start a rollout of it (a guarded promotion; pending while the policy asks "
        "for approvals)",
        example="arca promote payments/api prod 3 --reason 'passed QA'",
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument("alias", metavar="ALIAS")
    p.add_argument("version", metavar="VERSION", type=version_arg)
    p.add_argument("--rollout", type=steps_arg, metavar="W1,W2,...", help="start a rollout with these weights")
    p.add_argument("--interval", type=count_arg, default=60, metavar="SECONDS", help="between rollout steps")
    p.add_argument("--alarm", action="append", metavar="NAME", help="alarm read before each rollout step")
    p.add_argument("--reason")
    for verb, handler, text in (
        ("approve", cmd_approve, "approve promotion ID (the approval reaching the count applies it)"),
        ("reject", cmd_reject, "reject promotion ID"),
    ):
        p = commands.add(verb, handler, text, example=f"arca {verb} payments/api prod 0626f1a3b2c4")
        p.add_argument("name", metavar="NAME")
        p.add_argument("alias", metavar="ALIAS")
        p.add_argument("id", metavar="ID")
        p.add_argument("--reason")
    p = commands.add(
        "promotions",
        cmd_promotions,
        "ALIAS's promotions, newest first",
        example="arca promotions payments/api prod --state pending",
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument("alias", metavar="ALIAS")
    p.add_argument("--state", choices=("pending", "applied", "rejected", "expired"))
