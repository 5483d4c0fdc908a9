"""A tree listing as the Hub pages it: files and folders, recursively or one level, a bounded page at a time.

The backend lists files only, in path order; folders are derived. The files of a folder are contiguous in path
order (they share its prefix), so a folder is listed when its first file is met and never again. One request reads
at most `ROWS` files and answers at most `ENTRIES` entries (plus the folders of its last file) and `BYTES` bytes,
and may stop inside a backend page: the cursor names the page's token and how many of its files were consumed, so
the next request reads on from exactly there. A one-level listing of a folder of many subfolders' files may answer
a page with few entries (even none) and a next link: the client follows links until there are none.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass

from arca.protocols.hf.answers import HubJson, dumps, file_entry, folder_entry
from arca.protocols.hf.backend import Backend, FileEntry, Target

ENTRIES = 1000  # the Hub's page size of a tree listing
BYTES = 2 * 1024 * 1024  # far under Lambda's 6 MB answer, with room for one file's folders past the budget
ROWS = 5000  # backend rows one request may read
BACKEND_PAGE = 1000


class BadCursor(ValueError):
    """A `cursor` this listing did not hand out (or made for another listing): the client's 400."""


@dataclass(frozen=True)
class Page:
    entries: list[HubJson]
    cursor: str | None  # None on the last page


@dataclass(frozen=True)
class _Position:
    token: str | None  # the backend token of the page being read (None: the first)
    skip: int  # files of that page already listed
    last: str | None  # the path of the last file listed: its folders are listed already


def list_tree(
    backend: Backend,
    repo: str,
    target: Target,
    commit: str,
    path: str,
    *,
    recursive: bool,
    cursor: str | None,
) -> Page:
    """One page of the listing of `path` ("" for the root) at `commit`; paths in entries are from the root."""
    prefix = f"{path}/" if path else ""
    binding = _binding(commit, prefix, recursive)
    at = _read(cursor, binding) if cursor else _Position(None, 0, None)
    entries: list[HubJson] = []
    size = rows = 0
    token, skip, last = at.token, at.skip, at.last
    while True:
        files, following = backend.files(repo, target, prefix, BACKEND_PAGE, token)
        rows += len(files)
        for index in range(skip, len(files)):
            if entries and (len(entries) >= ENTRIES or size >= BYTES):
                return Page(entries, _write(_Position(token, index, last), binding))
            for entry in _entries(files[index], prefix, commit, recursive, last):
                entries.append(entry)
                size += len(dumps(entry)) + 1
            last = files[index].path
        if following is None:
            return Page(entries, None)
        token, skip = following, 0
        if rows >= ROWS:
            return Page(entries, _write(_Position(token, 0, last), binding))


def _entries(file: FileEntry, prefix: str, commit: str, recursive: bool, last: str | None) -> list[HubJson]:
    """The entries `file` adds: its folders not listed yet (only the first level unless recursive), then itself
    when it is listed at this level."""
    folders = _folders(file.path, prefix)
    seen = set(_folders(last, prefix)) if last is not None else set()
    if not recursive:
        if folders:
            return [] if folders[0] in seen else [folder_entry(folders[0], commit)]
        return [file_entry(file)]
    return [folder_entry(f, commit) for f in folders if f not in seen] + [file_entry(file)]


def _folders(path: str, prefix: str) -> list[str]:
    """The folders of `path` below `prefix`, shallowest first: `a/b/c.txt` below "" is `a`, `a/b`."""
    parts = path[len(prefix) :].split("/")[:-1]
    return [prefix + "/".join(parts[: depth + 1]) for depth in range(len(parts))]


def _binding(commit: str, prefix: str, recursive: bool) -> str:
    """What a cursor is bound to: one listing (commit, folder, depth). Another listing refuses it."""
    return hashlib.sha256(f"{commit}\0{prefix}\0{recursive}".encode()).hexdigest()[:16]


def _write(position: _Position, binding: str) -> str:
    data = {"b": binding, "t": position.token, "s": position.skip, "l": position.last}
    return base64.urlsafe_b64encode(dumps(data)).decode().rstrip("=")


def _read(cursor: str, binding: str) -> _Position:
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (binascii.Error, ValueError):
        raise BadCursor("cursor: not a cursor of this listing") from None
    if not isinstance(data, dict) or data.get("b") != binding:
        raise BadCursor("cursor: not a cursor of this listing")
    token, skip, last = data.get("t"), data.get("s"), data.get("l")
    if not (token is None or isinstance(token, str)) or type(skip) is not int or skip < 0:
        raise BadCursor("cursor: not a cursor of this listing")
    if not (last is None or isinstance(last, str)):
        raise BadCursor("cursor: not a cursor of this listing")
    return _Position(token, skip, last)
