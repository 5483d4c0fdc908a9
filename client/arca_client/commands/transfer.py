"""Content in and out: publish, download, resolve."""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import asdict
from typing import Any

from arca_client import output, transfer
from arca_client.calls.trees import DownloadedTree
from arca_client.commands.base import (
    REF_HELP,
    Commands,
    UsageError,
    full_ref,
    pair_arg,
    progress,
    split_target,
    time_arg,
)
from arca_client.errors import ArcaError
from arca_client.output import OUTPUTS, Result, fields, short, size, stamp, target
from arca_client.sdk import Client


def cmd_publish(args: argparse.Namespace, client: Client) -> Result:
    if args.file != "-" and os.path.isdir(args.file):
        return _publish_directory(args, client)
    if args.include or args.exclude or args.follow_symlinks:
        raise UsageError("--include, --exclude and --follow-symlinks select files of a directory: FILE is one file")
    metadata = dict(args.metadata) if args.metadata else None
    bar = progress(args)
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
            part_size=args.part_size,
            parallel=args.parallel,
        )
    finally:
        if bar:
            bar.close()
    version = published.version
    alias = None
    refused: ArcaError | None = None
    if args.alias:
        try:
            why = args.reason or f"arca publish (version {version.version})"
            alias = client.set_alias(args.name, args.alias, version.version, reason=why)
        except ArcaError as error:  # the version is published whatever happens to the alias: say both
            refused = error
    data = {
        **version.raw,
        "deduplicated": published.deduplicated,
        "uploaded": published.uploaded,
        "transfer": asdict(published.transfer) if published.transfer is not None else None,
        "alias": alias.raw if alias else None,
    }
    if refused is not None:
        data["alias_error"] = {"code": refused.code, "message": refused.message, "status": refused.status}
        data["alias_error"].update(refused.details)
    if published.deduplicated:
        lines = [
            f"{args.name}: version {version.version} already has this content; nothing published "
            "(--force publishes anyway)"
        ]
    else:
        moved = "uploaded" if published.uploaded else "content already stored, upload skipped"
        moved = _describe(published.transfer) or moved
        lines = [
            f"{args.name}: published version {version.version} "
            f"({size(version.size)}, sha256 {short(version.sha256)}, {moved})"
        ]
    if alias:
        lines.append(f"{args.name}: {alias.alias} -> {target(alias.version)} (revision {alias.revision})")
    if refused is None:
        return Result(data, "\n".join(lines))
    # The publish's own result first (stdout), then the alias's refusal as the command's error (stderr, exit code).
    output.render(Result(data, "\n".join(lines)))
    done = "found" if published.deduplicated else "published"
    refused.message = f"{done} version {version.version}; {args.alias} not moved: {refused.message}"
    args.version = version.version  # what a refusal's hint names (arca promote NAME ALIAS VERSION)
    raise refused


def _publish_directory(args: argparse.Namespace, client: Client) -> Result:
    """`arca publish NAME DIR`: the directory as a tree of files, only what the artifact lacks uploaded."""
    for flag, given in (("--content-type", args.content_type), ("--filename", args.filename)):
        if given:
            raise UsageError(f"{flag} is a file's: a directory is published as a tree of files")
    bar = progress(args)
    try:
        done = client.publish_directory(
            args.name,
            args.file,
            include=args.include or (),
            exclude=args.exclude or (),
            follow_symlinks=args.follow_symlinks,
            metadata=dict(args.metadata) if args.metadata else None,
            force=args.force,
            parallel=args.parallel,
            progress=bar,
        )
    finally:
        if bar:
            bar.close()
    version = done.published.version
    data = {
        **version.raw,
        "deduplicated": done.published.deduplicated,
        "files_uploaded": done.files_uploaded,
        "bytes_uploaded": done.bytes_uploaded,
        "by_reference": done.by_reference,
    }
    if done.published.deduplicated:
        text = (
            f"{args.name}: version {version.version} already is this tree ({done.files} files); nothing published "
            "(--force publishes anyway)"
        )
    else:
        text = (
            f"{args.name}: published version {version.version}, a tree of {done.files} files ({size(version.size)}, "
            f"sha256 {short(version.sha256)}; {done.files_uploaded} uploaded, {size(done.bytes_uploaded)})"
        )
    if args.alias:
        why = args.reason or f"arca publish (version {version.version})"
        alias = client.set_alias(args.name, args.alias, version.version, reason=why)
        data["alias"] = alias.raw
        text += f"\n{args.name}: {alias.alias} -> {target(alias.version)} (revision {alias.revision})"
    return Result(data, text)


