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


def decode_version(sort_key: str) -> int | str:
    """Inverse of encode_version."""
    if sort_key == LATEST:
        return LATEST
    if len(sort_key) != WIDTH or not sort_key.isdigit():
        raise ValueError(f"not a version sort key: {sort_key!r}")
    return int(sort_key)
