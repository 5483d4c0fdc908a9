"""Manifest and index validation, and the files a manifest names (arca.protocols.oci.manifests)."""

from __future__ import annotations

import json

import pytest

from arca.protocols.oci import Digest, OciError, parse_manifest
from arca.protocols.oci.manifests import MAX_MANIFEST_BYTES, path_problem
from tests.oci.documents import EMPTY, OCI_INDEX, OCI_MANIFEST, descriptor, digest, encode, image, index, subject_of

A, B = b"model weights", b"readme"


def _refusal(body: bytes, content_type: str | None = OCI_MANIFEST) -> OciError:
    with pytest.raises(OciError) as raised:
        parse_manifest(body, content_type)
    return raised.value


def test_a_manifest_keeps_its_exact_bytes_and_their_digest() -> None:
    # Given a manifest serialised with spaces, as oras-py sends it
    body = encode(image([descriptor(A, title="model.bin")], annotations={"k": "v"}))
    # When
    manifest = parse_manifest(body, OCI_MANIFEST)
    # Then
    assert manifest.body == body
    assert str(manifest.digest) == digest(body)
    assert manifest.media_type == OCI_MANIFEST
    assert manifest.annotations == {"k": "v"}
    assert [d.digest for d in manifest.blobs()] == [digest(b"{}"), digest(A)]


def test_the_files_are_the_config_and_the_layers_by_title_else_by_digest() -> None:
    body = encode(image([descriptor(A, title="model/weights.bin"), descriptor(B)]))
    files = parse_manifest(body, OCI_MANIFEST).files()
    assert [(f.path, str(f.digest), f.size) for f in files] == [
        (f"blobs/sha256/{digest(b'{}')[7:]}", digest(b"{}"), 2),
        ("model/weights.bin", digest(A), len(A)),
        (f"blobs/sha256/{digest(B)[7:]}", digest(B), len(B)),
    ]


def test_a_blob_listed_twice_is_one_file_named_where_it_is_first_listed() -> None:
    body = encode(image([descriptor(A, title="first"), descriptor(A, title="second"), descriptor(B, title="b")]))
    assert [f.path for f in parse_manifest(body, OCI_MANIFEST).files()][1:] == ["first", "b"]


@pytest.mark.parametrize(
    ("titles", "why"),
    [
        (["same", "same"], "same name"),
        (["a", "a/b"], "a folder of"),
        (["../etc/passwd", "b"], "not a file path"),
        (["/abs", "b"], "not a file path"),
        (["a//b", "b"], "not a file path"),
        (["tab\there", "b"], "not a file path"),
        (["x" * 1025, "b"], "not a file path"),
        (["\ud800", "b"], "not a file path"),
    ],
)
def test_names_that_are_no_tree_are_manifest_invalid(titles: list[str], why: str) -> None:
    # Given two different blobs with these titles
    body = encode(image([descriptor(A, title=titles[0]), descriptor(B, title=titles[1])]))
    # When the files are asked for
    with pytest.raises(OciError) as raised:
        parse_manifest(body, OCI_MANIFEST).files()
    # Then the refusal names the layer
    assert raised.value.code == "MANIFEST_INVALID"
    assert why in raised.value.message
    assert "layers[" in raised.value.message


def test_an_index_names_its_manifests_as_files() -> None:
    child = encode(image([descriptor(A)]))
    body = encode(index([child]))
    manifest = parse_manifest(body, OCI_INDEX)
    assert manifest.is_index
    assert manifest.blobs() == ()
    assert [d.digest for d in manifest.children()] == [digest(child)]
    assert [f.path for f in manifest.files()] == [f"blobs/sha256/{digest(child)[7:]}"]
    assert manifest.effective_artifact_type is None


def test_the_artifact_type_is_the_manifests_else_its_configs_media_type() -> None:
    declared = parse_manifest(encode(image([], artifactType="application/vnd.example.sbom")), OCI_MANIFEST)
    fallen_back = parse_manifest(encode(image([], config_type="application/vnd.example.config")), OCI_MANIFEST)
    assert declared.effective_artifact_type == "application/vnd.example.sbom"
    assert fallen_back.effective_artifact_type == "application/vnd.example.config"


def test_a_subject_is_read_and_is_no_file() -> None:
    subject = encode(image([descriptor(A)]))
    manifest = parse_manifest(encode(image([descriptor(B)], subject=subject_of(subject))), OCI_MANIFEST)
    assert manifest.subject is not None
    assert manifest.subject.ref == Digest.of(subject)
    assert digest(subject) not in [str(f.digest) for f in manifest.files()]


def test_unknown_layer_and_config_media_types_and_unknown_fields_are_accepted() -> None:
    body = encode(
        image([descriptor(A, "application/x-anything+zstd", futureField=1)], config_type="text/x-weird", extra={"a": 1})
    )
    assert parse_manifest(body, OCI_MANIFEST).layers[0].media_type == "application/x-anything+zstd"


