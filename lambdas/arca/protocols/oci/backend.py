"""What the OCI dispatcher asks of a registry: a `typing.Protocol` and the values it answers.

Arca binds it to its services (a blob is the artifact's content of that sha256, a tag an alias, a manifest a
version, a manifest with a subject an attestation); the tests bind it to a dict. One backend serves one caller:
whoever builds it knows who calls, so no method takes an identity.

Every method raises `OciError` for what the client did wrong or may not do (`BLOB_UNKNOWN`, `DENIED`, …); anything
else is a failure of the registry (500).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from arca.protocols.oci.grammar import Digest, Reference
from arca.protocols.oci.manifests import Manifest


@dataclass(frozen=True)
class BlobInfo:
    digest: Digest
    size: int


@dataclass(frozen=True)
class UploadState:
    """An upload session: its id (a path segment of `[A-Za-z0-9._~-]`) and how many bytes it holds."""

    id: str
    offset: int


@dataclass(frozen=True)
class StoredManifest:
    """A stored manifest: its digest, media type and size, and its bytes unless they were not asked for."""

    digest: Digest
    media_type: str
    size: int
    body: bytes | None = None


@dataclass(frozen=True)
class PushedManifest:
    """What a manifest push did: its digest, and the subject it was recorded against (sent back as `OCI-Subject`,
    which tells the client that the registry keeps the referrers list itself)."""

    digest: Digest
    subject: Digest | None = None


@dataclass(frozen=True)
class TagPage:
    """Tags in lexical (byte) order after `last`, and whether more follow."""

    tags: list[str]
    more: bool = False


@dataclass(frozen=True)
class Referrer:
    """One entry of a referrers list: a manifest whose `subject` is the digest asked about."""

    media_type: str
    digest: Digest
    size: int
    artifact_type: str | None = None
    annotations: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, manifest: Manifest) -> Referrer:
        return cls(
            manifest.media_type, manifest.digest, manifest.size, manifest.effective_artifact_type, manifest.annotations
        )

    def descriptor(self) -> dict[str, Any]:
        """The descriptor an image index lists (artifactType and annotations only when there are some)."""
        descriptor: dict[str, Any] = {"mediaType": self.media_type, "digest": str(self.digest), "size": self.size}
        if self.artifact_type:
            descriptor["artifactType"] = self.artifact_type
        if self.annotations:
            descriptor["annotations"] = dict(self.annotations)
        return descriptor


class Backend(Protocol):
    """The registry behind `/v2/`, for one caller."""

    def blob_stat(self, name: str, digest: Digest) -> BlobInfo | None:
        """The blob's size, or None when the repository has no such blob (no error: HEAD answers 404 itself)."""
        ...

    def blob_url(self, name: str, digest: Digest) -> str:
        """A URL (presigned, another host) serving the blob's bytes; BLOB_UNKNOWN when the repository has none."""
        ...

    def blob_put(self, name: str, digest: Digest, content: bytes) -> None:
        """Store a whole blob in one step (the dispatcher has checked `content` against `digest`)."""
        ...

    def upload_create(self, name: str) -> UploadState:
        """Open an upload session (no bytes yet)."""
        ...

    def upload_status(self, name: str, upload_id: str) -> UploadState:
        """BLOB_UPLOAD_UNKNOWN for a session that does not exist (finished, cancelled, expired, another name's)."""
        ...

    def upload_append(self, name: str, upload_id: str, chunk: bytes, start: int | None) -> UploadState:
        """Append `chunk`; `start` (from `Content-Range`) must be the session's offset, else `range_invalid` (416).
        Without `start`, the chunk goes at the end."""
        ...

    def upload_finish(self, name: str, upload_id: str, digest: Digest, chunk: bytes, start: int | None) -> None:
        """Append the last chunk (maybe empty) and store the blob if its bytes have `digest` (DIGEST_INVALID
        otherwise, and the session is gone either way)."""
        ...

    def upload_cancel(self, name: str, upload_id: str) -> None:
        """Drop the session and its bytes; BLOB_UPLOAD_UNKNOWN if there is none."""
        ...

    def manifest_put(self, name: str, reference: Reference, manifest: Manifest) -> PushedManifest:
        """Store the manifest (a tag or its own digest as `reference`): MANIFEST_BLOB_UNKNOWN for each blob or
        child manifest not stored, DENIED when the tag may not move there."""
        ...

    def manifest_get(self, name: str, reference: Reference, *, body: bool) -> StoredManifest:
        """The manifest a reference names (with its bytes when `body`); MANIFEST_UNKNOWN if none."""
        ...

    def manifest_delete(self, name: str, reference: Reference) -> None:
        """Remove a tag, or the manifest of a digest; MANIFEST_UNKNOWN if none."""
        ...

    def tags(self, name: str, n: int | None, last: str | None) -> TagPage:
        """At most `n` tags (all when None) after `last`, in byte order; NAME_UNKNOWN for an unknown repository."""
        ...

    def referrers(self, name: str, digest: Digest, artifact_type: str | None) -> list[Referrer]:
        """The manifests whose subject is `digest` (an empty list when none, even for an unknown digest);
        `artifact_type`, when given, may already filter them."""
        ...
