"""The reference grammar every command shares: NAME@REF, where REF names one version of NAME.

REF is a version number (`12`), `LATEST` (any case), an alias (`prod`) or `sha256:<64 hex digits>` (the newest
live version with that content). Names never contain "@", so the first "@" separates NAME from REF.
"""

from __future__ import annotations

import re
from enum import Enum

LATEST = "LATEST"
SHA256_PREFIX = "sha256:"
MAX_VERSION = 999_999
_NUMBER = re.compile(r"[0-9]+")
_ALIAS = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")  # an OCI tag; all digits is a version number
_HEX = re.compile(r"[0-9a-f]{64}")
GRAMMAR = "NAME@VERSION, NAME@LATEST, NAME@ALIAS or NAME@sha256:<hex>"


class RefKind(Enum):
    VERSION = "version"
    LATEST = "latest"
    ALIAS = "alias"
    SHA256 = "sha256"


def parse_ref(text: str) -> str:
    """The canonical spelling of a ref: "12" (no leading zeros), "LATEST", an alias, or "sha256:<lower-case hex>".

    Raises ValueError, naming the grammar, for anything else.
    """
    if _NUMBER.fullmatch(text):
        if not 1 <= int(text) <= MAX_VERSION:
            raise ValueError(f"{text!r} is not a version number (1 to {MAX_VERSION})")
        return str(int(text))
    if text.upper() == LATEST:
        return LATEST
    if text[: len(SHA256_PREFIX)].lower() == SHA256_PREFIX:
        digest = text[len(SHA256_PREFIX) :].lower()
        if not _HEX.fullmatch(digest):
            raise ValueError(f"{text!r} is not a content ref: sha256: and 64 hex digits")
        return SHA256_PREFIX + digest
    if not _ALIAS.fullmatch(text):
        raise ValueError(
            f"{text!r} is not a ref: a version number, LATEST, an alias ([A-Za-z0-9_][A-Za-z0-9._-]*) or sha256:<hex>"
        )
    return text


def ref_kind(ref: str) -> RefKind:
    """What a canonical ref (from `parse_ref`) names."""
    if ref == LATEST:
        return RefKind.LATEST
    if ref.isdigit():
        return RefKind.VERSION
    if ref.startswith(SHA256_PREFIX):
        return RefKind.SHA256
    return RefKind.ALIAS


def split_ref(text: str, default: str | None = LATEST) -> tuple[str, str | None]:
    """NAME[@REF] → (NAME, canonical REF); `default` when there is no "@". ValueError on a bad ref or empty part."""
    name, sep, ref = text.partition("@")
    if not sep:
        return text, default
    if not name or not ref:
        raise ValueError(f"{text!r} is not {GRAMMAR}")
    return name, parse_ref(ref)