def test_the_media_type_comes_from_the_body_when_the_content_type_is_generic() -> None:
    body = encode(image([]))
    assert parse_manifest(body, "application/octet-stream").media_type == OCI_MANIFEST
    assert parse_manifest(body, None).media_type == OCI_MANIFEST
    assert parse_manifest(body, f"{OCI_MANIFEST}; charset=utf-8").media_type == OCI_MANIFEST


def test_without_a_media_type_in_the_body_the_content_type_decides() -> None:
    document = image([])
    del document["mediaType"]
    assert parse_manifest(encode(document), OCI_MANIFEST).media_type == OCI_MANIFEST
    assert "no mediaType" in _refusal(encode(document), "application/json").message


@pytest.mark.parametrize(
    ("body", "content_type", "why"),
    [
        (b"not json", OCI_MANIFEST, "not JSON"),
        (b"[1]", OCI_MANIFEST, "not a JSON object"),
        (b'{"schemaVersion": NaN}', OCI_MANIFEST, "not JSON"),
        (b"\xff\xfe", OCI_MANIFEST, "not JSON"),
        (b"[" * 100_000, OCI_MANIFEST, "nests too deeply"),
        (b'{"schemaVersion": 2, "schemaVersion": 2}', OCI_MANIFEST, "duplicate key"),
        (encode(image([]) | {"schemaVersion": 1}), OCI_MANIFEST, "schemaVersion"),
        (encode(image([]) | {"schemaVersion": True}), OCI_MANIFEST, "schemaVersion"),
        (encode({k: v for k, v in image([]).items() if k != "config"}), OCI_MANIFEST, "config"),
        (encode({k: v for k, v in image([]).items() if k != "layers"}), OCI_MANIFEST, "layers"),
        (encode(image([descriptor(A) | {"size": -1}])), OCI_MANIFEST, "layers.0.size"),
        (encode(image([descriptor(A) | {"size": "13"}])), OCI_MANIFEST, "layers.0.size"),
        (encode(image([descriptor(A) | {"digest": "sha256:abc"}])), OCI_MANIFEST, "layers.0.digest"),
        (encode(image([descriptor(A) | {"digest": "sha512:" + "a" * 128}])), OCI_MANIFEST, "layers.0.digest"),
        (encode(image([descriptor(A) | {"mediaType": "nomediatype"}])), OCI_MANIFEST, "layers.0.mediaType"),
        (encode(image([descriptor(A) | {"annotations": {"k": 1}}])), OCI_MANIFEST, "annotations"),
        (encode(image([]) | {"mediaType": 7}), OCI_MANIFEST, "mediaType must be a string"),
        (encode(image([])), OCI_INDEX, "does not match"),
        (encode(image([]) | {"mediaType": "application/x-weird"}), "application/x-weird", "unknown manifest media"),
        (
            encode(image([]) | {"mediaType": "application/vnd.docker.distribution.manifest.v1+prettyjws"}),
            None,
            "schema 1",
        ),
        (encode({"schemaVersion": 2, "mediaType": OCI_INDEX}), OCI_INDEX, "manifests"),
    ],
)
def test_malformed_manifests_are_manifest_invalid_naming_the_field(
    body: bytes, content_type: str | None, why: str
) -> None:
    error = _refusal(body, content_type)
    assert (error.code, error.status) == ("MANIFEST_INVALID", 400)
    assert why in error.message


def test_a_manifest_over_4_mib_is_size_invalid_413() -> None:
    error = _refusal(b" " * (MAX_MANIFEST_BYTES + 1))
    assert (error.code, error.status) == ("SIZE_INVALID", 413)
    assert str(MAX_MANIFEST_BYTES) in error.message


def test_a_manifest_of_exactly_4_mib_is_read() -> None:
    body = encode(image([]))
    padded = body + b" " * (MAX_MANIFEST_BYTES - len(body))
    assert parse_manifest(padded, OCI_MANIFEST).size == MAX_MANIFEST_BYTES


def test_every_problem_is_listed_in_the_detail() -> None:
    body = encode(image([descriptor(A) | {"size": -1}, descriptor(B) | {"digest": "x"}]))
    problems = json.loads(_refusal(body).body())["errors"][0]["detail"]["problems"]
    assert [p["field"] for p in problems] == ["layers.0.size", "layers.1.digest"]


@pytest.mark.parametrize(
    ("path", "ok"),
    [
        ("a", True),
        ("a/b.c", True),
        ("é/ü", True),
        ("", False),
        ("a/", False),
        ("./a", False),
        ("a/../b", False),
        ("a\x7fb", False),
    ],
)
def test_tree_paths(path: str, ok: bool) -> None:
    assert (path_problem(path) is None) is ok


def test_an_empty_config_descriptor_for_artifacts_is_a_file_like_any_other() -> None:
    body = encode(image([descriptor(b"{}", EMPTY)]))
    assert len(parse_manifest(body, OCI_MANIFEST).files()) == 1
