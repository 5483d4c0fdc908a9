"""A directory as a tree (arca_client.trees): the walk, its globs, symlinks, parallel hashing and the hash cache."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path

import pytest

from arca_client.trees import HashCache, Selector, TreeError, cache_dir, directory, hash_files, scan, walk
from arca_client.trees import hashcache as hashcache_module
from arca_client.trees.globs import Pattern


def _make(root: Path, files: dict[str, bytes]) -> Path:
    for path, data in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return root


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _paths(root: Path, **options: object) -> list[str]:
    return [f.path for f in scan(root, **options)]  # type: ignore[arg-type]


def _old(path: Path) -> None:
    """Date a file back, past the racy window, as a file written long before a publish is."""
    status = path.stat()
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns - 10 * 10**9))


# The walk


def test_a_directory_is_its_files_in_path_order_with_posix_paths_hashes_and_content_types(tmp_path: Path) -> None:
    # Given
    root = _make(tmp_path / "model", {"config.json": b"{}", "weights/a.bin": b"\0" * 10, "empty": b"", "b!": b"x"})
    # When
    files = walk(root)
    # Then
    assert [f.path for f in files] == ["b!", "config.json", "empty", "weights/a.bin"]
    by_path = {f.path: f for f in files}
    assert by_path["weights/a.bin"].sha256 == _sha(b"\0" * 10) and by_path["weights/a.bin"].size == 10
    assert by_path["empty"].size == 0 and by_path["empty"].sha256 == _sha(b"")
    assert by_path["config.json"].content_type == "application/json"
    assert by_path["weights/a.bin"].source == root / "weights" / "a.bin"


def test_a_compressed_or_unknown_file_has_no_guessed_content_type(tmp_path: Path) -> None:
    root = _make(tmp_path / "d", {"x.tar.gz": b"gz", "README": b"r", "index.html": b"<p>"})
    types = {f.path: f.content_type for f in walk(root)}
    assert types == {"README": None, "index.html": "text/html", "x.tar.gz": None}


def test_an_empty_directory_or_one_whose_files_are_all_excluded_is_refused(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(TreeError) as caught:
        scan(tmp_path / "empty")
    assert caught.value.code == "EmptyTree"
    root = _make(tmp_path / "d", {"a.pyc": b"x"})
    with pytest.raises(TreeError):
        scan(root, exclude=["*.pyc"])


def test_a_file_or_a_missing_path_is_not_a_directory(tmp_path: Path) -> None:
    _make(tmp_path, {"f": b"x"})
    for where in (tmp_path / "f", tmp_path / "missing"):
        with pytest.raises(TreeError) as caught:
            scan(where)
        assert caught.value.code == "NotADirectory"


def test_a_name_the_registry_would_refuse_is_refused_naming_it(tmp_path: Path) -> None:
    # Given names with a control character and over 1,024 bytes, and one that is not UTF-8
    deep = "d" * 200
    root = _make(tmp_path / "d", {"ok": b"", "bad\nname": b"", f"{deep}/{deep}/{deep}/{deep}/{deep}/{'f' * 30}": b""})
    os.close(os.open(os.fsencode(root) + b"/caf\xe9", os.O_CREAT | os.O_WRONLY))
    # When
    with pytest.raises(TreeError) as caught:
        scan(root)
    # Then every one is named, with what is wrong
    assert caught.value.code == "InvalidTree"
    assert "'bad\\nname' is not a file path" in caught.value.message
    assert "b'caf\\xe9' is not a file path: a path is UTF-8 text" in caught.value.message
    assert "1 to 1024 bytes" in caught.value.message
    assert "ok" not in caught.value.details["paths"]
    assert len(caught.value.details["paths"]) == 3


def test_more_than_10000_files_are_refused_without_walking_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(directory, "MAX_FILES", 3)
    root = _make(tmp_path / "d", {f"{folder}/{i}": b"" for folder in "abc" for i in range(2)})
    with pytest.raises(TreeError) as caught:
        scan(root)
    assert "more than 3 files" in caught.value.message


def test_a_fifo_is_refused_naming_it(tmp_path: Path) -> None:
    root = _make(tmp_path / "d", {"a": b""})
    os.mkfifo(root / "pipe")
    with pytest.raises(TreeError) as caught:
        scan(root)
    assert caught.value.details["paths"] == ["pipe"]
    assert "not a regular file" in caught.value.message


# Symbolic links


def test_symlinks_are_refused_by_default_naming_each_and_the_flag(tmp_path: Path) -> None:
    # Given a link to a file, a link to a folder and a broken link
    root = _make(tmp_path / "d", {"real.txt": b"r", "sub/x": b"x"})
    (root / "file-link").symlink_to("real.txt")
    (root / "folder-link").symlink_to("sub", target_is_directory=True)
    (root / "broken").symlink_to("nowhere")
    # When
    with pytest.raises(TreeError) as caught:
        scan(root)
    # Then
    assert caught.value.code == "InvalidTree"  # a broken link is no file to follow either
    assert sorted(caught.value.details["paths"]) == ["broken", "file-link", "folder-link"]
    assert "'file-link' is a symbolic link (to 'real.txt')" in caught.value.message
    assert "--follow-symlinks" in caught.value.message
    (root / "broken").unlink()
    with pytest.raises(TreeError) as only_links:
        scan(root)
    assert only_links.value.code == "SymlinkRefused"


def test_followed_symlinks_are_walked_as_what_they_point_at(tmp_path: Path) -> None:
    root = _make(tmp_path / "d", {"real.txt": b"r", "sub/x": b"x"})
    outside = _make(tmp_path / "outside", {"y": b"y"})
    (root / "file-link").symlink_to("real.txt")
    (root / "folder-link").symlink_to("sub", target_is_directory=True)
    (root / "out").symlink_to(outside, target_is_directory=True)
    files = {f.path: f.sha256 for f in walk(root, follow_symlinks=True)}
    assert files == {
        "file-link": _sha(b"r"),
        "folder-link/x": _sha(b"x"),
        "out/y": _sha(b"y"),
        "real.txt": _sha(b"r"),
        "sub/x": _sha(b"x"),
    }


def test_a_followed_link_that_loops_is_refused(tmp_path: Path) -> None:
    root = _make(tmp_path / "d", {"a/f": b""})
    (root / "a" / "up").symlink_to("..", target_is_directory=True)
    with pytest.raises(TreeError) as caught:
        scan(root, follow_symlinks=True)
    assert caught.value.details["paths"] == ["a/up"]
    assert "loop" in caught.value.message


def test_an_excluded_link_is_not_reported(tmp_path: Path) -> None:
    root = _make(tmp_path / "d", {"a": b"", "node_modules/x": b""})
    (root / "node_modules" / ".bin").symlink_to("x")
    (root / "link.log").symlink_to("a")
    assert _paths(root, exclude=["node_modules/", "*.log"]) == ["a"]
    assert _paths(root, include=["a"]) == ["a"]  # a link to a file the includes leave out is no file of the tree


# Globs


@pytest.mark.parametrize(
    ("pattern", "path", "folder", "matches"),
    [
        ("*.pyc", "a.pyc", False, True),
        ("*.pyc", "x/y/a.pyc", False, True),  # no `/`: any depth
        ("*.pyc", "a.pyc/b", False, False),
        ("*", "a/b", False, True),  # the name at any depth
        ("docs/*.md", "docs/a.md", False, True),
        ("docs/*.md", "docs/x/a.md", False, False),  # `*` stays within a folder
        ("docs/*.md", "x/docs/a.md", False, False),  # a `/` anchors
        ("/build", "build", True, True),
        ("/build", "x/build", True, False),
        ("build/", "build", True, True),
        ("build/", "build", False, False),  # a trailing `/`: folders only
        ("**/test", "a/b/test", True, True),
        ("**/test", "test", True, True),
        ("a/**/b", "a/b", False, True),
        ("a/**/b", "a/x/y/b", False, True),
        ("docs/**", "docs/a/b.md", False, True),
        ("docs/**", "docs", True, False),
        ("?.txt", "a.txt", False, True),
        ("?.txt", "ab.txt", False, False),
        ("[ab].txt", "b.txt", False, True),
        ("[!ab].txt", "c.txt", False, True),
        ("[!ab].txt", "a.txt", False, False),
        ("[a-c]x", "bx", False, True),
        ("\\*.txt", "*.txt", False, True),
        ("\\*.txt", "a.txt", False, False),
        ("[oops", "[oops", False, True),  # an unclosed class is literal
        ("a.b", "axb", False, False),  # `.` is literal
    ],
)
def test_glob_semantics(pattern: str, path: str, folder: bool, matches: bool) -> None:
    assert Pattern.compile(pattern).matches(path, folder=folder) is matches


@pytest.mark.parametrize("pattern", ["", "/", "//a", "a\\"])
def test_a_pattern_that_names_nothing_is_refused(pattern: str) -> None:
    with pytest.raises(TreeError) as caught:
        Pattern.compile(pattern)
    assert caught.value.code == "InvalidPattern"


def test_an_include_of_a_folder_takes_everything_in_it_and_an_exclude_wins() -> None:
    selector = Selector(include=["src", "*.toml"], exclude=["*.pyc"])
    assert selector.keeps("src/a/b.py")
    assert selector.keeps("pyproject.toml")
    assert not selector.keeps("src/a/b.pyc")
    assert not selector.keeps("README.md")
    assert Selector(exclude=["build/"]).enters("src") and not Selector(exclude=["build/"]).enters("x/build")


def test_an_excluded_folder_is_never_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _make(tmp_path / "d", {"a": b"", "node_modules/x/y": b"", "src/b": b""})
    read: list[str] = []
    scandir = os.scandir

    def recording(where: Path) -> object:
        read.append(Path(where).relative_to(root).as_posix())
        return scandir(where)

    monkeypatch.setattr(directory.os, "scandir", recording)
    assert _paths(root, exclude=["node_modules"]) == ["a", "src/b"]
    assert sorted(read) == [".", "src"]


# Hashing and the cache


def test_files_are_hashed_in_parallel_with_progress_in_bytes(tmp_path: Path) -> None:
    files = {f"f{i}": os.urandom(1000 + i) for i in range(20)}
    root = _make(tmp_path / "d", files)
    seen: list[tuple[int, int]] = []
    hashed = hash_files(scan(root), parallel=4, progress=lambda done, total: seen.append((done, total)))
    assert {f.path: f.sha256 for f in hashed} == {p: _sha(d) for p, d in files.items()}
    total = sum(len(d) for d in files.values())
    assert max(seen) == (total, total)


def test_the_cache_serves_an_unchanged_file_and_hashes_a_changed_one(tmp_path: Path) -> None:
    # Given a directory hashed once, its files older than the racy window
    root = _make(tmp_path / "d", {"a": b"aaaa", "b": b"bbbb"})
    for name in "ab":
        _old(root / name)
    database = tmp_path / "cache" / "hashes.sqlite3"
    with HashCache(database) as cache:
        walk(root, cache=cache)
        assert cache.hits == 0
    # When one file changes (same size), and the directory is walked again
    (root / "b").write_bytes(b"BBBB")
    with HashCache(database) as cache:
        files = {f.path: f.sha256 for f in walk(root, cache=cache)}
        # Then the unchanged one came from the cache, the changed one was hashed
        assert cache.hits == 1
    assert files == {"a": _sha(b"aaaa"), "b": _sha(b"BBBB")}


def test_a_cached_hash_is_not_read_again_from_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _make(tmp_path / "d", {"big": b"x" * 100})
    _old(root / "big")
    database = tmp_path / "hashes.sqlite3"
    with HashCache(database) as cache:
        walk(root, cache=cache)

    def no_hashing(*_: object) -> tuple[str, int]:
        raise AssertionError("hashed again")

    monkeypatch.setattr(directory, "_hash", no_hashing)
    with HashCache(database) as cache:
        assert walk(root, cache=cache)[0].sha256 == _sha(b"x" * 100)


def test_a_file_modified_within_the_racy_window_is_not_recorded(tmp_path: Path) -> None:
    root = _make(tmp_path / "d", {"fresh": b"new"})
    database = tmp_path / "hashes.sqlite3"
    with HashCache(database) as cache:
        walk(root, cache=cache)
    with sqlite3.connect(database) as db:
        assert db.execute("SELECT COUNT(*) FROM hashes").fetchone() == (0,)


def test_the_cache_key_is_the_files_identity(tmp_path: Path) -> None:
    # Given a recorded file replaced by another of the same size and mtime (a new inode)
    root = _make(tmp_path / "d", {"f": b"1111"})
    _old(root / "f")
    database = tmp_path / "hashes.sqlite3"
    with HashCache(database) as cache:
        walk(root, cache=cache)
    status = (root / "f").stat()
    replacement = tmp_path / "other"
    replacement.write_bytes(b"2222")
    os.utime(replacement, ns=(status.st_atime_ns, status.st_mtime_ns))
    os.replace(replacement, root / "f")
    # Then it is hashed again
    with HashCache(database) as cache:
        assert walk(root, cache=cache)[0].sha256 == _sha(b"2222")
        assert cache.hits == 0


def test_a_broken_or_unwritable_cache_never_fails_a_walk(tmp_path: Path) -> None:
    root = _make(tmp_path / "d", {"a": b"a"})
    _old(root / "a")
    corrupt = tmp_path / "corrupt.sqlite3"
    corrupt.write_bytes(b"this is no database" * 100)
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("")
    for database in (corrupt, blocked / "hashes.sqlite3"):
        with HashCache(database) as cache:
            assert walk(root, cache=cache)[0].sha256 == _sha(b"a")


def test_the_cache_lives_under_the_users_cache_directory() -> None:
    assert cache_dir({"ARCA_CACHE_DIR": "/c"}) == Path("/c")
    assert cache_dir({"XDG_CACHE_HOME": "/x", "HOME": "/h"}) == Path("/x/arca")
    assert cache_dir({"HOME": "/h"}) == Path("/h/.cache/arca")
    assert HashCache.default({"ARCA_CACHE_DIR": "/c"}).database == Path("/c/hashes.sqlite3")


def test_rows_unused_for_long_are_dropped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _make(tmp_path / "d", {"a": b"a"})
    _old(root / "a")
    database = tmp_path / "hashes.sqlite3"
    with HashCache(database) as cache:
        walk(root, cache=cache)
    today = hashcache_module._today()
    monkeypatch.setattr(hashcache_module, "_today", lambda: today + hashcache_module.PRUNE_AFTER_DAYS + 1)
    with HashCache(database) as cache:
        cache.get(tmp_path / "unrelated", (root / "a").stat())  # opens it
    with sqlite3.connect(database) as db:
        assert db.execute("SELECT COUNT(*) FROM hashes").fetchone() == (0,)


def test_a_file_that_changes_after_the_walk_is_refused_naming_it(tmp_path: Path) -> None:
    root = _make(tmp_path / "d", {"a": b"aaaa"})
    found = scan(root)
    (root / "a").write_bytes(b"aaaaaaaa")
    with pytest.raises(TreeError) as caught:
        hash_files(found)
    assert caught.value.code == "SourceChanged"
    assert caught.value.details == {"path": "a"}


def test_a_file_that_cannot_be_read_is_refused_naming_it(tmp_path: Path) -> None:
    root = _make(tmp_path / "d", {"a": b"a", "gone": b"x"})
    found = scan(root)
    (root / "gone").unlink()
    with pytest.raises(TreeError) as caught:
        hash_files(found)
    assert caught.value.code == "Unreadable"
    assert caught.value.details == {"path": "gone"}


def test_a_folder_that_cannot_be_read_is_refused_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _make(tmp_path / "d", {"a": b"", "secret/x": b""})
    scandir = os.scandir

    def refusing(where: Path) -> object:
        if Path(where).name == "secret":
            raise PermissionError(13, "Permission denied")
        return scandir(where)

    monkeypatch.setattr(directory.os, "scandir", refusing)
    with pytest.raises(TreeError) as caught:
        scan(root)
    assert "'secret' cannot be read (Permission denied)" in caught.value.message
