"""The Hub protocol (arca.protocols.hf), pure: paths, commit ids, answers and the dispatcher over an in-memory backend.

What the real `huggingface_hub` makes of these answers over HTTP is tests/protocols/test_hf_client.py.
"""

from __future__ import annotations

import base64
import hashlib
import json

import pytest
from huggingface_hub.utils import parse_datetime
from huggingface_hub.utils.sha import git_hash
from hypothesis import given, settings
from hypothesis import strategies as st

from arca.protocols.hf import FileEntry, Request, answers, commits, listing, serve
from arca.protocols.hf.paths import ModelInfo, Resolve, Tree, is_file_path, parse
from tests.protocols.hf_fakes import FakeHub

REPO = "team/model"
FILES = {"config.json": b'{"a": 1}', "weights/model.bin": b"w" * 300, "weights/shards/0.bin": b"0", "README.md": b""}


def _hub() -> FakeHub:
    hub = FakeHub()
    hub.publish(REPO, FILES)
    hub.publish(REPO, {"config.json": b'{"a": 2}'})
    hub.set_alias(REPO, "prod", 1)
    return hub


def _get(hub: FakeHub, path: str, method: str = "GET", **query: str):  # type: ignore[no-untyped-def]
    return serve(Request(method, path, "http://arca.test/prod/hf", query, routing_key="user-1"), hub)


def _json(answer) -> object:  # type: ignore[no-untyped-def]
    return json.loads(answer.body)


# Paths.


@pytest.mark.parametrize(
    ("path", "route"),
    [
        ("/api/models/model", ModelInfo("model", "main")),
        ("/api/models/team/model", ModelInfo("team/model", "main")),
        ("/api/models/model/revision/prod", ModelInfo("model", "prod")),
        ("/api/models/team/model/revision/prod", ModelInfo("team/model", "prod")),
        ("/api/models/team/model/revision/refs%2Fpr%2F1", ModelInfo("team/model", "refs/pr/1")),
        ("/api/models/team/model/revision/refs/pr/1", ModelInfo("team/model", "refs/pr/1")),  # decoded by a proxy
        ("/api/models/model/tree/main", Tree("model", "main", "")),
        ("/api/models/team/model/tree/main/weights%2Fshards", Tree("team/model", "main", "weights/shards")),
        ("/api/models/team/model/tree/main/weights/shards", Tree("team/model", "main", "weights/shards")),
        ("/api/models/a/tree/tree/main", Tree("a/tree", "main", "")),  # a two-segment repo wins
        ("/api/models/a/revision", ModelInfo("a/revision", "main")),
        ("/model/resolve/3/config.json", Resolve("model", "3", "config.json")),
        ("/team/model/resolve/prod/weights/model.bin", Resolve("team/model", "prod", "weights/model.bin")),
        ("/team/model/resolve/prod/a%20b.txt", Resolve("team/model", "prod", "a b.txt")),
        ("/team/model/resolve/prod", Resolve("team/model", "prod", "")),
        ("/api/models/resolve/main/f", Resolve("api/models", "main", "f")),
        ("/api/models", None),
        ("/team/model/blob/main/f", None),
        ("/a/b/c/resolve/main/f", None),
    ],
)
def test_paths_read_as_huggingface_hub_writes_them(path: str, route: object) -> None:
    assert parse(path) == route


@pytest.mark.parametrize("path", ["config.json", "a/b/c.bin", "é/ü.txt", "x" * 1024, ".hidden", "a..b"])
def test_file_paths_of_the_tree_grammar(path: str) -> None:
    assert is_file_path(path)


@pytest.mark.parametrize(
    "path", ["", "/a", "a/", "a//b", "./a", "a/../b", "..", "a\x00b", "a\nb", "x" * 1025, "\ud800"]
)
def test_paths_outside_the_tree_grammar(path: str) -> None:
    assert not is_file_path(path)


# Commit ids.

_names = st.from_regex(r"[a-z0-9]{1,12}(/[a-z0-9]{1,12})?", fullmatch=True)
_digests = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)
_versions = st.one_of(st.none(), st.integers(min_value=1, max_value=999_999))


@given(_names, _versions, _digests)
def test_a_commit_id_is_40_hex_and_names_its_version(name: str, version: int | None, digest: str) -> None:
    commit = commits.commit_id(name, version, digest)
    assert commits.COMMIT.fullmatch(commit)
    assert commits.version_of(commit) == version
    assert commits.names(commit, name, version, digest)


