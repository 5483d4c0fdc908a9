"""The `arca` command: argparse over the SDK. `main(argv)` returns the exit code (see EXIT_CODES)."""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import mimetypes
import sys
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any, NoReturn, TextIO

from arca_client import console
from arca_client._version import __version__
from arca_client.errors import ArcaError, ConflictError, NotFoundError, PreconditionFailedError, ValidationError
from arca_client.models import LATEST, Alias, AliasRevision, ListEntry, Version
from arca_client.progress import ProgressBar, human_size
from arca_client.sdk import DEFAULT_ENDPOINT, Client

EXIT_OK = 0
EXIT_USAGE = 1
EXIT_NOT_FOUND = 2
EXIT_CONFLICT = 3
EXIT_ERROR = 4
EXIT_INTERRUPTED = 130

EXIT_CODES = """\
exit codes:
  0    success
  1    usage: bad arguments or options, including input the API refuses as invalid (HTTP 400)
  2    not found: no such artifact, version, alias or file (HTTP 404)
  3    conflict or failed precondition: e.g. a version pinned by an alias, an alias moved concurrently
       (HTTP 409, 412)
  4    any other error: network, credentials, throttling, server error, checksum mismatch
  130  interrupted

environment:
  ARCA_ENDPOINT  API endpoint (default http://127.0.0.1:3000, the local server of `make local`)
  ARCA_SIGN      1/0: force SigV4 signing on or off (default: sign unless the endpoint is localhost)
  AWS_*          the standard AWS credential chain and region, used when signing
"""

ClientFactory = Callable[[argparse.Namespace], Any]


class UsageError(Exception):
    """Bad command-line input; exit code 1."""


