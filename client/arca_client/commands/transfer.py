"""Options of `arca publish` and `arca download` for large content: parts, parallelism, and what moved."""

from __future__ import annotations

import argparse
import re
from dataclasses import asdict
from typing import Any

from arca_client import transfer

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


def add_upload_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--part-size",
        type=byte_size,
        help="upload in parts of this size (5MiB-5GiB; default: in 8 MiB parts from 64 MiB up, more for content "
        "over 80 GB; 0: one PUT, up to 5 GiB)",
    )
    parser.add_argument(
        "--parallel",
        type=parallel_count,
        default=transfer.DEFAULT_PARALLEL,
        help=f"parts sent at once (default {transfer.DEFAULT_PARALLEL}); an interrupted upload resumes when run again",
    )


def add_download_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--parallel",
        type=parallel_count,
        default=transfer.DEFAULT_PARALLEL,
        help=f"parts of multipart content fetched at once (default {transfer.DEFAULT_PARALLEL}); an interrupted "
        "download resumes when run again",
    )


def transfer_summary(report: transfer.UploadReport | None) -> dict[str, Any] | None:
    return asdict(report) if report is not None else None


def summary(report: transfer.DownloadReport) -> dict[str, Any]:
    return asdict(report)


def describe(report: transfer.UploadReport | None) -> str | None:
    """`in parts: 12 sent (96.0 MiB), 4 already in S3 (32.0 MiB)` for the human report."""
    if report is None:
        return None
    from arca_client.progress import human_size

    text = f"in parts: {report.parts_sent} sent ({human_size(report.sent)})"
    if report.resumed:
        text += f", {human_size(report.resumed)} already in S3 (resumed)"
    return text
