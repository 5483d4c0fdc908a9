"""OCI Distribution under `/v2/`: a repository is an artifact name (any number of `/`), a tag an alias, a manifest a
version. Reads (GET, HEAD) go to the resolve function, writes (POST, PUT, PATCH, DELETE) to the publish function.

Every route hands the raw request to the protocol's dispatcher (arca.protocols.oci.handle) with a backend bound to
the caller (`OciBackend`, over arca.services.oci); a `/v2/` path no route declares is answered by the dispatcher
too (`serve`, from the app's not-found handler), so every answer under `/v2/` is in OCI's shape. The registry's
errors become OCI's here, in one table (`oci_error`): a policy's refusal is `DENIED` with 409 (decision 103), and
so is a digest delete while a tag points at the manifest (decision 104).
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEvent

from arca.api.dependencies import OciService
from arca.api.routing import Router
from arca.domain.errors import (
    ConflictError,
    ContentionError,
    NotFoundError,
    PayloadTooLargeError,
    PolicyViolation,
    RegistryError,
    ThrottledError,
    ValidationError,
    VersionPinnedError,
)
from arca.domain.trees import FileEntry
from arca.protocols.oci import (
    BlobInfo,
    Digest,
    Manifest,
    OciError,
    PushedManifest,
    Reference,
    Referrer,
    RefKind,
    Request,
    StoredManifest,
    TagPage,
    UploadState,
    handle,
)
from arca.protocols.oci.dispatch import LARGE_BLOB_HINT
from arca.protocols.oci.errors import entry, range_invalid, too_large

if TYPE_CHECKING:
    from arca.services.oci import Oci

reads = Router()
writes = Router()

T = TypeVar("T")
ATTESTATION_TYPE = re.compile(r"[a-z0-9][a-z0-9.+_/-]{0,127}")
PREFIX = "/v2"


def serve(event: APIGatewayProxyEvent, oci: Oci) -> Response[Any]:
    """Answer one `/v2/` request through the dispatcher, as the caller the event names."""
    request = oci_request(event)
    identity = _identity(event)
    response = handle(request, OciBackend(oci, identity))
    headers = dict(response.headers)
    content_type = headers.pop("Content-Type", None)
    body: str | bytes = response.body
    with contextlib.suppress(UnicodeDecodeError):  # text (JSON) travels as text, other bytes as base64
        body = response.body.decode("utf-8")
    return Response(response.status, content_type, body, headers)


def is_oci_path(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


def oci_request(event: APIGatewayProxyEvent) -> Request:
    """The dispatcher's request from a proxy event: every value of every header and query parameter, the body's
    bytes, the path as the client sent it (the name unfolded), the stage path before it."""
    raw = event.raw_event
    body = raw.get("body") or ""
    data = base64.b64decode(body) if raw.get("isBase64Encoded") else body.encode("utf-8")
    headers: Mapping[str, Sequence[str]] = raw.get("multiValueHeaders") or {
        k: [v] for k, v in (raw.get("headers") or {}).items()
    }
    query: Mapping[str, Sequence[str]] = raw.get("multiValueQueryStringParameters") or {
        k: [v] for k, v in (raw.get("queryStringParameters") or {}).items()
    }
    path = unquote(event.path)
    # The stage (or a custom domain's base path) is what the request context's path holds before the API's own
    # path: every Location and Link the answers give starts with it, so a client following them stays on the stage.
    called, own = unquote(event.request_context.path or path).rstrip("/"), path.rstrip("/")  # a trailing `/` aside
    prefix = called[: len(called) - len(own)] if called.endswith(own) else ""
    return Request(event.http_method, path, dict(query), dict(headers), data, prefix=prefix)


def _identity(event: APIGatewayProxyEvent) -> str:
    caller = event.request_context.identity
    return caller.user_arn or caller.caller or caller.cognito_identity_id or "anonymous"


class OciBackend:
    """arca.protocols.oci's Backend over Arca's services, for one caller."""

    def __init__(self, oci: Oci, identity: str) -> None:
        self.oci = oci
        self.identity = identity

    def blob_stat(self, name: str, digest: Digest) -> BlobInfo | None:
        size = _run(lambda: self.oci.blob_size(name, digest.hex), "BLOB_UNKNOWN")
        return None if size is None else BlobInfo(digest, size)

    def blob_url(self, name: str, digest: Digest) -> str:
        url = _run(lambda: self.oci.blob_url(name, digest.hex), "BLOB_UNKNOWN")
        if url is None:
            raise OciError.of("BLOB_UNKNOWN", detail=str(digest))
        return url

    def blob_put(self, name: str, digest: Digest, content: bytes) -> None:
        _run(lambda: self.oci.put_blob(name, digest.hex, content), "BLOB_UNKNOWN")

    def upload_create(self, name: str) -> UploadState:
        session = _run(lambda: self.oci.open_session(name, self.identity), "NAME_UNKNOWN")
        return UploadState(session.id, session.offset)

    def upload_status(self, name: str, upload_id: str) -> UploadState:
        session = _run(lambda: self.oci.session(name, upload_id, self.identity), "BLOB_UPLOAD_UNKNOWN")
        return UploadState(session.id, session.offset)

    def upload_append(self, name: str, upload_id: str, chunk: bytes, start: int | None) -> UploadState:
        session = _run(lambda: self.oci.append(name, upload_id, self.identity, chunk, start), "BLOB_UPLOAD_UNKNOWN")
        return UploadState(session.id, session.offset)

    def upload_finish(self, name: str, upload_id: str, digest: Digest, chunk: bytes, start: int | None) -> None:
        _run(lambda: self.oci.finish(name, upload_id, self.identity, digest.hex, chunk, start), "BLOB_UPLOAD_UNKNOWN")

    def upload_cancel(self, name: str, upload_id: str) -> None:
        _run(lambda: self.oci.cancel(name, upload_id, self.identity), "BLOB_UPLOAD_UNKNOWN")

    def manifest_put(self, name: str, reference: Reference, manifest: Manifest) -> PushedManifest:
        if manifest.subject is not None:
            return self._attach(name, reference, manifest)
        files = manifest.files()
        by_path = {f.path: f for f in files}
        entries = [FileEntry(f.path, f.digest.hex, f.size, f.media_type) for f in files]
        tag = reference.tag if reference.kind is RefKind.TAG else None
        try:
            self.oci.push(name, manifest.body, manifest.media_type, entries, tag=tag, identity=self.identity)
        except ConflictError as error:
            paths = error.details.get("paths") if isinstance(error.details, dict) else None
            if paths:
                missing = [by_path[p] for p in paths if p in by_path]
                unknown = [
                    entry("MANIFEST_BLOB_UNKNOWN", f"{f.path}: {f.digest} is not stored", str(f.digest))
                    for f in missing
                ]
                raise OciError.many(unknown) from None
            raise oci_error(error, "MANIFEST_INVALID") from None
        except ValidationError as error:
            path = error.details.get("path") if isinstance(error.details, dict) else None
            if path in by_path:
                raise OciError.of(
                    "MANIFEST_INVALID", error.message, {"digest": str(by_path[path].digest), "path": path}
                ) from None
            raise oci_error(error, "MANIFEST_INVALID") from None
        except RegistryError as error:
            raise oci_error(error, "MANIFEST_UNKNOWN") from None
        return PushedManifest(manifest.digest)

    def _attach(self, name: str, reference: Reference, manifest: Manifest) -> PushedManifest:
        """A manifest with a subject: an attestation of the subject's version, pushed by its digest (accepted before
        its subject too, decision 112: it waits for a version with the subject's digest)."""
        assert manifest.subject is not None
        subject = manifest.subject.ref
        if reference.kind is not RefKind.DIGEST:
            raise OciError.of(
                "TAG_INVALID",
                "a manifest with a subject is an attestation of its subject's version, not a version: push it by its "
                "digest (the subject's referrers list it)",
                {"reference": str(reference)},
            )
        if reference.digest != manifest.digest:
            raise OciError.of(
                "DIGEST_INVALID", f"the manifest's digest is {manifest.digest}, not {reference.digest}", str(reference)
            )
        artifact_type = manifest.effective_artifact_type or ""
        if not ATTESTATION_TYPE.fullmatch(artifact_type):
            raise OciError.of(
                "MANIFEST_INVALID",
                f"artifactType {artifact_type!r}: an attestation's type matches {ATTESTATION_TYPE.pattern}",
                {"field": "artifactType"},
            )
        blobs = [(d.ref.hex, d.size) for d in (*manifest.blobs(), *manifest.children())]
        try:
            self.oci.attach(
                name,
                manifest.body,
                manifest.media_type,
                subject.hex,
                artifact_type,
                blobs,
                identity=self.identity,
            )
        except NotFoundError as error:
            raise OciError.of("MANIFEST_BLOB_UNKNOWN", error.message, str(subject)) from None
        except ConflictError as error:
            missing = error.details.get("missing") if isinstance(error.details, dict) else None
            if missing:
                entries = [entry("MANIFEST_BLOB_UNKNOWN", f"sha256:{m} is not stored", f"sha256:{m}") for m in missing]
                raise OciError.many(entries) from None
            raise oci_error(error, "MANIFEST_UNKNOWN") from None
        except RegistryError as error:
            raise oci_error(error, "MANIFEST_INVALID") from None
        return PushedManifest(manifest.digest, subject)

    def manifest_get(self, name: str, reference: Reference, *, body: bool) -> StoredManifest:
        found = _run(
            lambda: self.oci.manifest(name, _ref(reference), body=body, routing_key=self.identity), "MANIFEST_UNKNOWN"
        )
        return StoredManifest(Digest(found.sha256), found.media_type, found.size, found.body)

    def manifest_delete(self, name: str, reference: Reference) -> None:
        if reference.kind is RefKind.TAG and reference.tag:
            tag = reference.tag
            _run(lambda: self.oci.untag(name, tag, self.identity), "MANIFEST_UNKNOWN")
            return
        assert reference.digest is not None
        sha256 = reference.digest.hex
        _run(lambda: self.oci.delete_manifest(name, sha256, self.identity), "MANIFEST_UNKNOWN")

    def tags(self, name: str, n: int | None, last: str | None) -> TagPage:
        found, more = _run(lambda: self.oci.tags(name, n, last), "NAME_UNKNOWN")
        return TagPage(found, more)

    def referrers(self, name: str, digest: Digest, artifact_type: str | None) -> list[Referrer]:
        """Every attestation of the version with this digest: its media type, digest and size, its type as the
        artifactType, and a manifest's annotations (an attestation posted through REST has none)."""
        found = _run(lambda: self.oci.referrers(name, digest.hex), "MANIFEST_UNKNOWN")
        referrers = []
        for attestation, document in found:
            annotations: dict[str, str] = {}
            if document is not None:
                parsed = json.loads(document)
                annotations = dict(parsed.get("annotations") or {}) if isinstance(parsed, dict) else {}
            referrers.append(
                Referrer(
                    attestation.media_type, Digest(attestation.sha256), attestation.size, attestation.type, annotations
                )
            )
        return referrers


