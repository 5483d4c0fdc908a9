"""OCI Distribution over Arca's services (arca.services.oci behind arca.api.oci): the real handlers, as API Gateway
invokes them, each call authorised by its function's role (local/iam.py).

A blob is the artifact's content of that sha256, a manifest a version whose files are its config and layers, a tag
an alias; the refusals are OCI's codes in OCI's shape, and a refused request writes nothing it should not.
"""

from __future__ import annotations

import hashlib
import json
from types import SimpleNamespace
from typing import Any

import pytest
import requests

from tests.helpers import HandlerApi
from tests.integration.conftest import snapshot

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
LAYER = "application/vnd.oci.image.layer.v1.tar"
CONFIG = b"{}"


def _digest(content: bytes) -> str:
    return "sha256:" + hashlib.sha256(content).hexdigest()


def _descriptor(content: bytes, media_type: str = LAYER, title: str | None = None) -> dict[str, Any]:
    descriptor: dict[str, Any] = {"mediaType": media_type, "digest": _digest(content), "size": len(content)}
    if title is not None:
        descriptor["annotations"] = {"org.opencontainers.image.title": title}
    return descriptor


def _manifest(layers: dict[str, bytes], **extra: Any) -> bytes:
    document = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": _descriptor(CONFIG, "application/vnd.unknown.config.v1+json"),
        "layers": [_descriptor(content, title=title) for title, content in layers.items()],
        **extra,
    }
    return json.dumps(document).encode()


def _push_blob(api: HandlerApi, name: str, content: bytes) -> None:
    reply = api.call(
        "POST",
        f"/v2/{name}/blobs/uploads/",
        raw=content,
        headers={"Content-Type": "application/octet-stream"},
        query={"digest": _digest(content)},
    )
    assert reply.status == 201, reply.body


def _push(api: HandlerApi, name: str, reference: str, body: bytes) -> Any:
    return api.call("PUT", f"/v2/{name}/manifests/{reference}", raw=body, headers={"Content-Type": OCI_MANIFEST})


def _on_stage(location: str) -> str:
    """A Location the answers give (on the stage: `/local/v2/…`) as API Gateway hands it to the function when a
    client follows it (the path after the stage)."""
    assert location.startswith("/local/v2/"), location
    return location.removeprefix("/local")


def _codes(reply: Any) -> list[str]:
    return [e["code"] for e in reply.body["errors"]]


@pytest.fixture
def pushed(api: HandlerApi) -> bytes:
    """`team/app:v1`: a manifest of two titled layers and the empty config, every blob pushed first."""
    layers = {"model.bin": b"weights" * 100, "README.md": b"# app\n"}
    for content in (CONFIG, *layers.values()):
        _push_blob(api, "team/app", content)
    body = _manifest(layers)
    reply = _push(api, "team/app", "v1", body)
    assert reply.status == 201, reply.body
    assert reply.headers["Docker-Content-Digest"] == _digest(body)
    return body


def test_a_pushed_manifest_is_a_version_of_its_files_and_its_tag_an_alias(api: HandlerApi, pushed: bytes) -> None:
    version = api.call("GET", "/artifacts/team/app/versions/1").body
    assert version["sha256"] == _digest(pushed).removeprefix("sha256:")
    assert version["content_type"] == OCI_MANIFEST
    assert (version["files"], version["size"]) == (3, len(b"weights" * 100) + len(b"# app\n") + 2)
    assert api.call("GET", "/artifacts/team/app/aliases/v1").body["version"] == 1
    # The manifest's bytes, by tag, digest, version number and LATEST; HEAD gives its digest and size
    for reference in ("v1", _digest(pushed), "1", "LATEST"):
        reply = api.call("GET", f"/v2/team/app/manifests/{reference}")
        assert reply.status == 200
        assert reply.headers["Content-Type"] == OCI_MANIFEST
        assert json.dumps(reply.body).encode() == pushed
    head = api.call("HEAD", "/v2/team/app/manifests/v1")
    assert (head.status, head.headers["Docker-Content-Digest"]) == (200, _digest(pushed))
    assert head.headers["Content-Length"] == str(len(pushed))


