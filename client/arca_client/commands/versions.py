"""Versions: list, show (or an artifact's summary), diff, soft-delete and restore."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable
from typing import Any

from arca_client.commands.base import (
    REF_HELP,
    Commands,
    alias_mark,
    alias_table,
    canaries,
    consumers_on,
    full_ref,
    full_sha256,
    limit_arg,
    limited,
    sha256_start_arg,
    split_ref,
    split_target,
    tag_filter_arg,
    time_arg,
    version_arg,
)
from arca_client.diff import version_diff
from arca_client.models import Alias, Version
from arca_client.output import (
    MODE,
    Result,
    canary,
    fields,
    indent,
    short,
    size,
    stamp,
    still_on,
    table,
    tags_text,
    target,
    when,
)
from arca_client.refs import RefKind, ref_kind
from arca_client.sdk import Client
from arca_client.trees import TreeDiff


def cmd_versions(args: argparse.Namespace, client: Client) -> Result:
    filters: dict[str, Any] = {}
    if args.tag:
        filters["tags"] = dict(args.tag)
    if args.sha256:
        filters["sha256"] = full_sha256(client, args.name, args.sha256, include_deleted=args.all)
    if args.since:
        filters["created_after"] = args.since
    if args.until:
        filters["created_before"] = args.until
    found: Iterable[Version] = client.iter_versions(
        args.name, order="asc" if args.asc else "desc", include_deleted=args.all, **filters
    )
    versions = limited(found, args.limit, "versions")

    def rows() -> str:
        split = canaries(client, args.name) if any(v.aliases for v in versions) else {}
        headers = ["VERSION", "CREATED (UTC)", "SIZE", "SHA256", "ALIASES"]
        if args.all:
            headers.append("DELETED")
        shown = []
        for v in versions:
            row: list[object] = [
                v.version,
                when(v.created_at),
                size(v.size),
                short(v.sha256),
                ",".join(alias_mark(a, v.version, split) for a in v.aliases),
            ]
            if args.all:
                row.append(when(v.deleted_at) or ("yes" if v.deleted else ""))
            shown.append(row)
        return table(headers, shown)

    return Result([v.raw for v in versions], rows)


def read_version(client: Client, name: str, ref: str) -> tuple[Version, Alias | None]:
    """The version NAME@REF names, and the alias read on the way when REF is one."""
    alias = None
    ref = full_ref(client, name, ref)
    if ref_kind(ref) is RefKind.ALIAS:
        # The API reads versions by number, LATEST or content; an alias is read first for its target.
        alias = client.get_alias(name, ref)
        ref = str(alias.version)
    return client.get_version(name, ref), alias


def cmd_diff(args: argparse.Namespace, client: Client) -> Result:
    """What changed between two versions: size, sha256, content type, metadata, tags, attestations; for two trees,
    also the files added, removed and changed."""
    name_a, ref_a = split_target(args.before)
    second = f"{name_a}{args.after}" if args.after.startswith("@") else args.after
    name_b, ref_b = split_target(second)
    before, _ = read_version(client, name_a, ref_a)
    after, _ = read_version(client, name_b, ref_b)
    changes = version_diff(before.raw, after.raw)
    left, right = f"{name_a}@{ref_a}", f"{name_b}@{ref_b}"
    sides = [(name_a, before.version), (name_b, after.version)]
    on = [(n, c) for n, v in dict.fromkeys(sides) for c in consumers_on(client, n, [v])]
    # Two trees: their files too, listed by the numbers just read (a moving alias cannot mix two trees).
    files = None
    if before.files is not None and after.files is not None:
        files = client.diff_files(name_a, before.version, after.version, other=name_b)

    def shown(field: str, value: Any) -> str:
        if value is None:
            return "(none)"
        if value == "":
            return '"" (empty)'
        if field == "size":
            return f"{size(value)} ({value} bytes)"
        if field == "sha256" and not MODE.text:
            return short(value)
        if field == "attestations":
            return _attestations_text(value) or "(none)"
        return value if isinstance(value, str) else json.dumps(value, sort_keys=True)

    def report() -> str | None:
        lines = [] if MODE.text else [f"{left} (version {before.version}) -> {right} (version {after.version})"]
        consumers = [] if MODE.text else [line for n, c in on for line in still_on(n, [c])]
        tree = _files_text(files) if files is not None else []
        if not changes:
            if not MODE.text:
                lines.append("no differences in size, sha256, content type, metadata, tags or attestations")
            return "\n".join([*lines, *tree, *consumers]) or None
        rows = [[c["field"], shown(c["field"], c["from"]), shown(c["field"], c["to"])] for c in changes]
        return "\n".join([*lines, table(["FIELD", left, right], rows), *tree, *consumers])

    data = {
        "from": before.raw,
        "to": after.raw,
        "changes": changes,
        **({"files": files.as_json()} if files is not None else {}),
        "consumers": [{"name": n, "version": c.version, "count": c.count, "consumers": c.consumers} for n, c in on],
    }
    return Result(data, report)


def _files_text(files: TreeDiff) -> list[str]:
    """The files section of `arca diff` of two trees: a row a file added (+), removed (-) or changed (~) with its
    sizes, then the counts (with --output text: the rows alone, tab-separated)."""
    rows: list[list[str]] = []
    rows += [["+", e.path, "", size(e.size)] for e in files.added]
    rows += [["-", e.path, size(e.size), ""] for e in files.removed]
    rows += [["~", c.path, size(c.before.size), size(c.after.size)] for c in files.changed]
    if MODE.text:
        return [table(["", "FILE", "FROM", "TO"], rows)] if rows else []
    change = files.size_change
    summary = (
        f"files: {len(files.added)} added, {len(files.removed)} removed, {len(files.changed)} changed, "
        f"{files.unchanged} unchanged ({'+' if change >= 0 else '-'}{size(abs(change))})"
    )
    return ["", summary, *([table(["", "FILE", "FROM", "TO"], rows)] if rows else [])]


def cmd_show(args: argparse.Namespace, client: Client) -> Result:
    name, ref = split_ref(args.target, default=None)
    if ref is not None:
        return _show_version(client, name, ref)
    summary = client.get_artifact(name)
    aliases: list[Alias] = list(client.iter_aliases(name)) if summary.counts.aliases else []

    def report() -> str:
        counts = summary.counts
        deleted = f" (+{counts.deleted_versions} deleted)" if counts.deleted_versions else ""
        lines = [
            fields(
                [
                    ("name", summary.name),
                    ("link to", summary.link),
                    ("description", summary.description),
                    ("tags", tags_text(summary.tags)),
                    ("newest version", summary.newest_version or "no versions yet"),
                    ("versions", f"{counts.versions}{deleted}"),
                    ("aliases", counts.aliases),
                    ("created", stamp(summary.created_at)),
                    ("updated", stamp(summary.updated_at)),
                ]
            ),
            "\nLATEST (working copy)",
            indent(version_fields(summary.latest, skip_name=True) if summary.latest.sha256 else "no content yet"),
        ]
        if aliases:
            lines += ["", alias_table(aliases)]
        return "\n".join(lines)

    return Result({**summary.raw, "aliases": [a.raw for a in aliases]}, report)


def _show_version(client: Client, name: str, ref: str) -> Result:
    version, alias = read_version(client, name, ref)

    def report() -> str:
        lines = []
        if alias:
            lines.append(f"{alias.alias} -> {target(alias.version)}{canary(alias)} (revision {alias.revision})")
        if version.via:
            lines.append(f"{version.via} is a link to {version.name}")
        split = canaries(client, name) if version.aliases and isinstance(version.version, int) else {}
        lines.append(version_fields(version, split=split))
        return "\n".join(lines)

    return Result({**version.raw, "alias": alias.raw} if alias else version.raw, report)


def version_fields(version: Version, *, skip_name: bool = False, split: dict[str, Alias] | None = None) -> str:
    metadata = ", ".join(f"{k}={v}" for k, v in sorted(version.metadata.items()))
    aliases = ", ".join(alias_mark(a, version.version, split or {}) for a in version.aliases)
    return fields(
        [
            ("name", None if skip_name else version.name),
            ("version", None if skip_name else version.version),
            ("size", None if version.size is None else f"{size(version.size)} ({version.size} bytes)"),
            ("sha256", version.sha256),
            ("content type", version.content_type),
            ("metadata", metadata),
            ("tags", tags_text(version.tags)),
            ("attestations", _attestations_text(version.raw.get("attestations"))),
            ("created", stamp(version.created_at)),
            ("updated", stamp(version.updated_at)),
            ("aliases", aliases),
            ("deleted", (stamp(version.deleted_at) or "yes") if version.deleted else None),
        ]
    )


def _attestations_text(attestations: Any) -> str | None:
    """Attestations when the version answer carries them (a list of objects, or of names)."""
    if not attestations:
        return None
    if isinstance(attestations, list):
        return ", ".join(
            str(a.get("type") or a.get("name") or json.dumps(a, sort_keys=True)) if isinstance(a, dict) else str(a)
            for a in attestations
        )
    return json.dumps(attestations, sort_keys=True)


def cmd_delete(args: argparse.Namespace, client: Client) -> Result:
    version = client.delete_version(args.name, args.version)
    return _reported(args, version, "deleted (restore brings it back)")


def cmd_restore(args: argparse.Namespace, client: Client) -> Result:
    version = client.restore_version(args.name, args.version)
    return _reported(args, version, "restored")


def _reported(args: argparse.Namespace, version: Version, what: str) -> Result:
    return Result(version.raw, f"{args.name}: version {version.version} {what}")


def register(commands: Commands) -> None:
    p = commands.add(
        "versions",
        cmd_versions,
        "list the versions of NAME, newest first",
        example="arca versions payments/api --tag env=prod --since yesterday --limit 5",
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument("--all", action="store_true", help="include deleted versions")
    p.add_argument("--asc", action="store_true", help="oldest first")
    p.add_argument("--limit", type=limit_arg, help="show at most this many (1 or more)")
    p.add_argument(
        "--tag",
        metavar="KEY=VALUE",
        type=tag_filter_arg,
        action="append",
        help="only versions with this tag; repeatable (AND)",
    )
    p.add_argument(
        "--sha256", metavar="HEX", type=sha256_start_arg, help="only versions with this content (or its start)"
    )
    p.add_argument(
        "--since",
        metavar="TIME",
        type=time_arg,
        help="only versions created after TIME (ISO 8601, or yesterday, '2 hours ago', ...)",
    )
    p.add_argument("--until", metavar="TIME", type=time_arg, help="only versions created before TIME (as --since)")

    p = commands.add(
        "show",
        cmd_show,
        "summary of NAME, or one version: NAME@REF",
        example="arca show payments/api@prod",
    )
    p.add_argument("target", metavar="NAME[@REF]", help=REF_HELP)

    p = commands.add(
        "diff",
        cmd_diff,
        "what changed between two versions: NAME@A NAME@B (or NAME@A @B)",
        example="arca diff payments/api@prod @staging",
    )
    p.add_argument("before", metavar="NAME@A", help=REF_HELP)
    p.add_argument("after", metavar="NAME@B", help="the other version; @B for the same name")

    p = commands.add(
        "delete",
        cmd_delete,
        "soft-delete a version (refused while an alias points at it or a consumer leases it)",
        example="arca delete payments/api 2",
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument("version", metavar="VERSION", type=version_arg)

    p = commands.add("restore", cmd_restore, "restore a soft-deleted version", example="arca restore payments/api 2")
    p.add_argument("name", metavar="NAME")
    p.add_argument("version", metavar="VERSION", type=version_arg)
