"""The /v2/ dispatcher against the dict registry of tests/oci/fake_backend.py, in process: statuses, headers,
bodies, and what a refusal leaves behind (arca.protocols.oci.dispatch)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from arca.protocols.oci import MAX_BODY_BYTES, Digest, Request, Response, handle
from arca.protocols.oci.dispatch import LAMBDA_EVENT_BYTES
from tests.oci.documents import OCI_INDEX, OCI_MANIFEST, descriptor, digest, encode, image, index, subject_of
from tests.oci.fake_backend import FakeRegistry

NAME = "demo/app"
A, B = b"model weights", b"readme"


@pytest.fixture
def registry() -> FakeRegistry:
    return FakeRegistry("http://blobs.test")


def call(
    registry: FakeRegistry,
    method: str,
    path: str,
    body: bytes = b"",
    headers: dict[str, Any] | None = None,
    query: dict[str, str] | None = None,
    prefix: str = "",
    max_body: int | None = MAX_BODY_BYTES,
) -> Response:
    multi = {k: v if isinstance(v, list) else [v] for k, v in (headers or {}).items()}
    request = Request(method, prefix + path, {k: [v] for k, v in (query or {}).items()}, multi, body, prefix)
    return handle(request, registry.backend(), max_body=max_body)


def errors(response: Response) -> list[dict[str, Any]]:
    assert response.headers["Content-Type"] == "application/json"
    return list(json.loads(response.body)["errors"])


def codes(response: Response) -> list[str]:
    return [e["code"] for e in errors(response)]


def push_blob(registry: FakeRegistry, content: bytes, name: str = NAME) -> None:
    answer = call(registry, "POST", f"/v2/{name}/blobs/uploads/", content, query={"digest": digest(content)})
    assert answer.status == 201


def push_manifest(registry: FakeRegistry, document: dict[str, Any], reference: str, name: str = NAME) -> bytes:
    for blob in (b"{}", A, B):
        push_blob(registry, blob, name)
    body = encode(document)
    answer = call(registry, "PUT", f"/v2/{name}/manifests/{reference}", body, {"Content-Type": document["mediaType"]})
    assert answer.status == 201, answer.body
    return body


# The base and the routes


def test_the_base_answers_200_with_the_api_version(registry: FakeRegistry) -> None:
    for path in ("/v2/", "/v2"):
        answer = call(registry, "GET", path)
        assert (answer.status, answer.body) == (200, b"{}")
        assert answer.headers["Docker-Distribution-API-Version"] == "registry/2.0"


def test_a_prefix_is_stripped_and_leads_every_location(registry: FakeRegistry) -> None:
    answer = call(registry, "POST", f"/v2/{NAME}/blobs/uploads/", prefix="/dev")
    assert answer.status == 202
    assert answer.headers["Location"] == f"/dev/v2/{NAME}/blobs/uploads/upload-1"


@pytest.mark.parametrize(
    ("method", "path", "status", "code"),
    [
        ("GET", "/v2/Bad/tags/list", 400, "NAME_INVALID"),
        ("GET", "/v2/a/uploads/tags/list", 400, "NAME_INVALID"),
        ("GET", "/v2/demo/app/elsewhere", 404, "NAME_UNKNOWN"),
        ("GET", "/other", 404, "NAME_UNKNOWN"),
        ("GET", "/v2/_catalog", 405, "UNSUPPORTED"),
        ("POST", "/v2/demo/app/manifests/v1", 405, "UNSUPPORTED"),
        ("DELETE", f"/v2/demo/app/blobs/{digest(A)}", 405, "UNSUPPORTED"),
        ("GET", "/v2/demo/app/blobs/sha256:abc", 400, "DIGEST_INVALID"),
        ("GET", "/v2/demo/app/manifests/.bad", 400, "TAG_INVALID"),
        ("GET", "/v2/demo/app/referrers/nodigest", 400, "DIGEST_INVALID"),
        ("GET", "/v2/demo/app/blobs/uploads/bad%20id", 404, "BLOB_UPLOAD_UNKNOWN"),
    ],
)
def test_requests_of_no_route_or_bad_parts_are_refused_in_ocis_shape(
    registry: FakeRegistry, method: str, path: str, status: int, code: str
) -> None:
    answer = call(registry, method, path)
    assert (answer.status, codes(answer)) == (status, [code])
    assert registry.repositories == {}


def test_a_method_a_route_does_not_answer_names_those_it_does(registry: FakeRegistry) -> None:
    assert call(registry, "PATCH", f"/v2/{NAME}/tags/list").headers["Allow"] == "GET"


def test_a_name_may_hold_the_words_of_the_routes(registry: FakeRegistry) -> None:
    # Given a repository whose name has the segments `blobs` and `manifests`
    name = "team/blobs/manifests/app"
    push_manifest(registry, image([descriptor(A)]), "v1", name=name)
    # Then its paths are read from the right
    assert call(registry, "GET", f"/v2/{name}/manifests/v1").status == 200
    assert call(registry, "HEAD", f"/v2/{name}/blobs/{digest(A)}").status == 200
    assert json.loads(call(registry, "GET", f"/v2/{name}/tags/list").body) == {"name": name, "tags": ["v1"]}


def test_a_percent_encoded_digest_is_read(registry: FakeRegistry) -> None:
    push_blob(registry, A)
    assert call(registry, "HEAD", f"/v2/{NAME}/blobs/{digest(A).replace(':', '%3A')}").status == 200


# Blobs


def test_head_of_a_blob_gives_its_size_and_digest_and_no_body(registry: FakeRegistry) -> None:
    push_blob(registry, A)
    answer = call(registry, "HEAD", f"/v2/{NAME}/blobs/{digest(A)}")
    assert answer.status == 200
    assert answer.headers["Content-Length"] == str(len(A))
    assert answer.headers["Docker-Content-Digest"] == digest(A)
    assert answer.body == b""


def test_head_of_an_unknown_blob_is_404_without_a_body(registry: FakeRegistry) -> None:
    answer = call(registry, "HEAD", f"/v2/{NAME}/blobs/{digest(A)}")
    assert (answer.status, answer.body) == (404, b"")


def test_get_of_a_blob_redirects_to_another_host(registry: FakeRegistry) -> None:
    push_blob(registry, A)
    answer = call(registry, "GET", f"/v2/{NAME}/blobs/{digest(A)}")
    assert answer.status == 307
    assert answer.headers["Location"] == f"http://blobs.test/{NAME}/{digest(A)}"
    assert answer.headers["Docker-Content-Digest"] == digest(A)
    assert codes(call(registry, "GET", f"/v2/{NAME}/blobs/{digest(B)}")) == ["BLOB_UNKNOWN"]


def test_a_manifests_bytes_are_a_blob_too(registry: FakeRegistry) -> None:
    body = push_manifest(registry, image([descriptor(A)]), "v1")
    assert call(registry, "HEAD", f"/v2/{NAME}/blobs/{digest(body)}").headers["Content-Length"] == str(len(body))


def test_a_monolithic_post_stores_the_blob(registry: FakeRegistry) -> None:
    answer = call(registry, "POST", f"/v2/{NAME}/blobs/uploads/", A, query={"digest": digest(A)})
    assert answer.status == 201
    assert answer.headers["Location"] == f"/v2/{NAME}/blobs/{digest(A)}"
    assert answer.headers["Docker-Content-Digest"] == digest(A)
    assert registry.blob(NAME, Digest.of(A)) == A


def test_a_monolithic_post_of_other_bytes_is_digest_invalid_and_stores_nothing(registry: FakeRegistry) -> None:
    answer = call(registry, "POST", f"/v2/{NAME}/blobs/uploads/", B, query={"digest": digest(A)})
    assert (answer.status, codes(answer)) == (400, ["DIGEST_INVALID"])
    assert registry.repositories == {}


def test_a_mount_is_answered_with_a_new_session(registry: FakeRegistry) -> None:
    answer = call(registry, "POST", f"/v2/{NAME}/blobs/uploads/", query={"mount": digest(A), "from": "other/repo"})
    assert answer.status == 202
    assert answer.headers["Location"].startswith(f"/v2/{NAME}/blobs/uploads/")


def test_another_digest_algorithm_is_refused(registry: FakeRegistry) -> None:
    answer = call(registry, "POST", f"/v2/{NAME}/blobs/uploads/", query={"digest-algorithm": "sha512"})
    assert codes(answer) == ["DIGEST_INVALID"]


# Upload sessions


def test_a_chunked_upload_follows_the_specification(registry: FakeRegistry) -> None:
    blob = bytes(range(100))
    # When a session is opened
    started = call(registry, "POST", f"/v2/{NAME}/blobs/uploads/", headers={"Content-Length": "0"})
    location = started.headers["Location"]
    assert started.status == 202
    assert started.headers["Range"] == "0-0"
    assert started.headers["Docker-Upload-UUID"] == location.rsplit("/", 1)[1]
    # And chunks are sent with their Content-Range
    first = call(registry, "PATCH", location, blob[:40], {"Content-Range": "0-39"})
    assert (first.status, first.headers["Range"], first.headers["Location"]) == (202, "0-39", location)
    # Then an out-of-order chunk is 416 saying where the upload ends, and changes nothing
    wrong = call(registry, "PATCH", location, blob[50:60], {"Content-Range": "50-59"})
    assert (wrong.status, codes(wrong), wrong.headers["Range"]) == (416, ["BLOB_UPLOAD_INVALID"], "0-39")
    status = call(registry, "GET", location)
    assert (status.status, status.headers["Range"], status.headers["Location"]) == (204, "0-39", location)
    # And a chunk without Content-Range goes at the end, the last one may come with the closing PUT
    assert call(registry, "PATCH", location, blob[40:70]).headers["Range"] == "0-69"
    closed = call(registry, "PUT", location, blob[70:], {"Content-Range": "70-99"}, {"digest": digest(blob)})
    assert closed.status == 201
    assert closed.headers["Location"] == f"/v2/{NAME}/blobs/{digest(blob)}"
    assert registry.repositories[NAME].blobs
    assert call(registry, "GET", location).status == 404


def test_a_content_range_of_another_length_than_the_body_is_size_invalid(registry: FakeRegistry) -> None:
    location = call(registry, "POST", f"/v2/{NAME}/blobs/uploads/").headers["Location"]
    answer = call(registry, "PATCH", location, b"0123456789", {"Content-Range": "0-19"})
    assert (answer.status, codes(answer)) == (400, ["SIZE_INVALID"])
    assert call(registry, "GET", location).headers["Range"] == "0-0"


@pytest.mark.parametrize("value", ["9-0", "x-y", "0-"])
def test_a_malformed_content_range_is_416(registry: FakeRegistry, value: str) -> None:
    location = call(registry, "POST", f"/v2/{NAME}/blobs/uploads/").headers["Location"]
    assert call(registry, "PATCH", location, b"0123456789", {"Content-Range": value}).status == 416


def test_a_closing_put_of_other_bytes_is_digest_invalid_and_ends_the_session(registry: FakeRegistry) -> None:
    location = call(registry, "POST", f"/v2/{NAME}/blobs/uploads/").headers["Location"]
    answer = call(registry, "PUT", location, B, query={"digest": digest(A)})
    assert codes(answer) == ["DIGEST_INVALID"]
    assert registry.repositories.get(NAME) is None or not registry.repositories[NAME].blobs
    assert codes(call(registry, "GET", location)) == ["BLOB_UPLOAD_UNKNOWN"]


def test_a_closing_put_names_the_digest(registry: FakeRegistry) -> None:
    location = call(registry, "POST", f"/v2/{NAME}/blobs/uploads/").headers["Location"]
    answer = call(registry, "PUT", location, A)
    assert codes(answer) == ["DIGEST_INVALID"]
    assert "digest" in errors(answer)[0]["message"]
    assert call(registry, "GET", location).status == 204  # the session is still there: a retry may name it


def test_a_session_is_cancelled_once(registry: FakeRegistry) -> None:
    location = call(registry, "POST", f"/v2/{NAME}/blobs/uploads/").headers["Location"]
    assert call(registry, "DELETE", location).status == 204
    assert codes(call(registry, "DELETE", location)) == ["BLOB_UPLOAD_UNKNOWN"]


def test_a_session_belongs_to_its_repository(registry: FakeRegistry) -> None:
    location = call(registry, "POST", f"/v2/{NAME}/blobs/uploads/").headers["Location"]
    elsewhere = location.replace(NAME, "demo/other")
    assert codes(call(registry, "PATCH", elsewhere, A)) == ["BLOB_UPLOAD_UNKNOWN"]


def test_a_body_over_what_lambda_carries_is_413_naming_the_proxy(registry: FakeRegistry) -> None:
    # Given a chunk one byte over the bound
    location = call(registry, "POST", f"/v2/{NAME}/blobs/uploads/").headers["Location"]
    answer = call(registry, "PATCH", location, b"x" * 11, max_body=10)
    # Then
    assert (answer.status, codes(answer)) == (413, ["SIZE_INVALID"])
    assert "push through `arca proxy`" in errors(answer)[0]["message"]
    assert call(registry, "GET", location).headers["Range"] == "0-0"
    # And without a bound (behind the proxy) it is taken
    assert call(registry, "PATCH", location, b"x" * 11, max_body=None).status == 202


def test_the_body_bound_fits_lambdas_event_as_base64() -> None:
    assert len(base64.b64encode(b"x" * MAX_BODY_BYTES)) + 64 * 1024 <= LAMBDA_EVENT_BYTES
    assert MAX_BODY_BYTES > 4 * 1024 * 1024


# Manifests


def test_a_manifest_pushed_by_tag_is_served_by_tag_digest_version_and_latest(registry: FakeRegistry) -> None:
    body = push_manifest(registry, image([descriptor(A, title="model.bin")]), "v1")
    for reference in ("v1", digest(body), "1", "LATEST"):
        answer = call(registry, "GET", f"/v2/{NAME}/manifests/{reference}", headers={"Accept": OCI_MANIFEST})
        assert (answer.status, answer.body) == (200, body), reference
        assert answer.headers["Content-Type"] == OCI_MANIFEST
        assert answer.headers["Docker-Content-Digest"] == digest(body)
        assert answer.headers["Content-Length"] == str(len(body))


def test_a_manifest_push_answers_its_location_by_digest(registry: FakeRegistry) -> None:
    for blob in (b"{}", A):
        push_blob(registry, blob)
    body = encode(image([descriptor(A)]))
    answer = call(registry, "PUT", f"/v2/{NAME}/manifests/v1", body, {"Content-Type": OCI_MANIFEST})
    assert answer.headers["Location"] == f"/v2/{NAME}/manifests/{digest(body)}"
    assert answer.headers["Docker-Content-Digest"] == digest(body)
    assert "OCI-Subject" not in answer.headers


def test_head_of_a_manifest_has_its_headers_and_no_body(registry: FakeRegistry) -> None:
    body = push_manifest(registry, image([descriptor(A)]), "v1")
    answer = call(registry, "HEAD", f"/v2/{NAME}/manifests/v1")
    assert (answer.status, answer.body, answer.headers["Content-Length"]) == (200, b"", str(len(body)))


def test_an_etag_the_client_has_is_304(registry: FakeRegistry) -> None:
    body = push_manifest(registry, image([descriptor(A)]), "v1")
    answer = call(registry, "GET", f"/v2/{NAME}/manifests/v1", headers={"If-None-Match": f'"{digest(body)}"'})
    assert (answer.status, answer.body) == (304, b"")


def test_a_manifest_naming_unknown_blobs_lists_each_and_stores_nothing(registry: FakeRegistry) -> None:
    push_blob(registry, b"{}")
    body = encode(image([descriptor(A), descriptor(B)]))
    answer = call(registry, "PUT", f"/v2/{NAME}/manifests/v1", body, {"Content-Type": OCI_MANIFEST})
    assert (answer.status, codes(answer)) == (400, ["MANIFEST_BLOB_UNKNOWN", "MANIFEST_BLOB_UNKNOWN"])
    assert [e["detail"] for e in errors(answer)] == [digest(A), digest(B)]
    assert registry.repositories[NAME].manifests == {}


@pytest.mark.parametrize("reference", ["1", "LATEST"])
def test_a_manifest_is_never_pushed_to_a_version_number_or_latest(registry: FakeRegistry, reference: str) -> None:
    body = encode(image([]))
    answer = call(registry, "PUT", f"/v2/{NAME}/manifests/{reference}", body, {"Content-Type": OCI_MANIFEST})
    assert codes(answer) == ["TAG_INVALID"]
    assert registry.repositories == {}


def test_a_manifest_pushed_by_another_digest_is_digest_invalid(registry: FakeRegistry) -> None:
    body = encode(image([]))
    answer = call(registry, "PUT", f"/v2/{NAME}/manifests/{digest(b'other')}", body, {"Content-Type": OCI_MANIFEST})
    assert codes(answer) == ["DIGEST_INVALID"]
    assert registry.repositories == {}


def test_a_malformed_manifest_is_manifest_invalid_before_the_backend(registry: FakeRegistry) -> None:
    answer = call(registry, "PUT", f"/v2/{NAME}/manifests/v1", b"not json", {"Content-Type": OCI_MANIFEST})
    assert codes(answer) == ["MANIFEST_INVALID"]
    assert registry.repositories == {}


def test_an_index_references_manifests_of_the_same_repository(registry: FakeRegistry) -> None:
    child = push_manifest(registry, image([descriptor(A)]), "amd64")
    body = encode(index([child]))
    answer = call(registry, "PUT", f"/v2/{NAME}/manifests/multi", body, {"Content-Type": OCI_INDEX})
    assert answer.status == 201
    elsewhere = call(registry, "PUT", "/v2/other/app/manifests/multi", body, {"Content-Type": OCI_INDEX})
    assert codes(elsewhere) == ["MANIFEST_BLOB_UNKNOWN"]


def test_unknown_manifests_are_manifest_unknown(registry: FakeRegistry) -> None:
    for reference in ("v9", digest(b"x"), "9", "LATEST"):
        assert codes(call(registry, "GET", f"/v2/{NAME}/manifests/{reference}")) == ["MANIFEST_UNKNOWN"]


def test_deleting_a_tag_leaves_the_manifest(registry: FakeRegistry) -> None:
    body = push_manifest(registry, image([descriptor(A)]), "v1")
    assert call(registry, "DELETE", f"/v2/{NAME}/manifests/v1").status == 202
    assert codes(call(registry, "GET", f"/v2/{NAME}/manifests/v1")) == ["MANIFEST_UNKNOWN"]
    assert call(registry, "GET", f"/v2/{NAME}/manifests/{digest(body)}").status == 200
    assert codes(call(registry, "DELETE", f"/v2/{NAME}/manifests/v1")) == ["MANIFEST_UNKNOWN"]


def test_a_tagged_manifest_is_not_deleted_by_digest(registry: FakeRegistry) -> None:
    body = push_manifest(registry, image([descriptor(A)]), "v1")
    refused = call(registry, "DELETE", f"/v2/{NAME}/manifests/{digest(body)}")
    assert (refused.status, codes(refused)) == (403, ["DENIED"])
    assert call(registry, "DELETE", f"/v2/{NAME}/manifests/v1").status == 202
    assert call(registry, "DELETE", f"/v2/{NAME}/manifests/{digest(body)}").status == 202
    assert codes(call(registry, "GET", f"/v2/{NAME}/manifests/{digest(body)}")) == ["MANIFEST_UNKNOWN"]


def test_a_manifest_is_not_deleted_by_version_number(registry: FakeRegistry) -> None:
    push_manifest(registry, image([descriptor(A)]), "v1")
    assert codes(call(registry, "DELETE", f"/v2/{NAME}/manifests/1")) == ["TAG_INVALID"]


# Tags


def _tagged(registry: FakeRegistry, tags: list[str]) -> None:
    body = push_manifest(registry, image([descriptor(A)]), tags[0])
    for tag in tags[1:]:
        assert call(registry, "PUT", f"/v2/{NAME}/manifests/{tag}", body, {"Content-Type": OCI_MANIFEST}).status == 201


def test_tags_are_listed_in_byte_order(registry: FakeRegistry) -> None:
    _tagged(registry, ["b", "a", "B", "_x", "1.0"])
    answer = call(registry, "GET", f"/v2/{NAME}/tags/list")
    assert json.loads(answer.body) == {"name": NAME, "tags": ["1.0", "B", "_x", "a", "b"]}
    assert "Link" not in answer.headers


def test_tags_page_with_n_and_last_and_a_link_to_the_next_page(registry: FakeRegistry) -> None:
    _tagged(registry, ["a", "b", "c", "d", "e"])
    first = call(registry, "GET", f"/v2/{NAME}/tags/list", query={"n": "2"})
    assert json.loads(first.body)["tags"] == ["a", "b"]
    assert first.headers["Link"] == f'</v2/{NAME}/tags/list?last=b&n=2>; rel="next"'
    second = call(registry, "GET", f"/v2/{NAME}/tags/list", query={"n": "2", "last": "b"})
    assert json.loads(second.body)["tags"] == ["c", "d"]
    last = call(registry, "GET", f"/v2/{NAME}/tags/list", query={"n": "2", "last": "d"})
    assert (json.loads(last.body)["tags"], "Link" in last.headers) == (["e"], False)
    assert json.loads(call(registry, "GET", f"/v2/{NAME}/tags/list", query={"last": "c"}).body)["tags"] == ["d", "e"]


def test_n_zero_is_an_empty_list_without_a_link(registry: FakeRegistry) -> None:
    _tagged(registry, ["a"])
    answer = call(registry, "GET", f"/v2/{NAME}/tags/list", query={"n": "0"})
    assert (json.loads(answer.body)["tags"], "Link" in answer.headers) == ([], False)


@pytest.mark.parametrize("n", ["x", "-1", "1.5", "²"])
def test_n_that_is_no_count_is_400(registry: FakeRegistry, n: str) -> None:
    assert call(registry, "GET", f"/v2/{NAME}/tags/list", query={"n": n}).status == 400


def test_tags_of_an_unknown_repository_are_name_unknown(registry: FakeRegistry) -> None:
    answer = call(registry, "GET", "/v2/never/was/tags/list")
    assert (answer.status, codes(answer)) == (404, ["NAME_UNKNOWN"])


# Referrers


def _attach(registry: FakeRegistry, subject: bytes, artifact_type: str, **annotations: str) -> bytes:
    document = image([descriptor(b"{}")], artifactType=artifact_type, subject=subject_of(subject))
    if annotations:
        document["annotations"] = annotations
    body = encode(document)
    answer = call(registry, "PUT", f"/v2/{NAME}/manifests/{digest(body)}", body, {"Content-Type": OCI_MANIFEST})
    assert answer.status == 201
    assert answer.headers["OCI-Subject"] == digest(subject)
    return body


def test_a_manifest_with_a_subject_is_listed_among_the_subjects_referrers(registry: FakeRegistry) -> None:
    subject = push_manifest(registry, image([descriptor(A)]), "v1")
    sbom = _attach(registry, subject, "application/vnd.example.sbom", created="2026")
    signature = _attach(registry, subject, "application/vnd.example.sig")
    # When
    answer = call(registry, "GET", f"/v2/{NAME}/referrers/{digest(subject)}")
    # Then
    assert answer.status == 200
    assert answer.headers["Content-Type"] == OCI_INDEX
    assert "OCI-Filters-Applied" not in answer.headers
    listed = json.loads(answer.body)
    assert (listed["schemaVersion"], listed["mediaType"]) == (2, OCI_INDEX)
    by_digest = {m["digest"]: m for m in listed["manifests"]}
    assert by_digest[digest(sbom)] == {
        "mediaType": OCI_MANIFEST,
        "digest": digest(sbom),
        "size": len(sbom),
        "artifactType": "application/vnd.example.sbom",
        "annotations": {"created": "2026"},
    }
    assert by_digest[digest(signature)]["artifactType"] == "application/vnd.example.sig"
    # And an attestation is no version: LATEST is still the subject
    assert call(registry, "GET", f"/v2/{NAME}/manifests/LATEST").body == subject


def test_referrers_filter_by_artifact_type_and_say_so(registry: FakeRegistry) -> None:
    subject = push_manifest(registry, image([descriptor(A)]), "v1")
    sbom = _attach(registry, subject, "application/vnd.example.sbom")
    _attach(registry, subject, "application/vnd.example.sig")
    answer = call(
        registry,
        "GET",
        f"/v2/{NAME}/referrers/{digest(subject)}",
        query={"artifactType": "application/vnd.example.sbom"},
    )
    assert answer.headers["OCI-Filters-Applied"] == "artifactType"
    assert [m["digest"] for m in json.loads(answer.body)["manifests"]] == [digest(sbom)]


def test_referrers_of_an_unknown_digest_are_an_empty_index(registry: FakeRegistry) -> None:
    answer = call(registry, "GET", f"/v2/{NAME}/referrers/{digest(b'nothing')}")
    assert (answer.status, json.loads(answer.body)["manifests"]) == (200, [])


def test_a_subject_may_be_pushed_before_its_subject(registry: FakeRegistry) -> None:
    # The specification: a registry MUST accept a manifest whose subject it does not have (yet)
    for blob in (b"{}",):
        push_blob(registry, blob)
    absent = encode(image([descriptor(B)]))
    _attach(registry, absent, "application/vnd.example.sbom")
    listed = json.loads(call(registry, "GET", f"/v2/{NAME}/referrers/{digest(absent)}").body)
    assert len(listed["manifests"]) == 1
