"""`arca events`: an artifact's feed, oldest first, and following it as it grows."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from arca_client.commands.base import Commands
from arca_client.models import Event
from arca_client.output import MODE, Result, line, table, target, when
from arca_client.sdk import Client

HEADERS = ("WHEN (UTC)", "EVENT", "VERSION", "ALIAS", "ID", "BY")
# While following, rows are printed as they come, so the columns have fixed widths: a time, the longest event
# type, a version number, a typical alias name, an event id (always 25 characters); BY is last and free.
WIDTHS = (19, 19, 7, 12, 25)


def _row(event: Event) -> list[str]:
    version = "" if event.version is None else target(event.version)
    return [when(event.at), event.action, version, event.alias or "", event.id, event.actor or ""]


def _fixed(cells: Sequence[str]) -> str:
    if MODE.text:
        return "\t".join(cells)
    padded = [
        cell.rjust(w) if i == 2 else cell.ljust(w) for i, (cell, w) in enumerate(zip(cells, WIDTHS, strict=False))
    ]
    return "  ".join([*padded, cells[-1]]).rstrip()


def cmd_events(args: argparse.Namespace, client: Client) -> Result | None:
    """The feed, oldest first; with --follow, then each new event as it comes until Ctrl-C (exit 0)."""
    if not args.follow:
        events = list(client.iter_events(args.name, after=args.after))
        return Result([e.raw for e in events], lambda: table(HEADERS, [_row(e) for e in events]) if events else None)
    if not MODE.json and not MODE.text:
        line(None, _fixed(HEADERS))
    try:
        for event in client.follow_events(args.name, after=args.after):
            line(event.raw, _fixed(_row(event)))
    except KeyboardInterrupt:
        return None
    return None


def register(commands: Commands) -> None:
    p = commands.add(
        "events",
        cmd_events,
        "the events of NAME, oldest first (--follow: then wait for more)",
        example="arca events payments/api --follow",
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument("--after", metavar="ID", help="only the events after this event id")
    p.add_argument(
        "-f", "--follow", action="store_true", help="keep polling for new events (with backoff) until Ctrl-C"
    )
