"""The Hugging Face Hub's read side through the real resolve handler under moto: the AWS calls each Hub request makes,
commit ids that hold a version, LATEST and links, one-blob versions, and the misses the client reads."""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arca.protocols.hf import commits
from tests.helpers import HandlerApi, hooked, sha256

FILES = {"config.json": b'{"a": 1}', "weights/model.bin": b"\x00" * 100, "README.md": b"# model\n"}


def _publish(api: HandlerApi, name: str, files: dict[str, bytes]) -> int:
    for data in files.values():
        api.upload(name, data)
    entries = [{"path": path, "sha256": sha256(data), "size": len(data)} for path, data in files.items()]
    reply = api.call("POST", f"/artifacts/{name}/versions", {"files": entries})
    assert reply.status in (200, 201), reply.body
    return int(reply.body["version"])


def _alias(api: HandlerApi, name: str, alias: str, version: int) -> None:
    reply = api.call("PUT", f"/artifacts/{name}/aliases/{alias}", {"version": version})
    assert reply.status in (200, 201), reply.body


@pytest.fixture
def model(api: HandlerApi) -> str:
    """`team/model`: version 1, a second version 2, `prod` on 1."""
    _publish(api, "team/model", FILES)
    _publish(api, "team/model", {**FILES, "config.json": b'{"a": 2}'})
    _alias(api, "team/model", "prod", 1)
    return "team/model"


def _aws_calls(api: HandlerApi, method: str, path: str, **kwargs: Any) -> tuple[Any, list[str]]:
    calls: list[str] = []
    with hooked("before-call.*.*", lambda model, **_: calls.append(model.name)):
        reply = api.call(method, path, **kwargs)
    return reply, calls


def test_a_snapshot_reads_one_item_per_request_and_each_tree_manifest_once(api: HandlerApi, model: str) -> None:
    # When the client's snapshot is replayed: model info by alias, the tree at its commit, a HEAD per file
    info, info_calls = _aws_calls(api, "GET", f"/hf/api/models/{model}/revision/prod")
    commit = info.body["sha"]
    tree, tree_calls = _aws_calls(api, "GET", f"/hf/api/models/{model}/tree/{commit}", query={"recursive": "true"})
    head, head_calls = _aws_calls(api, "HEAD", f"/hf/{model}/resolve/{commit}/weights/model.bin")
    # Then the alias is one read, the manifest is read once (then kept), and a file is one read of its version and
    # one HeadObject to find its object (presigning makes no call)
    assert info.status == 200 and commit.startswith("00000001")
    assert info_calls == ["Query", "GetObject"]
    assert tree.status == 200 and tree_calls == ["Query"]
    assert sorted(e["path"] for e in tree.body if e["type"] == "file") == sorted(FILES)
    assert head.status == 302 and head_calls == ["Query", "HeadObject"]
    assert head.headers["X-Repo-Commit"] == commit
    assert head.headers["X-Linked-Etag"] == f'"{sha256(FILES["weights/model.bin"])}"'
    assert requests.get(head.headers["Location"], timeout=10).content == FILES["weights/model.bin"]


def test_a_commit_id_holds_its_version_whatever_the_alias_does(api: HandlerApi, model: str) -> None:
    # Given the commit `prod` resolved to
    commit = api.call("GET", f"/hf/api/models/{model}/revision/prod").body["sha"]
    # When the alias moves
    _alias(api, model, "prod", 2)
    # Then the commit still reads version 1, and `prod` now another commit
    info = api.call("GET", f"/hf/api/models/{model}/revision/{commit}")
    assert info.body["sha"] == commit
    config = api.call("HEAD", f"/hf/{model}/resolve/{commit}/config.json")
    assert requests.get(config.headers["Location"], timeout=10).content == b'{"a": 1}'
    assert api.call("GET", f"/hf/api/models/{model}/revision/prod").body["sha"].startswith("00000002")


