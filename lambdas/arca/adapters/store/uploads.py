"""The uploads store: multipart upload sessions and the layouts of completed multipart content.

Item (keys.upload_key): pk `__<name>-uploads`, sk `<sha256>.<parts_sha256>`; `s3_upload` (S3's UploadId),
`size`, `part_size`, `parts` (Binary: 32 bytes per part, so 10,000 parts take 320 KB, under DynamoDB's 400 KB
item limit), `state`, `created_at`, `completed_at` (assembled), and `ttl` (epoch seconds: the table's TTL removes
a session S3's lifecycle rule has aborted, or content that failed its check).

States: `uploading` (parts go up) → `verifying` (assembled; the object is hashed, `hashed` bytes so far and
`hash_state` the saved SHA-256 state) → `complete` (its SHA-256 is the declared one: `verified_at`; no TTL, versions
of its content read their part hashes from it) or `failed` (another SHA-256: `actual_sha256`, nothing may reference
it). An item `complete` without `verified_at` was assembled before Arca hashed multipart content: it reads as
`verifying` from the start, until verified. One Put, Update or Delete per call, each with a condition on the S3
upload and the state it was read with, so two clients (or two verifiers) never both move one session.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from boto3.dynamodb.conditions import Attr, ConditionBase

from arca.adapters import keys
from arca.adapters.dynamo import ConditionFailed, Item, Table, TransactionCancelled, Update, Write
from arca.adapters.store.conditions import ITEM_NOT_EXIST
from arca.domain import multipart
from arca.domain.errors import ContentionError

UPLOADING = "uploading"
VERIFYING = "verifying"
COMPLETE = "complete"
FAILED = "failed"


@dataclass(frozen=True)
class Layout:
    """A layout of the content: its parts, in what state, since when."""

    part_size: int
    parts_sha256: str
    state: str = COMPLETE
    completed_at: str = ""


@dataclass(frozen=True)
class UploadSession:
    name: str
    sha256: str
    size: int
    part_size: int
    parts: list[str]
    s3_upload: str
    created_at: str
    state: str = UPLOADING
    completed_at: str | None = None
    hashed: int = 0  # bytes of the assembled object hashed so far (verifying)
    hash_state: bytes | None = None  # the SHA-256 state after `hashed` bytes (arca.adapters.sha256state)
    verified_at: str | None = None
    stored_state: str | None = None  # the item's own `state` (differs for content assembled before verification)

    @property
    def parts_sha256(self) -> str:
        return multipart.parts_sha256(self.parts)

    @property
    def id(self) -> str:
        return keys.upload_id(self.sha256, self.parts_sha256)


def _binary(value: Any) -> bytes:
    return bytes(value.value if hasattr(value, "value") else value)  # boto3 reads Binary as a Binary wrapper


def session_of(item: Item) -> UploadSession:
    stored = str(item["state"])
    unverified = stored == COMPLETE and not item.get("verified_at")
    return UploadSession(
        name=item["name"],
        sha256=item["sha256"],
        size=int(item["size"]),
        part_size=int(item["part_size"]),
        parts=multipart.unpack(_binary(item["parts"])),
        s3_upload=item["s3_upload"],
        created_at=item["created_at"],
        state=VERIFYING if unverified else stored,
        completed_at=item.get("completed_at"),
        hashed=int(item.get("hashed", 0)),
        hash_state=_binary(item["hash_state"]) if item.get("hash_state") is not None else None,
        verified_at=item.get("verified_at"),
        stored_state=stored,
    )


def _as_read(session: UploadSession) -> ConditionBase:
    """The session as it was read: the same S3 upload, state and hashing progress (a write that finds it moved on
    was overtaken by another client or verifier)."""
    hashed = Attr("hashed").eq(session.hashed)
    if not session.hashed:
        hashed = Attr("hashed").not_exists() | hashed
    return Attr("s3_upload").eq(session.s3_upload) & Attr("state").eq(session.stored_state or session.state) & hashed


class UploadStore:
    def __init__(self, table: Table) -> None:
        self.table = table

    def get(self, name: str, upload: str) -> UploadSession | None:
        """The session or layout `upload` of `name` (a consistent read), or None."""
        item = self.table.get(keys.upload_key(name, upload))
        return session_of(item) if item is not None else None

    def layouts(self, name: str, sha256: str) -> list[Layout]:
        """Every layout of this content in `name` with its state, newest assembled first: one Query, without their
        part hashes (read by `get` when a version's answer needs them)."""
        items = self.table.query_all(
            keys.uploads_pk(name),
            sk_prefix=keys.upload_prefix(sha256),
            consistent=True,
            projection="sk, part_size, #state, completed_at, verified_at",
            names={"#state": "state"},
        )
        found = [
            Layout(
                part_size=int(item["part_size"]),
                parts_sha256=keys.parse_upload_id(item["sk"])[1],
                state=VERIFYING if item.get("state") == COMPLETE and not item.get("verified_at") else item["state"],
                completed_at=str(item.get("completed_at", "")),
            )
            for item in items
        ]
        return sorted(found, key=lambda layout: layout.completed_at, reverse=True)

    def layout_keys(self, name: str, sha256: str) -> list[dict[str, str]]:
        """The keys of every layout of this content in `name` (sessions and completed ones), for its collection."""
        items = self.table.query_all(
            keys.uploads_pk(name), sk_prefix=keys.upload_prefix(sha256), consistent=True, projection="pk, sk"
        )
        return [{"pk": i["pk"], "sk": i["sk"]} for i in items]

    def start(self, session: UploadSession, *, ttl: int, replacing: str | None = None) -> UploadSession | None:
        """Record a new session; None when another one got there first (then read it). With `replacing`, take
        the place of the item of that S3 upload (one S3 has aborted, or a completed object that expired
        unpublished), only if it is still that one."""
        update = Update(
            set={
                "kind": "upload",
                "name": session.name,
                "sha256": session.sha256,
                "size": session.size,
                "part_size": session.part_size,
                "parts": multipart.pack(session.parts),
                "s3_upload": session.s3_upload,
                "state": UPLOADING,
                "created_at": session.created_at,
                "ttl": ttl,
            }
        )
        condition = ITEM_NOT_EXIST if replacing is None else Attr("s3_upload").eq(replacing)
        try:
            self.table.update(
                keys.upload_key(session.name, session.id),
                update,
                condition=condition,
            )
        except ConditionFailed:
            return None
        return session

    def verified(self, session: UploadSession, *, now: str) -> UploadSession:
        """The content's SHA-256 is the declared one: a permanent layout (no TTL) that may be referenced. None
        of the session's progress is kept. ContentionError when the session moved on since it was read (another
        verifier finished it: read it again)."""
        assembled = session.completed_at or now
        self._move(
            session,
            Update(
                set={"state": COMPLETE, "completed_at": assembled, "verified_at": now, "hashed": session.size},
                remove=("ttl", "hash_state"),
            ),
        )
        return replace(
            session,
            state=COMPLETE,
            stored_state=COMPLETE,
            completed_at=assembled,
            verified_at=now,
            hashed=session.size,
            hash_state=None,
        )

    def failed(self, session: UploadSession, *, actual: str, now: str, ttl: int) -> UploadSession:
        """The assembled bytes have another SHA-256 (`actual`): nothing may reference them, ever. The item goes with
        the TTL (the object, still tagged as an upload, with the bucket's lifecycle rule)."""
        self._move(
            session,
            Update(
                set={
                    "state": FAILED,
                    "actual_sha256": actual,
                    "completed_at": session.completed_at or now,
                    "hashed": session.size,
                    "ttl": ttl,
                },
                remove=("hash_state",),
            ),
        )
        return replace(session, state=FAILED, stored_state=FAILED, hashed=session.size, hash_state=None)

    def verifying(self, session: UploadSession, *, hashed: int, state: bytes | None, now: str) -> UploadSession:
        """Record the hashing's progress: `hashed` bytes, `state` the SHA-256 state after them (the session moves
        to `verifying` if it was not yet). ContentionError when the session moved on since it was read (another
        verifier went further: it goes on)."""
        sets: dict[str, Any] = {"state": VERIFYING, "hashed": hashed, "completed_at": session.completed_at or now}
        if state is not None:
            sets["hash_state"] = state
        self._move(session, Update(set=sets))
        return replace(
            session,
            state=VERIFYING,
            stored_state=VERIFYING,
            hashed=hashed,
            hash_state=state,
            completed_at=session.completed_at or now,
        )

    def _move(self, session: UploadSession, update: Update) -> None:
        try:
            self.table.update(
                keys.upload_key(session.name, session.id),
                update,
                condition=_as_read(session),
            )
        except ConditionFailed:
            raise ContentionError(f"the upload {session.id} of {session.name!r} moved on since it was read") from None

    def remove(self, session: UploadSession) -> bool:
        """Delete a session still uploading with this S3 upload; False when it is not (completed, or replaced)."""
        write = Write(
            "upload",
            "Delete",
            keys.upload_key(session.name, session.id),
            condition=Attr("s3_upload").eq(session.s3_upload) & Attr("state").eq(UPLOADING),
        )
        try:
            self.table.transact([write])
        except TransactionCancelled:
            return False
        return True
