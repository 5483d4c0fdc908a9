"""The `/v2/` family served against a backend: `handle(request, backend)` answers any request with a `Response`.

One request is parsed (arca.protocols.oci.routes), run against the backend, and rendered with the statuses and
headers of the OCI Distribution Specification v1.1 (`Location`, `Docker-Content-Digest`, `Docker-Upload-UUID`,
`Range`, `OCI-Subject`, `OCI-Filters-Applied`, `Link`), as distribution/distribution, the reference registry,
answers them. An `OciError` from any step is rendered in OCI's error shape; any other exception is the registry's
own failure and propagates to the front end (a 500 with its request id).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

from arca.protocols.oci.backend import Backend, Referrer
from arca.protocols.oci.errors import ERROR_CONTENT_TYPE, OciError, too_large, upload_range
from arca.protocols.oci.grammar import Digest
from arca.protocols.oci.manifests import OCI_INDEX
from arca.protocols.oci.routes import (
    Base,
    BlobDelete,
    BlobFetch,
    ManifestDelete,
    ManifestFetch,
    ManifestPush,
    Operation,
    ReferrersList,
    Request,
    TagsList,
    UploadCancel,
    UploadChunk,
    UploadClose,
    UploadStart,
    UploadStatus,
    parse,
)

API_VERSION_HEADER = ("Docker-Distribution-API-Version", "registry/2.0")
LARGE_BLOB_HINT = (
    "a blob larger than one request cannot be pushed to /v2/ directly: push through `arca proxy`, which uploads "
    "blobs of any size to S3 (or upload it with `arca publish`, then push the manifest: its blobs are found by digest)"
)
# What one request's body may carry through API Gateway and Lambda: Lambda takes an event of 6 MB (6,291,456
# bytes), in which API Gateway puts a binary body as base64 (4 bytes for 3) beside the request's headers and
# context; 64 KiB is kept for those. A larger chunk fails before Arca runs, so Arca refuses it first, in OCI's shape.
LAMBDA_EVENT_BYTES = 6 * 1024 * 1024
EVENT_ALLOWANCE_BYTES = 64 * 1024
MAX_BODY_BYTES = (LAMBDA_EVENT_BYTES - EVENT_ALLOWANCE_BYTES) // 4 * 3


@dataclass(frozen=True)
class Response:
    """What to send: status, headers (one value each), body. A HEAD answer's `Content-Length` is the entity's size
    while its body is empty: a front end must send the header as given."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


def handle(request: Request, backend: Backend, *, max_body: int | None = MAX_BODY_BYTES) -> Response:
    """Answer one `/v2/` request. `max_body` bounds a blob body (None: no bound)."""
    head = request.method.upper() == "HEAD"
    try:
        operation = parse(request)
        if max_body is not None and len(request.body) > max_body and not isinstance(operation, ManifestPush):
            raise too_large("request body", len(request.body), max_body, LARGE_BLOB_HINT)
        response = _run(operation, backend, request.prefix)
    except OciError as error:
        response = _error(error, head)
    response.headers.setdefault(*API_VERSION_HEADER)
    return response


def _run(operation: Operation, backend: Backend, prefix: str) -> Response:
    if isinstance(operation, Base):
        return Response(200, {"Content-Type": "application/json"}, b"{}")
    if isinstance(operation, BlobFetch):
        return _blob_fetch(operation, backend)
    if isinstance(operation, BlobDelete):
        raise OciError.of("UNSUPPORTED", "blobs are not deleted one by one: Arca collects unreferenced content")
    if isinstance(operation, UploadStart):
        return _upload_start(operation, backend, prefix)
    if isinstance(operation, UploadStatus):
        state = backend.upload_status(operation.name, operation.upload_id)
        return _session(204, prefix, operation.name, state.id, state.offset)
    if isinstance(operation, UploadChunk):
        state = backend.upload_append(operation.name, operation.upload_id, operation.body, operation.start)
        return _session(202, prefix, operation.name, state.id, state.offset)
    if isinstance(operation, UploadClose):
        backend.upload_finish(operation.name, operation.upload_id, operation.digest, operation.body, operation.start)
        return _blob_created(prefix, operation.name, operation.digest)
    if isinstance(operation, UploadCancel):
        backend.upload_cancel(operation.name, operation.upload_id)
        return Response(204, {"Docker-Upload-UUID": operation.upload_id, "Content-Length": "0"})
    if isinstance(operation, ManifestFetch):
        return _manifest_fetch(operation, backend)
    if isinstance(operation, ManifestPush):
        return _manifest_push(operation, backend, prefix)
    if isinstance(operation, ManifestDelete):
        backend.manifest_delete(operation.name, operation.reference)
        return Response(202, {"Content-Length": "0"})
    if isinstance(operation, TagsList):
        return _tags(operation, backend, prefix)
    return _referrers(operation, backend)


