"""A directory as a tree: its files (`scan`), hashed in parallel with a persistent cache (`hash_files`).

Paths are relative to the directory, with `/` between folders, and must be tree paths: a name the registry would
refuse is refused here first, naming it. Symbolic links are refused unless followed (`follow_symlinks`), and every
refused one is named: a link is never skipped silently, nor followed silently. A link that `--exclude` (or, for a
link to a file, the absence of a matching `--include`) leaves out is not reported, since the tree would not hold it
either way. A followed link to a folder is walked (a loop is refused); a broken link, a FIFO, a socket or a device
is refused, naming it.
"""

from __future__ import annotations

import hashlib
import mimetypes
import os
import stat as stats
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from arca_client.trees.globs import Selector
from arca_client.trees.hashcache import HashCache
from arca_client.trees.manifest import MAX_FILES, TreeEntry, TreeError, path_problem, shown

CHUNK = 1024**2
DEFAULT_PARALLEL = 8
# How many refused paths a message lists (all of them are in the error's details).
SHOWN_PROBLEMS = 10
HashProgress = Callable[[int, int], None]


@dataclass(frozen=True)
class Found:
    """A file of the walk: its tree path, where it is read from, and its status when found."""

    path: str
    source: Path
    stat: os.stat_result


@dataclass(frozen=True)
class LocalFile(TreeEntry):
    """A tree entry read from a local file (`source`)."""

    source: Path = field(kw_only=True)


def guess_content_type(path: str) -> str | None:
    """The content type a file name suggests (mimetypes' strict table), or None: unknown, or compressed (`.tar.gz`
    is a gzip stream), which the registry serves as application/octet-stream. The rule of single-file publishes."""
    guessed, encoding = mimetypes.guess_type(path, strict=True)
    return guessed if encoding is None else None


class _Walk:
    def __init__(self, selector: Selector, follow_symlinks: bool) -> None:
        self.selector = selector
        self.follow = follow_symlinks
        self.found: list[Found] = []
        self.problems: list[tuple[str, str]] = []
        self.links = 0

    def folder(
        self, rel: str, where: Path, ancestors: frozenset[tuple[int, int]]
    ) -> list[tuple[str, Path, frozenset[tuple[int, int]]]]:
        """Read one folder; the subfolders to walk next."""
        try:
            with os.scandir(where) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as error:
            self.problems.append((rel or ".", f"cannot be read ({error.strerror})"))
            return []
        below: list[tuple[str, Path, frozenset[tuple[int, int]]]] = []
        for entry in entries:
            path = f"{rel}/{entry.name}" if rel else entry.name
            source = Path(entry.path)
            if entry.is_symlink():
                if (sub := self.link(path, source, ancestors)) is not None:
                    below.append(sub)
            elif entry.is_dir(follow_symlinks=False):
                if self.selector.enters(path):
                    status = entry.stat(follow_symlinks=False)
                    below.append((path, source, ancestors | {(status.st_dev, status.st_ino)}))
            elif self.selector.keeps(path):
                self.file(path, source, entry.stat(follow_symlinks=False))
        return below

    def link(
        self, path: str, source: Path, ancestors: frozenset[tuple[int, int]]
    ) -> tuple[str, Path, frozenset[tuple[int, int]]] | None:
        try:
            target = os.stat(source)
        except OSError:
            if self.selector.keeps(path):
                self.problems.append((path, f"is a broken symbolic link (to {os.readlink(source)!r})"))
            return None
        is_folder = stats.S_ISDIR(target.st_mode)
        wanted = self.selector.enters(path) if is_folder else self.selector.keeps(path)
        if not wanted:
            return None
        if not self.follow:
            self.links += 1
            self.problems.append((path, f"is a symbolic link (to {os.readlink(source)!r})"))
            return None
        if not is_folder:
            self.file(path, source, target)
            return None
        if (target.st_dev, target.st_ino) in ancestors:
            self.problems.append((path, "is a symbolic link to a folder that holds it (a loop)"))
            return None
        return path, source, ancestors | {(target.st_dev, target.st_ino)}

    def file(self, path: str, source: Path, status: os.stat_result) -> None:
        if not stats.S_ISREG(status.st_mode):
            self.problems.append((path, "is not a regular file (a FIFO, socket or device)"))
        elif problem := path_problem(path):
            self.problems.append((path, f"is not a file path: {problem}"))
        else:
            self.found.append(Found(path, source, status))


def scan(
    root: str | os.PathLike[str],
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    follow_symlinks: bool = False,
) -> list[Found]:
    """The files of the tree `root` holds, in path order; TreeError naming every path refused (`details["paths"]`):
    code `SymlinkRefused` when only unfollowed links were, `InvalidTree` otherwise, `EmptyTree` when no file is
    left, `InvalidTree` over 10,000 files (the walk stops there)."""
    top = Path(root)
    try:
        status = os.stat(top)
    except OSError as error:
        raise TreeError(f"{str(top)!r} cannot be read: {error.strerror}", code="NotADirectory") from None
    if not stats.S_ISDIR(status.st_mode):
        raise TreeError(f"{str(top)!r} is not a directory", code="NotADirectory")
    walk = _Walk(Selector(include, exclude), follow_symlinks)
    pending = [("", top, frozenset({(status.st_dev, status.st_ino)}))]
    while pending:
        pending.extend(reversed(walk.folder(*pending.pop())))
        if len(walk.found) > MAX_FILES:
            raise TreeError(
                f"more than {MAX_FILES} files under {str(top)!r}: a tree has at most {MAX_FILES} (leave some out "
                "with --exclude)",
                code="InvalidTree",
            )
    if walk.problems:
        raise _refused(walk, top)
    if not walk.found:
        raise TreeError(f"no files to publish under {str(top)!r} (after --include and --exclude)", code="EmptyTree")
    return sorted(walk.found, key=lambda f: f.path)


