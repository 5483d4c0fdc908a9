"""`arca completion`: a shell completion script made from the parser itself (offline)."""

from __future__ import annotations

import argparse

from arca_client.commands.base import Commands
from arca_client.completion import SHELLS, completion_script
from arca_client.output import out
from arca_client.sdk import Client

_INSTALL = """\
install:
  bash  echo 'eval "$(arca completion bash)"' >> ~/.bashrc
  zsh   arca completion zsh > "${fpath[1]}/_arca"   (or: eval "$(arca completion zsh)" in ~/.zshrc)
  fish  arca completion fish > ~/.config/fish/completions/arca.fish
"""


def cmd_completion(args: argparse.Namespace, client: Client | None) -> None:
    # A script, not a result: printed as is, whatever the output format.
    print(completion_script(args.root_parser, args.shell), file=out(), end="")


def register(commands: Commands) -> None:
    p = commands.add(
        "completion",
        cmd_completion,
        "print a shell completion script",
        example='eval "$(arca completion bash)"',
        offline=True,
    )
    p.add_argument("shell", metavar="SHELL", choices=SHELLS, help=" or ".join(SHELLS))
    p.set_defaults(root_parser=commands.root)
    p.epilog = f"{_INSTALL}\n{p.epilog}"
