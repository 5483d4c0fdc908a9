"""`arca attest` and `arca attestations`: documents about a version (provenance, SBOMs, test reports)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arca_client import cli

Command = Callable[..., argparse.ArgumentParser]


def _version_ref(text: str) -> tuple[str, int]:
    name, ref = cli.split_ref(text, default=None)
    if ref is None or not str(ref).isdigit():
        raise cli.UsageError(f"{text!r}: name a version number, NAME@VERSION")
    return name, int(ref)


def _inline(text: str) -> dict[str, Any]:
    """`--content`: a JSON object, or @FILE to read one."""
    try:
        raw = Path(text[1:]).read_text(encoding="utf-8") if text.startswith("@") else text
        content = json.loads(raw)
    except (OSError, ValueError) as error:
        raise cli.UsageError(f"--content: {error}") from None
    if not isinstance(content, dict):
        raise cli.UsageError("--content must be a JSON object")
    return content


def cmd_attest(args: argparse.Namespace, client: Any) -> int:
    name, version = _version_ref(args.target)
    if (args.file is None) == (args.content is None):
        raise cli.UsageError("give FILE (uploaded) or --content JSON (stored inline), one of the two")
    if args.content is not None:
        attestation = client.attest(name, version, args.type, content=_inline(args.content))
    else:
        attestation = client.attest(name, version, args.type, file=args.file, media_type=args.media_type)
    if args.json:
        cli._print_json(attestation.raw)
        return cli.EXIT_OK
    print(
        f"{name}@{version}: attestation {attestation.type} {cli._short(attestation.id)} "
        f"({cli._size(attestation.size)}, {attestation.media_type})",
        file=cli._out(),
    )
    return cli.EXIT_OK


def cmd_attestations(args: argparse.Namespace, client: Any) -> int:
    name, version = _version_ref(args.target)
    found = list(client.iter_attestations(name, version, type=args.type))
    if args.json:
        cli._print_json({"attestations": [a.raw for a in found]})
        return cli.EXIT_OK
    rows = [(a.type, a.id, a.size, a.media_type, cli._when(a.created_at), a.created_by or "") for a in found]
    print(cli.table(("TYPE", "ID", "SIZE", "MEDIA TYPE", "CREATED", "BY"), rows), file=cli._out())
    return cli.EXIT_OK


def register(commands: Any, command: Command) -> None:
    p = command(commands, "attest", cmd_attest, "attach a document (provenance, SBOM, test report) to NAME@VERSION")
    p.add_argument("target", metavar="NAME@VERSION")
    p.add_argument("type", metavar="TYPE", help="e.g. slsa-provenance, sbom-spdx, test-report")
    p.add_argument("file", metavar="FILE", nargs="?", help="a file to upload and attach (any format)")
    p.add_argument("--content", metavar="JSON", help="a JSON object (or @FILE holding one) stored inline, ≤ 256 KiB")
    p.add_argument("--media-type", help="FILE's media type (default: guessed from its name)")

    p = command(commands, "attestations", cmd_attestations, "list the attestations of NAME@VERSION")
    p.add_argument("target", metavar="NAME@VERSION")
    p.add_argument("--type", help="only attestations of this type")
