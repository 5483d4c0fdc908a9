"""`arca ls`: artifact names and prefixes, flat or drawn as a tree."""

from __future__ import annotations

import argparse

from arca_client.commands.base import Commands
from arca_client.models import ListEntry
from arca_client.output import Result, out
from arca_client.sdk import Client


def cmd_ls(args: argparse.Namespace, client: Client) -> Result:
    def children(prefix: str) -> list[ListEntry]:
        return list(client.iter_artifacts(prefix, delimiter="/"))

    top = children(args.prefix)

    def data() -> dict[str, object]:
        found: list[ListEntry] = []
        pending = list(top)
        while pending:
            entry = pending.pop(0)
            found.append(entry)
            if args.recursive and entry.is_prefix:
                pending.extend(children(entry.name))
        links = {e.name: e.link for e in found if e.link}
        return {
            "artifacts": [e.name for e in found if not e.is_prefix],
            "prefixes": [e.name for e in found if e.is_prefix],
            **({"links": links} if links else {}),
        }

    def drawn() -> str | None:
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


def arrow(entry: ListEntry) -> str:
    """How a listing shows a link: `name -> target`."""
    return f" -> {entry.link}" if entry.link else ""


def register(commands: Commands) -> None:
    p = commands.add("ls", cmd_ls, "list artifacts and prefixes under PREFIX")
    p.add_argument("prefix", metavar="PREFIX", nargs="?", default="")
    p.add_argument("-R", "--recursive", action="store_true", help="descend into prefixes, drawn as a tree")