@given(_names, _names, st.integers(min_value=1, max_value=999_999), _digests, _digests)
def test_a_commit_id_names_nothing_else(name: str, other: str, version: int, digest: str, changed: str) -> None:
    commit = commits.commit_id(name, version, digest)
    assert commits.names(commit, other, version, digest) == (other == name)
    assert commits.names(commit, name, version, changed) == (changed == digest)
    assert not commits.names(commit, name, None, digest)


def test_a_revision_that_is_not_a_commit_id_is_refused() -> None:
    with pytest.raises(ValueError, match="not a commit id"):
        commits.version_of("0000000A" + "0" * 32)


# Answers.


@given(st.binary(max_size=64).map(lambda b: hashlib.sha256(b).hexdigest()), st.integers(0, 10**12))
def test_a_file_oid_is_git_blob_id_of_its_lfs_pointer_as_huggingface_hub_computes_it(sha256: str, size: int) -> None:
    entry = FileEntry("model.bin", sha256, size)
    pointer = answers.lfs_pointer(entry)
    assert answers.file_entry(entry)["oid"] == git_hash(pointer)
    assert pointer.decode().splitlines() == [
        "version https://git-lfs.github.com/spec/v1",
        f"oid sha256:{sha256}",
        f"size {size}",
    ]


@pytest.mark.parametrize("moment", ["2026-11-26T10:00:00.123Z", "2026-11-26T10:00:00Z", "2026-11-26T10:00:00+02:00"])
def test_times_are_written_as_the_clients_strict_parser_reads_them(moment: str) -> None:
    written = answers.hub_time(moment)
    assert written is not None
    assert parse_datetime(written).isoformat().startswith("2026-11-26T")


def test_an_unreadable_time_is_left_out() -> None:
    assert answers.hub_time("yesterday") is None
    assert answers.hub_time(None) is None


# Model info.


def test_model_info_answers_id_sha_and_siblings() -> None:
    # Given
    hub = _hub()
    # When
    info = _json(_get(hub, f"/api/models/{REPO}/revision/prod"))
    # Then
    assert isinstance(info, dict)
    assert info["id"] == REPO
    assert info["sha"] == commits.commit_id(REPO, 1, hub.repos[REPO].versions[1].digest)
    assert [s["rfilename"] for s in info["siblings"]] == sorted(FILES, key=str.encode)
    assert parse_datetime(info["lastModified"])


def test_model_info_with_blobs_answers_each_file_as_lfs() -> None:
    info = _json(_get(_hub(), f"/api/models/{REPO}/revision/1", blobs="True"))
    assert isinstance(info, dict)
    weights = next(s for s in info["siblings"] if s["rfilename"] == "weights/model.bin")
    assert weights["size"] == 300
    sha256 = hashlib.sha256(b"w" * 300).hexdigest()
    assert weights["lfs"] == {"sha256": sha256, "size": 300, "pointerSize": 128}  # 43 + 76 + 9 bytes of pointer
    assert weights["blobId"] == git_hash(answers.lfs_pointer(FileEntry("weights/model.bin", sha256, 300)))


def test_model_info_leaves_out_siblings_that_do_not_fit_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a budget smaller than the list
    from arca.protocols.hf import dispatch

    monkeypatch.setattr(dispatch, "SIBLINGS_BYTES", 40)
    # When
    answer = _get(_hub(), f"/api/models/{REPO}/revision/1")
    # Then
    assert "siblings" not in _json(answer)  # type: ignore[operator]
    assert answer.headers["X-HF-Warning"].startswith("arca-siblings;")


@pytest.mark.parametrize(
    ("revision", "version"),
    [("prod", 1), ("1", 1), ("2", 2), ("main", 2), ("LATEST", 2)],
)
def test_each_form_of_revision_resolves_to_its_version(revision: str, version: int) -> None:
    hub = _hub()
    info = _json(_get(hub, f"/api/models/{REPO}/revision/{revision}"))
    assert isinstance(info, dict)
    assert commits.version_of(info["sha"]) == version


def test_main_is_the_alias_main_where_one_exists() -> None:
    hub = _hub()
    hub.set_alias(REPO, "main", 1)
    info = _json(_get(hub, f"/api/models/{REPO}"))
    assert isinstance(info, dict)
    assert commits.version_of(info["sha"]) == 1


def test_latest_content_no_version_holds_has_a_commit_until_latest_moves() -> None:
    # Given LATEST ahead of every version
    hub = _hub()
    hub.set_latest(REPO, {"draft.txt": b"d1"})
    commit = _json(_get(hub, f"/api/models/{REPO}/revision/main"))["sha"]  # type: ignore[index]
    # Then its commit reads LATEST's content
    assert commits.version_of(commit) is None
    assert _get(hub, f"/{REPO}/resolve/{commit}/draft.txt", "HEAD").status == 302
    # When LATEST moves, the commit no longer names what LATEST holds
    hub.set_latest(REPO, {"draft.txt": b"d2"})
    answer = _get(hub, f"/{REPO}/resolve/{commit}/draft.txt", "HEAD")
    assert answer.headers["X-Error-Code"] == "RevisionNotFound"


