"""A tree's entries, the path rules and the canonical tree manifest, as the registry defines them.

The client is its own distribution, so this is a copy of the registry's definition (the registry's test suite
checks that both give the same bytes for any tree). The manifest is the RFC 8785 canonical JSON, in UTF-8, of
`{"files": [{"path", "sha256", "size"}, …]}` in path order (the byte order of the UTF-8 paths); its SHA-256 is the
tree version's `sha256`. A path is 1 to 1,024 bytes of UTF-8, segments joined by `/`, none empty, `.` or `..`, no
control character; paths are unique and none is a folder of another; a tree has at most 10,000 files.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arca_client.errors import ArcaError, ChecksumMismatchError

TREE_MEDIA_TYPE = "application/vnd.arca.tree+json"
MAX_FILES = 10_000
MAX_PATH_BYTES = 1024
MAX_FILE_SIZE = 5 * 1024**4
_HEX64 = re.compile(r"[0-9a-f]{64}")
_CONTROL = re.compile("[\x00-\x1f\x7f]")


class TreeError(ArcaError):
    """A tree the client refuses before any request: a bad path, a symlink, too many files, a path that would
    leave the destination. `details["path"]` (or `details["paths"]`) names what is at fault."""


@dataclass(frozen=True)
class TreeEntry:
    """A file of a tree: its path, content and size, and how it is served (None: not given, or not known)."""

    path: str
    sha256: str
    size: int
    content_type: str | None = None

    def as_json(self) -> dict[str, Any]:
        """The entry as a publish body's `files` lists it."""
        body: dict[str, Any] = {"path": self.path, "sha256": self.sha256, "size": self.size}
        if self.content_type:
            body["content_type"] = self.content_type
        return body


def path_problem(path: str) -> str | None:
    """Why `path` is not a tree path, or None."""
    try:
        size = len(path.encode("utf-8"))
    except UnicodeEncodeError:  # a file name that is not UTF-8, as os.fsdecode gives it
        return "a path is UTF-8 text"
    if not 1 <= size <= MAX_PATH_BYTES:
        return f"a path is 1 to {MAX_PATH_BYTES} bytes of UTF-8, this one is {size}"
    if _CONTROL.search(path):
        return "a path holds no control character"
    if path.startswith("/"):
        return "a path does not start with '/'"
    framed = f"/{path}/"  # an empty, "." or ".." segment, by substring searches (fast on 512-segment paths)
    if "//" in framed or "/./" in framed or "/../" in framed:
        segment = next(s for s in path.split("/") if s in ("", ".", ".."))
        return f"a path has no {'empty' if not segment else repr(segment)} segment"
    return None


def shown(path: str) -> str:
    """A path as a message shows it: quoted, escapes visible, a name that is not UTF-8 as its bytes."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return repr(path.encode("utf-8", "surrogateescape"))
    return repr(path)


def check_tree(entries: Sequence[TreeEntry]) -> None:
    """Raise TreeError (code `InvalidTree`) naming the path when `entries` are no tree."""
    if len(entries) > MAX_FILES:
        raise TreeError(f"{len(entries)} files: a tree has at most {MAX_FILES}", code="InvalidTree")
    seen: set[str] = set()
    for entry in entries:
        if problem := path_problem(entry.path):
            raise _invalid(f"{shown(entry.path)} is not a file path: {problem}", entry.path)
        if entry.path in seen:
            raise _invalid(f"{shown(entry.path)} is listed twice", entry.path)
        seen.add(entry.path)
        if not _HEX64.fullmatch(entry.sha256) or type(entry.size) is not int or not 0 <= entry.size <= MAX_FILE_SIZE:
            raise _invalid(
                f"{shown(entry.path)}: a sha256 of 64 lower-case hex characters and a size are needed", entry.path
            )
    # Paths under a folder sort together just after the folder's name and "/": one binary search a path.
    ordered = sorted(seen)
    for entry in entries:
        below = bisect.bisect_left(ordered, entry.path + "/")
        if below < len(ordered) and ordered[below].startswith(entry.path + "/"):
            raise _invalid(f"{shown(entry.path)} is a file and also a folder of {shown(ordered[below])}", entry.path)


def _invalid(message: str, path: str) -> TreeError:
    return TreeError(message, code="InvalidTree", details={"path": path})


def path_order(entries: Iterable[TreeEntry]) -> list[TreeEntry]:
    """The entries in path order: the byte order of UTF-8, which is Python's order of str."""
    return sorted(entries, key=lambda entry: entry.path)


def types_document(entries: Iterable[TreeEntry]) -> bytes | None:
    """The files' content types that are not application/octet-stream, as the registry keeps them:
    `{"content_types": {path: type, …}}` in canonical JSON (None when there is none). A tree published by reference
    names it as `file_types`, uploaded first."""
    types = {e.path: e.content_type for e in entries if e.content_type and e.content_type != "application/octet-stream"}
    if not types:
        return None
    document = {"content_types": types}
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode("utf-8")


def canonical_manifest(entries: Iterable[TreeEntry]) -> bytes:
    """The canonical tree manifest of valid entries given in any order (RFC 8785 for this shape: ASCII keys sorted,
    no whitespace, non-ASCII characters as themselves, integers as their digits)."""
    files = [{"path": e.path, "sha256": e.sha256, "size": e.size} for e in path_order(entries)]
    return json.dumps({"files": files}, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode("utf-8")


def tree_digest(entries: Iterable[TreeEntry]) -> str:
    """The SHA-256 (hex) of the canonical tree manifest: the `sha256` of a version holding this tree."""
    return hashlib.sha256(canonical_manifest(entries)).hexdigest()


def parse_manifest(document: bytes, sha256: str | None = None) -> list[TreeEntry]:
    """The entries of a tree manifest as downloaded (a tree version's content), in path order.

    With `sha256` (the version's, from a verified answer) the bytes must have that digest: ChecksumMismatchError
    otherwise. The document must be a valid tree in canonical form (the registry accepts no other): TreeError
    (code `InvalidTree`) otherwise.
    """
    if sha256 is not None and hashlib.sha256(document).hexdigest() != sha256:
        raise ChecksumMismatchError(
            f"the tree manifest's sha256 is {hashlib.sha256(document).hexdigest()}, not {sha256}",
            code="ChecksumMismatch",
        )
    try:
        parsed = json.loads(document.decode("utf-8"))
        entries = [TreeEntry(f["path"], f["sha256"], f["size"]) for f in parsed["files"]]
        if set(parsed) != {"files"} or any(set(f) != {"path", "sha256", "size"} for f in parsed["files"]):
            raise ValueError("unknown fields")
    except (ValueError, KeyError, TypeError) as error:
        raise TreeError(f"not a tree manifest: {error}", code="InvalidTree") from None
    check_tree(entries)
    if canonical_manifest(entries) != document:
        raise TreeError("the tree manifest is not in canonical form", code="InvalidTree")
    return entries


def entries_from_listing(files: Iterable[Mapping[str, Any]]) -> list[TreeEntry]:
    """Entries from the registry's listing of a tree's files (`GET …/versions/{version}/files` pages)."""
    return [TreeEntry(f["path"], f["sha256"], f["size"], f.get("content_type")) for f in files]