def _ref(reference: Reference) -> str:
    """A reference as Arca's resolve reads it: `sha256:<hex>`, a tag (an alias), a version number or LATEST."""
    return str(reference)


def _run(call: Callable[[], T], unknown: str) -> T:
    try:
        return call()
    except RegistryError as error:
        raise oci_error(error, unknown) from None


def oci_error(error: RegistryError, unknown: str) -> OciError:
    """The registry's error as OCI's: `unknown` is the code of a NotFoundError for what the request read."""
    details = error.details if isinstance(error.details, dict) else {}
    detail = {k: v for k, v in {"field": error.field, **details}.items() if v is not None} or None
    if isinstance(error, NotFoundError):
        return OciError.of("BLOB_UPLOAD_UNKNOWN" if error.field == "upload" else unknown, error.message, detail)
    if isinstance(error, PolicyViolation | VersionPinnedError):
        return OciError.of("DENIED", error.message, detail, status=409)
    if isinstance(error, ContentionError | ThrottledError):
        refused = OciError.of("TOOMANYREQUESTS", error.message, detail)
        refused.headers["Retry-After"] = "1"
        return refused
    if isinstance(error, ConflictError) and error.field == "range":
        return range_invalid(int(details.get("offset", 0)), error.message)
    if isinstance(error, ConflictError):
        return OciError.of("DENIED", error.message, detail, status=409)
    if isinstance(error, PayloadTooLargeError):
        return too_large("upload", int(details.get("size", 0)), int(details.get("limit", 0)), LARGE_BLOB_HINT)
    if isinstance(error, ValidationError):
        codes = {"digest": "DIGEST_INVALID", "name": "NAME_INVALID", "alias": "TAG_INVALID", "ref": "TAG_INVALID"}
        fallback = "MANIFEST_INVALID" if unknown == "MANIFEST_UNKNOWN" else "NAME_INVALID"
        return OciError.of(codes.get(error.field or "", fallback), error.message, detail)
    raise error