def test_a_commit_resolves_without_the_alias() -> None:
    # Given a commit answered while prod pointed at 1
    hub = _hub()
    commit = _json(_get(hub, f"/api/models/{REPO}/revision/prod"))["sha"]  # type: ignore[index]
    hub.set_alias(REPO, "prod", 2)
    hub.resolves.clear()
    # When
    answer = _get(hub, f"/{REPO}/resolve/{commit}/config.json", "HEAD")
    # Then it reads version 1 by its number, never the alias
    assert answer.headers["X-Linked-Etag"] == f'"{hashlib.sha256(FILES["config.json"]).hexdigest()}"'
    assert hub.resolves == [(REPO, 1, None)]


# Resolve.


def test_resolve_redirects_with_the_headers_the_client_reads_and_no_xet_header() -> None:
    # When
    answer = _get(_hub(), f"/{REPO}/resolve/prod/weights/model.bin", "HEAD")
    # Then
    sha256 = hashlib.sha256(b"w" * 300).hexdigest()
    assert answer.status == 302
    assert answer.headers["Location"].startswith("http://blobs.invalid/" + sha256)
    assert commits.version_of(answer.headers["X-Repo-Commit"]) == 1
    assert answer.headers["ETag"] == answer.headers["X-Linked-Etag"] == f'"{sha256}"'
    assert answer.headers["X-Linked-Size"] == "300"
    assert not [h for h in answer.headers if h.lower().startswith("x-xet")]
    assert answer.body == b""


# Misses.


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("/api/models/nobody/revision/main", "RepoNotFound"),
        ("/api/models/Team/Model", "RepoNotFound"),  # outside the name grammar
        ("/api/models/team/versions/revision/main", "RepoNotFound"),  # a reserved word
        ("/api/datasets/team/model", "RepoNotFound"),
        (f"/api/models/{REPO}/revision/staging", "RevisionNotFound"),
        (f"/api/models/{REPO}/revision/refs%2Fpr%2F1", "RevisionNotFound"),
        (f"/api/models/{REPO}/revision/9", "RevisionNotFound"),
        (f"/api/models/{REPO}/revision/{'0' * 40}", "RevisionNotFound"),
        (f"/api/models/{REPO}/revision/{commits.commit_id('other', 1, '0' * 64)}", "RevisionNotFound"),
        (f"/api/models/{REPO}/tree/main/nowhere", "EntryNotFound"),
        (f"/{REPO}/resolve/main/missing.txt", "EntryNotFound"),
        (f"/{REPO}/resolve/main/a/../config.json", "EntryNotFound"),
        (f"/{REPO}/resolve/main", "EntryNotFound"),
        (f"/{REPO}/resolve/nope/config.json", "RevisionNotFound"),
        ("/nobody/x/resolve/main/config.json", "RepoNotFound"),
    ],
)
def test_misses_are_404s_with_the_error_code_the_client_reads(path: str, code: str) -> None:
    for method in ("GET", "HEAD"):
        answer = _get(_hub(), path, method)
        assert (answer.status, answer.headers["X-Error-Code"]) == (404, code)
        assert answer.headers["X-Error-Message"]
        assert answer.body == b"" if method == "HEAD" else json.loads(answer.body)["error"]


def test_a_missing_entry_names_the_commit_it_was_missed_at() -> None:
    answer = _get(_hub(), f"/{REPO}/resolve/prod/missing.txt", "HEAD")
    assert commits.version_of(answer.headers["X-Repo-Commit"]) == 1


def test_a_deleted_version_is_not_a_revision() -> None:
    hub = _hub()
    hub.delete_version(REPO, 1)
    assert _get(hub, f"/api/models/{REPO}/revision/1").headers["X-Error-Code"] == "RevisionNotFound"


def test_other_methods_and_paths_are_refused_without_an_error_code() -> None:
    assert _get(_hub(), f"/{REPO}/resolve/main/config.json", "POST").status == 405
    answer = _get(_hub(), "/somewhere/else")
    assert (answer.status, answer.headers.get("X-Error-Code")) == (404, None)


def test_a_cursor_not_made_for_the_listing_is_a_400() -> None:
    hub = _hub()
    made = listing._write(listing._Position("2", 0, None), "another-listing")
    for cursor in ("!!!", base64.urlsafe_b64encode(b"[]").decode(), made):
        answer = _get(hub, f"/api/models/{REPO}/tree/main", cursor=cursor)
        assert answer.status == 400
        assert "cursor" in json.loads(answer.body)["error"]