class _Parser(argparse.ArgumentParser):
    """Usage errors raise instead of exiting with argparse's code 2 (which means "not found" here)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message, self.format_usage())


# ---- output helpers -----------------------------------------------------------------------------


def _out() -> TextIO:
    # Looked up at each call so that redirection (pytest's capsys, contextlib.redirect_stdout) applies.
    return sys.stdout


def _print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, default=str), file=_out())


def table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """Columns aligned; a column whose values are all numbers is right-aligned."""
    text = [[("" if cell is None else str(cell)) for cell in row] for row in rows]
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


def split_ref(text: str, default: str = LATEST) -> tuple[str, str]:
    """NAME[@REF]: names never contain "@", so the last one separates the ref."""
    name, sep, ref = text.rpartition("@")
    if not sep:
        return text, default
    if not name or not ref:
        raise UsageError(f"{text!r} is not NAME@REF")
    return name, ref.upper() if ref.upper() == LATEST else ref


# ---- commands -----------------------------------------------------------------------------------


def _progress(args: argparse.Namespace) -> ProgressBar | None:
    enabled = args.progress if args.progress is not None else sys.stderr.isatty()
    return ProgressBar(sys.stderr) if enabled else None


def _content_type(path: str) -> str | None:
    """A guess from the extension; None (the server's application/octet-stream) for unknown or compressed."""
    guessed, encoding = mimetypes.guess_type(path, strict=True)
    return guessed if encoding is None else None


def cmd_publish(args: argparse.Namespace, client: Any) -> int:
    content_type = args.content_type or (None if args.file == "-" else _content_type(args.file))
    metadata = dict(args.metadata) if args.metadata else None
    bar = _progress(args)
    try:
        source: Any = sys.stdin.buffer if args.file == "-" else args.file
        published = client.publish(
            args.name, source, content_type=content_type, metadata=metadata, force=args.force, progress=bar
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
    to_stdout = args.output == "-"
    dest: Any = sys.stdout.buffer if to_stdout else args.output
    bar = _progress(args)
    try:
        downloaded = client.download(name, ref, dest, routing_key=args.key, progress=bar)
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
    resolution = client.resolve(args.name, args.ref, routing_key=args.key, at=args.at)
    if args.json:
        _print_json(resolution.raw)
        return EXIT_OK
    print(
        _fields(
            [
                ("name", resolution.name),
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
            lines.append(f"{indent}{corner if last else tee}{entry.name[len(parent.name) :]}")
            if entry.is_prefix:
                tree(entry, indent + ("    " if last else pipe))

    for entry in top:
        lines.append(entry.name)
        if args.recursive and entry.is_prefix:
            tree(entry, "")
    if lines:
        print("\n".join(lines), file=_out())
    return EXIT_OK


def cmd_versions(args: argparse.Namespace, client: Any) -> int:
    versions: Iterable[Version] = client.iter_versions(
        args.name, order="asc" if args.asc else "desc", include_deleted=args.all
    )
    if args.limit:
        versions = itertools.islice(versions, args.limit)
    if args.json:
        _print_json([v.raw for v in versions])
        return EXIT_OK
    headers = ["VERSION", "CREATED (UTC)", "SIZE", "SHA256", "ALIASES"]
    if args.all:
        headers.append("DELETED")
    rows = []
    for v in versions:
        row: list[object] = [v.version, _when(v.created_at), _size(v.size), _short(v.sha256), ",".join(v.aliases)]
        if args.all:
            row.append(_when(v.deleted_at) or ("yes" if v.deleted else ""))
        rows.append(row)
    print(table(headers, rows), file=_out())
    return EXIT_OK


def cmd_show(args: argparse.Namespace, client: Any) -> int:
    name, ref = split_ref(args.target, default="")
    if ref:
        version = client.get_version(name, ref)
        if args.json:
            _print_json(version.raw)
            return EXIT_OK
        print(_version_fields(version), file=_out())
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


def _version_fields(version: Version, *, skip_name: bool = False) -> str:
    metadata = ", ".join(f"{k}={v}" for k, v in sorted(version.metadata.items()))
    return _fields(
        [
            ("name", None if skip_name else version.name),
            ("version", None if skip_name else version.version),
            ("size", None if version.size is None else f"{_size(version.size)} ({version.size} bytes)"),
            ("sha256", version.sha256),
            ("content type", version.content_type),
            ("metadata", metadata),
            ("created", version.created_at),
            ("updated", version.updated_at),
            ("aliases", ", ".join(version.aliases)),
            ("deleted", version.deleted_at if version.deleted else None),
        ]
    )


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
    if args.limit:
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


# ---- parser -------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    # Global options work before or after the command: each is declared on the root and on every
    # command with default=SUPPRESS, so the command's copy never overwrites a value given at the root.
    common = _Parser(add_help=False)
    options = common.add_argument_group("global options")
    options.add_argument(
        "--endpoint", default=argparse.SUPPRESS, help=f"API endpoint (default $ARCA_ENDPOINT or {DEFAULT_ENDPOINT})"
    )
    options.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="machine-readable JSON output")
    options.add_argument(
        "--sign",
        action=argparse.BooleanOptionalAction,
        default=argparse.SUPPRESS,
        help="SigV4-sign requests (default: unless the endpoint is localhost; ARCA_SIGN=1/0)",
    )
    options.add_argument(
        "--region", default=argparse.SUPPRESS, help="region to sign for (default: from the endpoint or AWS config)"
    )
    options.add_argument("--profile", default=argparse.SUPPRESS, help="AWS profile for credentials")
    options.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=argparse.SUPPRESS,
        help="progress bar on stderr (default: when stderr is a terminal)",
    )
    options.add_argument(
        "-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help="log retries and request ids"
    )

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
        group: Any, name: str, handler: Callable[[argparse.Namespace, Any], int], help_text: str
    ) -> argparse.ArgumentParser:
        sub: argparse.ArgumentParser = group.add_parser(
            name,
            help=help_text,
            description=help_text,
            parents=[common],
            epilog=EXIT_CODES,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        sub.set_defaults(handler=handler)
        return sub

    p = command(commands, "publish", cmd_publish, "upload FILE (skipped when stored already) and publish a version")
    p.add_argument("name", metavar="NAME")
    p.add_argument("file", metavar="FILE", help="the file to publish; - reads stdin")
    p.add_argument("--alias", help="also point this alias at the published version")
    p.add_argument("--reason", help="reason recorded in the alias history (with --alias)")
    p.add_argument("--metadata", metavar="KEY=VALUE", type=_metadata_arg, action="append", help="repeatable")
    p.add_argument("--content-type", help="default: guessed from the file extension, else application/octet-stream")
    p.add_argument("--force", action="store_true", help="publish a new version even if the newest has this content")

    p = command(commands, "download", cmd_download, "download NAME@REF (default LATEST) and verify its sha256")
    p.add_argument("target", metavar="NAME[@REF]", help="REF: a version number, LATEST or an alias")
    p.add_argument("-o", "--output", help="file or directory (default: the name's last segment); - for stdout")
    p.add_argument("--key", help="routing key: the same key always gets the same side of a canary")

    p = command(commands, "resolve", cmd_resolve, "which version REF serves, and a download URL")
    p.add_argument("name", metavar="NAME")
    p.add_argument("ref", metavar="REF", nargs="?", default=LATEST, help="version number, LATEST or alias")
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
    p.add_argument("--limit", type=_count_arg, help="show at most this many")

    p = command(commands, "show", cmd_show, "summary of NAME (or one version: NAME@VERSION)")
    p.add_argument("target", metavar="NAME[@VERSION]")

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
    p.add_argument("--limit", type=_count_arg, help="show at most this many")

    p = command(aliases, "ls", cmd_alias_ls, "the aliases of NAME")
    p.add_argument("name", metavar="NAME")

    p = command(aliases, "show", cmd_alias_show, "one alias")
    p.add_argument("name", metavar="NAME")
    p.add_argument("alias", metavar="ALIAS")

    p = command(aliases, "rm", cmd_alias_rm, "delete ALIAS (kept in its history)")
    p.add_argument("name", metavar="NAME")
    p.add_argument("alias", metavar="ALIAS")
    p.add_argument("--if-revision", type=_count_arg, metavar="N", help="only if the alias is at revision N now")

    p = command(
        commands, "console", console.cmd_console, "the web console on 127.0.0.1, forwarding (signed) to the API"
    )
    console.add_arguments(p)
    return parser


_GLOBAL_DEFAULTS: dict[str, Any] = {
    "endpoint": None,
    "json": False,
    "sign": None,
    "region": None,
    "profile": None,
    "progress": None,
    "verbose": False,
}


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """Parse `argv`; raises UsageError (exit 1). Global options absent everywhere get their defaults."""
    args = build_parser().parse_args(list(argv))
    for key, value in _GLOBAL_DEFAULTS.items():
        if not hasattr(args, key):
            setattr(args, key, value)
    return args


def default_client(args: argparse.Namespace) -> Client:
    return Client(endpoint=args.endpoint, sign=args.sign, region=args.region, profile=args.profile)


def exit_code(error: ArcaError) -> int:
    if isinstance(error, ValidationError):
        return EXIT_USAGE
    if isinstance(error, NotFoundError):
        return EXIT_NOT_FOUND
    if isinstance(error, ConflictError | PreconditionFailedError):
        return EXIT_CONFLICT
    return EXIT_ERROR


def _fail(code: str, message: str) -> None:
    print(f"arca: error: {code}: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None, *, client_factory: ClientFactory = default_client) -> int:
    """Run one command; returns the exit code (0 ok, 1 usage, 2 not found, 3 conflict, 4 other)."""
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
    except UsageError as error:
        usage = error.args[1] if len(error.args) > 1 else ""
        sys.stderr.write(usage)
        _fail("UsageError", str(error.args[0]))
        return EXIT_USAGE
    except SystemExit as done:  # --help and --version
        return done.code if isinstance(done.code, int) else EXIT_OK
    if args.verbose:
        logging.basicConfig(level=logging.INFO, format="arca: %(message)s", stream=sys.stderr)
    try:
        client = client_factory(args)
        try:
            return int(args.handler(args, client))
        finally:
            close = getattr(client, "close", None)
            if close:
                close()
    except UsageError as error:
        _fail("UsageError", str(error.args[0]))
        return EXIT_USAGE
    except ArcaError as error:
        _fail(error.code, error.message)
        if args.verbose and error.request_id:
            print(f"arca: request id {error.request_id}", file=sys.stderr)
        return exit_code(error)
    except FileNotFoundError as error:
        _fail("FileNotFound", f"{error.filename}: {error.strerror}")
        return EXIT_NOT_FOUND
    except OSError as error:
        _fail(type(error).__name__, str(error))
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("", file=sys.stderr)
        _fail("Interrupted", "interrupted")
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
