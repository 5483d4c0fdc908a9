"""The `arca` command: argparse over the SDK. `main(argv)` returns the exit code (see EXIT_TABLE)."""

from __future__ import annotations

import argparse
import contextlib
import difflib
import itertools
import json
import logging
import os
import re
import sys
import textwrap
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any, NoReturn, TextIO

from arca_client import config, console
from arca_client._version import __version__
from arca_client.commands import retention as retention_commands
from arca_client.completion import SHELLS, completion_script
from arca_client.config import DEFAULT_ENDPOINT, ConfigError
from arca_client.diff import version_diff
from arca_client.errors import ArcaError, ConflictError, NotFoundError, PreconditionFailedError, ValidationError
from arca_client.models import LATEST, Alias, AliasRevision, ArtifactSummary, Event, ListEntry, Rollout, Version
from arca_client.progress import ProgressBar, human_size
from arca_client.refs import GRAMMAR, RefKind, ref_kind
from arca_client.refs import split_ref as _split_ref
from arca_client.sdk import Client

EXIT_OK = 0
EXIT_USAGE = 1
EXIT_NOT_FOUND = 2
EXIT_CONFLICT = 3
EXIT_ERROR = 4
EXIT_INTERRUPTED = 130

# The one exit-code table: `arca --help` prints it, docs/cli.md carries it word for word (a test compares them),
# and `exit_code` below follows it. An exit code follows the HTTP status of the API's answer, whatever the
# command: an alias set to a version that does not exist is the API's 409 (the alias is what the request
# addresses; the version is a value in its body), so it is a conflict, not "not found".
EXIT_TABLE: tuple[tuple[int, str], ...] = (
    (EXIT_OK, "success"),
    (
        EXIT_USAGE,
        "usage: bad arguments, options or config file, including input the API refuses as invalid (HTTP 400)",
    ),
    (EXIT_NOT_FOUND, "not found: no such artifact, version, alias or local file (HTTP 404)"),
    (
        EXIT_CONFLICT,
        "conflict or failed precondition: a version pinned by an alias, an alias set to a version that does not "
        "exist or is deleted, an alias moved meanwhile, aliases block a purge, a download would overwrite a file "
        "(HTTP 409, 412)",
    ),
    (
        EXIT_ERROR,
        "any other error: network, credentials, throttling after retries, server error, checksum mismatch",
    ),
    (EXIT_INTERRUPTED, "interrupted (Ctrl-C)"),
)


def _exit_codes_help() -> str:
    rows = []
    for code, meaning in EXIT_TABLE:
        wrapped = textwrap.wrap(meaning, 88)
        rows.append(f"  {code:<4} {wrapped[0]}")
        rows += [f"       {line}" for line in wrapped[1:]]
    return "\n".join(["exit codes:", *rows])


EXIT_CODES = f"""\
{_exit_codes_help()}

environment:
  ARCA_ENDPOINT    API endpoint: a URL or a configured name (after --endpoint, before the config's current)
  ARCA_SIGN        1/0: force SigV4 signing on or off (default: sign unless the endpoint is localhost)
  AWS_*            the standard AWS credential chain and region, used when signing
  XDG_CONFIG_HOME  where arca/config.toml is kept (default ~/.config)
"""

ClientFactory = Callable[[argparse.Namespace], Any]


class UsageError(Exception):
    """Bad command-line input; exit code 1."""


class _Parser(argparse.ArgumentParser):
    """Usage errors raise instead of exiting with argparse's code 2 (which means "not found" here)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(_suggest_choice(message), self.format_usage())


def _suggest_choice(message: str) -> str:
    """argparse's "invalid choice: 'lss' (choose from …)", with the close matches named first."""
    found = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if not found:
        return message
    choices = re.findall(r"'([^']*)'", found.group(2))
    close = difflib.get_close_matches(found.group(1), choices, n=3, cutoff=0.6)
    if not close:
        return message
    return f"{message[: found.start()]}invalid choice: {found.group(1)!r}; did you mean {' or '.join(close)}?"


# ---- output helpers -----------------------------------------------------------------------------


class _Output:
    """How results are printed, set once per command from --output / --json / --quiet."""

    text = False  # --output text: tab-separated cells, no header row, no padding (for cut, awk, read)
    quiet = False  # -q: nothing on stdout on success


_OUTPUT = _Output()


class _Discard:
    encoding = "utf-8"

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


def _out() -> TextIO:
    # Looked up at each call so that redirection (pytest's capsys, contextlib.redirect_stdout) applies.
    if _OUTPUT.quiet:
        return _Discard()  # type: ignore[return-value]
    return sys.stdout


def _print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, default=str), file=_out())


def table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """Columns aligned; a column whose values are all numbers is right-aligned. With --output text: the rows
    only, their cells separated by tabs."""
    text = [[("" if cell is None else str(cell)) for cell in row] for row in rows]
    if _OUTPUT.text:
        return "\n".join("\t".join(row) for row in text)
    widths = [len(h) for h in headers]
    for row in text:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    numeric = [all(r[i].isdigit() or r[i] in ("", "-") for r in text) and text != [] for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        parts = [c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric, strict=True)]
        return "  ".join(parts).rstrip()

    return "\n".join([line(list(headers)), *(line(r) for r in text)])


def _fields(pairs: Iterable[tuple[str, object]]) -> str:
    """`key   value` lines, keys padded to one width; None values are left out."""
    kept = [(k, v) for k, v in pairs if v is not None and v != ""]
    if _OUTPUT.text:
        return "\n".join(f"{k}\t{v}" for k, v in kept)
    width = max((len(k) for k, _ in kept), default=0)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in kept)


def _when(timestamp: str | None) -> str:
    """ISO 8601 UTC from the API, shortened for a table: 2024-05-01 12:00:00."""
    return (timestamp or "")[:19].replace("T", " ")


def _short(sha256: str | None) -> str:
    return (sha256 or "")[:12]


def _target(value: int | str | None) -> str:
    return "-" if value is None else str(value)


def _canary(alias: Alias | AliasRevision) -> str:
    if alias.secondary_version is None:
        return ""
    return f", canary {alias.secondary_version} at {alias.secondary_version_weight or 0}%"


def _size(size: int | None) -> str:
    return "" if size is None else human_size(size)


# ---- argument types -----------------------------------------------------------------------------