def test_a_pushed_manifests_files_are_listed_and_resolved_as_a_trees(api: HandlerApi, pushed: bytes) -> None:
    listed = api.call("GET", "/artifacts/team/app/versions/1/files")
    assert listed.status == 200, listed.body
    config = "blobs/sha256/" + hashlib.sha256(CONFIG).hexdigest()
    assert [(f["path"], f["size"], f["content_type"]) for f in listed.body["files"]] == [
        ("README.md", 6, LAYER),
        (config, 2, "application/vnd.unknown.config.v1+json"),
        ("model.bin", 700, LAYER),
    ]
    one = api.call("GET", "/artifacts/team/app/resolve/v1/files/model.bin")
    assert one.status == 302 and one.headers["Location"].startswith("http")
    # A layer is served as its media type: the resolve answers it and the presigned URL pins it
    assert one.body["content_type"] == LAYER
    assert requests.get(one.headers["Location"], timeout=10).headers["Content-Type"] == LAYER


def test_a_blob_is_the_artifacts_content_found_by_head_and_by_arca(api: HandlerApi, pushed: bytes) -> None:
    content = b"weights" * 100
    head = api.call("HEAD", f"/v2/team/app/blobs/{_digest(content)}")
    assert (head.status, head.headers["Content-Length"]) == (200, str(len(content)))
    fetched = api.call("GET", f"/v2/team/app/blobs/{_digest(content)}")
    assert fetched.status == 307 and fetched.headers["Location"].startswith("http")
    # `arca`'s upload of the same bytes finds them stored
    upload = api.call(
        "POST", "/artifacts/team/app/uploads", {"sha256": hashlib.sha256(content).hexdigest(), "size": 700}
    )
    assert upload.body["exists"] is True
    # Another repository holds no such blob
    assert api.call("HEAD", f"/v2/team/other/blobs/{_digest(content)}").status == 404


def test_the_same_manifest_pushed_again_publishes_nothing(api: HandlerApi, pushed: bytes) -> None:
    again = _push(api, "team/app", "v2", pushed)
    assert again.status == 201
    assert api.call("GET", "/artifacts/team/app/versions").body["versions"][0]["version"] == 1
    assert len(api.call("GET", "/artifacts/team/app/versions").body["versions"]) == 1
    tags = api.call("GET", "/v2/team/app/tags/list")
    assert tags.body == {"name": "team/app", "tags": ["v1", "v2"]}


def test_pushing_a_tag_again_leaves_its_alias_and_canary_as_they_are(api: HandlerApi, pushed: bytes) -> None:
    _push_blob(api, "team/app", b"v2 layer")
    assert _push(api, "team/app", "v2", _manifest({"a.bin": b"v2 layer"})).status == 201
    body = {"version": 1, "secondary_version": 2, "secondary_version_weight": 10}
    before = api.call("PUT", "/artifacts/team/app/aliases/stable", body).body
    assert _push(api, "team/app", "stable", pushed).status == 201
    after = api.call("GET", "/artifacts/team/app/aliases/stable").body
    assert (after["revision"], after["secondary_version"]) == (before["revision"], 2)


def test_a_manifest_naming_blobs_not_stored_is_refused_once_per_blob_and_publishes_nothing(
    api: HandlerApi, aws: SimpleNamespace
) -> None:
    _push_blob(api, "team/app", CONFIG)
    before = snapshot(aws)
    body = _manifest({"a.bin": b"never pushed", "b.bin": b"nor this"})
    reply = _push(api, "team/app", "v1", body)
    assert reply.status == 400
    assert _codes(reply) == ["MANIFEST_BLOB_UNKNOWN", "MANIFEST_BLOB_UNKNOWN"]
    assert {e["detail"] for e in reply.body["errors"]} == {_digest(b"never pushed"), _digest(b"nor this")}
    assert api.call("GET", "/artifacts/team/app/versions/1").status == 404
    # No version, no alias: the blob counts of the files checked are all that changed
    assert [i for i in snapshot(aws)["items"] if "-blobs" not in i[0]] == [
        i for i in before["items"] if "-blobs" not in i[0]
    ]


