"""OCI Distribution over Arca's model (the protocol itself is arca.protocols.oci; the API binds the two).

A repository is an artifact, a tag an alias, a manifest a version whose content is the manifest's bytes and whose
files are its config and layers (a tree, arca.domain.trees), a blob the artifact's content of that sha256 (the same
object an `arca` upload stores, so either finds the other's). Errors are the registry's own (arca.domain.errors),
each naming a `field` the API turns into OCI's codes:

- `upload`: the session does not exist for this caller (NotFoundError), or would grow past SESSION_MAX_BYTES
  (PayloadTooLargeError);
- `range`: a chunk that does not start at the session's offset (ConflictError, `details.offset`);
- `digest`: a session's bytes that are not the digest given (ValidationError); the session is gone then;
- `reference`: a manifest reference that names nothing (NotFoundError) or a version that is no OCI manifest.

Upload sessions (decision 105) keep their bytes in one staging object and their state in one item
(arca.adapters.store.oci_sessions). A session holds at most SESSION_MAX_BYTES: each request body is bounded by what
Lambda takes, so an append rewrites the staging object (read, then put with the chunk), and the closing PUT reads
it once more to hash it before storing it at its content's key. Blobs larger than that go through `arca oci
proxy` (presigned multipart uploads), which is also the only way past one request's bound.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from arca.adapters import keys
from arca.adapters.s3 import Blobs
from arca.adapters.store.aliases import AliasStore
from arca.adapters.store.oci_referrers import OciReferrerStore, PendingReferrer
from arca.adapters.store.oci_sessions import OciSession, OciSessionStore
from arca.adapters.store.uploads import COMPLETE
from arca.domain.entities import Attestation, Resolution
from arca.domain.errors import ConflictError, NotFoundError, PayloadTooLargeError, ValidationError
from arca.domain.models import AliasBody, AttestationBody
from arca.domain.trees import FileEntry, TreeContent
from arca.services.aliases import Aliases
from arca.services.attestations import Attesting, attestation_id
from arca.services.publishing import Publishing
from arca.services.reading import Reading, refuse_link
from arca.services.removal import Removal
from arca.services.retry import Policy

# The most a session holds: the bound of one request body through API Gateway and Lambda (4,669,440 bytes, the
# dispatcher's MAX_BODY_BYTES), so a chunked upload ends where a monolithic one would.
SESSION_MAX_BYTES = 4_669_440
# An abandoned session's item lives this long (its staging object: the bucket's upload expiry).
SESSION_DAYS = 7
# How many tags one listing reads at most when the client asks for all of them (no `n`).
MAX_TAGS = 10_000
BLOB_CONTENT_TYPE = "application/octet-stream"
# The largest manifest OCI's clients push (4 MiB): a larger blob is never read as one.
MAX_ATTACHED_BYTES = 4 * 1024 * 1024
# The manifests a version may be served as (arca.protocols.oci.manifests accepts exactly these).
MANIFEST_MEDIA_TYPES = frozenset(
    {
        "application/vnd.oci.image.manifest.v1+json",
        "application/vnd.oci.image.index.v1+json",
        "application/vnd.docker.distribution.manifest.v2+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
    }
)


@dataclass(frozen=True)
class Pushed:
    """A manifest push: the version it is (published now, or the live one with its digest), and whether it is new."""

    version: int
    created: bool


@dataclass(frozen=True)
class Found:
    """A manifest as stored: its digest (hex), media type, size in bytes, and bytes when asked for."""

    sha256: str
    media_type: str
    size: int
    body: bytes | None


class Oci:
    def __init__(
        self,
        publishing: Publishing,
        removal: Removal,
        reading: Reading,
        aliases: Aliases,
        alias_store: AliasStore,
        sessions: OciSessionStore,
        blobs: Blobs,
        policy: Policy,
        attesting: Attesting,
        pending: OciReferrerStore,
    ) -> None:
        self.publishing = publishing
        self.removal = removal
        self.reading = reading
        self.aliases = aliases
        self.alias_store = alias_store
        self.sessions = sessions
        self.blobs = blobs
        self.policy = policy
        self.attesting = attesting
        self.pending = pending

    # Blobs

    def blob_size(self, name: str, sha256: str) -> int | None:
        """The size of the artifact's content `sha256`, or None when it holds none."""
        stored = self._stored(name, sha256)
        return None if stored is None else stored[1]

    def blob_url(self, name: str, sha256: str) -> str | None:
        """A presigned URL of the content (signed locally), or None."""
        stored = self._stored(name, sha256)
        if stored is None:
            return None
        url, _ = self.blobs.presign_download(stored[0], content_type=BLOB_CONTENT_TYPE, filename=f"sha256-{sha256}")
        return url

    def _stored(self, name: str, sha256: str) -> tuple[str, int] | None:
        """Where the content is and its size: its single PUT (one S3 HeadObject), else its newest verified multipart
        layout (`arca publish` of a large file: one Query of its layouts, one HeadObject), else None."""
        key = keys.blob_key(name, sha256)
        stat = self.blobs.stat(key)
        if stat is not None:
            return key, stat.size
        verified = [layout for layout in self.reading.layouts.layouts(name, sha256) if layout.state == COMPLETE]
        if not verified:
            return None
        key = keys.multipart_blob_key(name, sha256, verified[0].parts_sha256)
        stat = self.blobs.stat(key)
        return None if stat is None else (key, stat.size)

    def put_blob(self, name: str, sha256: str, body: bytes) -> None:
        """Store bytes (whose SHA-256 the caller checked) as the content `sha256`: nothing when they are stored
        already, else one PutObject with their checksum and the upload tag (a publish keeps them)."""
        refuse_link(name, self.reading.artifacts.latest(name))
        key = keys.blob_key(name, sha256)
        if self.blobs.stored(key, sha256, len(body)):
            return
        self.blobs.put_upload(key, body)

    # Upload sessions

    def open_session(self, name: str, caller: str) -> OciSession:
        refuse_link(name, self.reading.artifacts.latest(name))
        session = OciSession(name, uuid.uuid4().hex, caller, 0, self.policy.now())
        ttl = int((self.policy.clock() + timedelta(days=SESSION_DAYS)).timestamp())
        self.sessions.open(session, ttl=ttl)
        return session

    def session(self, name: str, session_id: str, caller: str) -> OciSession:
        """The caller's session `session_id` of `name`; NotFoundError(upload) for anyone else's, or none."""
        found = self.sessions.get(name, session_id) if _is_session_id(session_id) else None
        if found is None or found.caller != caller:
            raise NotFoundError(f"no upload session {session_id!r} of {name!r}", field="upload")
        return found

    def append(self, name: str, session_id: str, caller: str, chunk: bytes, start: int | None) -> OciSession:
        """Append a chunk at the session's offset (`start`, when given, must be it)."""
        session = self.session(name, session_id, caller)
        if start is not None and start != session.offset:
            raise ConflictError(
                f"the chunk starts at byte {start}, the upload holds {session.offset} bytes",
                field="range",
                details={"offset": session.offset},
            )
        if not chunk:
            return session
        total = session.offset + len(chunk)
        if total > SESSION_MAX_BYTES:
            raise PayloadTooLargeError(
                f"the upload would hold {total} bytes, over the limit of {SESSION_MAX_BYTES} bytes a session takes",
                field="upload",
                details={"size": total, "limit": SESSION_MAX_BYTES},
            )
        staged = self._staged(session)
        self.blobs.put_upload(keys.oci_staging_key(name, session.id), staged + chunk)
        if not self.sessions.advance(session, total):
            raise ConflictError(
                "another chunk of this upload arrived at the same time", field="range", details={"offset": total}
            )
        return OciSession(name, session.id, caller, total, session.created_at)

    def finish(self, name: str, session_id: str, caller: str, sha256: str, chunk: bytes, start: int | None) -> None:
        """Append the last chunk, then store the session's bytes as the content `sha256` if they are it
        (ValidationError(digest) otherwise). The session is gone either way."""
        session = self.append(name, session_id, caller, chunk, start) if chunk or start is not None else None
        session = session or self.session(name, session_id, caller)
        content = self._staged(session)
        if not self.sessions.close(session):
            raise ConflictError("another request finished this upload", field="range", details={"offset": 0})
        self.blobs.delete(keys.oci_staging_key(name, session.id))
        actual = hashlib.sha256(content).hexdigest()
        if actual != sha256:
            raise ValidationError(f"the upload's bytes are sha256:{actual}, not sha256:{sha256}", field="digest")
        self.put_blob(name, sha256, content)

    def cancel(self, name: str, session_id: str, caller: str) -> None:
        session = self.session(name, session_id, caller)
        self.sessions.close(session)
        self.blobs.delete(keys.oci_staging_key(name, session.id))

    def _staged(self, session: OciSession) -> bytes:
        return self.blobs.read(keys.oci_staging_key(session.name, session.id)) if session.offset else b""

    # Manifests

    def push(
        self,
        name: str,
        document: bytes,
        media_type: str,
        files: Sequence[FileEntry],
        *,
        tag: str | None,
        identity: str | None,
    ) -> Pushed:
        """Publish the manifest as a version (none when a live version has its digest), then point `tag` at it.

        ConflictError(manifest) naming the paths whose content is not stored; ValidationError for a file whose size
        is not its content's; PolicyViolation (and the version stays) when the alias may not move there.
        """
        sha256 = hashlib.sha256(document).hexdigest()
        existing = self.reading.versions.newest_with_content(name, sha256)
        if existing is not None and existing.content_type == media_type:
            pushed = Pushed(existing.version, created=False)
        else:
            content = TreeContent(files=tuple(files), document=document, media_type=media_type)
            published = self.publishing.publish(name, content, identity=identity)
            pushed = Pushed(published.version, created=not published.deduplicated)
        self.adopt(name, sha256, pushed.version)
        if tag is not None:
            live = self.alias_store.alias(name, tag)
            # Already there (a client's retry, the same push again): the alias, its canary included, is left as is.
            if live is None or live.deleted or live.version != pushed.version:
                self.aliases.set(name, tag, AliasBody(version=pushed.version), identity=identity)
        return pushed

    def manifest(self, name: str, ref: str, *, body: bool, routing_key: str | None) -> Found:
        """The manifest `ref` names: a digest (`sha256:<hex>`, the newest live version with it), a tag (resolved
        as resolve does, a canary split by `routing_key`), a version number or LATEST."""
        try:
            resolved: Resolution = self.reading.resolve(name, ref, routing_key=routing_key)
        except NotFoundError:
            attached = (
                self._attached(name, ref.removeprefix("sha256:"), body=body) if ref.startswith("sha256:") else None
            )
            if attached is None:
                raise
            return attached
        if resolved.files is None or resolved.content_type not in MANIFEST_MEDIA_TYPES:
            raise NotFoundError(
                f"{ref!r} of {name!r} is version {resolved.version}, which is no OCI manifest", field="reference"
            )
        key = keys.blob_key(name, resolved.sha256)
        if body:
            document = self.blobs.read(key)
            return Found(resolved.sha256, resolved.content_type, len(document), document)
        stat = self.blobs.stat(key)
        if stat is None:
            raise NotFoundError(f"the manifest {ref!r} of {name!r} is not stored", field="reference")
        return Found(resolved.sha256, resolved.content_type, stat.size, None)

    def attach(
        self,
        name: str,
        document: bytes,
        media_type: str,
        subject_sha256: str,
        artifact_type: str,
        blobs: Sequence[tuple[str, int]],
        *,
        identity: str | None,
    ) -> int | None:
        """Record a manifest with a subject as an attestation of the subject's version (its type the manifest's
        artifact type); answers that version, or None when no live version has the subject's digest yet: the
        referrer then waits for it (decision 112), listed among the digest's referrers and adopted as an attestation
        when a version with that digest is pushed. Its blobs must be stored (ConflictError(manifest) naming the
        missing ones, `details.missing`), and are kept (never expire as uploads); the manifest's bytes are stored as
        the artifact's content at its digest, so it is fetched by digest.

        Idempotent steps, none of which a failed check reaches: keep the blobs, store the manifest's bytes, then
        either the attestation or the pending item (each a no-op the second time)."""
        refuse_link(name, self.reading.artifacts.latest(name))
        missing = [sha256 for sha256, _ in blobs if self.blob_size(name, sha256) is None]
        if missing:
            raise ConflictError(
                f"{len(missing)} blob(s) of the manifest are not stored", field="manifest", details={"missing": missing}
            )
        for sha256, size in blobs:
            key = keys.blob_key(name, sha256)
            self.blobs.keep(key, self.blobs.verify(key, sha256, size))
        sha256 = hashlib.sha256(document).hexdigest()
        key = keys.blob_key(name, sha256)
        if self.blobs.stat(key) is None:
            self.blobs.put(key, document, content_type=media_type)
        subject = self.reading.versions.newest_with_content(name, subject_sha256)
        if subject is None:
            waiting = PendingReferrer(
                subject_sha256, artifact_type, sha256, len(document), media_type, self.policy.now(), identity
            )
            self.pending.put(name, waiting)
            return None
        body = AttestationBody(type=artifact_type, sha256=sha256, size=len(document), media_type=media_type)
        self.attesting.attest(name, subject.version, body, identity=identity)
        return subject.version

    def adopt(self, name: str, subject_sha256: str, version: int) -> int:
        """Make every referrer waiting for this digest an attestation of `version` (which has it), then drop its
        pending item; answers how many. Each step may run again (an attestation's id is its type and digest)."""
        adopted = 0
        for waiting in self.pending.pending(name, subject_sha256):
            body = AttestationBody(
                type=waiting.type, sha256=waiting.sha256, size=waiting.size, media_type=waiting.media_type
            )
            self.attesting.attest(name, version, body, identity=waiting.created_by)
            self.pending.delete(name, subject_sha256, waiting.sha256)
            adopted += 1
        return adopted

    def referrers(self, name: str, subject_sha256: str) -> list[tuple[Attestation, bytes | None]]:
        """The attestations of the newest live version with this digest, then the referrers still waiting for it
        (decision 112; all of them when no version has it), each with its bytes when it is an OCI manifest (whose
        annotations a referrer shows)."""
        found: list[tuple[Attestation, bytes | None]] = []
        subject = self.reading.versions.newest_with_content(name, subject_sha256)
        token: str | None = None
        while subject is not None:
            page = self.attesting.page(name, subject.version, kind=None, limit=100, token=token)
            for attestation in page.attestations:
                document = None
                if attestation.media_type in MANIFEST_MEDIA_TYPES:
                    document = self.blobs.read(keys.attestation_blob_key(name, subject.version, attestation.id))
                found.append((attestation, document))
            token = page.next_token
            if token is None:
                break
        listed = {attestation.id for attestation, _ in found}
        for waiting in self.pending.pending(name, subject_sha256):
            attestation = Attestation(
                id=attestation_id(waiting.type, waiting.sha256),
                type=waiting.type,
                sha256=waiting.sha256,
                size=waiting.size,
                media_type=waiting.media_type,
                created_at=waiting.created_at,
                created_by=waiting.created_by,
            )
            if attestation.id not in listed:
                found.append((attestation, self.blobs.read(keys.blob_key(name, waiting.sha256))))
        return found

    def _attached(self, name: str, sha256: str, *, body: bool) -> Found | None:
        """A manifest with a subject stored at its digest (an attestation, no version), or None."""
        key = keys.blob_key(name, sha256)
        stat = self.blobs.stat(key)
        if stat is None or stat.size > MAX_ATTACHED_BYTES:
            return None
        document = self.blobs.read(key)
        try:
            parsed = json.loads(document)
        except ValueError:
            return None
        media_type = parsed.get("mediaType") if isinstance(parsed, dict) else None
        if media_type not in MANIFEST_MEDIA_TYPES or "subject" not in parsed:
            return None
        return Found(sha256, str(media_type), len(document), document if body else None)

    def untag(self, name: str, tag: str, identity: str | None) -> None:
        self.aliases.delete(name, tag, identity=identity)

    def delete_manifest(self, name: str, sha256: str, identity: str | None) -> None:
        """Soft-delete the newest live version with this digest (VersionPinnedError while an alias points at it)."""
        found = self.reading.content_version(name, sha256)
        self.removal.delete_version(name, found.version, identity=identity)

    # Tags

    def tags(self, name: str, n: int | None, last: str | None) -> tuple[list[str], bool]:
        """At most `n` aliases after `last`, in byte order, and whether more follow; NotFoundError for an unknown
        artifact."""
        self.reading.live_latest(name)
        scope = f"aliases:{name}"
        token = keys.encode_token(keys.alias_key(name, last), scope) if last is not None else None
        found: list[str] = []
        want = MAX_TAGS if n is None else n
        while len(found) <= want:  # one more than asked for: whether more follow
            page, token = self.alias_store.aliases_page(name, limit=want + 1 - len(found), token=token)
            found += [a.alias for a in page]
            if token is None:
                break
        return found[:want], len(found) > want


def _is_session_id(value: str) -> bool:
    return len(value) == 32 and all(c in "0123456789abcdef" for c in value)