def _version_arg(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 999_999:
        raise argparse.ArgumentTypeError(f"{text!r} is not a version number (1 to 999999)")
    return int(text)


def _target_arg(text: str) -> int | str:
    """What an alias may point at: a version number or LATEST."""
    if text.upper() == LATEST:
        return LATEST
    return _version_arg(text)


def _weight_arg(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 99:
        raise argparse.ArgumentTypeError(f"{text!r} is not a weight (0 to 99, the percentage sent to the canary)")
    return int(text)


def _limit_arg(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a limit (a whole number, 1 or more)")
    return int(text)


def _count_arg(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
    return int(text)


def _time_arg(text: str) -> datetime:
    """ISO 8601; a time without a zone is UTC, like every time arca prints."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO 8601 time (e.g. 2024-05-01T12:00:00Z)") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _metadata_arg(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    return key, value


def split_ref(text: str, default: str | None = LATEST) -> tuple[str, str | None]:
    """NAME[@REF] with REF in its canonical form (see arca_client.refs); UsageError naming the grammar."""
    try:
        return _split_ref(text, default)
    except ValueError as bad:
        raise UsageError(f"{bad} (references are {GRAMMAR})") from None


# ---- commands -----------------------------------------------------------------------------------


def _progress(args: argparse.Namespace) -> ProgressBar | None:
    enabled = args.progress if args.progress is not None else sys.stderr.isatty()
    return ProgressBar(sys.stderr) if enabled else None


def cmd_publish(args: argparse.Namespace, client: Any) -> int:
    if args.file != "-" and os.path.isdir(args.file):
        raise UsageError(f"{args.file} is a directory: publish takes one file (archive the directory first)")
    metadata = dict(args.metadata) if args.metadata else None
    bar = _progress(args)
    try:
        source: Any = sys.stdin.buffer if args.file == "-" else args.file
        # The SDK records the file name (--filename, else FILE's) and guesses the content type from it.
        published = client.publish(
            args.name,
            source,
            content_type=args.content_type,
            metadata=metadata,
            filename=args.filename,
            force=args.force,
            progress=bar,
        )
    finally:
        if bar:
            bar.close()
    version = published.version
    alias = None
    if args.alias:
        alias = client.set_alias(
            args.name, args.alias, version.version, reason=args.reason or f"arca publish (version {version.version})"
        )
    if args.json:
        _print_json(
            {
                **version.raw,
                "deduplicated": published.deduplicated,
                "uploaded": published.uploaded,
                "alias": alias.raw if alias else None,
            }
        )
        return EXIT_OK
    if published.deduplicated:
        print(
            f"{args.name}: version {version.version} already has this content; nothing published "
            "(--force publishes anyway)",
            file=_out(),
        )
    else:
        moved = "uploaded" if published.uploaded else "content already stored, upload skipped"
        print(
            f"{args.name}: published version {version.version} "
            f"({_size(version.size)}, sha256 {_short(version.sha256)}, {moved})",
            file=_out(),
        )
    if alias:
        print(f"{args.name}: {alias.alias} -> {_target(alias.version)} (revision {alias.revision})", file=_out())
    return EXIT_OK


def cmd_download(args: argparse.Namespace, client: Any) -> int:
    name, ref = split_ref(args.target)
    to_stdout = args.destination == "-"
    dest: Any = sys.stdout.buffer if to_stdout else args.destination
    bar = _progress(args)
    try:
        downloaded = client.download(name, ref, dest, routing_key=args.key, progress=bar, overwrite=args.force)
    finally:
        if bar:
            bar.close()
    if to_stdout:
        sys.stdout.flush()
    resolution = downloaded.resolution
    if args.json and not to_stdout:
        _print_json({**resolution.raw, "path": downloaded.path})
        return EXIT_OK
    # With -o - the bytes are stdout, so the report goes to stderr.
    report = sys.stderr if to_stdout else _out()
    where = "stdout" if to_stdout else downloaded.path
    print(
        f"{name}@{ref}: version {resolution.version} ({_size(resolution.size)}, sha256 verified) -> {where}",
        file=report,
    )
    return EXIT_OK


def cmd_resolve(args: argparse.Namespace, client: Any) -> int:
    if args.legacy_ref is not None:
        raise UsageError(f"resolve takes one reference, NAME@REF: arca resolve {args.target}@{args.legacy_ref}")
    name, ref = split_ref(args.target)
    resolution = client.resolve(name, ref, routing_key=args.key, at=args.at)
    if args.json:
        _print_json(resolution.raw)
        return EXIT_OK
    print(
        _fields(
            [
                ("name", resolution.name),
                ("via", resolution.via),
                ("ref", resolution.ref),
                ("version", resolution.version),
                ("route", resolution.route),
                ("alias revision", resolution.alias_revision),
                ("size", f"{_size(resolution.size)} ({resolution.size} bytes)"),
                ("sha256", resolution.sha256),
                ("expires", resolution.expires_at),
                ("download url", resolution.download_url),
            ]
        ),
        file=_out(),
    )
    return EXIT_OK


def cmd_ls(args: argparse.Namespace, client: Any) -> int:
    def children(prefix: str) -> list[ListEntry]:
        return list(client.iter_artifacts(prefix, delimiter="/"))

    top = children(args.prefix)
    if args.json:
        found: list[ListEntry] = []
        pending = list(top)
        while pending:
            entry = pending.pop(0)
            found.append(entry)
            if args.recursive and entry.is_prefix:
                pending.extend(children(entry.name))
        _print_json(
            {
                "artifacts": [e.name for e in found if not e.is_prefix],
                "prefixes": [e.name for e in found if e.is_prefix],
                **({"links": {e.name: e.link for e in found if e.link}} if any(e.link for e in found) else {}),
            }
        )
        return EXIT_OK
    utf8 = "utf" in (getattr(_out(), "encoding", "") or "").lower()
    tee, corner, pipe = ("├── ", "└── ", "│   ") if utf8 else ("|-- ", "`-- ", "|   ")
    lines: list[str] = []

    def tree(parent: ListEntry, indent: str) -> None:
        entries = children(parent.name)
        for i, entry in enumerate(entries):
            last = i == len(entries) - 1
            lines.append(f"{indent}{corner if last else tee}{entry.name[len(parent.name) :]}{_arrow(entry)}")
            if entry.is_prefix:
                tree(entry, indent + ("    " if last else pipe))

    for entry in top:
        lines.append(entry.name + _arrow(entry))
        if args.recursive and entry.is_prefix:
            tree(entry, "")
    if lines:
        print("\n".join(lines), file=_out())
    return EXIT_OK


def cmd_versions(args: argparse.Namespace, client: Any) -> int:
    filters: dict[str, Any] = {}
    if args.tag:
        filters["tags"] = dict(args.tag)
    if args.sha256:
        filters["sha256"] = args.sha256
    if args.since:
        filters["created_after"] = args.since
    if args.until:
        filters["created_before"] = args.until
    versions: Iterable[Version] = client.iter_versions(
        args.name, order="asc" if args.asc else "desc", include_deleted=args.all, **filters
    )
    if args.limit is not None:
        versions = itertools.islice(versions, args.limit)
    if args.json:
        _print_json([v.raw for v in versions])
        return EXIT_OK
    versions = list(versions)
    canaries = _canaries(client, args.name) if any(v.aliases for v in versions) else {}
    headers = ["VERSION", "CREATED (UTC)", "SIZE", "SHA256", "ALIASES"]
    if args.all:
        headers.append("DELETED")
    rows = []
    for v in versions:
        row: list[object] = [
            v.version,
            _when(v.created_at),
            _size(v.size),
            _short(v.sha256),
            ",".join(_alias_mark(a, v.version, canaries) for a in v.aliases),
        ]
        if args.all:
            row.append(_when(v.deleted_at) or ("yes" if v.deleted else ""))
        rows.append(row)
    print(table(headers, rows), file=_out())
    return EXIT_OK


def _canaries(client: Any, name: str) -> dict[str, Alias]:
    """The aliases of `name` that have a canary, by name: a version's `aliases` lists both sides of a split."""
    return {a.alias: a for a in client.iter_aliases(name) if a.secondary_version is not None}


def _alias_mark(alias: str, version: int | str, canaries: dict[str, Alias]) -> str:
    """`prod`, or `prod(canary 10%)` on the version that is that alias's canary."""
    split = canaries.get(alias)
    if split is not None and split.secondary_version == version and split.version != version:
        return f"{alias}(canary {split.secondary_version_weight or 0}%)"
    return alias


def _tag_filter_arg(text: str) -> tuple[str, str]:
    """KEY=VALUE or KEY:VALUE (a key may contain ":" but never "=", so KEY=VALUE always splits right)."""
    key, sep, value = text.partition("=")
    if not sep:
        key, sep, value = text.partition(":")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE or KEY:VALUE")
    return key, value


def _tag_set_arg(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE (KEY= sets an empty value; --remove KEY removes)")
    return key, value


def _sha256_arg(text: str) -> str:
    digest = text.lower().removeprefix("sha256:")
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise argparse.ArgumentTypeError(f"{text!r} is not a sha256 (64 hex digits)")
    return digest


def _tags_text(tags: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(tags.items()))


def cmd_tag(args: argparse.Namespace, client: Any) -> int:
    patch: dict[str, str | None] = dict(args.tags or [])
    patch.update(dict.fromkeys(args.remove or []))
    if not patch and args.description is None:
        raise UsageError("nothing to change: give KEY=VALUE, --remove KEY or --description")
    name, ref = split_ref(args.target, default=None)
    if ref is None:
        description = {} if args.description is None else {"description": args.description or None}
        summary = client.update_artifact(name, tags=patch if patch else None, **description)
        if args.json:
            _print_json(summary.raw)
        else:
            print(
                _fields(
                    [("name", summary.name), ("description", summary.description), ("tags", _tags_text(summary.tags))]
                ),
                file=_out(),
            )
        return EXIT_OK
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
        number = int(client.get_version(name, ref).version)
    else:
        number = int(ref)
    version = client.tag_version(name, number, patch)
    if args.json:
        _print_json(version.raw)
    else:
        print(f"{version.name}@{version.version}: {_tags_text(version.tags) or '(no tags)'}", file=_out())
    return EXIT_OK


def cmd_search(args: argparse.Namespace, client: Any) -> int:
    if (args.tag is None) == (args.sha256 is None):
        raise UsageError("give exactly one of --tag KEY=VALUE or --sha256 HEX")
    if args.artifacts:
        if args.tag is None:
            raise UsageError("--artifacts searches the artifacts' own tags: give --tag")
        names = [e.name for e in client.iter_search_artifacts(args.tag)]
        if args.json:
            _print_json([{"name": n} for n in names])
        else:
            for found in names:
                print(found, file=_out())
        return EXIT_OK
    hits = list(client.iter_search_versions(sha256=args.sha256, tag=args.tag))
    if args.json:
        _print_json([h.raw for h in hits])
        return EXIT_OK
    rows = [
        [
            h.name,
            h.version,
            _when(h.created_at),
            _size(h.size),
            _short(h.sha256),
            "yes" if h.deleted else "",
            _tags_text(h.tags),
        ]
        for h in hits
    ]
    print(table(["NAME", "VERSION", "CREATED (UTC)", "SIZE", "SHA256", "DELETED", "TAGS"], rows), file=_out())
    return EXIT_OK


def _read_version(client: Any, name: str, ref: str) -> tuple[Version, Alias | None]:
    """The version NAME@REF names, and the alias read on the way when REF is one."""
    alias = None
    if ref_kind(ref) is RefKind.ALIAS:
        # The API reads versions by number, LATEST or content; an alias is read first for its target.
        alias = client.get_alias(name, ref)
        ref = str(alias.version)
    return client.get_version(name, ref), alias


def cmd_diff(args: argparse.Namespace, client: Any) -> int:
    """What changed between two versions: size, sha256, content type, metadata, tags, attestations."""
    name_a, ref_a = split_ref(args.before)
    second = f"{name_a}{args.after}" if args.after.startswith("@") else args.after
    name_b, ref_b = split_ref(second)
    before, _ = _read_version(client, name_a, str(ref_a))
    after, _ = _read_version(client, name_b, str(ref_b))
    changes = version_diff(before.raw, after.raw)
    if args.json:
        _print_json({"from": before.raw, "to": after.raw, "changes": changes})
        return EXIT_OK
    left, right = f"{name_a}@{ref_a}", f"{name_b}@{ref_b}"
    if not _OUTPUT.text:
        print(f"{left} (version {before.version}) -> {right} (version {after.version})", file=_out())
    if not changes:
        if not _OUTPUT.text:
            print("no differences in size, sha256, content type, metadata, tags or attestations", file=_out())
        return EXIT_OK

    def shown(field: str, value: Any) -> str:
        if value is None:
            return "(none)"
        if field == "size":
            return f"{_size(value)} ({value} bytes)"
        if field == "sha256" and not _OUTPUT.text:
            return _short(value)
        return value if isinstance(value, str) else json.dumps(value, sort_keys=True)

    rows = [[c["field"], shown(c["field"], c["from"]), shown(c["field"], c["to"])] for c in changes]
    print(table(["FIELD", left, right], rows), file=_out())
    return EXIT_OK


def cmd_show(args: argparse.Namespace, client: Any) -> int:
    name, ref = split_ref(args.target, default=None)
    if ref is not None:
        version, alias = _read_version(client, name, ref)
        if args.json:
            _print_json({**version.raw, "alias": alias.raw} if alias else version.raw)
            return EXIT_OK
        if alias:
            print(f"{alias.alias} -> {_target(alias.version)}{_canary(alias)} (revision {alias.revision})", file=_out())
        if version.via:
            print(f"{version.via} is a link to {version.name}", file=_out())
        canaries = _canaries(client, name) if version.aliases and isinstance(version.version, int) else {}
        print(_version_fields(version, canaries=canaries), file=_out())
        return EXIT_OK
    summary = client.get_artifact(name)
    aliases: list[Alias] = list(client.iter_aliases(name)) if summary.counts.aliases else []
    if args.json:
        _print_json({**summary.raw, "aliases": [a.raw for a in aliases]})
        return EXIT_OK
    counts = summary.counts
    deleted = f" (+{counts.deleted_versions} deleted)" if counts.deleted_versions else ""
    print(
        _fields(
            [
                ("name", summary.name),
                ("link to", summary.link),
                ("description", summary.description),
                ("tags", _tags_text(summary.tags)),
                ("newest version", summary.newest_version or "none published"),
                ("versions", f"{counts.versions}{deleted}"),
                ("aliases", counts.aliases),
                ("created", summary.created_at),
                ("updated", summary.updated_at),
            ]
        ),
        file=_out(),
    )
    print("\nLATEST (working copy)", file=_out())
    print(_indent(_version_fields(summary.latest, skip_name=True)), file=_out())
    if aliases:
        print("", file=_out())
        print(_alias_table(aliases), file=_out())
    return EXIT_OK


def _version_fields(version: Version, *, skip_name: bool = False, canaries: dict[str, Alias] | None = None) -> str:
    metadata = ", ".join(f"{k}={v}" for k, v in sorted(version.metadata.items()))
    aliases = ", ".join(_alias_mark(a, version.version, canaries or {}) for a in version.aliases)
    return _fields(
        [
            ("name", None if skip_name else version.name),
            ("version", None if skip_name else version.version),
            ("size", None if version.size is None else f"{_size(version.size)} ({version.size} bytes)"),
            ("sha256", version.sha256),
            ("content type", version.content_type),
            ("metadata", metadata),
            ("tags", _tags_text(version.tags)),
            ("attestations", _attestations_text(version.raw.get("attestations"))),
            ("created", version.created_at),
            ("updated", version.updated_at),
            ("aliases", aliases),
            ("deleted", version.deleted_at if version.deleted else None),
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


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.splitlines())


def _alias_table(aliases: Iterable[Alias]) -> str:
    rows = [
        [
            a.alias,
            _target(a.version),
            _target(a.secondary_version) if a.secondary_version is not None else "",
            "" if a.secondary_version is None else f"{a.secondary_version_weight or 0}%",
            a.revision,
            _when(a.updated_at),
            a.description or "",
        ]
        for a in aliases
    ]
    return table(["ALIAS", "VERSION", "CANARY", "WEIGHT", "REVISION", "UPDATED (UTC)", "DESCRIPTION"], rows)


def cmd_alias_set(args: argparse.Namespace, client: Any) -> int:
    if (args.canary is None) != (args.weight is None):
        raise UsageError("--canary and --weight go together")
    alias = client.set_alias(
        args.name,
        args.alias,
        args.version,
        secondary_version=args.canary,
        secondary_version_weight=args.weight,
        description=args.description,
        reason=args.reason,
        expected_version=args.expect_version,
        if_revision=args.if_revision,
        create_only=args.create_only,
    )
    return _report_alias(args, alias)


def _report_alias(args: argparse.Namespace, alias: Alias, arrow: str = "->") -> int:
    if args.json:
        _print_json(alias.raw)
        return EXIT_OK
    print(
        f"{args.name}: {alias.alias} {arrow} {_target(alias.version)}{_canary(alias)} (revision {alias.revision})",
        file=_out(),
    )
    return EXIT_OK


def cmd_alias_promote(args: argparse.Namespace, client: Any) -> int:
    promotion = client.promote(args.name, args.source, args.to, reason=args.reason)
    if args.json:
        _print_json(
            {
                **promotion.alias.raw,
                "changed": promotion.changed,
                "previous_version": promotion.previous.version if promotion.previous else None,
            }
        )
        return EXIT_OK
    alias = promotion.alias
    if not promotion.changed:
        print(f"{args.name}: {args.to} already points at version {_target(alias.version)}; nothing to do", file=_out())
        return EXIT_OK
    before = _target(promotion.previous.version) if promotion.previous else "(new)"
    print(
        f"{args.name}: promoted {args.source} to {args.to}: {before} -> {_target(alias.version)} "
        f"(revision {alias.revision})",
        file=_out(),
    )
    return EXIT_OK


def cmd_alias_rollback(args: argparse.Namespace, client: Any) -> int:
    alias = client.rollback_alias(args.name, args.alias, to_revision=args.to_revision, reason=args.reason)
    return _report_alias(args, alias, "rolled back to")


def cmd_alias_history(args: argparse.Namespace, client: Any) -> int:
    history: Iterable[AliasRevision] = client.iter_alias_history(args.name, args.alias)
    if args.limit is not None:
        history = itertools.islice(history, args.limit)
    if args.json:
        _print_json([r.raw for r in history])
        return EXIT_OK
    rows = [
        [
            r.revision,
            r.action or "",
            "(deleted)" if r.deleted else _target(r.version),
            _target(r.secondary_version) if r.secondary_version is not None else "",
            "" if r.secondary_version is None else f"{r.secondary_version_weight or 0}%",
            _when(r.updated_at),
            r.updated_by or "",
            r.reason or "",
        ]
        for r in history
    ]
    print(
        table(["REVISION", "ACTION", "VERSION", "CANARY", "WEIGHT", "UPDATED (UTC)", "BY", "REASON"], rows), file=_out()
    )
    return EXIT_OK


_EVENT_HEADERS = ("WHEN (UTC)", "EVENT", "VERSION", "ALIAS", "ID", "BY")
# While following, rows are printed as they come, so the columns have fixed widths: a time, the longest event
# type, a version number, a typical alias name, an event id (always 25 characters); BY is last and free.
_EVENT_WIDTHS = (19, 19, 7, 12, 25)


def _event_row(event: Event) -> list[str]:
    version = "" if event.version is None else _target(event.version)
    return [_when(event.at), event.type, version, event.alias or "", event.id, event.by or ""]


def _event_line(cells: Sequence[str]) -> str:
    if _OUTPUT.text:
        return "\t".join(cells)
    padded = [
        cell.rjust(w) if i == 2 else cell.ljust(w)
        for i, (cell, w) in enumerate(zip(cells, _EVENT_WIDTHS, strict=False))
    ]
    return "  ".join([*padded, cells[-1]]).rstrip()


def cmd_events(args: argparse.Namespace, client: Any) -> int:
    """The feed, oldest first; with --follow, then each new event as it comes until Ctrl-C (exit 0)."""
    if not args.follow:
        events = list(client.iter_events(args.name, after=args.after))
        if args.json:
            _print_json([e.raw for e in events])
        elif events:
            print(table(_EVENT_HEADERS, [_event_row(e) for e in events]), file=_out())
        return EXIT_OK
    if not args.json and not _OUTPUT.text:
        print(_event_line(_EVENT_HEADERS), file=_out(), flush=True)
    try:
        for event in client.follow_events(args.name, after=args.after):
            print(json.dumps(event.raw) if args.json else _event_line(_event_row(event)), file=_out(), flush=True)
    except KeyboardInterrupt:
        return EXIT_OK
    return EXIT_OK


def cmd_alias_ls(args: argparse.Namespace, client: Any) -> int:
    aliases = list(client.iter_aliases(args.name))
    if args.json:
        _print_json([a.raw for a in aliases])
        return EXIT_OK
    print(_alias_table(aliases), file=_out())
    return EXIT_OK


def cmd_alias_show(args: argparse.Namespace, client: Any) -> int:
    alias = client.get_alias(args.name, args.alias)
    if args.json:
        _print_json(alias.raw)
        return EXIT_OK
    canary = None
    if alias.secondary_version is not None:
        canary = f"{alias.secondary_version} at {alias.secondary_version_weight or 0}%"
    print(
        _fields(
            [
                ("alias", alias.alias),
                ("version", _target(alias.version)),
                ("canary", canary),
                ("revision", alias.revision),
                ("description", alias.description),
                ("updated", alias.updated_at),
                ("updated by", alias.updated_by),
                ("reason", alias.reason),
            ]
        ),
        file=_out(),
    )
    return EXIT_OK


def cmd_alias_rm(args: argparse.Namespace, client: Any) -> int:
    client.delete_alias(args.name, args.alias, if_revision=args.if_revision)
    if args.json:
        _print_json({"name": args.name, "alias": args.alias, "deleted": True})
    else:
        print(f"{args.name}: alias {args.alias} deleted", file=_out())
    return EXIT_OK


def _steps_arg(text: str) -> list[int]:
    """`10,50,90`: the canary's weights in turn (the API checks 1-99, strictly increasing)."""
    try:
        return [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of weights, e.g. 10,50") from None


def _rollout_line(rollout: Rollout) -> str:
    where = f"step {min(rollout.step, len(rollout.steps))}/{len(rollout.steps)} at {rollout.weight}%"
    if rollout.state == "running":
        return f"{rollout.state}: {where}, next step {_when(rollout.next_at)} UTC"
    cause = f" (alarm {rollout.alarm})" if rollout.alarm else ""
    return f"{rollout.state}{cause} at {_when(rollout.ended_at)} UTC"


def _report_rollout(args: argparse.Namespace, rollout: Rollout) -> int:
    if args.json:
        _print_json(rollout.raw)
        return EXIT_OK
    print(
        f"{args.name}: {args.alias} rollout of version {rollout.version} (from {_target(rollout.from_version)}): "
        f"{_rollout_line(rollout)}",
        file=_out(),
    )
    return EXIT_OK


def cmd_rollout_start(args: argparse.Namespace, client: Any) -> int:
    rollout = client.start_rollout(
        args.name,
        args.alias,
        args.version,
        steps=args.steps,
        interval_seconds=args.interval,
        alarms=args.alarm,
        reason=args.reason,
    )
    return _report_rollout(args, rollout)


def cmd_rollout_status(args: argparse.Namespace, client: Any) -> int:
    if not args.watch:
        return _report_rollout(args, client.get_rollout(args.name, args.alias))

    def changed(rollout: Rollout) -> None:
        if not args.json:  # with --json, only the final state is printed
            _report_rollout(args, rollout)

    try:
        final = client.watch_rollout(args.name, args.alias, poll_seconds=args.poll, on_change=changed)
    except KeyboardInterrupt:  # stopping to watch is how a watch ends early, as for events --follow
        return EXIT_OK
    if args.json:
        _print_json(final.raw)
    return EXIT_OK


def cmd_rollout_abort(args: argparse.Namespace, client: Any) -> int:
    return _report_rollout(args, client.abort_rollout(args.name, args.alias))


def cmd_delete(args: argparse.Namespace, client: Any) -> int:
    version = client.delete_version(args.name, args.version)
    return _report_version(args, version, "deleted (restore brings it back)")


def cmd_restore(args: argparse.Namespace, client: Any) -> int:
    version = client.restore_version(args.name, args.version)
    return _report_version(args, version, "restored")


def _report_version(args: argparse.Namespace, version: Version, what: str) -> int:
    if args.json:
        _print_json(version.raw)
    else:
        print(f"{args.name}: version {version.version} {what}", file=_out())
    return EXIT_OK


def cmd_prune(args: argparse.Namespace, client: Any) -> int:
    result = client.prune(
        args.name, keep_last=args.keep_last, older_than_days=args.older_than_days, dry_run=args.dry_run
    )
    if args.json:
        _print_json(result.raw)
        return EXIT_OK
    verb = "would delete" if result.dry_run else "deleted"
    if result.deleted:
        listed = ", ".join(str(v) for v in sorted(result.deleted))
        print(f"{args.name}: {verb} version{'s' if len(result.deleted) > 1 else ''} {listed}", file=_out())
    else:
        print(f"{args.name}: nothing to prune", file=_out())
    for skipped in result.skipped:
        aliases = ", ".join(skipped.get("aliases") or [])
        print(f"{args.name}: kept version {skipped.get('version')}: alias {aliases} points at it", file=_out())
    return EXIT_OK


def cmd_purge(args: argparse.Namespace, client: Any) -> int:
    if not args.yes:
        if not sys.stdin.isatty():
            raise UsageError("purge deletes every version, alias and blob; pass --yes to confirm without a terminal")
        if not args.force:
            # Read first, so that a purge the API would refuse fails before anyone types the name.
            summary: ArtifactSummary = client.get_artifact(args.name)
            live = [a.alias for a in client.iter_aliases(args.name)] if summary.counts.aliases else []
            if live:
                raise ConflictError(
                    f"artifact {args.name!r} has aliases ({', '.join(live)}); delete them or purge with force=true",
                    code="ConflictError",
                    status=409,
                    details={"aliases": live},
                )
        sys.stderr.write(f"Purge {args.name}: every version, alias and blob, permanently.\nType the name to confirm: ")
        sys.stderr.flush()
        if sys.stdin.readline().strip() != args.name:
            raise UsageError("not confirmed; nothing purged")
    client.purge(args.name, force=args.force)
    if args.json:
        _print_json({"name": args.name, "purged": True})
    else:
        print(f"{args.name}: purged", file=_out())
    return EXIT_OK


def _arrow(entry: ListEntry) -> str:
    """How a listing shows a link: `name -> target`."""
    return f" -> {entry.link}" if entry.link else ""


def cmd_link(args: argparse.Namespace, client: Any) -> int:
    if args.delete:
        if args.target is not None:
            raise UsageError("link --delete takes only NAME")
        return cmd_unlink(args, client)
    if args.target is None:
        raise UsageError("link takes NAME TARGET (or --delete NAME)")
    link = client.link(args.name, args.target)
    if args.json:
        _print_json(link.raw)
    else:
        print(f"{link.name} -> {link.link}", file=_out())
    return EXIT_OK


def cmd_unlink(args: argparse.Namespace, client: Any) -> int:
    client.unlink(args.name)
    if args.json:
        _print_json({"name": args.name, "unlinked": True})
    else:
        print(f"{args.name}: link removed", file=_out())
    return EXIT_OK


def cmd_config_set_endpoint(args: argparse.Namespace, client: Any) -> int:
    settings = config.load()
    name, url = config.check_name(args.endpoint_name), config.check_url(args.url)
    settings.endpoints[name] = config.Endpoint(name, url, args.region, args.profile)
    path = config.save(settings)
    if args.json:
        _print_json({"name": name, "url": url, "region": args.region, "profile": args.profile, "file": str(path)})
    else:
        print(f"endpoint {name} -> {url} saved in {path}", file=_out())
        if settings.current != name:
            print(f"make it the default with: arca config use {name}", file=_out())
    return EXIT_OK


def cmd_config_use(args: argparse.Namespace, client: Any) -> int:
    settings = config.load()
    name = args.endpoint_name
    if name not in settings.endpoints:
        known = ", ".join(sorted(settings.endpoints)) or "none yet"
        raise ConfigError(f"no endpoint named {name!r} (configured: {known}); add it with arca config set-endpoint")
    settings.current = name
    config.save(settings)
    if args.json:
        _print_json({"current": name, "url": settings.endpoints[name].url})
    else:
        print(
            f"arca now talks to {name} ({settings.endpoints[name].url}) unless --endpoint or ARCA_ENDPOINT "
            "says otherwise",
            file=_out(),
        )
    return EXIT_OK


def cmd_config_remove(args: argparse.Namespace, client: Any) -> int:
    settings = config.load()
    name = args.endpoint_name
    if settings.endpoints.pop(name, None) is None:
        raise ConfigError(f"no endpoint named {name!r}")
    if settings.current == name:
        settings.current = None
    config.save(settings)
    if args.json:
        _print_json({"name": name, "removed": True})
    else:
        print(f"endpoint {name} removed", file=_out())
    return EXIT_OK


def cmd_config_list(args: argparse.Namespace, client: Any) -> int:
    settings = config.load()
    target = config.resolve_endpoint(args.endpoint)
    if args.json:
        _print_json(
            {
                "file": str(config.config_path()),
                "current": settings.current,
                "endpoints": {
                    n: {"url": e.url, "region": e.region, "profile": e.profile} for n, e in settings.endpoints.items()
                },
                "in_effect": {"url": target.url, "source": target.source, "name": target.name},
            }
        )
        return EXIT_OK
    rows = [
        ["*" if n == settings.current else "", n, e.url, e.region or "", e.profile or ""]
        for n, e in sorted(settings.endpoints.items())
    ]
    if rows:
        print(table(["", "NAME", "URL", "REGION", "PROFILE"], rows), file=_out())
    else:
        print(f"no endpoints configured in {config.config_path()}", file=_out())
    named = f" ({target.name})" if target.name else ""
    print(f"in effect: {target.url}{named}, from {_SOURCES[target.source]}", file=_out())
    return EXIT_OK


_SOURCES = {
    "--endpoint": "--endpoint",
    config.ENDPOINT_ENV: f"${config.ENDPOINT_ENV}",
    "config": "the config file's current endpoint",
    "default": "the default (the local server of make local)",
}


def cmd_completion(args: argparse.Namespace, client: Any) -> int:
    print(completion_script(build_parser(), args.shell), file=_out(), end="")
    return EXIT_OK


# ---- parser -------------------------------------------------------------------------------------


_REF_HELP = "REF: a version number, LATEST, an alias or sha256:<hex>"
_COMPLETION_HELP = """\
install:
  bash  echo 'eval "$(arca completion bash)"' >> ~/.bashrc
  zsh   arca completion zsh > "${fpath[1]}/_arca"   (or: eval "$(arca completion zsh)" in ~/.zshrc)
  fish  arca completion fish > ~/.config/fish/completions/arca.fish
"""
# Commands that never talk to the API: no client is made for them.
_OFFLINE = frozenset({cmd_config_set_endpoint, cmd_config_use, cmd_config_remove, cmd_config_list, cmd_completion})


def _global_options(*, with_output: bool) -> _Parser:
    """The options every command takes, before or after its name."""
    common = _Parser(add_help=False)
    options = common.add_argument_group("global options")
    options.add_argument(
        "--endpoint",
        default=argparse.SUPPRESS,
        help="API endpoint: a URL or the name of a configured endpoint (default: $ARCA_ENDPOINT, then the config "
        f"file's current endpoint, then {DEFAULT_ENDPOINT})",
    )
    options.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="machine-readable JSON output")
    if with_output:
        options.add_argument(
            "--output",
            choices=OUTPUTS,
            default=argparse.SUPPRESS,
            help="json (the same as --json), table (the default: aligned, with headers) or text (tab-separated "
            "cells, no headers: for cut, awk and read)",
        )
    options.add_argument(
        "-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help="print nothing on success (errors still)"
    )
    options.add_argument(
        "--sign",
        action=argparse.BooleanOptionalAction,
        default=argparse.SUPPRESS,
        help="SigV4-sign requests (default: unless the endpoint is localhost; ARCA_SIGN=1/0)",
    )
    options.add_argument(
        "--region",
        default=argparse.SUPPRESS,
        help="region to sign for (default: the configured endpoint's, else from its host name or the AWS config)",
    )
    options.add_argument(
        "--profile", default=argparse.SUPPRESS, help="AWS profile for credentials (default: the configured endpoint's)"
    )
    options.add_argument(
        "--local-user",
        default=argparse.SUPPRESS,
        help="the user a local server records as the caller (default: $ARCA_LOCAL_USER, else the server's `local`)",
    )
    options.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=argparse.SUPPRESS,
        help="progress bar on stderr (default: when stderr is a terminal)",
    )
    options.add_argument(
        "-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help="log retries and request ids"
    )

    return common


def build_parser() -> argparse.ArgumentParser:
    # Global options work before or after the command: each is declared on the root and on every
    # command with default=SUPPRESS, so the command's copy never overwrites a value given at the root.
    common = _global_options(with_output=True)
    # download's -o/--output is its destination, as curl's -o (before the command, --output sets the format)
    without_output = _global_options(with_output=False)

    parser = _Parser(
        prog="arca",
        description="Arca: publish, alias, resolve and download versioned artifacts.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"arca {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def command(
        group: Any, name: str, handler: Callable[[argparse.Namespace, Any], int], help_text: str, **extra: Any
    ) -> argparse.ArgumentParser:
        sub: argparse.ArgumentParser = group.add_parser(
            name,
            help=help_text,
            description=help_text,
            parents=extra.pop("parents", [common]),
            epilog=EXIT_CODES,
            formatter_class=argparse.RawDescriptionHelpFormatter,
            **extra,
        )
        sub.set_defaults(handler=handler, parser=sub)
        return sub

    p = command(commands, "publish", cmd_publish, "upload FILE (skipped when stored already) and publish a version")
    p.add_argument("name", metavar="NAME")
    p.add_argument("file", metavar="FILE", help="the file to publish; - reads stdin")
    p.add_argument("--alias", help="also point this alias at the published version")
    p.add_argument("--reason", help="reason recorded in the alias history (with --alias)")
    p.add_argument("--metadata", metavar="KEY=VALUE", type=_metadata_arg, action="append", help="repeatable")
    p.add_argument(
        "--filename",
        help="file name recorded for downloads (default: FILE's name; - has none); also guesses the content type",
    )
    p.add_argument("--content-type", help="default: guessed from the file name, else application/octet-stream")
    p.add_argument("--force", action="store_true", help="publish a new version even if the newest has this content")

    p = command(
        commands,
        "download",
        cmd_download,
        "download NAME@REF (default LATEST) and verify its sha256",
        parents=[without_output],
    )
    p.add_argument("target", metavar="NAME[@REF]", help=_REF_HELP)
    p.add_argument(
        "-o",
        "--output",
        dest="destination",
        help="file or directory (default: the file name given at publish, else the name's last segment); - for stdout",
    )
    p.add_argument(
        "-f", "--force", "--overwrite", action="store_true", help="replace the file if it exists (default: refuse)"
    )
    p.add_argument("--key", help="routing key: the same key always gets the same side of a canary")

    p = command(commands, "resolve", cmd_resolve, "which version NAME@REF serves (default LATEST), and a download URL")
    p.add_argument("target", metavar="NAME[@REF]", help=_REF_HELP)
    p.add_argument("legacy_ref", nargs="?", help=argparse.SUPPRESS)  # `resolve NAME REF`: answered with the fix
    p.add_argument("--key", help="routing key for a canary alias")
    p.add_argument(
        "--at", metavar="TIME", type=_time_arg, help="resolve the alias as it stood then (ISO 8601; UTC unless a zone)"
    )

    p = command(commands, "ls", cmd_ls, "list artifacts and prefixes under PREFIX")
    p.add_argument("prefix", metavar="PREFIX", nargs="?", default="")
    p.add_argument("-R", "--recursive", action="store_true", help="descend into prefixes, drawn as a tree")

    p = command(commands, "versions", cmd_versions, "list the versions of NAME, newest first")
    p.add_argument("name", metavar="NAME")
    p.add_argument("--all", action="store_true", help="include deleted versions")
    p.add_argument("--asc", action="store_true", help="oldest first")
    p.add_argument("--limit", type=_limit_arg, help="show at most this many (1 or more)")
    p.add_argument(
        "--tag",
        metavar="KEY=VALUE",
        type=_tag_filter_arg,
        action="append",
        help="only versions with this tag; repeatable (AND)",
    )
    p.add_argument("--sha256", metavar="HEX", type=_sha256_arg, help="only versions with this content")
    p.add_argument("--since", metavar="TIME", type=_time_arg, help="only versions created after TIME (ISO 8601)")
    p.add_argument("--until", metavar="TIME", type=_time_arg, help="only versions created before TIME (ISO 8601)")

    p = command(commands, "show", cmd_show, "summary of NAME, or one version: NAME@REF")
    p.add_argument("target", metavar="NAME[@REF]", help=_REF_HELP)

    p = command(commands, "diff", cmd_diff, "what changed between two versions: NAME@A NAME@B (or NAME@A @B)")
    p.add_argument("before", metavar="NAME@A", help=_REF_HELP)
    p.add_argument("after", metavar="NAME@B", help="the other version; @B for the same name")

    p = command(commands, "delete", cmd_delete, "soft-delete a version (refused while an alias points at it)")
    p.add_argument("name", metavar="NAME")
    p.add_argument("version", metavar="VERSION", type=_version_arg)

    p = command(commands, "restore", cmd_restore, "restore a soft-deleted version")
    p.add_argument("name", metavar="NAME")
    p.add_argument("version", metavar="VERSION", type=_version_arg)

    p = command(commands, "prune", cmd_prune, "soft-delete old versions, never aliased ones")
    p.add_argument("name", metavar="NAME")
    p.add_argument("--keep-last", type=_count_arg, required=True, metavar="N", help="never prune the newest N")
    p.add_argument("--older-than-days", type=_count_arg, metavar="D", help="only versions older than D days")
    p.add_argument("--dry-run", action="store_true", help="report what would be deleted")

    p = command(commands, "purge", cmd_purge, "delete NAME entirely: versions, aliases, content")
    p.add_argument("name", metavar="NAME")
    p.add_argument("--force", action="store_true", help="purge even while aliases exist")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")

    p = command(commands, "link", cmd_link, "make NAME a link to the artifact TARGET (reads follow it; writes refused)")
    p.add_argument("name", metavar="NAME")
    p.add_argument("target", metavar="TARGET", nargs="?")
    p.add_argument("--delete", action="store_true", help="remove the link NAME (never its target)")

    p = command(commands, "unlink", cmd_unlink, "remove the link NAME (never its target)")
    p.add_argument("name", metavar="NAME")

    p = command(
        commands, "tag", cmd_tag, "set or remove tags of an artifact (NAME) or a version (NAME@VERSION); merged"
    )
    p.add_argument("target", metavar="NAME[@VERSION]", help="VERSION: a number, an alias or sha256:<hex>")
    p.add_argument("tags", metavar="KEY=VALUE", type=_tag_set_arg, nargs="*", help="set KEY (KEY= sets it empty)")
    p.add_argument("--remove", metavar="KEY", action="append", help="remove KEY; repeatable")
    p.add_argument("--description", help="the artifact's description (NAME only); empty clears it")

    p = command(commands, "search", cmd_search, "find versions across the registry by tag or content")
    p.add_argument("--tag", metavar="KEY=VALUE", type=_tag_filter_arg, help="versions (or artifacts) with this tag")
    p.add_argument("--sha256", metavar="HEX", type=_sha256_arg, help="versions holding this content")
    p.add_argument("--artifacts", action="store_true", help="search the artifacts' own tags instead (with --tag)")

    p = command(commands, "events", cmd_events, "the events of NAME, oldest first (--follow: then wait for more)")
    p.add_argument("name", metavar="NAME")
    p.add_argument("--after", metavar="ID", help="only the events after this event id")
    p.add_argument(
        "-f", "--follow", action="store_true", help="keep polling for new events (with backoff) until Ctrl-C"
    )

    alias_parser = commands.add_parser("alias", help="manage aliases", description="manage aliases", parents=[common])
    aliases = alias_parser.add_subparsers(dest="alias_command", metavar="ALIAS_COMMAND", required=True)

    p = command(aliases, "set", cmd_alias_set, "point ALIAS at VERSION, optionally with a canary")
    p.add_argument("name", metavar="NAME")
    p.add_argument("alias", metavar="ALIAS")
    p.add_argument("version", metavar="VERSION", type=_target_arg, help="version number or LATEST")
    p.add_argument("--canary", type=_target_arg, metavar="V", help="secondary version")
    p.add_argument("--weight", type=_weight_arg, metavar="W", help="percentage of traffic to the canary (0-99)")
    p.add_argument("--description")
    p.add_argument("--reason", help="recorded in the alias history")
    p.add_argument("--expect-version", type=_target_arg, metavar="V", help="only if the alias points at V now")
    p.add_argument("--if-revision", type=_count_arg, metavar="N", help="only if the alias is at revision N now")
    p.add_argument("--create-only", action="store_true", help="only if the alias does not exist yet")

    p = command(aliases, "promote", cmd_alias_promote, "point --to at the version --from points at")
    p.add_argument("name", metavar="NAME")
    p.add_argument("--from", dest="source", required=True, metavar="ALIAS")
    p.add_argument("--to", required=True, metavar="ALIAS")
    p.add_argument("--reason")

    p = command(aliases, "rollback", cmd_alias_rollback, "back to the previous revision (or --to-revision N)")
    p.add_argument("name", metavar="NAME")
    p.add_argument("alias", metavar="ALIAS")
    p.add_argument("--to-revision", type=_count_arg, metavar="N")
    p.add_argument("--reason", help="recorded in the alias history")

    p = command(aliases, "history", cmd_alias_history, "revisions of ALIAS, newest first")
    p.add_argument("name", metavar="NAME")
    p.add_argument("alias", metavar="ALIAS")
    p.add_argument("--limit", type=_limit_arg, help="show at most this many (1 or more)")

    p = command(aliases, "ls", cmd_alias_ls, "the aliases of NAME")
    p.add_argument("name", metavar="NAME")

    p = command(aliases, "show", cmd_alias_show, "one alias")
    p.add_argument("name", metavar="NAME")
    p.add_argument("alias", metavar="ALIAS")

    p = command(aliases, "rm", cmd_alias_rm, "delete ALIAS (kept in its history)")
    p.add_argument("name", metavar="NAME")
    p.add_argument("alias", metavar="ALIAS")
    p.add_argument("--if-revision", type=_count_arg, metavar="N", help="only if the alias is at revision N now")

    retention_commands.register(commands, command, common)

    rollout_parser = commands.add_parser(
        "rollout",
        help="progressive rollouts of an alias",
        description="progressive rollouts: a canary moved through weights, promoted, or rolled back on an alarm",
        parents=[common],
    )
    rollouts = rollout_parser.add_subparsers(dest="rollout_command", metavar="ROLLOUT_COMMAND", required=True)

    p = command(
        rollouts, "start", cmd_rollout_start, "VERSION as ALIAS's canary at each weight of --steps, then its primary"
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument("alias", metavar="ALIAS")
    p.add_argument("version", metavar="VERSION", type=_version_arg)
    p.add_argument("--steps", type=_steps_arg, required=True, metavar="W1,W2,...", help="weights in %%, e.g. 10,50")
    p.add_argument("--interval", type=_count_arg, required=True, metavar="SECONDS", help="between steps (1-86400)")
    p.add_argument(
        "--alarm", action="append", metavar="NAME", help="CloudWatch alarm read before each step (repeatable)"
    )
    p.add_argument("--reason", help="recorded with the rollout")

    p = command(rollouts, "status", cmd_rollout_status, "the state of ALIAS's latest rollout")
    p.add_argument("name", metavar="NAME")
    p.add_argument("alias", metavar="ALIAS")
    p.add_argument("--watch", action="store_true", help="follow each step until the rollout ends")
    p.add_argument("--poll", type=float, default=2.0, metavar="SECONDS", help="with --watch (default 2)")

    p = command(rollouts, "abort", cmd_rollout_abort, "abort the running rollout: ALIAS keeps its primary")
    p.add_argument("name", metavar="NAME")
    p.add_argument("alias", metavar="ALIAS")

    p = command(
        commands, "console", console.cmd_console, "the web console on 127.0.0.1, forwarding (signed) to the API"
    )
    console.add_arguments(p)

    config_parser = commands.add_parser(
        "config",
        help="named endpoints",
        description=f"named endpoints, kept in {config.config_path()}",
        parents=[common],
    )
    settings = config_parser.add_subparsers(dest="config_command", metavar="CONFIG_COMMAND", required=True)
    p = command(
        settings,
        "set-endpoint",
        cmd_config_set_endpoint,
        "add or replace the endpoint NAME (with --region and --profile to sign for it)",
    )
    p.add_argument("endpoint_name", metavar="NAME")
    p.add_argument("url", metavar="URL")
    p = command(settings, "use", cmd_config_use, "make NAME the endpoint used unless --endpoint or ARCA_ENDPOINT")
    p.add_argument("endpoint_name", metavar="NAME")
    p = command(settings, "remove", cmd_config_remove, "forget the endpoint NAME")
    p.add_argument("endpoint_name", metavar="NAME")
    command(settings, "list", cmd_config_list, "the configured endpoints, and which endpoint is in effect")

    p = command(commands, "completion", cmd_completion, "print a shell completion script")
    p.add_argument("shell", metavar="SHELL", choices=SHELLS, help=" or ".join(SHELLS))
    p.epilog = _COMPLETION_HELP
    return parser


OUTPUTS = ("json", "table", "text")
_GLOBAL_DEFAULTS: dict[str, Any] = {
    "endpoint": None,
    "json": False,
    "output": None,
    "quiet": False,
    "sign": None,
    "region": None,
    "profile": None,
    "local_user": None,
    "progress": None,
    "verbose": False,
}


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """Parse `argv`; raises UsageError (exit 1). Global options absent everywhere get their defaults."""
    parser = build_parser()
    args, extra = parser.parse_known_args(list(argv))
    if extra:
        # argparse ends a `*` positional at the first option: `tag NAME --remove K A=B` leaves A=B over.
        if getattr(args, "command", None) == "tag" and all(e.partition("=")[0] and "=" in e for e in extra):
            args.tags = [*(args.tags or []), *(_tag_set_arg(e) for e in extra)]
        else:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
    for key, value in _GLOBAL_DEFAULTS.items():
        if not hasattr(args, key):
            setattr(args, key, value)
    if args.output == "json":
        args.json = True
    elif args.output is not None and args.json:
        parser.error(f"--json and --output {args.output} disagree: give one")
    return args


def default_client(args: argparse.Namespace) -> Client:
    return Client(
        endpoint=args.endpoint, sign=args.sign, region=args.region, profile=args.profile, local_user=args.local_user
    )


def exit_code(error: ArcaError) -> int:
    """The exit code of an error, as EXIT_TABLE states it: by HTTP status (the error's class)."""
    if isinstance(error, ValidationError | ConfigError):
        return EXIT_USAGE
    if isinstance(error, NotFoundError):
        return EXIT_NOT_FOUND
    if isinstance(error, ConflictError | PreconditionFailedError):
        return EXIT_CONFLICT
    return EXIT_ERROR


# The API's messages name request fields and headers; the CLI's name the flags that set them. Tokens of the
# first table cannot be prose, so they are replaced wherever they appear; the plain words of the second only
# as the leading "field:" of a validation message. Either only where the command has that flag.
_API_TOKENS: tuple[tuple[str, str], ...] = (
    ("If-None-Match: *", "--create-only"),
    ("If-None-Match", "--create-only"),
    ("If-Match", "--if-revision"),
    ("force=true", "--force"),
    ("secondary_version_weight", "--weight"),
    ("secondary_version", "--canary"),
    ("expected_version", "--expect-version"),
    ("to_revision", "--to-revision"),
    ("keep_last", "--keep-last"),
    ("older_than_days", "--older-than-days"),
    ("dry_run", "--dry-run"),
    ("routing_key", "--key"),
    ("content_type", "--content-type"),
    ("region=", "--region"),
)
_API_FIELDS = {"metadata": "--metadata", "description": "--description", "reason": "--reason", "at": "--at"}


def in_flags(message: str, flags: Iterable[str]) -> str:
    """`message` with the API's field names replaced by the command's flags (see _API_TOKENS)."""
    available = set(flags)
    for token, flag in _API_TOKENS:
        if flag in available:
            message = re.sub(rf"(?<![\w-]){re.escape(token)}(?![\w-])", flag, message)
    leading = re.match(r"[a-z_]+(?=[:.])", message)
    if leading and _API_FIELDS.get(leading.group()) in available:
        message = _API_FIELDS[leading.group()] + message[leading.end() :]
    return message


def _flags(args: argparse.Namespace | None) -> list[str]:
    parser = getattr(args, "parser", None)
    if parser is None:
        return []
    return [flag for action in parser._actions for flag in action.option_strings]


def _fail(as_json: bool, code: str, message: str, error: ArcaError | None = None, *, verbose: bool = False) -> None:
    """The error on stderr: `arca: error: CODE: MESSAGE`, or with --json the API's error shape on one line."""
    request_id = error.request_id if error else None
    if as_json:
        # `status` is the HTTP status of the API's answer; null for an error of the client's own (no answer,
        # bad arguments, a local file).
        body: dict[str, Any] = {"code": code, "message": message, "request_id": request_id, "status": None}
        if error is not None:
            body.update({"status": error.status, **error.details})
        print(json.dumps({"error": body}), file=sys.stderr)
        return
    print(f"arca: error: {code}: {message}", file=sys.stderr)
    if verbose and request_id:
        print(f"arca: request id {request_id}", file=sys.stderr)


def main(argv: Sequence[str] | None = None, *, client_factory: ClientFactory = default_client) -> int:
    """Run one command; returns the exit code (see EXIT_TABLE)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return _main(argv, client_factory)
    except BrokenPipeError:
        # The reader went away (`arca events NAME | head -1`): it has what it wanted. Nothing more is written,
        # and stdout is pointed at /dev/null so that the interpreter's final flush cannot fail either.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    finally:
        _OUTPUT.text = _OUTPUT.quiet = False


def _main(argv: list[str], client_factory: ClientFactory) -> int:
    try:
        args = parse_args(argv)
    except UsageError as error:
        as_json = "--json" in argv or "--output=json" in argv or _after(argv, "--output") == "json"
        if not as_json:
            sys.stderr.write(error.args[1] if len(error.args) > 1 else "")
        _fail(as_json, "UsageError", str(error.args[0]))
        return EXIT_USAGE
    except SystemExit as done:  # --help and --version
        return done.code if isinstance(done.code, int) else EXIT_OK
    _OUTPUT.text = args.output == "text"
    _OUTPUT.quiet = args.quiet
    if args.verbose:
        logging.basicConfig(level=logging.INFO, format="arca: %(message)s", stream=sys.stderr)
    flags = _flags(args)
    try:
        client = None if args.handler in _OFFLINE else client_factory(args)
        try:
            code = int(args.handler(args, client))
            sys.stdout.flush()  # inside the try: a closed pipe shows here, not at exit
            return code
        except NotFoundError as error:
            _suggest_alias(client, args, error)
            raise
        finally:
            close = getattr(client, "close", None)
            if close:
                close()
    except BrokenPipeError:
        raise
    except UsageError as error:
        _fail(args.json, "UsageError", in_flags(str(error.args[0]), flags))
        return EXIT_USAGE
    except ArcaError as error:
        _fail(args.json, error.code, in_flags(error.message, flags), error, verbose=args.verbose)
        return exit_code(error)
    except FileNotFoundError as error:
        _fail(args.json, "FileNotFound", f"{error.filename}: {error.strerror}")
        return EXIT_NOT_FOUND
    except FileExistsError as error:
        hint = "; --force overwrites it" if "--force" in flags else ""
        _fail(args.json, "FileExists", f"{error.filename} exists{hint}")
        return EXIT_CONFLICT
    except OSError as error:
        _fail(args.json, type(error).__name__, str(error))
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("", file=sys.stderr)
        _fail(args.json, "Interrupted", "interrupted")
        return EXIT_INTERRUPTED


def _after(argv: list[str], flag: str) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv[:-1] else None


# Commands whose NAME and ALIAS arguments name an alias (a NotFoundError there may be a misspelt alias).
_ALIAS_ARGUMENT_COMMANDS = ("alias_show", "alias_history", "alias_rollback", "alias_rm", "rollout_status")


def _suggest_alias(client: Any, args: argparse.Namespace, error: NotFoundError) -> None:
    """Add "did you mean NAME@prod?" to a not-found alias, when one of the artifact's aliases is close."""
    if client is None or "alias" not in error.message:
        return
    name, alias, shown = None, None, "{}"
    target = getattr(args, "target", None)
    if isinstance(target, str) and "@" in target:
        with contextlib.suppress(UsageError):
            name, ref = split_ref(target)
            if ref is not None and ref_kind(ref) is RefKind.ALIAS:
                alias, shown = ref, f"{name}@{{}}"
    elif args.handler.__name__.removeprefix("cmd_") in _ALIAS_ARGUMENT_COMMANDS:
        name, alias = getattr(args, "name", None), getattr(args, "alias", None)
    if not name or not alias:
        return
    try:
        known = [a.alias for a in client.iter_aliases(name)]
    except ArcaError:
        return
    close = difflib.get_close_matches(alias, known, n=3, cutoff=0.6)
    if close:
        error.message += f"; did you mean {' or '.join(shown.format(c) for c in close)}?"


if __name__ == "__main__":
    sys.exit(main())