def test_a_manifest_whose_layer_has_another_size_is_invalid(api: HandlerApi) -> None:
    _push_blob(api, "team/app", CONFIG)
    _push_blob(api, "team/app", b"layer")
    document = json.loads(_manifest({"a.bin": b"layer"}))
    document["layers"][0]["size"] = 99
    reply = _push(api, "team/app", "v1", json.dumps(document).encode())
    assert (reply.status, _codes(reply)) == (400, ["MANIFEST_INVALID"])


def test_any_oci_tag_is_an_alias(api: HandlerApi, pushed: bytes) -> None:
    for tag in ("v1.0", "Prod", "1.0.0", "_x"):
        assert _push(api, "team/app", tag, pushed).status == 201
        assert api.call("GET", f"/artifacts/team/app/aliases/{tag}").body["version"] == 1
        assert api.call("GET", f"/v2/team/app/manifests/{tag}").status == 200
    # Byte order: digits, upper case, `_`, lower case
    assert api.call("GET", "/v2/team/app/tags/list").body["tags"] == ["1.0.0", "Prod", "_x", "v1", "v1.0"]
    # A version number and LATEST are references, never tags
    for reference in ("7", "LATEST"):
        reply = _push(api, "team/app", reference, pushed)
        assert (reply.status, _codes(reply)) == (400, ["TAG_INVALID"])


def test_an_upload_session_in_chunks_stores_the_blob_and_is_then_gone(api: HandlerApi) -> None:
    content = b"0123456789" * 50
    started = api.call("POST", "/v2/team/app/blobs/uploads/")
    assert (started.status, started.headers["Range"]) == (202, "0-0")
    assert started.headers["Location"].startswith("/local/v2/team/app/blobs/uploads/")  # the stage path kept
    location = _on_stage(started.headers["Location"])
    first = api.call("PATCH", location, raw=content[:200], headers={"Content-Range": "0-199"})
    assert (first.status, first.headers["Range"]) == (202, "0-199")
    second = api.call("PATCH", location, raw=content[200:400])  # no Content-Range: at the end
    assert second.headers["Range"] == "0-399"
    wrong = api.call("PATCH", location, raw=b"x", headers={"Content-Range": "100-100"})
    assert (wrong.status, _codes(wrong), wrong.headers["Range"]) == (416, ["BLOB_UPLOAD_INVALID"], "0-399")
    assert api.call("GET", location).headers["Range"] == "0-399"
    done = api.call("PUT", location, raw=content[400:], query={"digest": _digest(content)})
    assert done.status == 201, done.body
    assert api.call("HEAD", f"/v2/team/app/blobs/{_digest(content)}").headers["Content-Length"] == "500"
    gone = api.call("GET", location)
    assert (gone.status, _codes(gone)) == (404, ["BLOB_UPLOAD_UNKNOWN"])


def test_a_session_whose_bytes_are_not_the_digest_stores_nothing(api: HandlerApi, aws: SimpleNamespace) -> None:
    started = api.call("POST", "/v2/team/app/blobs/uploads/")
    location = _on_stage(started.headers["Location"])
    api.call("PATCH", location, raw=b"some bytes")
    reply = api.call("PUT", location, query={"digest": _digest(b"other bytes")})
    assert (reply.status, _codes(reply)) == (400, ["DIGEST_INVALID"])
    assert api.call("GET", location).status == 404
    assert not [k for k in snapshot(aws)["objects"] if "/_blobs/" in k]


