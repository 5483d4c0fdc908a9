"""Trees on the client's side (arca_client.trees): the manifest (and that it is the registry's, byte for byte), the
upload plan and publish body, where a download puts each file, and the diff of two trees."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings

from arca.domain import trees as server
from arca_client.errors import ChecksumMismatchError
from arca_client.trees import (
    LocalFile,
    Placement,
    TreeEntry,
    TreeError,
    canonical_manifest,
    entries_from_listing,
    parse_manifest,
    plan_download,
    plan_upload,
    publish_form,
    receive,
    tree_diff,
    tree_digest,
)
from arca_client.trees import manifest as client_manifest
from tests.tree_vectors import VECTORS, reference_manifest
from tests.tree_vectors import trees as valid_trees


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _entries(files: list[tuple[str, str, int]]) -> list[TreeEntry]:
    return [TreeEntry(p, d, s) for p, d, s in files]


# The manifest


@settings(max_examples=200)
@given(valid_trees())
def test_the_clients_manifest_is_the_registrys_byte_for_byte(files: list[tuple[str, str, int]]) -> None:
    ours = canonical_manifest(_entries(files))
    assert ours == server.canonical_manifest([server.FileEntry(p, d, s) for p, d, s in files])
    assert ours == reference_manifest(files)
    assert [(e.path, e.sha256, e.size) for e in parse_manifest(ours, _sha(ours))] == sorted(files)


@pytest.mark.parametrize("name", sorted(VECTORS))
def test_fixed_vectors(name: str) -> None:
    files, digest = VECTORS[name]
    assert tree_digest(_entries(files)) == digest


def test_the_path_rules_are_the_registrys() -> None:
    for path in ["a", "a/b", "", "/a", "a//b", "a/./b", "..", "a\x00", "a\x7f", "x" * 1025, "é" * 513, "\udc80"]:
        assert (client_manifest.path_problem(path) is None) == (server.path_problem(path) is None), path


def test_a_downloaded_manifest_is_checked_against_the_versions_sha256_and_the_rules() -> None:
    good = canonical_manifest([TreeEntry("a", "a" * 64, 1)])
    with pytest.raises(ChecksumMismatchError):
        parse_manifest(good, "b" * 64)
    for bad in [b"{", b'{"files":[{"path":"a"}]}', b'{"files":[],"x":1}', good.replace(b":", b": ", 1)]:
        with pytest.raises(TreeError):
            parse_manifest(bad)
    folder = json.dumps(
        {"files": [{"path": "a", "sha256": "a" * 64, "size": 1}, {"path": "a/b", "sha256": "a" * 64, "size": 1}]},
        separators=(",", ":"),
    )
    with pytest.raises(TreeError) as caught:
        parse_manifest(folder.encode())
    assert caught.value.details == {"path": "a"}


def test_entries_from_a_listing_keep_their_content_types() -> None:
    listing = [{"path": "a", "sha256": "a" * 64, "size": 1, "content_type": "text/plain"}]
    assert entries_from_listing(listing) == [TreeEntry("a", "a" * 64, 1, "text/plain")]


# Uploads and the publish body


def _local(path: str, data: bytes, where: Path) -> LocalFile:
    return LocalFile(path, _sha(data), len(data), source=where / path)


def test_each_content_is_uploaded_once_and_only_when_the_registry_lacks_it(tmp_path: Path) -> None:
    # Given three paths sharing one content, one content the registry holds, and a large one
    files = [
        _local("a", b"same", tmp_path),
        _local("b/a", b"same", tmp_path),
        _local("c", b"same", tmp_path),
        _local("held", b"old", tmp_path),
        _local("large", b"x" * 100, tmp_path),
    ]
    # When
    plan = plan_upload(files, held={_sha(b"old")})
    # Then
    assert [(u.sha256, u.paths) for u in plan.uploads] == [
        (_sha(b"x" * 100), ("large",)),
        (_sha(b"same"), ("a", "b/a", "c")),
    ]
    assert plan.uploads[1].source == tmp_path / "a"
    assert (plan.files_to_send, plan.bytes_to_send, plan.held, plan.bytes_held) == (2, 104, 1, 3)


def test_an_unchanged_tree_uploads_nothing(tmp_path: Path) -> None:
    files = [_local(f"f{i}", str(i).encode(), tmp_path) for i in range(1000)]
    plan = plan_upload(files, held={f.sha256 for f in files})
    assert plan.uploads == [] and plan.held == 1000


def test_a_tree_that_fits_one_request_is_published_inline_with_content_types() -> None:
    entries = [TreeEntry("b", "b" * 64, 2), TreeEntry("a.json", "a" * 64, 1, "application/json")]
    form = publish_form(entries, metadata={"commit": "abc"})
    assert not form.by_reference
    assert form.body == {
        "files": [
            {"path": "b", "sha256": "b" * 64, "size": 2},
            {"path": "a.json", "sha256": "a" * 64, "size": 1, "content_type": "application/json"},
        ],
        "metadata": {"commit": "abc"},
    }
    assert form.digest == tree_digest(entries)


def test_a_tree_too_large_for_one_request_is_published_by_its_manifest() -> None:
    entries = [TreeEntry(f"{i:04}/" + "p" * 1000, _sha(str(i).encode()), i) for i in range(6000)]
    form = publish_form(entries, force=True)
    assert form.by_reference
    assert form.body == {"tree": form.digest, "force": True}
    assert form.manifest is not None and _sha(form.manifest) == form.digest
    assert form.content_type == "application/vnd.arca.tree+json"
    assert form.types is None  # no file is typed: no types document


def test_a_tree_by_reference_carries_its_content_types_as_the_registry_keeps_them() -> None:
    # Given a tree too large for one request, two of its files typed
    entries = [TreeEntry(f"{i:04}/" + "p" * 1000, _sha(str(i).encode()), i) for i in range(6000)]
    entries[3] = TreeEntry(entries[3].path, entries[3].sha256, 3, "text/plain")
    entries[5] = TreeEntry(entries[5].path, entries[5].sha256, 5, "application/octet-stream")
    # When
    form = publish_form(entries)
    # Then the body names the types document to upload, the registry's own form of those types
    assert form.by_reference and form.types is not None
    assert form.body == {"tree": form.digest, "file_types": _sha(form.types)}
    assert json.loads(form.types) == {"content_types": {entries[3].path: "text/plain"}}
    registry = server.types_document(server.FileEntry(e.path, e.sha256, e.size, e.content_type) for e in entries)
    assert form.types == registry


def test_the_inline_bound_counts_the_body_as_a_string_inside_the_event() -> None:
    # Quotes and backslashes are escaped again inside Lambda's event: a path of backslashes counts twice or more.
    entries = [TreeEntry("\\" * 100, "a" * 64, 1)]
    body = json.dumps({"files": [entries[0].as_json()]})
    assert publish_form(entries, inline_event_bytes=len(body) + 50).by_reference
    assert not publish_form(entries, inline_event_bytes=len(json.dumps(body))).by_reference


def test_a_publish_of_no_tree_is_refused_before_any_request() -> None:
    with pytest.raises(TreeError):
        publish_form([TreeEntry("a", "a" * 64, 1), TreeEntry("a/b", "a" * 64, 1)])


# Downloads


def _tree(files: dict[str, bytes]) -> list[TreeEntry]:
    return [TreeEntry(p, _sha(d), len(d)) for p, d in files.items()]


def test_each_file_goes_under_the_destination_and_files_already_right_are_kept(tmp_path: Path) -> None:
    # Given a destination holding one right file, one of the right size but other bytes, one of another size
    files = {"a/right": b"1111", "a/wrong": b"2222", "short": b"333", "new/deep/file": b""}
    destination = tmp_path / "out"
    (destination / "a").mkdir(parents=True)
    (destination / "a" / "right").write_bytes(b"1111")
    (destination / "a" / "wrong").write_bytes(b"XXXX")
    (destination / "short").write_bytes(b"33")
    # When
    plan = plan_download(_tree(files), destination)
    # Then
    where = {p.entry.path: (p.target, p.present) for p in plan.placements}
    assert where["a/right"] == (destination / "a" / "right", True)
    assert where["new/deep/file"] == (destination / "new" / "deep" / "file", False)
    assert sorted(p.entry.path for p in plan.missing) == ["a/wrong", "new/deep/file", "short"]
    assert plan.bytes_to_fetch == 7


def test_a_download_resumes_keeping_what_a_first_run_wrote(tmp_path: Path) -> None:
    files = {f"f{i}": os.urandom(10) for i in range(5)}
    entries = _tree(files)
    destination = tmp_path / "out"
    first = plan_download(entries, destination)
    for placement in first.placements[:3]:  # the first run is killed after three files
        receive(placement, [files[placement.entry.path]])
    second = plan_download(entries, destination)
    assert [p.entry.path for p in second.missing] == ["f3", "f4"]


@pytest.mark.parametrize(
    ("setup", "path", "why"),
    [
        (lambda d, o: (d / "a").symlink_to(o, target_is_directory=True), "a/passwd", "symbolic link"),
        (lambda d, o: (d / "f").symlink_to(o / "x"), "f", "symbolic link"),
        (lambda d, o: (d / "a").write_bytes(b"file"), "a/b", "to be a folder"),
        (lambda d, o: (d / "a" / "b").mkdir(parents=True), "a/b", "is a folder"),
    ],
)
def test_a_file_that_would_escape_or_clash_is_refused_and_nothing_is_written(
    tmp_path: Path, setup: object, path: str, why: str
) -> None:
    # Given
    destination, outside = tmp_path / "out", tmp_path / "outside"
    destination.mkdir()
    outside.mkdir()
    setup(destination, outside)  # type: ignore[operator]
    # When
    with pytest.raises(TreeError) as caught:
        plan_download(_tree({"ok": b"", path: b"data"}), destination)
    # Then
    assert caught.value.code == "UnsafePath"
    assert caught.value.details == {"path": path}
    assert why in caught.value.message
    assert list(outside.iterdir()) == []


def test_paths_that_leave_the_destination_are_refused_by_the_rules(tmp_path: Path) -> None:
    for path in ["../x", "/etc/passwd", "a/../../x"]:
        with pytest.raises(TreeError):
            plan_download([TreeEntry(path, "a" * 64, 1)], tmp_path / "out")


def test_a_file_is_written_whole_only_when_its_bytes_are_right(tmp_path: Path) -> None:
    # Given
    entry = TreeEntry("d/f.bin", _sha(b"hello world"), 11)
    placement = Placement(entry, tmp_path / "d" / "f.bin", present=False)
    # When the bytes are wrong
    with pytest.raises(ChecksumMismatchError):
        receive(placement, [b"hello", b" moon!"])
    # Then nothing is left
    assert list((tmp_path / "d").iterdir()) == []
    # When they are right, in chunks
    receive(placement, [b"hello", b" ", b"world"])
    assert placement.target.read_bytes() == b"hello world"
    assert list((tmp_path / "d").iterdir()) == [placement.target]


# Diff


def test_a_diff_lists_added_removed_and_changed_files_with_sizes() -> None:
    before = _tree({"same": b"s", "changed": b"old", "removed": b"rrrr"})
    after = _tree({"same": b"s", "changed": b"newer", "added/x": b"aa"})
    diff = tree_diff(before, after)
    assert [e.path for e in diff.added] == ["added/x"]
    assert [e.path for e in diff.removed] == ["removed"]
    assert [(c.path, c.before.size, c.after.size, c.size_change) for c in diff.changed] == [("changed", 3, 5, 2)]
    assert (diff.unchanged, diff.size_change, diff.same) == (1, 2 - 4 + 2, False)
    data = diff.as_json()
    assert data["changed"] == [
        {
            "path": "changed",
            "from": {"sha256": _sha(b"old"), "size": 3},
            "to": {"sha256": _sha(b"newer"), "size": 5},
            "size_change": 2,
        }
    ]
    json.dumps(data)


def test_a_content_type_alone_is_no_change() -> None:
    before = [TreeEntry("a", "a" * 64, 1, "text/plain")]
    after = [TreeEntry("a", "a" * 64, 1, None)]
    assert tree_diff(before, after).same


@given(valid_trees(), valid_trees())
def test_a_diff_accounts_for_every_path(first: list[tuple[str, str, int]], second: list[tuple[str, str, int]]) -> None:
    diff = tree_diff(_entries(first), _entries(second))
    assert len(diff.removed) + len(diff.changed) + diff.unchanged == len(first)
    assert len(diff.added) + len(diff.changed) + diff.unchanged == len(second)
    assert diff.size_change == sum(s for *_, s in second) - sum(s for *_, s in first)