@reads.route("/v2", "GET", foreign=True)
def oci_base(oci: OciService) -> Response[Any]:
    """The registry's API version check (`Docker-Distribution-API-Version: registry/2.0`)."""
    return serve(reads.current_event, oci)


@reads.route("/v2/<name>/manifests/<reference>", "GET", foreign=True)
def oci_get_manifest(name: str, reference: str, oci: OciService) -> Response[Any]:
    """A manifest, by tag, digest, version number or LATEST: its bytes as pushed."""
    return serve(reads.current_event, oci)


@reads.route("/v2/<name>/manifests/<reference>", "HEAD", foreign=True)
def oci_head_manifest(name: str, reference: str, oci: OciService) -> Response[Any]:
    """Whether a manifest exists, by tag, digest, version number or LATEST (its digest, type and size)."""
    return serve(reads.current_event, oci)


@writes.route("/v2/<name>/manifests/<reference>", "PUT", foreign=True)
def oci_put_manifest(name: str, reference: str, oci: OciService) -> Response[Any]:
    """Push a manifest: publish a version whose files are its config and layers; with a tag, point that alias at
    it."""
    return serve(writes.current_event, oci)


@writes.route("/v2/<name>/manifests/<reference>", "DELETE", foreign=True)
def oci_delete_manifest(name: str, reference: str, oci: OciService) -> Response[Any]:
    """Delete a tag (its alias), or a manifest by digest (its version, refused while a tag points at it)."""
    return serve(writes.current_event, oci)