def test_a_session_answers_only_its_own_caller_and_repository(api: HandlerApi) -> None:
    location = _on_stage(api.call("POST", "/v2/team/app/blobs/uploads/").headers["Location"])
    session = location.rsplit("/", 1)[1]
    other = HandlerApi()
    other.identity = "arn:aws:iam::000000000000:user/mallory"
    for reply in (
        other.call("PATCH", location, raw=b"x"),
        api.call("PATCH", f"/v2/team/elsewhere/blobs/uploads/{session}", raw=b"x"),
        api.call("PATCH", "/v2/team/app/blobs/uploads/not-a-session", raw=b"x"),
    ):
        assert (reply.status, _codes(reply)) == (404, ["BLOB_UPLOAD_UNKNOWN"])
    assert api.call("DELETE", location).status == 204
    assert api.call("DELETE", location).status == 404


def test_a_session_over_one_requests_bound_is_413_naming_the_proxy(api: HandlerApi) -> None:
    from arca.services.oci import SESSION_MAX_BYTES

    location = _on_stage(api.call("POST", "/v2/team/app/blobs/uploads/").headers["Location"])
    api.call("PATCH", location, raw=b"a" * (SESSION_MAX_BYTES - 10))
    reply = api.call("PATCH", location, raw=b"b" * 20)
    assert (reply.status, _codes(reply)) == (413, ["SIZE_INVALID"])
    assert "push through `arca proxy`" in reply.body["errors"][0]["message"]


def test_a_tag_a_policy_refuses_is_denied_with_409_and_the_version_stays(api: HandlerApi, pushed: bytes) -> None:
    policy = api.call("PUT", "/artifacts/team/app/aliases/v1/policy", {"require_tags": {"qa": "passed"}})
    assert policy.status in (200, 201), policy.body
    _push_blob(api, "team/app", b"v2 layer")
    body = _manifest({"a.bin": b"v2 layer"})
    reply = _push(api, "team/app", "v1", body)
    assert (reply.status, _codes(reply)) == (409, ["DENIED"])
    assert api.call("GET", "/artifacts/team/app/versions/2").body["sha256"] == _digest(body).removeprefix("sha256:")
    assert api.call("GET", "/artifacts/team/app/aliases/v1").body["version"] == 1


def test_delete_a_tag_then_its_manifest_by_digest(api: HandlerApi, pushed: bytes) -> None:
    digest = _digest(pushed)
    refused = api.call("DELETE", f"/v2/team/app/manifests/{digest}")
    assert (refused.status, _codes(refused)) == (409, ["DENIED"])
    assert api.call("DELETE", "/v2/team/app/manifests/v1").status == 202
    assert api.call("GET", "/v2/team/app/manifests/v1").status == 404
    assert api.call("DELETE", f"/v2/team/app/manifests/{digest}").status == 202
    gone = api.call("GET", f"/v2/team/app/manifests/{digest}")
    assert (gone.status, _codes(gone)) == (404, ["MANIFEST_UNKNOWN"])


def test_tags_are_listed_in_pages_with_a_link(api: HandlerApi, pushed: bytes) -> None:
    for tag in ("b", "a", "c"):
        assert _push(api, "team/app", tag, pushed).status == 201
    first = api.call("GET", "/v2/team/app/tags/list", query={"n": "2"})
    assert first.body["tags"] == ["a", "b"]
    # On the stage's own URL (`/<stage>/v2/…`, as API Gateway invokes the function here) the link keeps the stage
    assert first.headers["Link"] == '</local/v2/team/app/tags/list?last=b&n=2>; rel="next"'
    rest = api.call("GET", "/v2/team/app/tags/list", query={"n": "2", "last": "b"})
    assert rest.body["tags"] == ["c", "v1"] and "Link" not in rest.headers
    unknown = api.call("GET", "/v2/team/none/tags/list")
    assert (unknown.status, _codes(unknown)) == (404, ["NAME_UNKNOWN"])