# Tree listings.


def test_a_listing_of_one_level_shows_folders_once() -> None:
    entries = _json(_get(_hub(), f"/api/models/{REPO}/tree/1"))
    assert [(e["type"], e["path"]) for e in entries] == [  # type: ignore[union-attr, index]
        ("file", "README.md"),
        ("file", "config.json"),
        ("directory", "weights"),
    ]


def test_a_recursive_listing_shows_every_folder_and_file_from_the_root() -> None:
    entries = _json(_get(_hub(), f"/api/models/{REPO}/tree/1/weights", recursive="true"))
    assert [(e["type"], e["path"]) for e in entries] == [  # type: ignore[union-attr, index]
        ("file", "weights/model.bin"),
        ("directory", "weights/shards"),
        ("file", "weights/shards/0.bin"),
    ]


_segment = st.sampled_from(["a", "b", "c", "a.b", "a-b", "é"])
_trees = st.dictionaries(
    st.lists(_segment, min_size=1, max_size=4).map("/".join), st.binary(max_size=3), min_size=1, max_size=40
).filter(lambda files: not any(other.startswith(path + "/") for path in files for other in files))


@settings(max_examples=60, deadline=None)
@given(_trees, st.booleans(), st.sampled_from(["", "a", "b/c"]), st.integers(1, 4), st.integers(1, 7))
def test_pages_of_any_size_list_exactly_what_one_page_lists(
    files: dict[str, bytes], recursive: bool, folder: str, entries: int, rows: int
) -> None:
    # Given a tree, and the listing in one page
    hub = FakeHub()
    hub.publish("m", files)
    whole = _listing(hub, folder, recursive)
    # When the pages are tiny (a cursor inside a backend page, pages cut by rows)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(listing, "ENTRIES", entries)
        patch.setattr(listing, "ROWS", rows)
        patch.setattr(listing, "BACKEND_PAGE", 3)
        paged = _listing(hub, folder, recursive)
    # Then the pages add up to the same entries, each once, which are every file and folder below `folder`
    assert paged == whole == _expected(files, folder, recursive)


def _expected(files: dict[str, bytes], folder: str, recursive: bool) -> list[tuple[str, str]]:
    """The listing worked out with a set of what was listed (no reliance on the order of the paths)."""
    prefix = f"{folder}/" if folder else ""
    below = sorted((p for p in files if p.startswith(prefix)), key=str.encode)
    if folder and not below:
        return [("missing", folder)]
    listed: list[tuple[str, str]] = []
    for path in below:
        parts = path[len(prefix) :].split("/")
        folders = [("directory", prefix + "/".join(parts[: d + 1])) for d in range(len(parts) - 1)]
        for entry in folders if recursive else folders[:1]:
            if entry not in listed:
                listed.append(entry)
        if recursive or len(parts) == 1:
            listed.append(("file", path))
    return listed


def _listing(hub: FakeHub, folder: str, recursive: bool) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    query = {"recursive": str(recursive).lower()}
    suffix = "/" + folder.replace("/", "%2F") if folder else ""
    for _ in range(1000):
        answer = _get(hub, f"/api/models/m/tree/main{suffix}", **query)
        if answer.status == 404:
            return [("missing", folder)]
        found += [(e["type"], e["path"]) for e in json.loads(answer.body)]
        link = answer.headers.get("Link")
        if link is None:
            return found
        query = dict(q.split("=", 1) for q in link.split("?", 1)[1].split(">")[0].split("&"))
    raise AssertionError("the listing never ended")


def test_the_next_page_link_is_absolute_under_the_endpoint_and_names_the_commit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(listing, "ENTRIES", 1)
    answer = _get(_hub(), f"/api/models/{REPO}/tree/prod")
    commit = commits.commit_id(REPO, 1, _hub().repos[REPO].versions[1].digest)
    assert answer.headers["Link"].startswith(f"<http://arca.test/prod/hf/api/models/{REPO}/tree/{commit}?")
    assert answer.headers["Link"].endswith('>; rel="next"')


def test_the_protocol_imports_no_aws_and_no_store() -> None:
    import ast
    from pathlib import Path

    package = Path(__file__).resolve().parents[2] / "lambdas" / "arca" / "protocols"
    for file in package.rglob("*.py"):
        for node in ast.walk(ast.parse(file.read_text())):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            modules += [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for module in modules:
                assert module.split(".")[0] not in ("boto3", "botocore"), file
                assert not module.startswith(("arca.adapters", "arca.services", "arca.api", "arca.wiring")), file