def test_a_canary_splits_callers_and_each_snapshot_is_one_side_whole(api: HandlerApi, model: str) -> None:
    # Given `prod` on 1 with a canary of 2 at 50%
    reply = api.call(
        "PUT",
        f"/artifacts/{model}/aliases/prod",
        {"version": 1, "secondary_version": 2, "secondary_version_weight": 50},
    )
    assert reply.status in (200, 201), reply.body
    sides = set()
    for caller in range(12):
        # When each caller resolves `prod` (model info), then reads a file at the commit and by `prod` again
        api.identity = f"arn:aws:iam::000000000000:user/caller-{caller}"
        commit = api.call("GET", f"/hf/api/models/{model}/revision/prod").body["sha"]
        at_commit = api.call("HEAD", f"/hf/{model}/resolve/{commit}/config.json")
        by_alias = api.call("HEAD", f"/hf/{model}/resolve/prod/config.json")
        # Then the file is the commit's version's, and the caller's side is sticky
        version = int(commit[:8], 16)
        assert requests.get(at_commit.headers["Location"], timeout=10).content == b'{"a": %d}' % version
        assert by_alias.headers["X-Repo-Commit"] == commit
        sides.add(version)
    # And the callers are split between both sides
    assert sides == {1, 2}


def test_main_is_latest_as_its_newest_version_and_a_made_up_commit_is_not_found(api: HandlerApi, model: str) -> None:
    # When `main` is asked for with no alias of that name, and commits no version answered
    main = api.call("GET", f"/hf/api/models/{model}")
    other = commits.commit_id("team/other", 1, "0" * 64)
    made_up = api.call("GET", f"/hf/api/models/{model}/revision/{'00000001' + other[8:]}")
    # Then main is LATEST, answered as version 2 (it holds its content), and the others are not found
    assert main.status == 200 and main.body["sha"].startswith("00000002")
    assert made_up.status == 404 and made_up.headers["X-Error-Code"] == "RevisionNotFound"


def test_main_after_its_newest_version_is_deleted_is_latests_content(api: HandlerApi, model: str) -> None:
    # Given version 2 deleted while LATEST still holds its content
    assert api.call("DELETE", f"/artifacts/{model}/versions/2").status == 200
    # When `main` is resolved, and a file read at the commit it answered
    main = api.call("GET", f"/hf/api/models/{model}")
    head = api.call("HEAD", f"/hf/{model}/resolve/{main.body['sha']}/config.json")
    # Then it is LATEST's content as no version's (commit 0…), and it reads
    assert main.status == 200 and main.body["sha"].startswith("00000000"), main.body
    assert head.status == 302 and requests.get(head.headers["Location"], timeout=10).content == b'{"a": 2}'


def test_a_deleted_version_is_a_missing_revision(api: HandlerApi, model: str) -> None:
    # Given the commit of version 2, then version 2 deleted
    commit = api.call("GET", f"/hf/api/models/{model}/revision/2").body["sha"]
    assert api.call("DELETE", f"/artifacts/{model}/versions/2").status == 200
    # When it is asked for by number and by commit
    for revision in ("2", commit):
        reply = api.call("GET", f"/hf/api/models/{model}/revision/{revision}")
        # Then it is a missing revision (not a missing repo)
        assert reply.status == 404 and reply.headers["X-Error-Code"] == "RevisionNotFound", revision


def test_a_link_reads_its_targets_files(api: HandlerApi, model: str) -> None:
    # Given the link `model` -> `team/model`
    assert api.call("PUT", "/artifacts/model/link", {"target": model}).status in (200, 201)
    # When a file is resolved through it
    head = api.call("HEAD", "/hf/model/resolve/prod/README.md")
    # Then it is the target's file
    assert head.status == 302, head.body
    assert requests.get(head.headers["Location"], timeout=10).content == FILES["README.md"]


