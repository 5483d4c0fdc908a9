"""Links: a name that leads to another artifact."""

from __future__ import annotations

import argparse

from arca_client.commands.base import Commands, UsageError
from arca_client.output import Result
from arca_client.sdk import Client


def cmd_link(args: argparse.Namespace, client: Client) -> Result:
    if args.delete:
        if args.target is not None:
            raise UsageError("link --delete takes only NAME")
        return cmd_unlink(args, client)
    if args.target is None:
        raise UsageError("link takes NAME TARGET (or --delete NAME)")
    link = client.link(args.name, args.target)
    return Result(link.raw, f"{link.name} -> {link.link}")


def cmd_unlink(args: argparse.Namespace, client: Client) -> Result:
    client.unlink(args.name)
    return Result({"name": args.name, "unlinked": True}, f"{args.name}: link removed")


def register(commands: Commands) -> None:
    p = commands.add(
        "link",
        cmd_link,
        "make NAME a link to the artifact TARGET (reads follow it; writes refused)",
        example="arca link team-a/api payments/api",
    )
    p.add_argument("name", metavar="NAME", help="the link's name (not an artifact)")
    p.add_argument("target", metavar="TARGET", nargs="?", help="the artifact the link leads to")
    p.add_argument("--delete", action="store_true", help="remove the link NAME (never its target)")

    p = commands.add("unlink", cmd_unlink, "remove the link NAME (never its target)", example="arca unlink team-a/api")
    p.add_argument("name", metavar="NAME")