def _blob_fetch(operation: BlobFetch, backend: Backend) -> Response:
    digest = str(operation.digest)
    if operation.head:
        info = backend.blob_stat(operation.name, operation.digest)
        if info is None:
            raise OciError.of("BLOB_UNKNOWN", detail=digest)
        headers = {"Content-Length": str(info.size), "Content-Type": "application/octet-stream"}
        return Response(200, {**headers, "Docker-Content-Digest": digest, "ETag": f'"{digest}"'})
    url = backend.blob_url(operation.name, operation.digest)
    return Response(307, {"Location": url, "Docker-Content-Digest": digest, "Content-Length": "0"})


def _upload_start(operation: UploadStart, backend: Backend, prefix: str) -> Response:
    if operation.digest is None:
        state = backend.upload_create(operation.name)
        return _session(202, prefix, operation.name, state.id, state.offset)
    if Digest.of(operation.body) != operation.digest:
        raise OciError.of(
            "DIGEST_INVALID",
            f"the body's digest is {Digest.of(operation.body)}, not {operation.digest}",
            str(operation.digest),
        )
    backend.blob_put(operation.name, operation.digest, operation.body)
    return _blob_created(prefix, operation.name, operation.digest)


def _session(status: int, prefix: str, name: str, upload_id: str, offset: int) -> Response:
    headers = {
        "Location": f"{prefix}/v2/{name}/blobs/uploads/{quote(upload_id, safe='')}",
        "Range": upload_range(offset),
        "Docker-Upload-UUID": upload_id,
        "Content-Length": "0",
    }
    return Response(status, headers)


def _blob_created(prefix: str, name: str, digest: Digest) -> Response:
    headers = {"Location": f"{prefix}/v2/{name}/blobs/{digest}", "Docker-Content-Digest": str(digest)}
    return Response(201, {**headers, "Content-Length": "0"})


def _manifest_fetch(operation: ManifestFetch, backend: Backend) -> Response:
    stored = backend.manifest_get(operation.name, operation.reference, body=not operation.head)
    digest = str(stored.digest)
    headers = {"Docker-Content-Digest": digest, "ETag": f'"{digest}"'}
    if digest in operation.if_none_match or f'"{digest}"' in operation.if_none_match:
        return Response(304, headers)
    headers |= {"Content-Type": stored.media_type, "Content-Length": str(stored.size)}
    return Response(200, headers, b"" if operation.head else stored.body or b"")


def _manifest_push(operation: ManifestPush, backend: Backend, prefix: str) -> Response:
    pushed = backend.manifest_put(operation.name, operation.reference, operation.manifest)
    headers = {
        "Location": f"{prefix}/v2/{operation.name}/manifests/{pushed.digest}",
        "Docker-Content-Digest": str(pushed.digest),
        "Content-Length": "0",
    }
    if pushed.subject is not None:
        headers["OCI-Subject"] = str(pushed.subject)
    return Response(201, headers)


def _tags(operation: TagsList, backend: Backend, prefix: str) -> Response:
    if operation.n == 0:  # the specification: an empty list and no Link
        page_tags, more = [], False
    else:
        page = backend.tags(operation.name, operation.n, operation.last)
        page_tags, more = page.tags, page.more and bool(page.tags)
    headers = {"Content-Type": "application/json"}
    if more:
        headers["Link"] = tags_link(prefix, operation.name, operation.n, page_tags[-1])
    return Response(200, headers, _json({"name": operation.name, "tags": page_tags}))


def tags_link(prefix: str, name: str, n: int | None, last: str) -> str:
    """The RFC 5988 `Link` to the next page of tags (`rel="next"`), with the same `n`."""
    query = {"last": last} if n is None else {"last": last, "n": str(n)}
    return f'<{prefix}/v2/{name}/tags/list?{urlencode(query)}>; rel="next"'


def _referrers(operation: ReferrersList, backend: Backend) -> Response:
    found = backend.referrers(operation.name, operation.digest, operation.artifact_type)
    headers = {"Content-Type": OCI_INDEX}
    if operation.artifact_type is not None:
        found = [r for r in found if r.artifact_type == operation.artifact_type]
        headers["OCI-Filters-Applied"] = "artifactType"
    return Response(200, headers, referrers_index(found))


def referrers_index(referrers: list[Referrer]) -> bytes:
    """The image index a referrers request answers (an empty `manifests` list when there are none)."""
    index = {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [r.descriptor() for r in referrers]}
    return _json(index)


def _error(error: OciError, head: bool) -> Response:
    headers = {"Content-Type": ERROR_CONTENT_TYPE, **error.headers}
    return Response(error.status, headers, b"" if head else error.body())


def _json(document: Any) -> bytes:
    return json.dumps(document, separators=(",", ":")).encode()
