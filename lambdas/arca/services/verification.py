"""Verification of multipart content: the assembled object is hashed server-side, and only content whose SHA-256
is the declared one may be referenced.

S3 checks each part against its signed checksum, but keeps only a composite of the part checksums for the whole:
nothing but a hash of the assembled bytes shows that the parts make the content the upload declared. So
`POST …/uploads/{id}/complete` hashes it: inline for content up to INLINE_LIMIT (ranged GETs `PARALLEL` at a
time, hashed in order as they arrive), and in the background beyond, or when the inline time runs out: the
SHA-256 state is saved with the session (arca.adapters.sha256state) and the next step goes on from it, as many
steps as the content needs (a Step Functions loop over the `verify` function on AWS, a thread of the local server
locally). Every write of the session is conditioned on the progress it read, so two verifiers never both count.
"""

from __future__ import annotations

import contextvars
import hashlib
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import timedelta
from typing import Protocol

from arca.adapters import keys
from arca.adapters.multipart import Multipart
from arca.adapters.s3 import UPLOAD_EXPIRY_DAYS
from arca.adapters.sha256state import ResumableSha256
from arca.adapters.store.uploads import COMPLETE, FAILED, UPLOADING, UploadSession, UploadStore
from arca.domain.errors import ContentionError
from arca.domain.verification import VerifyEvent
from arca.services.retry import Policy

MIB = 1024**2
GIB = 1024**3
# Content up to this size is hashed inside the complete request (API Gateway waits 29 s); larger content, and any
# whose hashing outlasts the request's time, goes on in the background.
INLINE_LIMIT = GIB
# Each ranged GET, and how many are in flight while the hash goes on: memory stays near PARALLEL * CHUNK.
CHUNK = 16 * MIB
PARALLEL = 4
# The background saves its state at least this often, so a failed step loses little.
SAVE_EVERY = 8 * GIB


class Driver(Protocol):
    """Starts the background steps of a verification (a Step Functions execution on AWS)."""

    def start(self, event: VerifyEvent, *, run: str) -> None: ...


class Verification:
    def __init__(self, store: UploadStore, parts: Multipart, policy: Policy, driver: Driver) -> None:
        self.store = store
        self.parts = parts
        self.policy = policy
        self.driver = driver

    def run(self, session: UploadSession, *, time_left: Callable[[], float] | None, reserve: float) -> UploadSession:
        """Hash the assembled object on from `session.hashed` until it is all hashed (then `complete` or `failed`)
        or `time_left()` falls under `reserve` seconds (then the progress is saved: `verifying`). Returns the session
        as written. ContentionError when another verifier moved it on meanwhile (read it again)."""
        key = keys.multipart_blob_key(session.name, session.sha256, session.parts_sha256)
        hasher = ResumableSha256(session.hash_state)
        offset = saved = session.hashed
        for data in self._chunks(key, offset, session.size):
            hasher.update(data)
            offset += len(data)
            if offset == session.size:
                break
            if time_left is not None and time_left() < reserve:
                return self.store.verifying(session, hashed=offset, state=hasher.state(), now=self.policy.now())
            if offset - saved >= SAVE_EVERY:
                session = self.store.verifying(session, hashed=offset, state=hasher.state(), now=self.policy.now())
                saved = offset
        digest = hasher.hexdigest()
        if digest == session.sha256:
            return self.store.verified(session, now=self.policy.now())
        ttl = int((self.policy.clock() + timedelta(days=UPLOAD_EXPIRY_DAYS)).timestamp())
        return self.store.failed(session, actual=digest, now=self.policy.now(), ttl=ttl)

    def _chunks(self, key: str, start: int, end: int) -> Iterator[bytes]:
        """The object's bytes from `start` to `end` in CHUNK ranges, fetched PARALLEL at a time, yielded in order."""
        with ThreadPoolExecutor(PARALLEL, thread_name_prefix="verify") as pool:
            pending: deque[Future[bytes]] = deque()
            offset = start
            try:
                while pending or offset < end:
                    while offset < end and len(pending) < PARALLEL:
                        stop = min(end, offset + CHUNK)
                        # Each read runs in a copy of this context: local mode's IAM check knows the calling function.
                        pending.append(pool.submit(contextvars.copy_context().run, self.parts.read, key, offset, stop))
                        offset = stop
                    yield pending.popleft().result()
            finally:
                for future in pending:
                    future.cancel()

    def background(self, session: UploadSession) -> UploadSession:
        """Hand the rest of the hashing to the background: the session is `verifying` (moved there if it was still
        `uploading`), and its driver is started (again: a start of the same run is no second execution)."""
        if session.state == UPLOADING:
            session = self.store.verifying(session, hashed=0, state=None, now=self.policy.now())
        if session.state not in (COMPLETE, FAILED):
            run = hashlib.sha256(f"{session.name}|{session.id}|{session.s3_upload}|{session.hashed}".encode())
            self.driver.start(VerifyEvent(name=session.name, upload=session.id), run=f"verify-{run.hexdigest()[:40]}")
        return session

    def step(self, event: VerifyEvent, *, time_left: Callable[[], float], reserve: float) -> VerifyEvent:
        """One background step: hash on while the invocation's time lasts. `done` once the session is verified,
        failed, gone, or not verifying (nothing to do)."""
        session = self.store.get(event.name, event.upload)
        if session is None or session.state in (COMPLETE, FAILED, UPLOADING):
            return event.model_copy(update={"done": True})
        try:
            session = self.run(session, time_left=time_left, reserve=reserve)
        except ContentionError:
            return event.model_copy(update={"done": True})  # another verifier went further: it goes on
        return event.model_copy(update={"done": session.state in (COMPLETE, FAILED), "hashed": session.hashed})