def test_a_blob_version_is_no_manifest(api: HandlerApi) -> None:
    api.publish("team/plain", b"just bytes")
    reply = api.call("GET", "/v2/team/plain/manifests/1")
    assert (reply.status, _codes(reply)) == (404, ["MANIFEST_UNKNOWN"])


def _attachment(subject: bytes, artifact_type: str = "application/vnd.example.sig.v1+json") -> bytes:
    return _manifest(
        {"sig": b"signature"},
        artifactType=artifact_type,
        subject={"mediaType": OCI_MANIFEST, "digest": _digest(subject), "size": len(subject)},
        annotations={"made-by": "test"},
    )


def test_a_manifest_with_a_subject_is_an_attestation_of_its_version(api: HandlerApi, pushed: bytes) -> None:
    _push_blob(api, "team/app", b"signature")
    body = _attachment(pushed)
    reply = _push(api, "team/app", _digest(body), body)
    assert reply.status == 201, reply.body
    assert reply.headers["OCI-Subject"] == _digest(pushed)
    # An attestation of version 1 (no version of its own), with a REST attestation beside it
    [attestation] = api.call("GET", "/artifacts/team/app/versions/1/attestations").body["attestations"]
    assert (attestation["type"], attestation["sha256"]) == ("application/vnd.example.sig.v1+json", _digest(body)[7:])
    assert len(api.call("GET", "/artifacts/team/app/versions").body["versions"]) == 1
    api.call("POST", "/artifacts/team/app/versions/1/attestations", {"type": "test-report", "content": {"ok": True}})
    index = api.call("GET", f"/v2/team/app/referrers/{_digest(pushed)}").body
    by_type = {m["artifactType"]: m for m in index["manifests"]}
    assert by_type["application/vnd.example.sig.v1+json"] == {
        "mediaType": OCI_MANIFEST,
        "digest": _digest(body),
        "size": len(body),
        "artifactType": "application/vnd.example.sig.v1+json",
        "annotations": {"made-by": "test"},
    }
    assert by_type["test-report"]["mediaType"] == "application/json"
    # Fetched by its digest, byte for byte
    fetched = api.call("GET", f"/v2/team/app/manifests/{_digest(body)}")
    assert (fetched.status, json.dumps(fetched.body).encode()) == (200, body)


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ("tag", "TAG_INVALID"),
        ("unknown blob", "MANIFEST_BLOB_UNKNOWN"),
        ("upper-case type", "MANIFEST_INVALID"),
    ],
)
def test_an_attachment_that_cannot_be_recorded_is_refused_and_writes_nothing(
    api: HandlerApi, aws: SimpleNamespace, pushed: bytes, change: str, code: str
) -> None:
    if change != "unknown blob":
        _push_blob(api, "team/app", b"signature")
    body = _attachment(pushed, "application/VND.Example" if change == "upper-case type" else "a/b")
    before = snapshot(aws)
    reply = _push(api, "team/app", "sig" if change == "tag" else _digest(body), body)
    assert (reply.status, _codes(reply)) == (400, [code])
    assert snapshot(aws) == before


