"""Multipart uploads: sessions whose part URLs sign each part's SHA-256, resumed, completed and aborted.

What Arca verifies (docs/decisions.md): S3 refuses a part whose bytes do not match the checksum its URL signs,
and assembles the object only from parts whose checksums match the ones completion lists; Arca then checks the
object's size and S3's composite checksum (the SHA-256 of the part digests) against the declared layout, and
hashes the assembled object (arca.services.verification): only content whose SHA-256 is the declared one becomes
`complete`, the state a reference needs. The object of a layout has its own key (keys.multipart_blob_key), so a
layout assembled from other bytes never blocks the true content's, nor is ever served as it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from arca.adapters import keys
from arca.adapters.multipart import Multipart, StoredPart
from arca.adapters.s3 import UPLOAD_EXPIRY_DAYS, Blobs
from arca.adapters.store.artifacts import ArtifactStore
from arca.adapters.store.uploads import COMPLETE, FAILED, UPLOADING, VERIFYING, UploadSession, UploadStore
from arca.domain import multipart
from arca.domain.entities import CompletedUpload, MultipartTarget, StoredPartInfo, Upload
from arca.domain.errors import ConflictError, ContentionError, NotFoundError
from arca.domain.models import UploadBody
from arca.domain.moments import from_iso, to_iso
from arca.services.reading import refuse_link
from arca.services.retry import Policy
from arca.services.verification import INLINE_LIMIT, Verification

# Part URLs one answer carries: each is up to ~2 KB on Lambda (its session token), and an answer stays far
# below Lambda's 6 MB. A client asks GET …/uploads/{id} for the next ones.
MAX_URLS = 1000
# S3's lifecycle rule aborts a multipart upload 7 days after it started; a session older than this one day of
# margin starts a new S3 upload rather than hand out URLs that may stop working.
_STALE_AFTER = timedelta(days=UPLOAD_EXPIRY_DAYS - 1)
# Seconds of the complete request kept back from inline hashing: to save the progress and answer before API
# Gateway's 29 s.
INLINE_RESERVE = 4.0
_GONE = "S3 no longer has this upload (aborted, or older than 7 days); POST …/uploads again"


class Uploads:
    def __init__(
        self,
        artifacts: ArtifactStore,
        store: UploadStore,
        blobs: Blobs,
        parts: Multipart,
        policy: Policy,
        verification: Verification,
    ) -> None:
        self.artifacts = artifacts
        self.store = store
        self.blobs = blobs
        self.multipart = parts
        self.policy = policy
        self.verification = verification

    def create(self, name: str, body: UploadBody) -> Upload:
        """`exists` when this artifact holds this content in this very layout (assembled and stored), else the
        upload of that layout: the running one if there is one (so a second client resumes it), or a new one."""
        assert body.part_size is not None and body.parts is not None
        multipart.check_layout(body.size, body.part_size, body.parts)
        refuse_link(name, self.artifacts.latest(name))
        wanted = UploadSession(
            name=name,
            sha256=body.sha256,
            size=body.size,
            part_size=body.part_size,
            parts=body.parts,
            s3_upload="",
            created_at=self.policy.now(),
        )
        session = self.store.get(name, wanted.id)
        key = self._key(wanted)
        if session is not None and session.state == FAILED:
            raise _failed(session)
        if session is not None and session.state in (VERIFYING, COMPLETE) and self.blobs.stat(key) is not None:
            self.multipart.verify(key, session.size, session.parts_sha256)
            return _answer(session)
        stored = self.multipart.parts(key, session.s3_upload) if session and not self._stale(session) else None
        if session is None or stored is None:
            session, stored = self._start(wanted, replacing=session)
        return Upload(
            exists=False, sha256=body.sha256, size=body.size, upload=self._target(session, stored), state=UPLOADING
        )

    def _start(
        self, wanted: UploadSession, *, replacing: UploadSession | None
    ) -> tuple[UploadSession, dict[int, StoredPart]]:
        """A new S3 upload for `wanted`, recorded unless another client recorded one first (then that one)."""
        key = self._key(wanted)
        upload = self.multipart.start(key)
        session = UploadSession(**{**wanted.__dict__, "s3_upload": upload, "created_at": self.policy.now()})
        ttl = int((self.policy.clock() + timedelta(days=UPLOAD_EXPIRY_DAYS)).timestamp())
        if self.store.start(session, ttl=ttl, replacing=replacing.s3_upload if replacing else None) is not None:
            return session, {}
        self.multipart.abort(key, upload)
        current = self.store.get(wanted.name, wanted.id)
        stored = self.multipart.parts(key, current.s3_upload) if current is not None else None
        if current is None or stored is None:
            raise ConflictError("another client is starting this upload; retry", field="sha256")
        return current, stored

    def status(self, name: str, upload: str) -> Upload:
        """The upload's state: while `uploading`, the parts S3 has and fresh URLs for the others (resume from here);
        while `verifying`, how far the hashing got."""
        session = self._session(name, upload)
        if session.state != UPLOADING:
            return _answer(session)
        stored = self.multipart.parts(self._key(session), session.s3_upload)
        if stored is None:
            raise NotFoundError(_GONE, field="id")
        return Upload(
            exists=False,
            sha256=session.sha256,
            size=session.size,
            upload=self._target(session, stored),
            state=UPLOADING,
        )

    def complete(self, name: str, upload: str, *, time_left: Callable[[], float] | None = None) -> CompletedUpload:
        """Assemble the object from its parts and check its SHA-256; idempotent. Content up to INLINE_LIMIT is hashed
        here while `time_left()` (seconds) keeps INLINE_RESERVE; the rest goes on in the background (`verifying`;
        a repeat starts a stalled one again). ConflictError(parts) names the parts S3 does not have yet (or holds
        with other bytes); ConflictError(sha256) when the assembled bytes are not the declared content (`failed`)."""
        session = self._session(name, upload)
        key = self._key(session)
        if session.state == UPLOADING:
            stored = self.multipart.parts(key, session.s3_upload)
            if stored is not None:
                self._assemble(session, stored)
            self.multipart.verify(key, session.size, session.parts_sha256)
        if session.state in (UPLOADING, VERIFYING) and session.size - session.hashed <= INLINE_LIMIT:
            try:
                session = self.verification.run(session, time_left=time_left, reserve=INLINE_RESERVE)
            except ContentionError:
                session = self._session(name, upload)  # another verifier moved it on
        if session.state in (UPLOADING, VERIFYING):
            session = self.verification.background(session)
        if session.state == FAILED:
            raise _failed(session)
        return CompletedUpload(
            id=session.id,
            sha256=session.sha256,
            size=session.size,
            part_size=session.part_size,
            part_count=len(session.parts),
            completed_at=session.completed_at or "",
            state="complete" if session.state == COMPLETE else "verifying",
            verified_bytes=session.hashed,
        )

    def _assemble(self, session: UploadSession, stored: dict[int, StoredPart]) -> None:
        missing = [n for n, _ in self._missing(session, stored)]
        if missing:
            raise ConflictError(
                f"S3 does not have {len(missing)} of the {len(session.parts)} parts yet; upload them first",
                field="parts",
                details={"missing": missing[:MAX_URLS]},
            )
        listed = [(stored[n], session.parts[n - 1]) for n in range(1, len(session.parts) + 1)]
        self.multipart.complete(self._key(session), session.s3_upload, listed)

    def abort(self, name: str, upload: str) -> None:
        """Abort a running upload and forget it. ConflictError once it is assembled (nothing to abort)."""
        session = self._session(name, upload)
        if session.state != UPLOADING:
            raise ConflictError(f"this upload is {session.state}; there is nothing to abort", field="id")
        self.multipart.abort(self._key(session), session.s3_upload)
        self.store.remove(session)

    def _session(self, name: str, upload: str) -> UploadSession:
        keys.parse_upload_id(upload)
        session = self.store.get(name, upload)
        if session is None:
            raise NotFoundError(f"artifact {name!r} has no upload {upload!r}", field="id")
        return session

    def _stale(self, session: UploadSession) -> bool:
        return self.policy.clock() - from_iso(session.created_at) >= _STALE_AFTER

    def _missing(self, session: UploadSession, stored: dict[int, StoredPart]) -> list[tuple[int, str]]:
        """(number, sha256) of the parts S3 lacks, or holds with another size or checksum."""
        found = []
        for number, sha256 in enumerate(session.parts, start=1):
            part = stored.get(number)
            length = multipart.part_length(session.size, session.part_size, number)
            if (
                part is None
                or part.size != length
                or (part.sha256_b64 is not None and part.sha256_b64 != multipart.composite_b64(sha256))
            ):
                found.append((number, sha256))
        return found

    def _target(self, session: UploadSession, stored: dict[int, StoredPart]) -> MultipartTarget:
        key = self._key(session)
        missing = self._missing(session, stored)
        lacking = {n for n, _ in missing}
        return MultipartTarget(
            id=session.id,
            sha256=session.sha256,
            size=session.size,
            part_size=session.part_size,
            part_count=len(session.parts),
            parts=[self.multipart.presign_part(key, session.s3_upload, n, h) for n, h in missing[:MAX_URLS]],
            uploaded=[StoredPartInfo(number=p.number, size=p.size) for p in stored.values() if p.number not in lacking],
            missing=len(missing),
            expires_at=to_iso(self.policy.clock() + timedelta(seconds=self.blobs.upload_ttl)),
        )

    @staticmethod
    def _key(session: UploadSession) -> str:
        return keys.multipart_blob_key(session.name, session.sha256, session.parts_sha256)


def _answer(session: UploadSession) -> Upload:
    """The answer for an assembled upload: `exists` once it is complete (verified)."""
    verifying = session.state == VERIFYING
    return Upload(
        exists=session.state == COMPLETE,
        sha256=session.sha256,
        size=session.size,
        state=session.state,
        verified_bytes=session.hashed if verifying else None,
    )


def _failed(session: UploadSession) -> ConflictError:
    return ConflictError(
        f"the upload {session.id} failed: its parts make content whose sha256 is not {session.sha256}; nothing may "
        "reference it (upload the content again, cut from the right bytes)",
        field="sha256",
        details={"state": FAILED},
    )
