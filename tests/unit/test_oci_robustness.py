"""No request makes the /v2/ dispatcher fail: every input is an answer, an error in OCI's shape for bad ones."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arca.protocols.oci import Request, handle
from tests.oci.documents import OCI_MANIFEST, descriptor, digest, encode, image
from tests.oci.fake_backend import FakeRegistry

SEGMENTS = st.sampled_from(
    ["v2", "demo", "app", "blobs", "uploads", "manifests", "tags", "list", "referrers", "_catalog", "", "..", "%2F",
     "LATEST", "1", "v1", digest(b"x"), "sha256:", "upload-1", "Bad", "a" * 70, "%00", "ü"]
)  # fmt: skip
PATHS = st.lists(SEGMENTS, min_size=0, max_size=7).map(lambda parts: "/" + "/".join(parts))
HEADERS = st.dictionaries(
    st.sampled_from(["Content-Type", "Content-Range", "If-None-Match", "Accept", "content-range"]),
    st.lists(st.sampled_from(["", "0-9", "10-0", "bytes 0-3/4", OCI_MANIFEST, "x/y", "*/*", '"sha256:0"']), max_size=3),
)
BODIES = st.one_of(
    st.binary(max_size=64),
    st.just(encode(image([descriptor(b"a")]))),
    st.just(b'{"schemaVersion": 2, "mediaType": "' + OCI_MANIFEST.encode() + b'", "config": 1, "layers": {}}'),
)
QUERIES = st.dictionaries(
    st.sampled_from(["digest", "n", "last", "artifactType", "mount", "from", "digest-algorithm"]),
    st.lists(st.sampled_from(["", "2", "-1", digest(b"a"), "sha512:00", "a/b", "x" * 300]), min_size=1, max_size=2),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    method=st.sampled_from(["GET", "HEAD", "PUT", "POST", "PATCH", "DELETE", "OPTIONS", "get"]),
    path=PATHS,
    query=QUERIES,
    headers=HEADERS,
    body=BODIES,
)
def test_any_request_is_answered(
    method: str, path: str, query: dict[str, list[str]], headers: dict[str, list[str]], body: bytes
) -> None:
    # Given a registry holding one repository, with an open upload session
    registry = FakeRegistry("http://blobs.test")
    backend = registry.backend()
    backend.upload_create("demo/app")
    # When
    response = handle(Request(method, path, query, headers, body), backend)
    # Then it is an answer; an error is in OCI's shape, without a body for HEAD
    assert 200 <= response.status < 500
    assert response.headers["Docker-Distribution-API-Version"] == "registry/2.0"
    if response.status >= 400 and method.upper() != "HEAD":
        errors = json.loads(response.body)["errors"]
        assert errors and all(set(e) >= {"code", "message"} and e["code"].isupper() for e in errors)