def _refused(walk: _Walk, top: Path) -> TreeError:
    lines = [f"  {shown(path)} {why}" for path, why in walk.problems[:SHOWN_PROBLEMS]]
    if len(walk.problems) > SHOWN_PROBLEMS:
        lines.append(f"  … and {len(walk.problems) - SHOWN_PROBLEMS} more")
    hint = []
    if walk.links:
        hint.append("--follow-symlinks follows symbolic links")
    hint.append("--exclude leaves paths out")
    only_links = walk.links == len(walk.problems)
    return TreeError(
        f"{len(walk.problems)} path(s) under {str(top)!r} cannot be published:\n" + "\n".join(lines) + "\n"
        f"({'; '.join(hint)})",
        code="SymlinkRefused" if only_links else "InvalidTree",
        details={"paths": [path for path, _ in walk.problems]},
    )


def _identity(status: os.stat_result) -> tuple[int, int, int]:
    return status.st_size, status.st_mtime_ns, status.st_ino


class _Counter:
    """Bytes hashed across the workers, reported as (done, total)."""

    def __init__(self, total: int, progress: HashProgress | None) -> None:
        self.total = total
        self.done = 0
        self.progress = progress
        self.lock = threading.Lock()

    def add(self, count: int) -> None:
        with self.lock:
            self.done += count
            done = self.done
        if self.progress:
            self.progress(done, self.total)


def _hash(found: Found, counter: _Counter) -> tuple[str, int]:
    """The file's sha256, and when hashing began (ns). SourceChanged if it is not the file found or changes."""
    started = time.time_ns()
    digest = hashlib.sha256()
    read = 0
    try:
        with open(found.source, "rb") as stream:
            unchanged = _identity(os.fstat(stream.fileno())) == _identity(found.stat)
            while unchanged and (chunk := stream.read(CHUNK)):
                digest.update(chunk)  # hashlib releases the GIL: the workers hash in parallel
                read += len(chunk)
                counter.add(len(chunk))
            unchanged = unchanged and _identity(os.fstat(stream.fileno())) == _identity(found.stat)
    except OSError as error:
        raise TreeError(
            f"{shown(found.path)} cannot be read: {error.strerror}", code="Unreadable", details={"path": found.path}
        ) from None
    if not unchanged or read != found.stat.st_size:
        raise TreeError(
            f"{shown(found.path)} changed while it was read: publish again once it is written",
            code="SourceChanged",
            details={"path": found.path},
        )
    return digest.hexdigest(), started


def hash_files(
    found: Sequence[Found],
    *,
    cache: HashCache | None = None,
    parallel: int = DEFAULT_PARALLEL,
    progress: HashProgress | None = None,
    content_type: Callable[[str], str | None] = guess_content_type,
) -> list[LocalFile]:
    """Each found file as a tree entry, in the order given: hashed by `parallel` threads, or taken from `cache`
    when the file is the one recorded there (and recorded once hashed). The first failure stops the rest and is
    raised (TreeError: `Unreadable`, `SourceChanged`)."""
    cache = cache if cache is not None else HashCache.disabled()
    sha256: dict[str, str] = {}
    todo: list[Found] = []
    for item in found:
        if (known := cache.get(item.source, item.stat)) is not None:
            sha256[item.path] = known
        else:
            todo.append(item)
    counter = _Counter(sum(item.stat.st_size for item in todo), progress)
    with ThreadPoolExecutor(max_workers=max(1, parallel), thread_name_prefix="arca-hash") as pool:
        futures: dict[Future[tuple[str, int]], Found] = {pool.submit(_hash, item, counter): item for item in todo}
        try:
            for future in as_completed(futures):
                item = futures[future]
                digest, started = future.result()
                cache.put(item.source, item.stat, digest, hashed_at_ns=started)
                sha256[item.path] = digest
        except BaseException:
            for future in futures:
                future.cancel()
            raise
    return [
        LocalFile(item.path, sha256[item.path], item.stat.st_size, content_type(item.path), source=item.source)
        for item in found
    ]


def walk(
    root: str | os.PathLike[str],
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    follow_symlinks: bool = False,
    cache: HashCache | None = None,
    parallel: int = DEFAULT_PARALLEL,
    progress: HashProgress | None = None,
) -> list[LocalFile]:
    """The tree a directory holds, in path order, every file hashed: `scan`, then `hash_files`."""
    found = scan(root, include=include, exclude=exclude, follow_symlinks=follow_symlinks)
    return hash_files(found, cache=cache, parallel=parallel, progress=progress)