def cmd_files(args: argparse.Namespace, client: Client) -> Result:
    """`arca files NAME@REF`: a tree version's files, in path order."""
    name, ref = split_target(args.target)
    resolution = client.resolve(name, full_ref(client, name, ref), routing_key=args.key)
    found = list(client.iter_files(name, resolution.version, prefix=args.prefix))
    data = [asdict(f) for f in found]
    rows = [(f.path, size(f.size), short(f.sha256), f.content_type) for f in found]
    return Result(data, output.table(("path", "size", "sha256", "content type"), rows) if rows else None)


def cmd_download(args: argparse.Namespace, client: Client) -> Result | None:
    if args.destination in OUTPUTS:
        raise UsageError(
            f"-o {args.destination} would write a file named {args.destination!r}: for {args.destination} output give "
            f"--output {args.destination} (the format); for a file of that name, -o ./{args.destination}"
        )
    name, ref = split_target(args.target)
    ref = full_ref(client, name, ref)
    to_stdout = args.destination == "-"
    dest: Any = sys.stdout.buffer if to_stdout else args.destination
    bar = progress(args)
    try:
        downloaded = client.download(
            name,
            ref,
            dest,
            routing_key=args.key,
            progress=bar,
            overwrite=args.force,
            parallel=args.parallel,
            verify=args.verify,
            **({"only": args.file} if args.file else {}),
        )
    finally:
        if bar:
            bar.close()
    resolution = downloaded.resolution
    if isinstance(downloaded.transfer, DownloadedTree):
        done = downloaded.transfer
        checked = "signature and every sha256 verified" if args.verify else "every sha256 verified"
        report = (
            f"{name}@{ref}: version {done.version}, a tree of {done.files} files ({checked}; {done.files_fetched} "
            f"fetched, {size(done.bytes_fetched)}) -> {done.directory}"
        )
        return Result({**asdict(done), "directory": str(done.directory)}, report)
    where = "stdout" if to_stdout else downloaded.path
    checked = "signature and sha256 verified" if args.verify else "sha256 verified"
    report = f"{name}@{ref}: version {resolution.version} ({size(resolution.size)}, {checked}) -> {where}"
    if to_stdout:
        # The bytes are stdout, so the report goes to stderr, whatever the output format.
        sys.stdout.flush()
        print(report, file=sys.stderr)
        return None
    moved = {"transfer": asdict(downloaded.transfer)} if downloaded.transfer is not None else {}
    return Result({**resolution.raw, "path": downloaded.path, **moved}, report)


def cmd_resolve(args: argparse.Namespace, client: Client) -> Result:
    if args.legacy_ref is not None:
        raise UsageError(f"resolve takes one reference, NAME@REF: arca resolve {args.target}@{args.legacy_ref}")
    name, ref = split_target(args.target)
    resolution = client.resolve(name, full_ref(client, name, ref), routing_key=args.key, at=args.at)
    return Result(
        resolution.raw,
        lambda: fields(
            [
                ("name", resolution.name),
                ("via", resolution.via),
                ("ref", resolution.ref),
                ("version", resolution.version),
                ("route", resolution.route),
                ("alias revision", resolution.alias_revision),
                ("size", f"{size(resolution.size)} ({resolution.size} bytes)"),
                ("sha256", resolution.sha256),
                ("expires", stamp(resolution.expires_at)),
                ("download url", resolution.download_url),
            ]
        ),
    )


_UNITS = {"": 1, "b": 1, "k": 1024, "kib": 1024, "m": 1024**2, "mib": 1024**2, "g": 1024**3, "gib": 1024**3}


def byte_size(text: str) -> int:
    """`8MiB`, `16M`, `1GiB`, `5242880`: a size in bytes (binary units)."""
    found = re.fullmatch(r"\s*(\d+)\s*([a-zA-Z]*)\s*", text)
    unit = found.group(2).lower() if found else None
    if found is None or unit not in _UNITS:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size (for example 8MiB, 64M, 1GiB or 5242880)")
    return int(found.group(1)) * _UNITS[unit]


