"""A registry in dicts behind arca.protocols.oci's Backend, with Arca's model of OCI.

What it keeps is what Arca will keep: a blob is the repository's content of that sha256 (a manifest's bytes are
content too, so HEAD finds them), a tag is an alias, a pushed manifest is a version (numbered from 1, LATEST the
newest), a manifest with a subject is an attestation of its subject (listed among its referrers, never a
version), and a digest delete is refused while a tag points at it. Blob GETs answer a URL on another server (as a
presigned S3 URL would): `FakeRegistry.blob_base_url`, served by tests/oci/servers.py.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field

from arca.protocols.oci import (
    BlobInfo,
    Digest,
    Manifest,
    OciError,
    PushedManifest,
    Reference,
    Referrer,
    RefKind,
    StoredManifest,
    TagPage,
    UploadState,
)
from arca.protocols.oci.errors import entry, range_invalid


@dataclass
class Repository:
    blobs: dict[Digest, bytes] = field(default_factory=dict)
    manifests: dict[Digest, Manifest] = field(default_factory=dict)
    versions: list[Digest] = field(default_factory=list)  # version n is versions[n - 1]
    tags: dict[str, Digest] = field(default_factory=dict)
    deleted: set[Digest] = field(default_factory=set)


@dataclass
class Upload:
    name: str
    data: bytearray = field(default_factory=bytearray)


class FakeRegistry:
    """The state every request shares; `backend(caller)` is one request's Backend."""

    def __init__(self, blob_base_url: str = "http://blobs.invalid") -> None:
        self.blob_base_url = blob_base_url
        self.repositories: dict[str, Repository] = {}
        self.uploads: dict[str, Upload] = {}
        self.callers: list[str | None] = []
        # Tags an alias policy refuses to move: the manifest is kept (a published version), the tag is DENIED.
        self.denied_tags: set[str] = set()
        self.lock = threading.RLock()
        self._ids = itertools.count(1)

    def backend(self, caller: str | None = None) -> FakeBackend:
        with self.lock:
            self.callers.append(caller)
        return FakeBackend(self)

    def repository(self, name: str) -> Repository:
        return self.repositories.setdefault(name, Repository())

    def blob(self, name: str, digest: Digest) -> bytes | None:
        """The bytes a blob URL serves (None: S3's 404)."""
        with self.lock:
            repository = self.repositories.get(name)
            if repository is None:
                return None
            if digest in repository.blobs:
                return repository.blobs[digest]
            manifest = repository.manifests.get(digest)
            return manifest.body if manifest is not None else None

    def new_upload_id(self) -> str:
        return f"upload-{next(self._ids)}"


