"""`arca console`: the web console, served on this machine (see `arca_client.console`)."""

from __future__ import annotations

from arca_client import console
from arca_client.commands.base import Commands


def register(commands: Commands) -> None:
    p = commands.add(
        "console",
        console.cmd_console,
        "the web console on 127.0.0.1, forwarding (signed) to the API",
        example='arca console --endpoint "$API_URL"',
    )
    console.add_arguments(p)
