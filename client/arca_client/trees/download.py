"""Where a tree's files go under a destination directory, which are already there, and how one is written.

Paths come from whoever published the tree, so none may lead outside the destination: the path rules refuse `..`
and absolute paths, and this module also refuses to write through a symbolic link or over a folder that is
already there (a link `dest/a -> /etc` would send `a/passwd` elsewhere). A download resumes: a file already at its
place with the right size and sha256 is kept, and is the only thing checked again. Files of the destination that
the tree does not hold are left alone.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from arca_client.errors import ChecksumMismatchError
from arca_client.trees.directory import DEFAULT_PARALLEL, Found, LocalFile, hash_files
from arca_client.trees.hashcache import HashCache
from arca_client.trees.manifest import TreeEntry, TreeError, check_tree, shown

# Characters and names Windows cannot hold in a file name; a tree path holding one cannot be written there.
_WINDOWS_FORBIDDEN = set('<>:"\\|?*')
_WINDOWS_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)), *(f"LPT{i}" for i in range(1, 10))}


@dataclass(frozen=True)
class Placement:
    """A file of the tree, where it is written, and whether the right bytes are there already."""

    entry: TreeEntry
    target: Path
    present: bool


@dataclass(frozen=True)
class DownloadPlan:
    placements: list[Placement]

    @property
    def missing(self) -> list[Placement]:
        return [p for p in self.placements if not p.present]

    @property
    def bytes_to_fetch(self) -> int:
        return sum(p.entry.size for p in self.missing)


def plan_download(
    entries: Sequence[TreeEntry],
    destination: str | os.PathLike[str],
    *,
    cache: HashCache | None = None,
    parallel: int = DEFAULT_PARALLEL,
) -> DownloadPlan:
    """Each entry's place under `destination` (created if absent), and whether it is there already.

    TreeError (code `UnsafePath`) naming the path if a file would be written outside the destination, through a
    symbolic link, or where a folder or a file is in the way; InvalidTree if the entries are no tree.
    """
    check_tree(entries)
    root = Path(destination)
    root.mkdir(parents=True, exist_ok=True)
    real_root = os.path.realpath(root)
    placements: list[tuple[TreeEntry, Path]] = []
    candidates: list[Found] = []
    for entry in entries:
        target = _target(root, real_root, entry.path)
        placements.append((entry, target))
        try:
            status = os.lstat(target)
        except FileNotFoundError:
            continue
        if stat.S_ISREG(status.st_mode) and status.st_size == entry.size:
            candidates.append(Found(entry.path, target, status))
    # Files of the right size are hashed (in parallel, through the cache) to be kept; if one changes or cannot be
    # read meanwhile, each is hashed on its own and the ones that fail are fetched again.
    try:
        hashed = hash_files(candidates, cache=cache, parallel=parallel, content_type=_none)
    except TreeError:
        hashed = [h for found in candidates for h in _hashed_alone(found, cache)]
    expected = {entry.path: entry.sha256 for entry in entries}
    present = {local.path for local in hashed if local.sha256 == expected[local.path]}
    return DownloadPlan([Placement(entry, target, entry.path in present) for entry, target in placements])


def _none(_: str) -> None:
    return None


def _hashed_alone(found: Found, cache: HashCache | None) -> list[LocalFile]:
    try:
        return hash_files([found], cache=cache, parallel=1, content_type=_none)
    except TreeError:
        return []


def _target(root: Path, real_root: str, path: str) -> Path:
    segments = path.split("/")
    if os.name == "nt" and any(_windows_problem(s) for s in segments):
        raise _unsafe(path, "cannot be a file name on Windows")
    where = root
    for depth, segment in enumerate(segments):
        where = where / segment
        if not os.path.lexists(where):
            break  # nothing there from here on: nothing to follow
        if os.path.islink(where):
            raise _unsafe(path, f"would be written through the symbolic link {str(where)!r}")
        if depth == len(segments) - 1 and os.path.isdir(where):
            raise _unsafe(path, f"is a folder in {str(root)!r}")
        if depth < len(segments) - 1 and not os.path.isdir(where):
            raise _unsafe(path, f"needs {str(where)!r} to be a folder, and a file is there")
    target = root.joinpath(*segments)
    if os.path.commonpath([real_root, os.path.realpath(target)]) != real_root:
        raise _unsafe(path, f"would be written outside {str(root)!r}")
    return target


def _windows_problem(segment: str) -> bool:
    return (
        any(c in _WINDOWS_FORBIDDEN for c in segment)
        or segment.split(".")[0].upper() in _WINDOWS_RESERVED
        or segment.endswith((" ", "."))
    )


def _unsafe(path: str, why: str) -> TreeError:
    return TreeError(f"{shown(path)} {why}: nothing was written", code="UnsafePath", details={"path": path})


def receive(placement: Placement, chunks: Iterable[bytes]) -> None:
    """Write one file's bytes to its place: into a hidden sibling first, checked against the entry's size and
    sha256, then renamed over the target, so a file at its place is always whole and right. ChecksumMismatchError
    (nothing kept) if the bytes are not the entry's."""
    target = placement.target
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = target.with_name(f".{target.name}.arca-{os.getpid()}.part")
    digest = hashlib.sha256()
    size = 0
    try:
        with open(scratch, "wb") as out:
            for chunk in chunks:
                digest.update(chunk)
                size += len(chunk)
                out.write(chunk)
        entry = placement.entry
        if size != entry.size or digest.hexdigest() != entry.sha256:
            raise ChecksumMismatchError(
                f"{shown(entry.path)}: received {size} bytes with sha256 {digest.hexdigest()}, expected {entry.size} "
                f"bytes with sha256 {entry.sha256}",
                code="ChecksumMismatch",
            )
        os.replace(scratch, target)
    finally:
        scratch.unlink(missing_ok=True)
