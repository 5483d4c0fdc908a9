"""`arca attest` and `arca attestations`: documents about a version (provenance, SBOMs, test reports)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from arca_client.commands.base import Commands, UsageError, split_target
from arca_client.output import Result, short, size, table, when
from arca_client.sdk import Client


def _version_ref(text: str) -> tuple[str, int]:
    name, ref = split_target(text)
    if not ref.isdigit():
        raise UsageError(f"{text!r}: name a version number, NAME@VERSION")
    return name, int(ref)


def _inline(text: str) -> dict[str, Any]:
    """`--content`: a JSON object, or @FILE to read one."""
    try:
        raw = Path(text[1:]).read_text(encoding="utf-8") if text.startswith("@") else text
        content = json.loads(raw)
    except (OSError, ValueError) as error:
        raise UsageError(f"--content: {error}") from None
    if not isinstance(content, dict):
        raise UsageError("--content must be a JSON object")
    return content


def cmd_attest(args: argparse.Namespace, client: Client) -> Result:
    name, version = _version_ref(args.target)
    if (args.file is None) == (args.content is None):
        raise UsageError("give FILE (uploaded) or --content JSON (stored inline), one of the two")
    if args.content is not None:
        attestation = client.attest(name, version, args.type, content=_inline(args.content))
    else:
        attestation = client.attest(name, version, args.type, file=args.file, media_type=args.media_type)
    return Result(
        attestation.raw,
        f"{name}@{version}: attestation {attestation.type} {short(attestation.id)} "
        f"({size(attestation.size)}, {attestation.media_type})",
    )


def cmd_attestations(args: argparse.Namespace, client: Client) -> Result:
    name, version = _version_ref(args.target)
    found = list(client.iter_attestations(name, version, type=args.type))
    rows = [(a.type, a.id, a.size, a.media_type, when(a.created_at), a.created_by or "") for a in found]
    return Result(
        [a.raw for a in found],
        lambda: table(("TYPE", "ID", "SIZE", "MEDIA TYPE", "CREATED (UTC)", "BY"), rows),
    )


def register(commands: Commands) -> None:
    p = commands.add(
        "attest",
        cmd_attest,
        "attach a document (provenance, SBOM, test report) to NAME@VERSION",
        example='arca attest payments/api@3 slsa-provenance --content \'{"builder": {"id": "ci"}}\'',
    )
    p.add_argument("target", metavar="NAME@VERSION")
    p.add_argument("type", metavar="TYPE", help="e.g. slsa-provenance, sbom-spdx, test-report")
    p.add_argument("file", metavar="FILE", nargs="?", help="a file to upload and attach (any format)")
    p.add_argument("--content", metavar="JSON", help="a JSON object (or @FILE holding one) stored inline, ≤ 256 KiB")
    p.add_argument("--media-type", help="FILE's media type (default: guessed from its name)")

    p = commands.add(
        "attestations",
        cmd_attestations,
        "list the attestations of NAME@VERSION",
        example="arca attestations payments/api@3 --type sbom-spdx",
    )
    p.add_argument("target", metavar="NAME@VERSION")
    p.add_argument("--type", help="only attestations of this type")