class FakeBackend:
    def __init__(self, registry: FakeRegistry) -> None:
        self.registry = registry

    # Blobs

    def blob_stat(self, name: str, digest: Digest) -> BlobInfo | None:
        content = self.registry.blob(name, digest)
        return None if content is None else BlobInfo(digest, len(content))

    def blob_url(self, name: str, digest: Digest) -> str:
        if self.registry.blob(name, digest) is None:
            raise OciError.of("BLOB_UNKNOWN", detail=str(digest))
        return f"{self.registry.blob_base_url}/{name}/{digest}"

    def blob_put(self, name: str, digest: Digest, content: bytes) -> None:
        with self.registry.lock:
            self.registry.repository(name).blobs[digest] = content

    # Upload sessions

    def upload_create(self, name: str) -> UploadState:
        with self.registry.lock:
            upload_id = self.registry.new_upload_id()
            self.registry.uploads[upload_id] = Upload(name)
            return UploadState(upload_id, 0)

    def _upload(self, name: str, upload_id: str) -> Upload:
        upload = self.registry.uploads.get(upload_id)
        if upload is None or upload.name != name:
            raise OciError.of("BLOB_UPLOAD_UNKNOWN", detail={"upload": upload_id})
        return upload

    def upload_status(self, name: str, upload_id: str) -> UploadState:
        with self.registry.lock:
            return UploadState(upload_id, len(self._upload(name, upload_id).data))

    def upload_append(self, name: str, upload_id: str, chunk: bytes, start: int | None) -> UploadState:
        with self.registry.lock:
            upload = self._upload(name, upload_id)
            if start is not None and start != len(upload.data):
                raise range_invalid(
                    len(upload.data), f"the chunk starts at {start}, the upload holds {len(upload.data)} bytes"
                )
            upload.data += chunk
            return UploadState(upload_id, len(upload.data))

    def upload_finish(self, name: str, upload_id: str, digest: Digest, chunk: bytes, start: int | None) -> None:
        with self.registry.lock:
            self.upload_append(name, upload_id, chunk, start)
            content = bytes(self.registry.uploads.pop(upload_id).data)
            if Digest.of(content) != digest:
                raise OciError.of("DIGEST_INVALID", f"the upload's digest is {Digest.of(content)}", str(digest))
            self.registry.repository(name).blobs[digest] = content

    def upload_cancel(self, name: str, upload_id: str) -> None:
        with self.registry.lock:
            self._upload(name, upload_id)
            del self.registry.uploads[upload_id]

    # Manifests

    def manifest_put(self, name: str, reference: Reference, manifest: Manifest) -> PushedManifest:
        with self.registry.lock:
            repository = self.registry.repository(name)
            self._refuse_unknown(repository, manifest)
            manifest.files()  # a manifest that is no tree is refused before anything is kept
            repository.manifests[manifest.digest] = manifest
            repository.deleted.discard(manifest.digest)
            if manifest.subject is None and manifest.digest not in repository.versions:
                repository.versions.append(manifest.digest)
            if reference.kind is RefKind.TAG and reference.tag in self.registry.denied_tags:
                raise OciError.of(
                    "DENIED",
                    f"the alias policy of {reference.tag} refuses this version",
                    {"violations": [{"rule": "require_attestations"}]},
                )
            if reference.kind is RefKind.TAG and reference.tag:
                repository.tags[reference.tag] = manifest.digest
            subject = manifest.subject.ref if manifest.subject is not None else None
            return PushedManifest(manifest.digest, subject)

    @staticmethod
    def _refuse_unknown(repository: Repository, manifest: Manifest) -> None:
        missing = [d for d in manifest.blobs() if repository.blobs.get(d.ref) is None]
        missing += [d for d in manifest.children() if d.ref not in repository.manifests]
        if missing:
            raise OciError.many([entry("MANIFEST_BLOB_UNKNOWN", detail=d.digest) for d in missing])
        wrong = [d for d in manifest.blobs() if len(repository.blobs[d.ref]) != d.size]
        if wrong:
            stored = len(repository.blobs[wrong[0].ref])
            raise OciError.of(
                "MANIFEST_INVALID", f"{wrong[0].digest} is {stored} bytes, not {wrong[0].size}", wrong[0].digest
            )

    def _resolve(self, name: str, reference: Reference) -> Digest:
        repository = self.registry.repositories.get(name) or Repository()
        digest: Digest | None = None
        if reference.kind is RefKind.DIGEST:
            digest = reference.digest
        elif reference.kind is RefKind.TAG and reference.tag:
            digest = repository.tags.get(reference.tag)
        elif reference.kind is RefKind.VERSION and reference.version and reference.version <= len(repository.versions):
            digest = repository.versions[reference.version - 1]
        elif reference.kind is RefKind.LATEST and repository.versions:
            digest = repository.versions[-1]
        if digest is None or digest not in repository.manifests or digest in repository.deleted:
            raise OciError.of("MANIFEST_UNKNOWN", detail={"reference": str(reference)})
        return digest

    def manifest_get(self, name: str, reference: Reference, *, body: bool) -> StoredManifest:
        with self.registry.lock:
            digest = self._resolve(name, reference)
            manifest = self.registry.repositories[name].manifests[digest]
            return StoredManifest(digest, manifest.media_type, manifest.size, manifest.body if body else None)

    def manifest_delete(self, name: str, reference: Reference) -> None:
        with self.registry.lock:
            digest = self._resolve(name, reference)
            repository = self.registry.repositories[name]
            if reference.kind is RefKind.TAG and reference.tag:
                del repository.tags[reference.tag]
                return
            tagged = sorted(tag for tag, target in repository.tags.items() if target == digest)
            if tagged:
                raise OciError.of(
                    "DENIED", f"{digest} is tagged {', '.join(tagged)}: delete its tags first", {"tags": tagged}
                )
            repository.deleted.add(digest)

    # Discovery

    def tags(self, name: str, n: int | None, last: str | None) -> TagPage:
        with self.registry.lock:
            repository = self.registry.repositories.get(name)
            if repository is None:
                raise OciError.of("NAME_UNKNOWN", detail={"name": name})
            after = sorted(t for t in repository.tags if last is None or t > last)
            if n is None:
                return TagPage(after)
            return TagPage(after[:n], more=len(after) > n)

    def referrers(self, name: str, digest: Digest, artifact_type: str | None) -> list[Referrer]:
        with self.registry.lock:
            repository = self.registry.repositories.get(name) or Repository()
            return [
                Referrer.of(m)
                for d, m in sorted(repository.manifests.items())
                if m.subject is not None and m.subject.ref == digest and d not in repository.deleted
            ]
