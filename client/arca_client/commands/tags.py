"""Tags and search: set or remove tags of an artifact or a version, find versions or artifacts by tag or content."""

from __future__ import annotations

import argparse

from arca_client.commands.base import (
    Commands,
    UsageError,
    full_ref,
    sha256_arg,
    split_ref,
    tag_filter_arg,
    tag_set_arg,
)
from arca_client.output import Result, fields, short, size, table, tags_text, when
from arca_client.refs import RefKind, ref_kind
from arca_client.sdk import Client


def cmd_tag(args: argparse.Namespace, client: Client) -> Result:
    patch: dict[str, str | None] = dict(args.tags or [])
    patch.update(dict.fromkeys(args.remove or []))
    if not patch and args.description is None:
        raise UsageError("nothing to change: give KEY=VALUE, --remove KEY or --description")
    name, ref = split_ref(args.target, default=None)
    if ref is None:
        description = {} if args.description is None else {"description": args.description or None}
        summary = client.update_artifact(name, tags=patch if patch else None, **description)
        return Result(
            summary.raw,
            lambda: fields(
                [("name", summary.name), ("description", summary.description), ("tags", tags_text(summary.tags))]
            ),
        )
    if args.description is not None:
        raise UsageError("--description belongs to the artifact: give NAME without @VERSION")
    kind = ref_kind(ref)
    if kind is RefKind.LATEST:
        raise UsageError("LATEST has no tags of its own: tag the artifact (NAME) or a version (NAME@VERSION)")
    if kind is RefKind.ALIAS:
        target = client.get_alias(name, ref).version
        if not isinstance(target, int):
            raise UsageError(f"alias {ref!r} points at LATEST, which has no tags of its own")
        number = target
    elif kind is RefKind.SHA256:
        number = int(client.get_version(name, full_ref(client, name, ref)).version)
    else:
        number = int(ref)
    version = client.tag_version(name, number, patch)
    return Result(version.raw, f"{version.name}@{version.version}: {tags_text(version.tags) or '(no tags)'}")


def cmd_create(args: argparse.Namespace, client: Client) -> Result:
    summary = client.create_artifact(args.name, description=args.description, tags=dict(args.tag or []))
    return Result(
        summary.raw,
        lambda: fields(
            [
                ("name", summary.name),
                ("versions", "none yet"),
                ("description", summary.description),
                ("tags", tags_text(summary.tags)),
            ]
        ),
    )


def cmd_search(args: argparse.Namespace, client: Client) -> Result:
    if (args.tag is None) == (args.sha256 is None):
        raise UsageError("give exactly one of --tag KEY=VALUE or --sha256 HEX")
    if args.artifacts:
        if args.tag is None:
            raise UsageError("--artifacts searches the artifacts' own tags: give --tag")
        names = [e.name for e in client.iter_search_artifacts(args.tag)]
        return Result([{"name": n} for n in names], "\n".join(names) if names else None)
    hits = list(client.iter_search_versions(sha256=args.sha256, tag=args.tag))
    rows = [
        [
            h.name,
            h.version,
            when(h.created_at),
            size(h.size),
            short(h.sha256),
            "yes" if h.deleted else "",
            tags_text(h.tags),
        ]
        for h in hits
    ]
    return Result(
        [h.raw for h in hits],
        lambda: table(["NAME", "VERSION", "CREATED (UTC)", "SIZE", "SHA256", "DELETED", "TAGS"], rows),
    )


def register(commands: Commands) -> None:
    p = commands.add(
        "create",
        cmd_create,
        "create the artifact NAME with no version yet (its first publish is version 1); fails if it exists",
        example='arca create team/fraud --description "fraud model" --tag team=risk',
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument("--description", help="the artifact's description")
    p.add_argument("--tag", metavar="KEY=VALUE", type=tag_set_arg, action="append", help="a tag; repeatable")

    p = commands.add(
        "tag",
        cmd_tag,
        "set or remove tags of an artifact (NAME) or a version (NAME@VERSION); merged",
        example="arca tag payments/api@3 env=prod --remove approved-by",
    )
    p.add_argument("target", metavar="NAME[@VERSION]", help="VERSION: a number, an alias or sha256:<hex>")
    p.add_argument("tags", metavar="KEY=VALUE", type=tag_set_arg, nargs="*", help="set KEY (KEY= sets it empty)")
    p.add_argument("--remove", metavar="KEY", action="append", help="remove KEY; repeatable")
    p.add_argument("--description", help="the artifact's description (NAME only); empty clears it")

    p = commands.add(
        "search",
        cmd_search,
        "find versions across the registry by tag or content",
        example="arca search --tag env=prod",
    )
    p.add_argument("--tag", metavar="KEY=VALUE", type=tag_filter_arg, help="versions (or artifacts) with this tag")
    p.add_argument(
        "--sha256",
        metavar="HEX",
        type=sha256_arg,
        help="versions holding this content (the whole sha256: `arca versions NAME --sha256` takes its start)",
    )
    p.add_argument("--artifacts", action="store_true", help="search the artifacts' own tags instead (with --tag)")
