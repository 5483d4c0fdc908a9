"""Requests under `/v2/` read into typed operations: the path parsed from the right, the parameters checked.

Repository names hold any number of `/`, so a path is read from its end: each route is a fixed tail (`/blobs/…`,
`/manifests/<reference>`, `/tags/list`, …) and the name is everything before it. Upload paths are tried before blob
paths, so that a name is never read as ending in `blobs`. Every refusal here happens before the backend is called.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import unquote

from arca.protocols.oci.errors import OciError
from arca.protocols.oci.grammar import Digest, Reference, RefKind, parse_digest, parse_name, parse_reference
from arca.protocols.oci.manifests import MEDIA_TYPE_PATTERN, Manifest, parse_manifest

MAX_TAGS_PAGE = 1000  # a larger `n` is cut to this, with a Link header for the rest (the specification allows it)
MAX_LAST_LENGTH = 256
_UPLOAD_ID = re.compile(r"[A-Za-z0-9._~-]{1,512}")
_CONTENT_RANGE = re.compile(r"(?:bytes[ =])?([0-9]+)-([0-9]+)(?:/(?:[0-9]+|\*))?")
_MEDIA_TYPE = re.compile(MEDIA_TYPE_PATTERN)
_ROUTES = (
    ("upload", re.compile(r"(?P<name>.+)/blobs/uploads/(?P<id>[^/]+)")),
    ("uploads", re.compile(r"(?P<name>.+)/blobs/uploads/?")),
    ("blob", re.compile(r"(?P<name>.+)/blobs/(?P<digest>[^/]+)")),
    ("manifest", re.compile(r"(?P<name>.+)/manifests/(?P<reference>[^/]+)")),
    ("tags", re.compile(r"(?P<name>.+)/tags/list")),
    ("referrers", re.compile(r"(?P<name>.+)/referrers/(?P<digest>[^/]+)")),
)
# What each route answers, for 405's Allow header.
METHODS = {
    "base": ("GET", "HEAD"),
    "upload": ("GET", "PATCH", "PUT", "DELETE"),
    "uploads": ("POST",),
    "blob": ("GET", "HEAD", "DELETE"),
    "manifest": ("GET", "HEAD", "PUT", "DELETE"),
    "tags": ("GET",),
    "referrers": ("GET",),
}


@dataclass(frozen=True)
class Request:
    """An HTTP request as any front end sees it: header names in any case, several values per header and per query
    parameter (API Gateway's `multiValueHeaders`: skopeo sends `Accept` once per media type)."""

    method: str
    path: str
    query: Mapping[str, Sequence[str]] = field(default_factory=dict)
    headers: Mapping[str, Sequence[str]] = field(default_factory=dict)
    body: bytes = b""
    prefix: str = ""  # where `/v2/` is served (a stage path): every Location the answers give starts with it

    def header(self, name: str) -> str | None:
        """The header's last value, or None."""
        values = self.header_values(name)
        return values[-1] if values else None

    def header_values(self, name: str) -> list[str]:
        wanted = name.lower()
        return [v for key, values in self.headers.items() if key.lower() == wanted for v in values]

    def param(self, name: str) -> str | None:
        values = self.query.get(name) or ()
        return values[-1] if values else None


@dataclass(frozen=True)
class Base:
    pass


@dataclass(frozen=True)
class BlobFetch:
    name: str
    digest: Digest
    head: bool


@dataclass(frozen=True)
class BlobDelete:
    name: str
    digest: Digest


@dataclass(frozen=True)
class UploadStart:
    """POST …/blobs/uploads/: a session, or (with `digest`) the whole blob in this one request."""

    name: str
    digest: Digest | None = None
    body: bytes = b""


@dataclass(frozen=True)
class UploadStatus:
    name: str
    upload_id: str


@dataclass(frozen=True)
class UploadChunk:
    name: str
    upload_id: str
    body: bytes
    start: int | None


@dataclass(frozen=True)
class UploadClose:
    name: str
    upload_id: str
    digest: Digest
    body: bytes
    start: int | None


@dataclass(frozen=True)
class UploadCancel:
    name: str
    upload_id: str


@dataclass(frozen=True)
class ManifestFetch:
    name: str
    reference: Reference
    head: bool
    if_none_match: tuple[str, ...] = ()


@dataclass(frozen=True)
class ManifestPush:
    name: str
    reference: Reference
    manifest: Manifest


@dataclass(frozen=True)
class ManifestDelete:
    name: str
    reference: Reference


@dataclass(frozen=True)
class TagsList:
    name: str
    n: int | None
    last: str | None


@dataclass(frozen=True)
class ReferrersList:
    name: str
    digest: Digest
    artifact_type: str | None


Operation = (
    Base
    | BlobFetch
    | BlobDelete
    | UploadStart
    | UploadStatus
    | UploadChunk
    | UploadClose
    | UploadCancel
    | ManifestFetch
    | ManifestPush
    | ManifestDelete
    | TagsList
    | ReferrersList
)


def route(request: Request) -> tuple[str, dict[str, str]]:
    """Which route a path is (`base`, `blob`, …) and its parts; NAME_UNKNOWN (404) for a path of none.

    Raises for a path outside `<prefix>/v2/`, for `/v2/_catalog` (not served: UNSUPPORTED) and for an unknown
    tail. The parts are percent-decoded once (no valid part holds a `%`).
    """
    path = unquote(request.path)
    if request.prefix and path.startswith(request.prefix + "/"):
        path = path[len(request.prefix) :]
    if path in ("/v2", "/v2/"):
        return "base", {}
    if not path.startswith("/v2/"):
        raise OciError.of("NAME_UNKNOWN", f"{path!r} is not under /v2/", status=404)
    rest = path[len("/v2/") :]
    if rest.rstrip("/") == "_catalog":
        raise OciError.of("UNSUPPORTED", "the catalog is not served: list artifacts with Arca's own API")
    for kind, pattern in _ROUTES:
        if match := pattern.fullmatch(rest):
            return kind, match.groupdict()
    raise OciError.of("NAME_UNKNOWN", f"no OCI endpoint at {path!r}", {"path": path}, status=404)


def parse(request: Request) -> Operation:
    """The operation a request asks for, every part checked; an OciError otherwise (nothing called yet)."""
    kind, parts = route(request)
    method = request.method.upper()
    if method not in METHODS[kind]:
        error = OciError.of("UNSUPPORTED", f"{method} is not supported here", {"method": method})
        error.headers["Allow"] = ", ".join(METHODS[kind])
        raise error
    if kind == "base":
        return Base()
    name = parse_name(parts["name"])
    if kind == "blob":
        digest = parse_digest(parts["digest"])
        return BlobDelete(name, digest) if method == "DELETE" else BlobFetch(name, digest, head=method == "HEAD")
    if kind == "uploads":
        return _upload_start(request, name)
    if kind == "upload":
        return _upload(request, name, method, parts["id"])
    if kind == "manifest":
        return _manifest(request, name, method, parse_reference(parts["reference"]))
    if kind == "tags":
        return TagsList(name, _page_size(request.param("n")), _last(request.param("last")))
    return ReferrersList(name, parse_digest(parts["digest"]), _artifact_type(request.param("artifactType")))


def _upload_start(request: Request, name: str) -> UploadStart:
    algorithm = request.param("digest-algorithm")
    if algorithm is not None and algorithm != "sha256":
        raise OciError.of("DIGEST_INVALID", f"digest algorithm {algorithm!r} is unsupported (sha256 only)")
    digest = request.param("digest")
    if digest is None:
        # A mount (`mount=`, `from=`) is not supported: the specification's answer is a new session (202).
        return UploadStart(name)
    return UploadStart(name, parse_digest(digest), request.body)


def _upload(
    request: Request, name: str, method: str, upload_id: str
) -> UploadStatus | UploadChunk | UploadClose | UploadCancel:
    if not _UPLOAD_ID.fullmatch(upload_id):
        raise OciError.of("BLOB_UPLOAD_UNKNOWN", f"{upload_id!r} is not an upload id", {"upload": upload_id})
    if method == "GET":
        return UploadStatus(name, upload_id)
    if method == "DELETE":
        return UploadCancel(name, upload_id)
    start = _content_range(request.header("Content-Range"), len(request.body))
    if method == "PATCH":
        return UploadChunk(name, upload_id, request.body, start)
    digest = request.param("digest")
    if digest is None:
        raise OciError.of("DIGEST_INVALID", "the closing PUT of an upload names the blob's digest: ?digest=<digest>")
    return UploadClose(name, upload_id, parse_digest(digest), request.body, start)


def _content_range(value: str | None, length: int) -> int | None:
    """Where a chunk starts, from `Content-Range: <start>-<end>` (inclusive); None when the header is absent.

    `bytes ` / `bytes=` prefixes and a `/<total>` suffix are tolerated. An end before the start is 416; a range
    whose length is not the body's is SIZE_INVALID, as the reference registry answers.
    """
    if value is None or not value.strip():
        return None
    match = _CONTENT_RANGE.fullmatch(value.strip())
    if not match:
        raise OciError.of(
            "BLOB_UPLOAD_INVALID",
            f"Content-Range {value!r} must be <start>-<end>",
            {"Content-Range": value},
            status=416,
        )
    start, end = int(match[1]), int(match[2])
    if end < start:
        raise OciError.of(
            "BLOB_UPLOAD_INVALID",
            f"Content-Range {value!r} ends before it starts",
            {"Content-Range": value},
            status=416,
        )
    if end - start + 1 != length:
        raise OciError.of(
            "SIZE_INVALID",
            f"Content-Range {value!r} is {end - start + 1} bytes but the body is {length}",
            {"Content-Range": value, "length": length},
        )
    return start


def _manifest(
    request: Request, name: str, method: str, reference: Reference
) -> ManifestFetch | ManifestPush | ManifestDelete:
    if method in ("GET", "HEAD"):
        tags = tuple(v.strip() for value in request.header_values("If-None-Match") for v in value.split(","))
        return ManifestFetch(name, reference, head=method == "HEAD", if_none_match=tags)
    if reference.kind in (RefKind.VERSION, RefKind.LATEST):
        what = "a version number" if reference.kind is RefKind.VERSION else "LATEST"
        verb = "pushed to" if method == "PUT" else "deleted by"
        raise OciError.of(
            "TAG_INVALID",
            f"{reference} is {what}, not a tag: a manifest is {verb} a tag or a digest",
            {"reference": str(reference)},
        )
    if method == "DELETE":
        return ManifestDelete(name, reference)
    manifest = parse_manifest(request.body, request.header("Content-Type"))
    if reference.kind is RefKind.DIGEST and reference.digest != manifest.digest:
        raise OciError.of(
            "DIGEST_INVALID",
            f"the manifest's digest is {manifest.digest}, not {reference.digest}",
            {"reference": str(reference), "digest": str(manifest.digest)},
        )
    return ManifestPush(name, reference, manifest)


def _page_size(value: str | None) -> int | None:
    if value is None:
        return None
    if not value.isdigit() or not value.isascii():
        raise OciError.of("UNSUPPORTED", f"n={value!r}: n is a number of tags, 0 or more", {"n": value}, status=400)
    return min(int(value), MAX_TAGS_PAGE)


def _last(value: str | None) -> str | None:
    if value is not None and len(value) > MAX_LAST_LENGTH:
        raise OciError.of("TAG_INVALID", f"last is longer than {MAX_LAST_LENGTH} characters", {"last": value[:64]})
    return value


def _artifact_type(value: str | None) -> str | None:
    if value is not None and not _MEDIA_TYPE.fullmatch(value):
        raise OciError.of(
            "UNSUPPORTED", f"artifactType {value!r} is not a media type", {"artifactType": value}, status=400
        )
    return value
