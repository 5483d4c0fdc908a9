"""What the command modules share: the registrar, argument types, NAME@REF parsing, and the alias marks
that both version and alias listings print."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from arca_client.models import LATEST, Alias
from arca_client.output import Result, table, target, when
from arca_client.progress import ProgressBar
from arca_client.refs import GRAMMAR
from arca_client.refs import split_ref as _split_ref
from arca_client.sdk import Client

# A command: the parsed arguments and a client (None for the commands registered `offline`) in, a result out.
Handler = Callable[[argparse.Namespace, Client], Result | int | None]
REF_HELP = "REF: a version number, LATEST, an alias or sha256:<hex>"


class UsageError(Exception):
    """Bad command-line input; exit code 1."""


class Commands:
    """Adds commands to one level of the parser: each gets the global options (as `parents`), the exit-code
    epilog, and its handler (`args.handler`) and parser (`args.parser`) as defaults."""

    def __init__(
        self,
        subparsers: Any,
        *,
        parents: list[argparse.ArgumentParser],
        plain: list[argparse.ArgumentParser],
        epilog: str,
        root: argparse.ArgumentParser,
    ) -> None:
        self.subparsers = subparsers
        self.parents = parents
        self.plain = plain  # the global options without --output (for download, whose -o is its destination)
        self.epilog = epilog
        self.root = root

    def add(
        self, name: str, handler: Handler, help_text: str, *, offline: bool = False, **extra: Any
    ) -> argparse.ArgumentParser:
        """A command; `offline` ones never talk to the API (no client is made for them)."""
        sub: argparse.ArgumentParser = self.subparsers.add_parser(
            name,
            help=help_text,
            description=help_text,
            parents=extra.pop("parents", self.parents),
            epilog=self.epilog,
            formatter_class=argparse.RawDescriptionHelpFormatter,
            **extra,
        )
        sub.set_defaults(handler=handler, parser=sub, offline=offline)
        return sub

    def group(self, name: str, help_text: str, description: str, *, dest: str, metavar: str) -> Commands:
        """A command with sub-commands of its own (`arca alias set`, ...)."""
        parser = self.subparsers.add_parser(name, help=help_text, description=description, parents=self.parents)
        inner = parser.add_subparsers(dest=dest, metavar=metavar, required=True)
        return Commands(inner, parents=self.parents, plain=self.plain, epilog=self.epilog, root=self.root)


def split_ref(text: str, default: str | None = LATEST) -> tuple[str, str | None]:
    """NAME[@REF] with REF in its canonical form (see arca_client.refs); UsageError naming the grammar."""
    try:
        return _split_ref(text, default)
    except ValueError as bad:
        raise UsageError(f"{bad} (references are {GRAMMAR})") from None


def split_target(text: str) -> tuple[str, str]:
    """NAME[@REF], REF defaulting to LATEST."""
    name, ref = split_ref(text)
    return name, ref or LATEST


def progress(args: argparse.Namespace) -> ProgressBar | None:
    enabled = args.progress if args.progress is not None else sys.stderr.isatty()
    return ProgressBar(sys.stderr) if enabled else None


# ---- argument types -----------------------------------------------------------------------------


def version_arg(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 999_999:
        raise argparse.ArgumentTypeError(f"{text!r} is not a version number (1 to 999999)")
    return int(text)


def target_arg(text: str) -> int | str:
    """What an alias may point at: a version number or LATEST."""
    if text.upper() == LATEST:
        return LATEST
    return version_arg(text)


def limit_arg(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a limit (a whole number, 1 or more)")
    return int(text)


def count_arg(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
    return int(text)


def time_arg(text: str) -> datetime:
    """ISO 8601; a time without a zone is UTC, like every time arca prints."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO 8601 time (e.g. 2024-05-01T12:00:00Z)") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def pair_arg(text: str) -> tuple[str, str]:
    """KEY=VALUE (metadata)."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    return key, value


def tag_filter_arg(text: str) -> tuple[str, str]:
    """KEY=VALUE or KEY:VALUE (a key may contain ":" but never "=", so KEY=VALUE always splits right)."""
    key, sep, value = text.partition("=")
    if not sep:
        key, sep, value = text.partition(":")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE or KEY:VALUE")
    return key, value


def sha256_arg(text: str) -> str:
    digest = text.lower().removeprefix("sha256:")
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise argparse.ArgumentTypeError(f"{text!r} is not a sha256 (64 hex digits)")
    return digest


def tag_set_arg(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE (KEY= sets an empty value; --remove KEY removes)")
    return key, value


# ---- aliases as listings show them --------------------------------------------------------------


def canaries(client: Client, name: str) -> dict[str, Alias]:
    """The aliases of `name` that have a canary, by name: a version's `aliases` lists both sides of a split."""
    return {a.alias: a for a in client.iter_aliases(name) if a.secondary_version is not None}


def alias_mark(alias: str, version: int | str, split: dict[str, Alias]) -> str:
    """`prod`, or `prod(canary 10%)` on the version that is that alias's canary."""
    found = split.get(alias)
    if found is not None and found.secondary_version == version and found.version != version:
        return f"{alias}(canary {found.secondary_version_weight or 0}%)"
    return alias


def alias_table(aliases: Iterable[Alias]) -> str:
    rows = [
        [
            a.alias,
            target(a.version),
            target(a.secondary_version) if a.secondary_version is not None else "",
            "" if a.secondary_version is None else f"{a.secondary_version_weight or 0}%",
            a.revision,
            when(a.updated_at),
            a.description or "",
        ]
        for a in aliases
    ]
    return table(["ALIAS", "VERSION", "CANARY", "WEIGHT", "REVISION", "UPDATED (UTC)", "DESCRIPTION"], rows)