def test_a_referrer_pushed_before_its_subject_is_accepted_listed_and_adopted_by_the_subject(
    api: HandlerApi, aws: SimpleNamespace
) -> None:
    # Given a manifest whose subject is not pushed yet (OCI v1.1: the registry MUST accept it)
    layers = {"model.bin": b"later weights"}
    subject = _manifest(layers)
    _push_blob(api, "team/later", b"signature")
    _push_blob(api, "team/later", CONFIG)
    body = _attachment(subject)
    reply = _push(api, "team/later", _digest(body), body)
    assert reply.status == 201, reply.body
    assert reply.headers["OCI-Subject"] == _digest(subject)
    # Then it is fetched by its digest and listed among the subject's referrers, though no version has that digest
    fetched = api.call("GET", f"/v2/team/later/manifests/{_digest(body)}")
    assert (fetched.status, json.dumps(fetched.body).encode()) == (200, body)
    expected = {
        "mediaType": OCI_MANIFEST,
        "digest": _digest(body),
        "size": len(body),
        "artifactType": "application/vnd.example.sig.v1+json",
        "annotations": {"made-by": "test"},
    }
    index = api.call("GET", f"/v2/team/later/referrers/{_digest(subject)}").body
    assert index["manifests"] == [expected]
    assert _push(api, "team/later", _digest(body), body).status == 201  # again: the same, once
    assert len(api.call("GET", f"/v2/team/later/referrers/{_digest(subject)}").body["manifests"]) == 1
    # When the subject is pushed, the referrer becomes an attestation of its version: listed once, and seen by a
    # policy requiring it
    for content in layers.values():
        _push_blob(api, "team/later", content)
    assert _push(api, "team/later", "v1", subject).status == 201
    [attestation] = api.call("GET", "/artifacts/team/later/versions/1/attestations").body["attestations"]
    assert (attestation["type"], attestation["sha256"]) == ("application/vnd.example.sig.v1+json", _digest(body)[7:])
    index = api.call("GET", f"/v2/team/later/referrers/{_digest(subject)}").body
    assert index["manifests"] == [expected]
    assert not [i for i in snapshot(aws)["items"] if i[0] == "__team/later-ocireferrers"]
    policy = {"require_attestations": ["application/vnd.example.sig.v1+json"]}
    assert api.call("PUT", "/artifacts/team/later/aliases/prod/policy", policy).status == 200
    assert api.call("PUT", "/artifacts/team/later/aliases/prod", {"version": 1}).status in (200, 201)


def test_a_purge_removes_the_referrers_waiting_for_a_subject(
    api: HandlerApi, aws: SimpleNamespace, pushed: bytes
) -> None:
    # Given a referrer waiting for a subject no version has
    _push_blob(api, "team/app", b"signature")
    body = _attachment(b"a subject never pushed")
    assert _push(api, "team/app", _digest(body), body).status == 201
    assert [i for i in snapshot(aws)["items"] if i[0] == "__team/app-ocireferrers"]
    # When the artifact is purged (its tag first), then its item is gone with the rest
    assert api.call("DELETE", "/v2/team/app/manifests/v1").status == 202
    assert api.call("DELETE", "/artifacts/team/app").status == 204
    assert not [i for i in snapshot(aws)["items"] if i[0].startswith("__team/app")]


def test_a_referrer_before_its_subject_with_a_missing_blob_is_refused_and_writes_nothing(
    api: HandlerApi, aws: SimpleNamespace
) -> None:
    body = _attachment(b"no such manifest")
    before = snapshot(aws)
    reply = _push(api, "team/app", _digest(body), body)
    assert (reply.status, _codes(reply)) == (400, ["MANIFEST_BLOB_UNKNOWN"] * 2)  # the config and the signature
    assert snapshot(aws) == before