@reads.route("/v2/<name>/blobs/<digest>", "GET", foreign=True)
def oci_get_blob(name: str, digest: str, oci: OciService) -> Response[Any]:
    """A blob: a 307 to its presigned URL."""
    return serve(reads.current_event, oci)


@reads.route("/v2/<name>/blobs/<digest>", "HEAD", foreign=True)
def oci_head_blob(name: str, digest: str, oci: OciService) -> Response[Any]:
    """Whether a blob is stored, and its size."""
    return serve(reads.current_event, oci)


@writes.route("/v2/<name>/blobs/<digest>", "DELETE", foreign=True)
def oci_delete_blob(name: str, digest: str, oci: OciService) -> Response[Any]:
    """Not supported (405): retention collects unreferenced content."""
    return serve(writes.current_event, oci)


@writes.route("/v2/<name>/blobs/uploads", "POST", foreign=True)
def oci_start_upload(name: str, oci: OciService) -> Response[Any]:
    """Start a blob upload: monolithic with `?digest=` and the body, else a session."""
    return serve(writes.current_event, oci)


@reads.route("/v2/<name>/blobs/uploads/<upload>", "GET", foreign=True)
def oci_get_upload(name: str, upload: str, oci: OciService) -> Response[Any]:
    """An upload session's progress (`Range`)."""
    return serve(reads.current_event, oci)


@writes.route("/v2/<name>/blobs/uploads/<upload>", "PATCH", foreign=True)
def oci_patch_upload(name: str, upload: str, oci: OciService) -> Response[Any]:
    """A chunk of an upload (with or without `Content-Range`)."""
    return serve(writes.current_event, oci)


@writes.route("/v2/<name>/blobs/uploads/<upload>", "PUT", foreign=True)
def oci_finish_upload(name: str, upload: str, oci: OciService) -> Response[Any]:
    """Finish an upload with its digest (and maybe its last chunk)."""
    return serve(writes.current_event, oci)


@writes.route("/v2/<name>/blobs/uploads/<upload>", "DELETE", foreign=True)
def oci_cancel_upload(name: str, upload: str, oci: OciService) -> Response[Any]:
    """Cancel an upload session."""
    return serve(writes.current_event, oci)


@reads.route("/v2/<name>/tags/list", "GET", foreign=True)
def oci_tags(name: str, oci: OciService) -> Response[Any]:
    """The repository's tags in byte order (`n`, `last`, a `Link` to the next page)."""
    return serve(reads.current_event, oci)


@reads.route("/v2/<name>/referrers/<digest>", "GET", foreign=True)
def oci_referrers(name: str, digest: str, oci: OciService) -> Response[Any]:
    """The manifests whose subject is this digest, as an image index."""
    return serve(reads.current_event, oci)
