"""Trees of files, the pure rules (arca.domain.trees): paths, entries, the canonical manifest and its digest, strict
parsing of an uploaded manifest, paging."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from arca.domain import trees
from arca.domain.errors import ValidationError
from arca.domain.trees import FileEntry, Tree
from arca.protocols.oci import manifests as oci
from tests.tree_vectors import MIXED_ORDER, VECTOR_BYTES, VECTORS, reference_manifest
from tests.tree_vectors import trees as valid_trees

A, B, C = "a" * 64, "b" * 64, "c" * 64


def _entries(files: list[tuple[str, str, int]]) -> list[FileEntry]:
    return [FileEntry(p, d, s) for p, d, s in files]


def _body(*paths: str) -> list[dict[str, Any]]:
    return [{"path": p, "sha256": A, "size": 1} for p in paths]


def _refusal(files: object) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        trees.parse_files(files)
    return caught.value


# Paths


@pytest.mark.parametrize(
    "path",
    ["a", "a/b/c.txt", "a b", "é/ü", "日本/語.txt", "😀", 'a"b\\c', "x" * 1024, "é" * 512, ".hidden", "a./..b", "~"],
)
def test_paths_that_are_tree_paths(path: str) -> None:
    assert trees.path_problem(path) is None
    assert trees.check_path(path) == path


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("", "1 to 1024 bytes"),
        ("x" * 1025, "1 to 1024 bytes"),
        ("é" * 513, "1 to 1024 bytes"),  # 1,026 bytes of UTF-8 in 513 characters
        ("/a", "start with '/'"),
        ("a/", "empty"),
        ("a//b", "empty"),
        ("./a", "'.'"),
        ("a/./b", "'.'"),
        ("..", "'..'"),
        ("a/../b", "'..'"),
        ("a\x00b", "control"),
        ("a\nb", "control"),
        ("a\x1fb", "control"),
        ("a\x7fb", "control"),
        ("a\udc80", "UTF-8"),
    ],
)
def test_paths_that_are_refused_say_why(path: str, why: str) -> None:
    problem = trees.path_problem(path)
    assert problem is not None and why in problem
    with pytest.raises(ValidationError) as caught:
        trees.check_path(path, "files[3].path")
    assert caught.value.field == "files[3].path"
    assert caught.value.details == {"path": path}


@given(st.text(max_size=40))
def test_the_path_rules_are_the_oci_packages_rules(path: str) -> None:
    # One rule of paths: the OCI package names a manifest's files by it.
    assert (trees.path_problem(path) is None) == (oci.path_problem(path) is None)


# Entries


def test_files_are_read_in_the_order_given_with_their_content_types() -> None:
    entries = trees.parse_files(
        [
            {"path": "b", "sha256": A, "size": 0},
            {"path": "a/x", "sha256": B, "size": 5, "content_type": "text/plain"},
            {"path": "c", "sha256": A, "size": 0, "content_type": None},
        ]
    )
    assert entries == (FileEntry("b", A, 0), FileEntry("a/x", B, 5, "text/plain"), FileEntry("c", A, 0))
    assert entries[0].answer() == {"path": "b", "sha256": A, "size": 0, "content_type": "application/octet-stream"}


@pytest.mark.parametrize(
    ("files", "field", "path"),
    [
        (_body("a", "b", "c", "/d"), "files[3].path", "/d"),
        (_body("a", "b", "a"), "files[2].path", "a"),  # listed twice: the second listing is named
        (_body("x", "a/b/c", "a"), "files[2].path", "a"),  # a file that is a folder of another, either order
        (_body("a/b", "x", "a/b/c"), "files[0].path", "a/b"),
        ([{"path": "a", "sha256": A.upper(), "size": 1}], "files[0].sha256", "a"),
        ([{"path": "a", "sha256": A[:63], "size": 1}], "files[0].sha256", "a"),
        ([{"path": "a", "sha256": A, "size": -1}], "files[0].size", "a"),
        ([{"path": "a", "sha256": A, "size": True}], "files[0].size", "a"),
        ([{"path": "a", "sha256": A, "size": 1.0}], "files[0].size", "a"),
        ([{"path": "a", "sha256": A, "size": "1"}], "files[0].size", "a"),
        ([{"path": "a", "sha256": A, "size": 5 * 1024**4 + 1}], "files[0].size", "a"),
        ([{"path": "a", "sha256": A, "size": 1, "content_type": "not a type"}], "files[0].content_type", "a"),
    ],
)
def test_each_refusal_names_the_field_and_the_offending_path(files: list[Any], field: str, path: str) -> None:
    error = _refusal(files)
    assert error.field == field
    assert error.message.startswith(f"{field}: ")
    assert error.details["path"] == path
    assert repr(path) in error.message or field.endswith((".sha256", ".size", ".content_type"))


@pytest.mark.parametrize(
    ("files", "field"),
    [
        ("a", "files"),
        ({"path": "a"}, "files"),
        (["a"], "files[0]"),
        ([{"path": "a", "sha256": A}], "files[0].size"),
        ([{"sha256": A, "size": 1}], "files[0].path"),
        ([{"path": 1, "sha256": A, "size": 1}], "files[0].path"),
        ([{"path": "a", "sha256": A, "size": 1, "mode": 644}], "files[0].mode"),
    ],
)
def test_malformed_files_name_the_field(files: object, field: str) -> None:
    assert _refusal(files).field == field


def test_a_folder_conflict_is_between_whole_segments() -> None:
    # `a!` sorts between `a` and `a/`: neither it nor `ab/c` makes `a` a folder
    assert len(trees.parse_files(_body("a", "a!", "ab/c", "a.d/e"))) == 4


def test_at_most_10000_files_refused_before_reading_them() -> None:
    assert len(trees.parse_files([{"path": f"f{i}", "sha256": A, "size": 0} for i in range(10_000)])) == 10_000
    # The entries past the limit are not even objects: the count is checked first.
    error = _refusal([None] * 10_001)
    assert error.field == "files"
    assert "10001 files, at most 10000" in error.message


def test_an_empty_file_and_an_empty_tree_are_trees() -> None:
    assert Tree.of([FileEntry("empty", hashlib.sha256(b"").hexdigest(), 0)]).size == 0
    empty = Tree.of([])
    assert (empty.count, empty.size, empty.manifest) == (0, 0, b'{"files":[]}')


def test_a_body_models_files_field_names_the_entry_as_written() -> None:
    class Body(BaseModel):
        files: trees.TreeFiles

    assert Body.model_validate({"files": _body("a")}).files == (FileEntry("a", A, 1),)
    with pytest.raises(ValidationError) as caught:
        Body.model_validate({"files": _body("a", "a/b")})
    assert caught.value.field == "files[0].path"
    assert Body.model_json_schema()["properties"]["files"]["maxItems"] == 10_000


# The manifest and its digest


def test_the_tree_is_in_path_order_with_its_count_size_and_distinct_contents() -> None:
    tree = Tree.of([FileEntry("b", A, 3), FileEntry("a/z", B, 4), FileEntry("a!", A, 3)])
    assert [f.path for f in tree.files] == ["a!", "a/z", "b"]  # byte order: '!' (0x21) before '/' (0x2f)
    assert (tree.count, tree.size, tree.contents()) == (3, 10, {A: 3, B: 4})
    assert tree.digest == hashlib.sha256(tree.manifest).hexdigest() == trees.tree_digest(tree.files)


@pytest.mark.parametrize("name", sorted(VECTORS))
def test_fixed_vectors_computed_by_another_implementation(name: str) -> None:
    files, digest = VECTORS[name]
    manifest = trees.canonical_manifest(_entries(files))
    assert hashlib.sha256(manifest).hexdigest() == digest
    assert manifest == reference_manifest(files)
    if name in VECTOR_BYTES:
        assert manifest == VECTOR_BYTES[name]
    assert trees.parse_manifest(manifest).digest == digest


def test_path_order_is_utf8_byte_order_not_utf16() -> None:
    files, _ = VECTORS["mixed"]
    assert [f.path for f in Tree.of(_entries(files)).files] == MIXED_ORDER


def test_non_ascii_is_written_as_itself_and_only_quotes_and_backslashes_are_escaped() -> None:
    manifest = trees.canonical_manifest([FileEntry('é/"q\\', A, 1)])
    assert manifest == ('{"files":[{"path":"é/\\"q\\\\","sha256":"' + A + '","size":1}]}').encode()


@settings(max_examples=200)
@given(valid_trees())
def test_the_manifest_is_the_reference_implementations_bytes(files: list[tuple[str, str, int]]) -> None:
    assert trees.canonical_manifest(_entries(files)) == reference_manifest(files)


@given(valid_trees(), st.randoms(use_true_random=False))
def test_the_digest_does_not_depend_on_the_order_files_are_given(files: list[Any], random: Any) -> None:
    shuffled = list(files)
    random.shuffle(shuffled)
    assert Tree.of(_entries(shuffled)).digest == Tree.of(_entries(files)).digest


@given(valid_trees())
def test_any_valid_tree_round_trips_through_its_manifest(files: list[tuple[str, str, int]]) -> None:
    tree = Tree.of(_entries(files))
    parsed = trees.parse_manifest(tree.manifest)
    assert parsed == tree
    assert sorted(files) == sorted((f.path, f.sha256, f.size) for f in parsed.files)


def test_the_largest_manifest_bound_holds_10000_of_the_longest_entries() -> None:
    longest = FileEntry('"' * 1024, A, trees.MAX_FILE_SIZE)
    entry = len(trees.canonical_manifest([longest])) - len(b'{"files":[]}') + 1  # with its comma
    assert len(b'{"files":[]}') + 10_000 * entry <= trees.MAX_MANIFEST_BYTES


# Parsing an uploaded manifest


def _manifest_refusal(document: bytes) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        trees.parse_manifest(document)
    assert caught.value.field == "tree"
    return caught.value


def _json(files: list[dict[str, Any]], **dumps: Any) -> bytes:
    return json.dumps({"files": files}, **dumps).encode()


GOOD = [{"path": "a", "sha256": A, "size": 1}, {"path": "é", "sha256": B, "size": 2}]


@pytest.mark.parametrize(
    "document",
    [
        _json(GOOD),  # spaces after ':' and ','
        _json(GOOD, separators=(",", ":")),  # é as \u00e9
        _json([{"size": 1, "sha256": A, "path": "a"}], separators=(",", ":")),  # keys out of order
        trees.canonical_manifest(_entries([("a", A, 1)])) + b"\n",
        b"\xef\xbb\xbf" + trees.canonical_manifest([]),  # a byte-order mark
    ],
)
def test_an_equivalent_but_not_canonical_manifest_is_refused_with_the_canonical_digest(document: bytes) -> None:
    error = _manifest_refusal(document)
    assert "canonical" in error.message or "not JSON" in error.message
    if "canonical" in error.message:
        assert error.details["canonical_sha256"] in error.message


def test_files_out_of_path_order_are_refused_naming_the_first_out_of_place() -> None:
    document = _json([GOOD[1], GOOD[0]], separators=(",", ":"), ensure_ascii=False)
    error = _manifest_refusal(document)
    assert "path order" in error.message
    assert error.details["at"] == "files[1].path"
    assert error.details["path"] == "a"
    assert error.details["canonical_sha256"] == trees.tree_digest(_entries([("a", A, 1), ("é", B, 2)]))


@pytest.mark.parametrize(
    ("document", "words", "at"),
    [
        (b"{", "not JSON", None),
        (b"\xff", "not UTF-8", None),
        (b'{"files":[],"files":[]}', "duplicate key", None),
        (b'{"files":[{"path":"a","sha256":"' + A.encode() + b'","size":NaN}]}', "NaN", None),
        (b"[]", '{"files"', None),
        (b'{"files":[],"name":"x"}', '{"files"', None),
        (_json([{"path": "a", "sha256": A, "size": 1, "content_type": "text/plain"}]), "not a field", "files[0]"),
        (_json([{"path": "a", "sha256": A, "size": 1}, {"path": "a/b", "sha256": A, "size": 1}]), "folder", "files[0]"),
        (_json([{"path": "a/../b", "sha256": A, "size": 1}]), "'..'", "files[0].path"),
        (_json([{"path": "a", "sha256": A, "size": 1.5}]), "integer", "files[0].size"),
    ],
)
def test_a_manifest_that_is_no_tree_is_refused_naming_tree_and_the_place(
    document: bytes, words: str, at: str | None
) -> None:
    error = _manifest_refusal(document)
    assert error.message.startswith("tree: ")
    assert words in error.message
    if at is not None:
        assert error.details["at"].startswith(at)


def test_a_document_larger_than_any_manifest_is_refused_unread() -> None:
    error = _manifest_refusal(b" " * (trees.MAX_MANIFEST_BYTES + 1))
    assert "more than any tree's" in error.message


# Listing


def _tree(*paths: str) -> Tree:
    return Tree.of(FileEntry(p, A, 1) for p in paths)


def test_a_prefix_is_a_string_prefix_and_keeps_path_order() -> None:
    tree = _tree("a/x", "a/y", "ab", "b/c", "a!")
    page, after = trees.files_page(tree.files, prefix="a", limit=10, max_bytes=10**6)
    assert [f.path for f in page] == ["a!", "a/x", "a/y", "ab"]
    assert after is None
    page, _ = trees.files_page(tree.files, prefix="a/", limit=10, max_bytes=10**6)
    assert [f.path for f in page] == ["a/x", "a/y"]


@given(valid_trees(), st.integers(min_value=1, max_value=7), st.text(max_size=2))
def test_pages_put_together_are_the_listing(files: list[Any], limit: int, prefix: str) -> None:
    tree = Tree.of(_entries(files))
    seen: list[str] = []
    after: str | None = None
    while True:
        page, after = trees.files_page(tree.files, prefix=prefix, limit=limit, after=after, max_bytes=500)
        assert len(page) <= limit
        seen.extend(f.path for f in page)
        if after is None:
            break
    assert seen == [f.path for f in tree.files if f.path.startswith(prefix)]


def test_a_page_is_cut_by_bytes_but_holds_one_file_at_least() -> None:
    tree = _tree("a" * 1000, "b" * 1000, "c")
    page, after = trees.files_page(tree.files, limit=100, max_bytes=1500)
    assert [f.path for f in page] == ["a" * 1000] and after == "a" * 1000
    page, after = trees.files_page(tree.files, limit=100, max_bytes=10, after=after)
    assert [f.path for f in page] == ["b" * 1000] and after == "b" * 1000


def test_a_continuation_outside_the_prefix_is_refused() -> None:
    with pytest.raises(ValidationError) as caught:
        trees.files_page(_tree("a", "b").files, prefix="b", limit=1, after="a", max_bytes=10**6)
    assert caught.value.field == "next_token"


@pytest.mark.parametrize("prefix", ["", "a", "a/", "日本/", "x" * 1024])
def test_prefixes_that_may_start_a_path(prefix: str) -> None:
    assert trees.check_prefix(prefix) == prefix


@pytest.mark.parametrize("prefix", ["x" * 1025, "a\x00", "a\x7f", "\udc80", 3])
def test_prefixes_no_path_starts_with_are_refused(prefix: object) -> None:
    with pytest.raises(ValidationError) as caught:
        trees.check_prefix(prefix)
    assert caught.value.field == "prefix"


@given(valid_trees(), st.integers(min_value=1, max_value=5))
def test_counting_steps_cover_each_distinct_content_once(files: list[Any], limit: int) -> None:
    tree = Tree.of(_entries(files))
    counted: list[str] = []
    cursor: str | None = None
    while step := tree.contents_after(cursor, limit):
        assert len(step) <= limit
        counted.extend(step)
        cursor = step[-1]
    assert counted == sorted({f.sha256 for f in tree.files})


def test_entries_built_in_code_are_held_to_the_same_rules() -> None:
    with pytest.raises(ValidationError) as caught:
        Tree.of([FileEntry("ok", A, 1), FileEntry("a/../b", A, 1)])
    assert caught.value.field == "files[1].path"
    deep = "/".join(["d"] * 500)
    with pytest.raises(ValidationError) as folder:
        Tree.of([FileEntry(f"{deep}/x/y", A, 1), FileEntry(f"{deep}/x", A, 1)])
    assert folder.value.field == "files[1].path"


def test_a_counting_step_is_the_distinct_contents_after_its_cursor_in_sha256_order() -> None:
    # Given a tree whose paths are in another order than its contents, one content held by two paths
    tree = Tree.of([FileEntry("a", C, 1), FileEntry("b", A, 1), FileEntry("c", C, 1), FileEntry("d", B, 2)])
    # Then the steps are in sha256 order, each content once, whatever holds it
    assert tree.contents_after(None, 2) == [A, B]
    assert tree.contents_after(B, 2) == [C]
    assert tree.contents_after(C, 2) == []
    # And a step repeated from its cursor (after a crash) is the same step; a cursor between two contents, or
    # before the first, resumes after it
    assert tree.contents_after(A, 1) == tree.contents_after(A, 1) == [B]
    assert tree.contents_after("b" + "0" * 63, 5) == [B, C]
    assert tree.contents_after("0" * 64, 5) == [A, B, C]
    assert tree.contents_after("f" * 64, 5) == []


def test_an_empty_tree_has_no_step() -> None:
    assert Tree.of([]).contents_after(None, 100) == []


def test_a_types_document_holds_only_the_types_that_are_not_the_default() -> None:
    # Given files typed, typed as the default, and untyped
    files = [
        FileEntry("b.json", "0" * 64, 1, "application/json"),
        FileEntry("a.md", "1" * 64, 2, "text/markdown"),
        FileEntry("c.bin", "2" * 64, 3, "application/octet-stream"),
        FileEntry("d", "3" * 64, 4),
    ]
    # When
    document = trees.types_document(files)
    # Then it is canonical JSON of the two typed files, and applying it to the untyped tree gives their types back
    assert document == b'{"content_types":{"a.md":"text/markdown","b.json":"application/json"}}'
    bare = Tree.of(FileEntry(f.path, f.sha256, f.size) for f in files)
    typed = trees.with_types(bare, document)
    assert [f.served_as() for f in typed.files] == [
        "text/markdown",
        "application/json",
        "application/octet-stream",
        "application/octet-stream",
    ]
    assert typed.digest == bare.digest  # the types are not part of the manifest


def test_a_tree_with_no_type_but_the_default_has_no_types_document() -> None:
    assert (
        trees.types_document([FileEntry("a", "0" * 64, 1, "application/octet-stream"), FileEntry("b", "1" * 64, 1)])
        is None
    )