def test_referrers_are_an_empty_index(api: HandlerApi, pushed: bytes) -> None:
    reply = api.call("GET", f"/v2/team/app/referrers/{_digest(pushed)}")
    assert reply.status == 200
    assert reply.body == {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": []}


@pytest.mark.parametrize(
    ("method", "path", "headers", "query", "status", "code"),
    [
        ("GET", "/v2/Team/App/tags/list", {}, {}, 400, "NAME_INVALID"),
        ("GET", "/v2/team/versions/tags/list", {}, {}, 400, "NAME_INVALID"),
        ("GET", "/v2/team/app/tags/list", {}, {"n": "-1"}, 400, "UNSUPPORTED"),
        ("HEAD", "/v2/team/app/blobs/sha256:xyz", {}, {}, 400, None),
        ("GET", "/v2/team/app/blobs/md5:abc", {}, {}, 400, "DIGEST_INVALID"),
        ("GET", "/v2/team/app/manifests/bad~tag", {}, {}, 400, "TAG_INVALID"),
        ("PUT", "/v2/team/app/manifests/7", {"Content-Type": OCI_MANIFEST}, {}, 400, "TAG_INVALID"),
        ("PUT", "/v2/team/app/manifests/v1", {"Content-Type": OCI_MANIFEST}, {}, 400, "MANIFEST_INVALID"),
        ("POST", "/v2/team/app/blobs/uploads/", {}, {"digest": "sha256:00"}, 400, "DIGEST_INVALID"),
        ("POST", "/v2/team/app/blobs/uploads/", {}, {"digest": _digest(b"other")}, 400, "DIGEST_INVALID"),
        ("PATCH", "/v2/team/app/blobs/uploads/nope", {"Content-Range": "x"}, {}, 416, "BLOB_UPLOAD_INVALID"),
        ("PUT", "/v2/team/app/blobs/uploads/nope", {}, {}, 400, "DIGEST_INVALID"),
        ("DELETE", "/v2/team/app/blobs/" + _digest(b"x"), {}, {}, 405, "UNSUPPORTED"),
        ("GET", "/v2/_catalog", {}, {}, 405, "UNSUPPORTED"),
        ("GET", "/v2/team/app/referrers/sha256:zz", {}, {}, 400, "DIGEST_INVALID"),
    ],
)
def test_bad_input_under_v2_is_refused_in_ocis_shape_and_writes_nothing(
    api: HandlerApi,
    aws: SimpleNamespace,
    method: str,
    path: str,
    headers: dict[str, str],
    query: dict[str, str],
    status: int,
    code: str | None,
) -> None:
    api.publish("team/app", b"stored")
    before = snapshot(aws)
    reply = api.call(
        method, path, raw=b"not a manifest" if method in ("PUT", "POST") else None, headers=headers, query=query
    )
    assert reply.status == status, reply.body
    assert reply.headers["Docker-Distribution-API-Version"] == "registry/2.0"
    if code is not None:
        assert _codes(reply) == [code]
        assert all(e["message"] for e in reply.body["errors"])
    assert snapshot(aws) == before


def test_a_purge_removes_the_artifacts_upload_sessions_and_their_bytes(
    api: HandlerApi, aws: SimpleNamespace, pushed: bytes
) -> None:
    location = _on_stage(api.call("POST", "/v2/team/app/blobs/uploads/").headers["Location"])
    api.call("PATCH", location, raw=b"half a blob")
    assert api.call("DELETE", "/artifacts/team/app", query={"force": "true"}).status == 204
    assert api.call("GET", location).status == 404
    stored = snapshot(aws)
    assert not [k for k in stored["objects"] if k.startswith("artifacts/team/app/")]
    assert not [i for i in stored["items"] if i[0] == "__team/app-ocisessions"]


def test_multipart_content_arca_uploaded_is_a_blob_an_oci_client_finds_and_fetches(api: HandlerApi) -> None:
    from tests.integration.test_multipart import DATA, put_part, start

    # Given content `arca publish` uploaded in parts (verified on completion), never published
    upload = start(api, "team/big", DATA)
    for target in upload["parts"]:
        assert put_part(target, DATA).status_code == 200
    assert api.call("POST", f"/artifacts/team/big/uploads/{upload['id']}/complete").status == 200
    # When an OCI client looks for it, then fetches it
    head = api.call("HEAD", f"/v2/team/big/blobs/{_digest(DATA)}")
    fetched = api.call("GET", f"/v2/team/big/blobs/{_digest(DATA)}")
    # Then it is there, and the redirect serves its bytes
    assert (head.status, head.headers["Content-Length"]) == (200, str(len(DATA)))
    assert fetched.status == 307
    assert hashlib.sha256(requests.get(fetched.headers["Location"], timeout=30).content).hexdigest() == _digest(
        DATA
    ).removeprefix("sha256:")
    # And a manifest naming it publishes
    _push_blob(api, "team/big", CONFIG)
    document = json.loads(_manifest({}))
    document["layers"] = [_descriptor(DATA, title="weights.bin")]
    assert _push(api, "team/big", "v1", json.dumps(document).encode()).status == 201