def parallel_count(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 64:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number of parts from 1 to 64")
    return int(text)


def _describe(report: transfer.UploadReport | None) -> str | None:
    """`in parts: 12 sent (96.0 MiB), 32.0 MiB already in S3 (resumed)` for the human report."""
    if report is None:
        return None
    text = f"in parts: {report.parts_sent} sent ({size(report.sent)})"
    if report.resumed:
        text += f", {size(report.resumed)} already in S3 (resumed)"
    return text


def register(commands: Commands) -> None:
    p = commands.add(
        "publish",
        cmd_publish,
        "upload FILE (skipped when stored already) and publish a version",
        example="arca publish payments/api app.zip --metadata commit=4f1c2e9 --alias staging",
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument(
        "file",
        metavar="FILE",
        help="the file to publish (- reads stdin), or a directory: a tree of files",
    )
    p.add_argument(
        "--alias",
        help="also point this alias at the version (if its policy refuses, the version stays published)",
    )
    p.add_argument("--reason", help="reason recorded in the alias history (with --alias)")
    p.add_argument("--metadata", metavar="KEY=VALUE", type=pair_arg, action="append", help="repeatable")
    p.add_argument(
        "--filename",
        help="file name recorded for downloads (default: FILE's name; - has none); also guesses the content type",
    )
    p.add_argument("--content-type", help="default: guessed from the file name, else application/octet-stream")
    p.add_argument("--force", action="store_true", help="a new version even if the newest has this content")
    p.add_argument("--include", metavar="GLOB", action="append", help="DIR: only the files matching (repeatable)")
    p.add_argument("--exclude", metavar="GLOB", action="append", help="DIR: leave these out (repeatable)")
    p.add_argument("--follow-symlinks", action="store_true", help="DIR: follow symlinks (default: refused)")
    p.add_argument(
        "--part-size",
        type=byte_size,
        help="upload in parts of this size (5MiB-5GiB; default: 8 MiB parts from 64 MiB up, more over 80 GB; "
        "0: one PUT)",
    )
    p.add_argument(
        "--parallel",
        type=parallel_count,
        default=transfer.DEFAULT_PARALLEL,
        help=f"parts sent at once (default {transfer.DEFAULT_PARALLEL}); an interrupted upload resumes when run again",
    )

    p = commands.add(
        "download",
        cmd_download,
        "download NAME@REF (default LATEST) and verify its sha256",
        example="arca download payments/api@prod -o deploy/",
    )
    p.add_argument("target", metavar="NAME[@REF]", help=REF_HELP)
    p.add_argument(
        "-o",
        "--to",
        dest="destination",
        metavar="PATH",
        help="file or directory (default: the file name given at publish, else the name's last segment); - for "
        "stdout. --output is the format, as for every command",
    )
    p.add_argument(
        "-f", "--force", "--overwrite", action="store_true", help="replace the file if it exists (default: refuse)"
    )
    p.add_argument("--key", help="routing key: the same key always gets the same side of a canary")
    p.add_argument(
        "--parallel",
        type=parallel_count,
        default=transfer.DEFAULT_PARALLEL,
        help=f"parts of multipart content fetched at once (default {transfer.DEFAULT_PARALLEL}); an interrupted "
        "download resumes when run again",
    )
    p.add_argument(
        "--verify",
        action="store_true",
        help="check the version's signature against the endpoint's key, pinned on first use (exit 5 if it fails)",
    )
    p.add_argument("--file", metavar="PATH", help="a tree: download only this file (to the directory -o names)")

    p = commands.add(
        "files",
        cmd_files,
        "the files of the tree NAME@REF (default LATEST), in path order",
        example="arca files ml/model@prod --prefix tokenizer/",
    )
    p.add_argument("target", metavar="NAME[@REF]", help=REF_HELP)
    p.add_argument("--prefix", help="only paths that start with it")
    p.add_argument("--key", help="routing key for a canary alias")

    p = commands.add(
        "resolve",
        cmd_resolve,
        "which version NAME@REF serves (default LATEST), and a download URL",
        example="arca resolve payments/api@prod --key customer-42",
    )
    p.add_argument("target", metavar="NAME[@REF]", help=REF_HELP)
    p.add_argument("legacy_ref", nargs="?", help=argparse.SUPPRESS)  # `resolve NAME REF`: answered with the fix
    p.add_argument("--key", help="routing key for a canary alias")
    p.add_argument(
        "--at",
        metavar="TIME",
        type=time_arg,
        help="resolve the alias as it stood then (ISO 8601, UTC unless a zone; or '5 minutes ago', yesterday, ...)",
    )