def test_a_one_blob_version_is_one_file_named_as_published(api: HandlerApi) -> None:
    # Given a version of one blob published from `model.gguf`
    data = b"GGUF" + bytes(50)
    api.upload("gguf", data)
    reply = api.call(
        "POST",
        "/artifacts/gguf/versions",
        {"sha256": sha256(data), "size": len(data), "metadata": {"filename": "model.gguf"}},
    )
    assert reply.status == 201, reply.body
    # When it is listed and its file resolved
    tree = api.call("GET", "/hf/api/models/gguf/tree/1")
    head = api.call("HEAD", "/hf/gguf/resolve/1/model.gguf")
    other = api.call("HEAD", "/hf/gguf/resolve/1/other.bin")
    # Then
    assert [(e["path"], e["size"]) for e in tree.body] == [("model.gguf", len(data))]
    assert head.status == 302 and requests.get(head.headers["Location"], timeout=10).content == data
    assert other.status == 404 and other.headers["X-Error-Code"] == "EntryNotFound"


@pytest.mark.parametrize(
    ("path", "query", "status", "code"),
    [
        ("/hf/api/models/absent/revision/main", None, 404, "RepoNotFound"),
        ("/hf/api/models/a/b/c/revision/main", None, 404, None),  # three segments: no route of the Hub's
        ("/hf/api/models/Team/Model/revision/main", None, 404, "RepoNotFound"),
        ("/hf/api/models/team/model/revision/v1.0", None, 404, "RevisionNotFound"),
        ("/hf/api/models/team/model/revision/staging", None, 404, "RevisionNotFound"),
        ("/hf/api/models/team/model/tree/1/absent", None, 404, "EntryNotFound"),
        ("/hf/api/models/team/model/tree/1", {"cursor": "not-a-cursor"}, 400, None),
        ("/hf/team/model/resolve/1/a/../config.json", None, 404, "EntryNotFound"),
    ],
)
def test_a_miss_or_bad_input_is_the_hubs_answer(
    api: HandlerApi, model: str, path: str, query: dict[str, str] | None, status: int, code: str | None
) -> None:
    # When
    reply = api.call("GET", path, query=query)
    # Then
    assert reply.status == status, reply.body
    assert reply.headers.get("X-Error-Code") == code
    if code is not None:
        assert isinstance(reply.body["error"], str) and json.dumps(reply.body)


_ODD = ["..", ".", "", "a%2Fb", "%00", "a" * 300, "ü", "a b", "resolve", "tree", "revision", "api"]
_REPO = st.sampled_from(["team/model", "team/model", "model", "Team/Model", "a/b/c", "datasets", *_ODD])
_REVISION = st.sampled_from(
    ["prod", "1", "2", "0", "main", "LATEST", "refs/pr/1", "v1.0", "sha256:00", "00000001" + "0" * 32, *_ODD]
)
_PATH = st.sampled_from(["config.json", "weights/model.bin", "weights", "README.md", "x/../config.json", *_ODD])
_SHAPES = [
    "api/models/{0}",
    "api/models/{0}/revision/{1}",
    "api/models/{0}/tree/{1}",
    "api/models/{0}/tree/{1}/{2}",
    "{0}/resolve/{1}/{2}",
    "{0}/{1}/{2}",
    "api/{0}/{1}",
]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    shape=st.sampled_from(_SHAPES),
    words=st.tuples(_REPO, _REVISION, _PATH),
    method=st.sampled_from(["GET", "HEAD"]),
    cursor=st.one_of(st.none(), st.text(max_size=40)),
)
def test_no_path_under_hf_is_a_server_error(
    api: HandlerApi, model: str, shape: str, words: tuple[str, str, str], method: str, cursor: str | None
) -> None:
    # When any path of the Hub's shapes and words is asked for (with a cursor of any text)
    query = {"recursive": "true", **({"cursor": cursor} if cursor is not None else {})}
    reply = api.call(method, "/hf/" + shape.format(*words), query=query)
    # Then it is an answer, a redirect or a client error, never a 5xx
    assert reply.status in (200, 302, 400, 404, 405), (shape, words, reply.status, reply.body)
