"""The SHA-256 of files already hashed, so re-publishing a large unchanged directory reads none of it again.

One SQLite database under the user's cache directory ($ARCA_CACHE_DIR, else $XDG_CACHE_HOME/arca, else
~/.cache/arca): `hashes.sqlite3`, a row per file keyed by its real path, valid while the file's size,
modification time (ns) and inode are those recorded. SQLite gives atomic writes and locking between two `arca`
processes for free; one database rather than a file per entry keeps a 10,000-file tree to one open.

A file modified within RACY_NS of being hashed is not recorded: a second write in the same timestamp tick (some
file systems keep whole seconds) would leave size and mtime as they were, and the stale hash would be served (git's
"racily clean" entries). Such a file is hashed again next time, then recorded. Rows unused for PRUNE_AFTER_DAYS are
dropped. The cache is an optimisation only: any failure to open, read or write it turns it off for the run and
never fails a publish or a download.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Mapping
from pathlib import Path

RACY_NS = 2 * 10**9
# Records committed this often, so a walk killed half-way keeps what it hashed.
COMMIT_EVERY = 200
PRUNE_AFTER_DAYS = 60
_SCHEMA = """CREATE TABLE IF NOT EXISTS hashes (
    path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, inode INTEGER NOT NULL,
    sha256 TEXT NOT NULL, used INTEGER NOT NULL)"""


def cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The user's cache directory of Arca (as the transfer engine's layout cache)."""
    env = os.environ if environ is None else environ
    if env.get("ARCA_CACHE_DIR"):
        return Path(env["ARCA_CACHE_DIR"])
    base = env.get("XDG_CACHE_HOME") or os.path.join(env.get("HOME") or str(Path.home()), ".cache")
    return Path(base) / "arca"


class HashCache:
    """Lookups and records of file hashes; use from one thread (the one that walks), as a context manager."""

    def __init__(self, database: Path | None) -> None:
        self.database = database
        self._db: sqlite3.Connection | None = None
        self._opened = database is None
        self.hits = 0
        self._pending = 0

    @classmethod
    def default(cls, environ: Mapping[str, str] | None = None) -> HashCache:
        return cls(cache_dir(environ) / "hashes.sqlite3")

    @classmethod
    def disabled(cls) -> HashCache:
        return cls(None)

    def __enter__(self) -> HashCache:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _connection(self) -> sqlite3.Connection | None:
        if not self._opened:
            self._opened = True
            try:
                assert self.database is not None
                self.database.parent.mkdir(parents=True, exist_ok=True)
                self._db = sqlite3.connect(self.database, timeout=5)
                self._db.execute(_SCHEMA)
            except (OSError, sqlite3.Error):
                self._db = None
        return self._db

    def get(self, source: str | os.PathLike[str], stat: os.stat_result) -> str | None:
        """The recorded sha256 of this file if its identity (real path, size, mtime, inode) is the one recorded."""
        db = self._connection()
        if db is None:
            return None
        try:
            row = db.execute(
                "SELECT sha256 FROM hashes WHERE path = ? AND size = ? AND mtime_ns = ? AND inode = ?",
                (os.path.realpath(source), stat.st_size, stat.st_mtime_ns, stat.st_ino),
            ).fetchone()
            if row is None:
                return None
            db.execute("UPDATE hashes SET used = ? WHERE path = ?", (_today(), os.path.realpath(source)))
        except sqlite3.Error:
            self._off()
            return None
        self.hits += 1
        return str(row[0])

    def put(self, source: str | os.PathLike[str], stat: os.stat_result, sha256: str, *, hashed_at_ns: int) -> None:
        """Record the sha256 of the file as `stat` saw it, unless it was modified too near `hashed_at_ns`."""
        db = self._connection()
        if db is None or stat.st_mtime_ns > hashed_at_ns - RACY_NS:
            return
        try:
            db.execute(
                "INSERT OR REPLACE INTO hashes VALUES (?, ?, ?, ?, ?, ?)",
                (os.path.realpath(source), stat.st_size, stat.st_mtime_ns, stat.st_ino, sha256, _today()),
            )
            self._pending += 1
            if self._pending >= COMMIT_EVERY:
                db.commit()
                self._pending = 0
        except sqlite3.Error:
            self._off()

    def close(self) -> None:
        """Commit, drop rows unused for PRUNE_AFTER_DAYS, close."""
        if self._db is None:
            return
        try:
            self._db.execute("DELETE FROM hashes WHERE used < ?", (_today() - PRUNE_AFTER_DAYS,))
            self._db.commit()
        except sqlite3.Error:
            pass  # the cache is an optimisation: what was not committed is hashed again next time
        finally:
            self._off()

    def _off(self) -> None:
        if self._db is not None:
            self._db.close()
        self._db = None


def _today() -> int:
    return int(time.time() // 86_400)
