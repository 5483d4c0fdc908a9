"""What the command modules share: the registrar, argument types, NAME@REF parsing, and the alias marks
that both version and alias listings print."""

from __future__ import annotations

import argparse
import itertools
import re
import sys
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from arca_client.errors import AccessDeniedError, NotFoundError
from arca_client.models import LATEST, Alias, VersionConsumers
from arca_client.output import Result, note, table, target, when
from arca_client.progress import ProgressBar
from arca_client.refs import GRAMMAR, SHA256_PREFIX
from arca_client.refs import split_ref as _split_ref
from arca_client.sdk import Client

# A command: the parsed arguments and a client (None for the commands registered `offline`) in, a result out.
Handler = Callable[[argparse.Namespace, Client], Result | int | None]
REF_HELP = "REF: a version number, LATEST, an alias or sha256:<hex or prefix>"
T = TypeVar("T")


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
        epilog: str,
        root: argparse.ArgumentParser,
    ) -> None:
        self.subparsers = subparsers
        self.parents = parents
        self.epilog = epilog
        self.root = root
        self._groups: dict[str, Commands] = {}

    def add(
        self,
        name: str,
        handler: Handler,
        help_text: str,
        *,
        example: str | None = None,
        offline: bool = False,
        hidden: bool = False,
        **extra: Any,
    ) -> argparse.ArgumentParser:
        """A command; `offline` ones never talk to the API (no client is made for them). Its --help shows its own
        options, its described positionals and `example` (one or more command lines); the global options stay in
        `arca --help`. A `hidden` command (an old spelling kept working) is left out of the command list."""
        epilog = self.epilog
        if example:
            shown = "\n".join(f"  {line}" for line in example.strip().splitlines())
            epilog = f"example:\n{shown}\n\n{self.epilog}"
        listed = {} if hidden else {"help": help_text}
        sub: argparse.ArgumentParser = self.subparsers.add_parser(
            name,
            description=help_text,
            parents=self.parents,
            epilog=epilog,
            formatter_class=argparse.RawDescriptionHelpFormatter,
            **listed,
            **extra,
        )
        sub.hide_globals = True  # type: ignore[attr-defined]
        sub.set_defaults(handler=handler, parser=sub, offline=offline)
        return sub

    def group(self, name: str, help_text: str, description: str, *, dest: str, metavar: str) -> Commands:
        """A command with sub-commands of its own (`arca alias set`, ...)."""
        parser = self.subparsers.add_parser(
            name,
            help=help_text,
            description=description,
            parents=self.parents,
            epilog=self.epilog,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        parser.hide_globals = True
        inner = parser.add_subparsers(dest=dest, metavar=metavar, required=True)
        self._groups[name] = Commands(inner, parents=self.parents, epilog=self.epilog, root=self.root)
        return self._groups[name]

    def existing(self, name: str) -> Commands:
        """A group registered before (by another module): a feature adds its commands under `arca alias`."""
        return self._groups[name]


def split_ref(text: str, default: str | None = LATEST) -> tuple[str, str | None]:
    """NAME[@REF] with REF in its canonical form (see arca_client.refs); UsageError naming the grammar.

    The CLI also takes `sha256:` and the start of a sha256 (as tables print it): `full_ref` completes it."""
    name, _, ref = text.partition("@")
    if name and _SHA_PREFIX.fullmatch(ref.lower()):
        return name, ref.lower()
    try:
        return _split_ref(text, default)
    except ValueError as bad:
        raise UsageError(f"{bad} (references are {GRAMMAR})") from None


_SHA_PREFIX = re.compile(r"sha256:[0-9a-f]{4,63}")


def full_ref(client: Client, name: str, ref: str) -> str:
    """`ref`, or for `sha256:<start>` the content ref of the one content of NAME's live versions that starts so."""
    if not _SHA_PREFIX.fullmatch(ref):
        return ref
    return SHA256_PREFIX + full_sha256(client, name, ref.removeprefix(SHA256_PREFIX), include_deleted=False)


def full_sha256(client: Client, name: str, start: str, *, include_deleted: bool) -> str:
    """The sha256 of NAME's versions that starts with `start` (the whole sha256 as given). NotFoundError when
    none does; UsageError when more than one content does."""
    if len(start) == 64:
        return start
    found = sorted(
        {
            v.sha256
            for v in client.iter_versions(name, include_deleted=include_deleted)
            if v.sha256 and v.sha256.startswith(start)
        }
    )
    if not found:
        raise NotFoundError(f"no version of {name} has content whose sha256 starts with {start}", status=404)
    if len(found) > 1:
        raise UsageError(f"{start} is the start of {len(found)} sha256s of {name}'s versions: give more digits")
    return found[0]


def split_target(text: str) -> tuple[str, str]:
    """NAME[@REF], REF defaulting to LATEST."""
    name, ref = split_ref(text)
    return name, ref or LATEST


def ask(question: str) -> bool:
    """Ask `question` on the terminal (stdin must be one); True for y or yes."""
    sys.stderr.write(f"{question} [y/N] ")
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


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


_UNITS = {"s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60, "h": 3600, "hour": 3600}
_UNITS |= {"d": 86_400, "day": 86_400, "w": 604_800, "week": 604_800}
_AGO = re.compile(r"(\d+)\s*([a-z]+?)s?\s+ago")


def time_arg(text: str, now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> datetime:
    """ISO 8601 (a time without a zone is UTC, like every time arca prints), or relative: `now`, `today` (its
    midnight, UTC), `yesterday` (24 hours ago), `N minutes ago` (s, min, h, d, w and their names)."""
    word = text.strip().lower()
    if word in ("now", "today", "yesterday"):
        moment = now()
        if word == "today":
            return moment.replace(hour=0, minute=0, second=0, microsecond=0)
        return moment - timedelta(days=1) if word == "yesterday" else moment
    ago = _AGO.fullmatch(word)
    if ago and ago.group(2) in _UNITS:
        return now() - timedelta(seconds=int(ago.group(1)) * _UNITS[ago.group(2)])
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a time: ISO 8601 (2024-05-01T12:00:00Z), or now, today, yesterday, '5 minutes ago'"
        ) from None
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


def sha256_start_arg(text: str) -> str:
    """A sha256, or its first 4 or more hex digits (as tables print it)."""
    digest = text.lower().removeprefix("sha256:")
    if not 4 <= len(digest) <= 64 or any(c not in "0123456789abcdef" for c in digest):
        raise argparse.ArgumentTypeError(f"{text!r} is not a sha256 or its start (4 to 64 hex digits)")
    return digest


def tag_set_arg(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE (KEY= sets an empty value; --remove KEY removes)")
    return key, value


def limited(found: Iterable[T], limit: int | None, what: str) -> list[T]:
    """At most `limit` of `found` (every one without a limit); when there were more, a note on stderr says so."""
    if limit is None:
        return list(found)
    shown = list(itertools.islice(found, limit + 1))
    if len(shown) > limit:
        note(f"more {what} than --limit {limit} shows: raise --limit, or leave it out for all of them")
    return shown[:limit]


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


def consumers_on(client: Client, name: str, versions: Iterable[int | str | None]) -> list[VersionConsumers]:
    """The consumers still on each of `versions` of `name` (each number once, in order; `LATEST` and None
    skipped), from the consumers listing; none when the caller may not read it (the lines are then left out)."""
    wanted = [v for v in dict.fromkeys(versions) if isinstance(v, int)]
    try:
        return [client.version_consumers(name, v) for v in wanted]
    except AccessDeniedError:
        return []
