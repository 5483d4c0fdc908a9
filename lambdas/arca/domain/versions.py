"""Version numbers and their sort-key encoding (zero-padded to six digits, so they sort as numbers)."""

from __future__ import annotations

LATEST = "LATEST"
MAX_VERSION = 999_999
WIDTH = 6


def encode_version(version: int | str) -> str:
    """1 -> "000001"; LATEST -> "LATEST". Raises ValueError outside 1..999999."""
    if version == LATEST:
        return LATEST
    number = int(version)
    if not 1 <= number <= MAX_VERSION:
        raise ValueError(f"version {version!r} is outside 1..{MAX_VERSION}")
    return f"{number:0{WIDTH}d}"
