"""Versions that are trees of files, through the real handlers under moto: publish by `files` or by `tree`, the
version's digest, size and count, dedup, what is refused, listing and resolving one file."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import requests

from arca.adapters import keys
from arca.domain.trees import TREE_MEDIA_TYPE, FileEntry, Tree
from tests.helpers import HandlerApi, sha256
from tests.integration.conftest import snapshot

FILES = {"config.json": b'{"a": 1}', "weights/model.bin": b"\x00" * 100, "README.md": b"# model\n", "empty": b""}


def _entries(files: dict[str, bytes]) -> list[dict[str, Any]]:
    return [{"path": path, "sha256": sha256(data), "size": len(data)} for path, data in files.items()]


def _upload_all(api: HandlerApi, name: str, files: dict[str, bytes]) -> None:
    for data in files.values():
        api.upload(name, data)


def _tree(files: dict[str, bytes]) -> Tree:
    return Tree.of(FileEntry(e["path"], e["sha256"], e["size"]) for e in _entries(files))


def test_a_tree_published_by_its_files_is_its_manifest_digest_size_and_count(
    api: HandlerApi, aws: SimpleNamespace
) -> None:
    # Given every file's bytes uploaded
    _upload_all(api, "team/model", FILES)
    # When the tree is published by its files
    reply = api.call("POST", "/artifacts/team/model/versions", {"files": _entries(FILES), "metadata": {"run": "7"}})
    # Then the version is the canonical manifest's digest, the files' sum, their count, the tree's media type
    assert reply.status == 201, reply.body
    tree = _tree(FILES)
    assert reply.body["sha256"] == tree.digest
    assert reply.body["size"] == sum(len(d) for d in FILES.values())
    assert reply.body["files"] == 4
    assert reply.body["content_type"] == TREE_MEDIA_TYPE
    assert reply.body["metadata"] == {"run": "7"}
    # And the manifest's bytes are stored as the content at that digest, served by the version's download URL
    stored = aws.s3.get_object(Bucket=aws.bucket, Key=keys.blob_key("team/model", tree.digest))["Body"].read()
    assert stored == tree.manifest
    resolved = api.call("GET", "/artifacts/team/model/resolve/1")
    assert resolved.status == 200, resolved.body
    assert resolved.body["files"] == 4 and resolved.body["sha256"] == tree.digest
    assert requests.get(resolved.body["download_url"], timeout=10).content == tree.manifest


def test_the_same_tree_again_is_deduplicated_and_by_reference_gives_the_same_version(api: HandlerApi) -> None:
    # Given a published tree
    _upload_all(api, "model", FILES)
    first = api.call("POST", "/artifacts/model/versions", {"files": _entries(FILES)})
    assert first.status == 201, first.body
    # When the same tree is published again, in another order, and then by its uploaded manifest
    again = api.call("POST", "/artifacts/model/versions", {"files": list(reversed(_entries(FILES)))})
    tree = _tree(FILES)
    api.upload("model", tree.manifest)
    by_reference = api.call("POST", "/artifacts/model/versions", {"tree": tree.digest})
    # Then both are the first version, deduplicated
    assert again.status == 200, again.body
    assert again.body["deduplicated"] is True and again.body["version"] == 1
    assert by_reference.status == 200, by_reference.body
    assert by_reference.body["version"] == 1


def test_a_tree_by_reference_publishes_its_manifest(api: HandlerApi) -> None:
    # Given the files and the canonical manifest uploaded
    _upload_all(api, "site", FILES)
    tree = _tree(FILES)
    api.upload("site", tree.manifest)
    # When
    reply = api.call("POST", "/artifacts/site/versions", {"tree": tree.digest, "force": True})
    # Then
    assert reply.status == 201, reply.body
    assert (reply.body["sha256"], reply.body["files"], reply.body["size"]) == (tree.digest, tree.count, tree.size)


def test_put_latest_takes_a_tree_and_a_publish_snapshots_it(api: HandlerApi) -> None:
    # Given
    _upload_all(api, "app", FILES)
    # When LATEST is pointed at a tree, then published as it stands
    latest = api.call("PUT", "/artifacts/app/latest", {"files": _entries(FILES)})
    published = api.call("POST", "/artifacts/app/versions")
    # Then
    assert latest.status == 200, latest.body
    assert latest.body["files"] == 4 and latest.body["content_type"] == TREE_MEDIA_TYPE
    assert published.status == 201, published.body
    assert published.body["files"] == 4 and published.body["sha256"] == _tree(FILES).digest


def test_files_not_uploaded_are_a_409_naming_their_paths_and_nothing_is_written(
    api: HandlerApi, aws: SimpleNamespace
) -> None:
    # Given only some files uploaded
    api.publish("app", b"stored")
    api.upload("app", FILES["config.json"])
    before = snapshot(aws)
    # When
    reply = api.call("POST", "/artifacts/app/versions", {"files": _entries(FILES)})
    # Then
    assert reply.status == 409, reply.body
    assert reply.error["field"] == "files"
    assert reply.error["paths"] == ["README.md", "empty", "weights/model.bin"]
    assert snapshot(aws) == before


def test_a_file_whose_size_differs_is_a_400_naming_its_path(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given
    _upload_all(api, "app", FILES)
    api.publish("app", b"stored")
    before = snapshot(aws)
    entries = _entries(FILES)
    entries[1]["size"] += 1
    # When
    reply = api.call("POST", "/artifacts/app/versions", {"files": entries})
    # Then
    assert reply.status == 400, reply.body
    assert reply.error["field"] == "files[1].size"
    assert reply.error["path"] == "weights/model.bin"
    assert snapshot(aws) == before


def test_a_manifest_that_is_not_canonical_is_a_400_naming_tree(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given an equivalent manifest with spaces, uploaded
    _upload_all(api, "app", FILES)
    api.publish("app", b"stored")
    document = json.dumps({"files": [{"path": "a", "sha256": sha256(b""), "size": 0}]}).encode()
    digest = api.upload("app", document)
    before = snapshot(aws)
    # When
    reply = api.call("POST", "/artifacts/app/versions", {"tree": digest})
    # Then
    assert reply.status == 400, reply.body
    assert reply.error["field"] == "tree"
    assert "canonical_sha256" in reply.error
    assert snapshot(aws) == before


def test_a_manifest_never_uploaded_is_a_409_naming_tree(api: HandlerApi) -> None:
    # When
    reply = api.call("POST", "/artifacts/app/versions", {"tree": sha256(b"nothing")})
    # Then
    assert reply.status == 409, reply.body
    assert reply.error["field"] == "tree"


def test_the_files_are_listed_in_path_order_by_pages_and_by_prefix(api: HandlerApi) -> None:
    # Given a published tree
    _upload_all(api, "model", FILES)
    assert api.call("POST", "/artifacts/model/versions", {"files": _entries(FILES)}).status == 201
    # When its files are listed two at a time, and under a prefix
    first = api.call("GET", "/artifacts/model/versions/1/files", query={"limit": "2"})
    rest = api.call(
        "GET", "/artifacts/model/versions/1/files", query={"limit": "2", "next_token": first.body["next_token"]}
    )
    under = api.call("GET", "/artifacts/model/versions/LATEST/files", query={"prefix": "weights/"})
    # Then
    assert first.status == 200, first.body
    paths = [f["path"] for f in first.body["files"] + rest.body["files"]]
    assert paths == sorted(FILES)
    assert rest.body["next_token"] is None
    assert first.body["files"][0] == {
        "path": "README.md",
        "sha256": sha256(FILES["README.md"]),
        "size": len(FILES["README.md"]),
        "content_type": "application/octet-stream",
    }
    assert [f["path"] for f in under.body["files"]] == ["weights/model.bin"]


def test_listing_the_files_of_a_blob_version_is_a_409(api: HandlerApi) -> None:
    # Given
    api.publish("app", b"one blob")
    # When
    reply = api.call("GET", "/artifacts/app/versions/1/files")
    # Then
    assert reply.status == 409, reply.body
    assert reply.error["field"] == "version"


def test_one_file_resolves_to_a_redirect_to_its_bytes(api: HandlerApi) -> None:
    # Given a published tree with an alias on it
    _upload_all(api, "team/model", FILES)
    assert api.call("POST", "/artifacts/team/model/versions", {"files": _entries(FILES)}).status == 201
    assert api.call("PUT", "/artifacts/team/model/aliases/prod", {"version": 1}).status in (200, 201)
    # When a file below a folder is resolved through the alias
    reply = api.call("GET", "/artifacts/team/model/resolve/prod/files/weights/model.bin")
    # Then it redirects to its bytes
    assert reply.status == 302, reply.body
    assert reply.headers["Location"] == reply.body["download_url"]
    assert reply.body["path"] == "weights/model.bin" and reply.body["version"] == 1
    assert reply.body["tree_sha256"] == _tree(FILES).digest
    assert requests.get(reply.headers["Location"], timeout=10).content == FILES["weights/model.bin"]


def test_a_file_the_tree_does_not_hold_is_a_404_naming_the_path(api: HandlerApi) -> None:
    # Given
    _upload_all(api, "model", FILES)
    assert api.call("POST", "/artifacts/model/versions", {"files": _entries(FILES)}).status == 201
    # When
    reply = api.call("GET", "/artifacts/model/resolve/1/files/weights/other.bin")
    # Then
    assert reply.status == 404, reply.body
    assert reply.error["field"] == "path"
    assert reply.error["path"] == "weights/other.bin"


def _refs(aws: SimpleNamespace, name: str, sha: str) -> int | None:
    key = {k: {"S": v} for k, v in keys.blob_count_key(name, sha).items()}
    item = aws.dynamodb.get_item(TableName=aws.table, Key=key, ConsistentRead=True).get("Item")
    return None if item is None else int(item["refs"]["N"])


def test_each_file_content_is_counted_once_a_tree_holds_it(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given every file uploaded
    _upload_all(api, "model", FILES)
    # When the tree is published
    assert api.call("POST", "/artifacts/model/versions", {"files": _entries(FILES)}).status == 201
    # Then every distinct file content holds a reference (retention collects only what nothing references)
    for data in FILES.values():
        assert (_refs(aws, "model", sha256(data)) or 0) >= 1


def test_a_file_content_being_collected_is_a_409_and_no_version_is_made(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given one file's content claimed by a collection
    _upload_all(api, "model", FILES)
    api.publish("model", b"stored")
    key = {k: {"S": v} for k, v in keys.blob_count_key("model", sha256(FILES["README.md"])).items()}
    aws.dynamodb.put_item(
        TableName=aws.table, Item={**key, "refs": {"N": "0"}, "collecting": {"S": "token"}, "claimed_at": {"S": "x"}}
    )
    # When
    reply = api.call("POST", "/artifacts/model/versions", {"files": _entries(FILES)})
    # Then
    assert reply.status == 409, reply.body
    assert reply.error.get("collecting") is True
    assert api.call("GET", "/artifacts/model/versions/2").status == 404


TYPED = {"README.md": "text/markdown", "config.json": "application/json"}


def _typed(files: dict[str, bytes], types: dict[str, str]) -> list[dict[str, Any]]:
    return [{**e, "content_type": types[e["path"]]} if e["path"] in types else e for e in _entries(files)]


def test_the_content_types_a_tree_is_published_with_are_listed_and_served(
    api: HandlerApi, aws: SimpleNamespace
) -> None:
    # Given a tree published with two files typed (one given as the default, one not typed at all)
    _upload_all(api, "team/model", FILES)
    body = {"files": _typed(FILES, {**TYPED, "empty": "application/octet-stream"})}
    published = api.call("POST", "/artifacts/team/model/versions", body)
    assert published.status == 201, published.body
    assert api.call("PUT", "/artifacts/team/model/aliases/prod", {"version": 1}).status in (200, 201)
    # When its files are listed and one is resolved through an alias
    listed = api.call("GET", "/artifacts/team/model/versions/1/files")
    latest = api.call("GET", "/artifacts/team/model/versions/LATEST/files")
    one = api.call("GET", "/artifacts/team/model/resolve/prod/files/README.md")
    # Then each file answers the type it was published with, the others the default
    assert listed.status == 200, listed.body
    served = {f["path"]: f["content_type"] for f in listed.body["files"]}
    assert served == {
        "README.md": "text/markdown",
        "config.json": "application/json",
        "empty": "application/octet-stream",
        "weights/model.bin": "application/octet-stream",
    }
    assert latest.body["files"] == listed.body["files"]
    # And the presigned URL pins the type, so S3 serves it
    assert one.status == 302, one.body
    assert one.body["content_type"] == "text/markdown"
    assert "response-content-type=text%2Fmarkdown" in one.headers["Location"]
    assert requests.get(one.headers["Location"], timeout=10).headers["Content-Type"] == "text/markdown"
    # And the digest is the untyped manifest's: the types are a document of their own, counted as a content
    assert published.body["sha256"] == _tree(FILES).digest
    document = b'{"content_types":{"README.md":"text/markdown","config.json":"application/json"}}'
    stored = aws.s3.get_object(Bucket=aws.bucket, Key=keys.blob_key("team/model", sha256(document)))
    assert stored["Body"].read() == document
    assert (_refs(aws, "team/model", sha256(document)) or 0) >= 1


def test_a_tree_with_no_content_type_keeps_no_types_document(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given
    _upload_all(api, "model", FILES)
    # When
    assert api.call("POST", "/artifacts/model/versions", {"files": _entries(FILES)}).status == 201
    # Then the version item names no types document
    key = {k: {"S": v} for k, v in keys.version_key("model", 1).items()}
    item = aws.dynamodb.get_item(TableName=aws.table, Key=key, ConsistentRead=True)["Item"]
    assert item.get("file_types", {"NULL": True}) == {"NULL": True}


def test_the_same_tree_with_other_types_is_deduplicated_and_keeps_the_first_types_unless_forced(
    api: HandlerApi,
) -> None:
    # Given a tree published typed
    _upload_all(api, "model", FILES)
    assert api.call("POST", "/artifacts/model/versions", {"files": _typed(FILES, TYPED)}).status == 201
    # When the same tree is published with other types, then again with force
    other = {"README.md": "text/plain"}
    again = api.call("POST", "/artifacts/model/versions", {"files": _typed(FILES, other)})
    forced = api.call("POST", "/artifacts/model/versions", {"files": _typed(FILES, other), "force": True})

    def types(version: int | str) -> dict[str, str]:
        reply = api.call("GET", f"/artifacts/model/versions/{version}/files")
        return {
            f["path"]: f["content_type"] for f in reply.body["files"] if f["content_type"] != "application/octet-stream"
        }

    # Then the second is version 1, whose types stay; the forced one is version 2 with its own
    assert again.status == 200 and again.body["deduplicated"] is True and again.body["version"] == 1
    assert types(1) == TYPED
    assert forced.status == 201 and forced.body["version"] == 2
    assert forced.body["sha256"] == again.body["sha256"]
    assert types(2) == other
    assert types("LATEST") == other


def _by_reference(api: HandlerApi, name: str, types: bytes) -> Any:
    _upload_all(api, name, FILES)
    tree = _tree(FILES)
    api.upload(name, tree.manifest)
    api.upload(name, types)
    return api.call("POST", f"/artifacts/{name}/versions", {"tree": tree.digest, "file_types": sha256(types)})


def test_a_tree_by_reference_takes_its_content_types_from_an_uploaded_types_document(
    api: HandlerApi, aws: SimpleNamespace
) -> None:
    # Given the files, the manifest and a types document (any spelling) uploaded
    types = json.dumps({"content_types": {"config.json": "application/json", "README.md": "text/markdown"}}, indent=2)
    # When the tree is published by reference with them
    reply = _by_reference(api, "site", types.encode())
    # Then the version is the tree, and its files are served as the document types them
    assert reply.status == 201, reply.body
    assert reply.body["sha256"] == _tree(FILES).digest
    listed = api.call("GET", "/artifacts/site/versions/1/files")
    assert {f["path"]: f["content_type"] for f in listed.body["files"]}["config.json"] == "application/json"
    one = api.call("GET", "/artifacts/site/resolve/1/files/README.md")
    assert one.body["content_type"] == "text/markdown"
    # And the service keeps its own canonical form of the types, as an inline publish would
    canonical = b'{"content_types":{"README.md":"text/markdown","config.json":"application/json"}}'
    stored = aws.s3.get_object(Bucket=aws.bucket, Key=keys.blob_key("site", sha256(canonical)))
    assert stored["Body"].read() == canonical


def test_a_types_document_naming_a_path_the_tree_lacks_or_no_type_is_a_400_naming_file_types(api: HandlerApi) -> None:
    for name, document in (
        ("one", {"content_types": {"nope.txt": "text/plain"}}),
        ("two", {"content_types": {"config.json": "not a type"}}),
        ("three", {"types": {}}),
    ):
        reply = _by_reference(api, name, json.dumps(document).encode())
        assert reply.status == 400, reply.body
        assert reply.error["field"] == "file_types"
        assert api.call("GET", f"/artifacts/{name}/versions/1").status == 404


def test_a_types_document_never_uploaded_is_a_409_naming_file_types(api: HandlerApi) -> None:
    _upload_all(api, "site", FILES)
    tree = _tree(FILES)
    api.upload("site", tree.manifest)
    reply = api.call("POST", "/artifacts/site/versions", {"tree": tree.digest, "file_types": sha256(b"never")})
    assert reply.status == 409, reply.body
    assert reply.error["field"] == "file_types"
