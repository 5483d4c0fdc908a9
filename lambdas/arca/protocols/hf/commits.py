"""Commit ids: 40 lower-case hex characters per version that resolve back to it with no index.

A commit id is `VVVVVVVV` + `CCCC…` (8 + 32 hex digits): the version number in hex (0 for LATEST content that no
version holds), then the first 128 bits of SHA-256 over the artifact's name, that version and the digest of its
tree. Resolving one reads the version by its number (the read a version number costs anyway) and recomputes the
check: an id made up, copied from another artifact, or naming content the version (or LATEST) no longer holds is
not found. `huggingface_hub` treats any 40-hex revision as immutable (it caches by it and skips resolving it
again), which is exactly what a version is: its number and content never change.
"""

from __future__ import annotations

import hashlib
import re

COMMIT = re.compile(r"[0-9a-f]{40}")
_VERSION_DIGITS = 8  # 16**8 > 999,999, the largest version number
_SALT = b"arca/hf-commit/v1"


def commit_id(name: str, version: int | None, digest: str) -> str:
    """The commit id of `version` of `name` (None: LATEST content no version holds) whose tree digest is `digest`."""
    number = version or 0
    if not 0 <= number < 16**_VERSION_DIGITS:
        raise ValueError(f"version {version!r} cannot be encoded in a commit id")
    return f"{number:0{_VERSION_DIGITS}x}{_check(name, version, digest)}"


def version_of(commit: str) -> int | None:
    """The version number a commit id names (None for LATEST). Raises ValueError if `commit` is not one."""
    if not COMMIT.fullmatch(commit):
        raise ValueError(f"{commit!r} is not a commit id")
    return int(commit[:_VERSION_DIGITS], 16) or None


def names(commit: str, name: str, version: int | None, digest: str) -> bool:
    """Whether `commit` is the id of that version of `name` with that tree digest."""
    return COMMIT.fullmatch(commit) is not None and commit == commit_id(name, version, digest)


def _check(name: str, version: int | None, digest: str) -> str:
    text = "\n".join((name, "LATEST" if version is None else str(version), digest))
    return hashlib.sha256(_SALT + b"\n" + text.encode()).hexdigest()[: 40 - _VERSION_DIGITS]
