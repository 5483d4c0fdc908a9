"""`arca ls`: artifact names and prefixes, flat or drawn as a tree."""

from __future__ import annotations

import argparse

from arca_client.commands.base import Commands
from arca_client.models import ListEntry
from arca_client.output import MODE, Result, out
from arca_client.sdk import Client


def cmd_ls(args: argparse.Namespace, client: Client) -> Result:
    def children(prefix: str) -> list[ListEntry]:
        return list(client.iter_artifacts(prefix, delimiter="/"))

    prefix = args.prefix
    top = children(prefix)
    if prefix and not prefix.endswith("/") and [e.name for e in top] == [f"{prefix}/"]:
        # `ls misc` names the folder misc/ (and nothing else starts so): list what it holds, as `ls DIR` does.
        prefix = f"{prefix}/"
        top = children(prefix)

    def everything() -> list[ListEntry]:
        found: list[ListEntry] = []
        pending = list(top)
        while pending:
            entry = pending.pop(0)
            found.append(entry)
            if args.recursive and entry.is_prefix:
                pending.extend(children(entry.name))
        return found

    def data() -> list[dict[str, str]]:
        return [_entry(e) for e in everything()]

    def drawn() -> str | None:
        if MODE.text:  # one full name a line, for cut, grep and read: no tree drawn
            return "\n".join(e.name + (f"\t{e.link}" if e.link else "") for e in everything()) or None
        utf8 = "utf" in (getattr(out(), "encoding", "") or "").lower()
        tee, corner, pipe = ("├── ", "└── ", "│   ") if utf8 else ("|-- ", "`-- ", "|   ")
        lines: list[str] = []

        def tree(parent: ListEntry, indent: str) -> None:
            entries = children(parent.name)
            for i, entry in enumerate(entries):
                last = i == len(entries) - 1
                lines.append(f"{indent}{corner if last else tee}{entry.name[len(parent.name) :]}{arrow(entry)}")
                if entry.is_prefix:
                    tree(entry, indent + ("    " if last else pipe))

        for entry in top:
            lines.append(entry.name + arrow(entry))
            if args.recursive and entry.is_prefix:
                tree(entry, "")
        return "\n".join(lines) if lines else None

    return Result(data, drawn)


def _entry(entry: ListEntry) -> dict[str, str]:
    """One row of `ls --json`: {name, type: artifact|prefix|link, link?}."""
    if entry.is_prefix:
        return {"name": entry.name, "type": "prefix"}
    if entry.link:
        return {"name": entry.name, "type": "link", "link": entry.link}
    return {"name": entry.name, "type": "artifact"}


def arrow(entry: ListEntry) -> str:
    """How a listing shows a link: `name -> target`."""
    return f" -> {entry.link}" if entry.link else ""


def register(commands: Commands) -> None:
    p = commands.add(
        "ls",
        cmd_ls,
        "list artifacts and prefixes under PREFIX (a folder: its contents)",
        example="arca ls -R payments/",
    )
    p.add_argument("prefix", metavar="PREFIX", nargs="?", default="", help="a name prefix, or a folder (payments/)")
    p.add_argument("-R", "--recursive", action="store_true", help="descend into prefixes, drawn as a tree")
