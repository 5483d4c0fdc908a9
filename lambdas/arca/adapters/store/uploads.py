"""The uploads store: multipart upload sessions and the layouts of completed multipart content.

Item (keys.upload_key): pk `__<name>-uploads`, sk `<sha256>.<parts_sha256>`; `s3_upload` (S3's UploadId),
`size`, `part_size`, `parts` (Binary: 32 bytes per part, so 10,000 parts take 320 KB, under DynamoDB's 400 KB
item limit), `state` (`uploading` | `complete`), `created_at`, `completed_at`, and while uploading `ttl`
(epoch seconds: the table's TTL removes a session S3's lifecycle rule has aborted). A completed item has no
TTL: versions of its content read their part hashes from it. One Put, Update or Delete per call, each with a
condition on the S3 upload it was read with, so two clients starting the same upload keep one session.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from boto3.dynamodb.conditions import Attr

from arca.adapters import keys
from arca.adapters.dynamo import ConditionFailed, Item, Table, TransactionCancelled, Write
from arca.adapters.store.conditions import ITEM_NOT_EXIST
from arca.domain import multipart

UPLOADING = "uploading"
COMPLETE = "complete"


@dataclass(frozen=True)
class Layout:
    part_size: int
    parts_sha256: str


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

    @property
    def parts_sha256(self) -> str:
        return multipart.parts_sha256(self.parts)

    @property
    def id(self) -> str:
        return keys.upload_id(self.sha256, self.parts_sha256)

    @property
    def complete(self) -> bool:
        return self.state == COMPLETE


def session_of(item: Item) -> UploadSession:
    packed = item["parts"]
    raw: bytes = packed.value if hasattr(packed, "value") else packed  # boto3 reads Binary as a Binary wrapper
    return UploadSession(
        name=item["name"],
        sha256=item["sha256"],
        size=int(item["size"]),
        part_size=int(item["part_size"]),
        parts=multipart.unpack(raw),
        s3_upload=item["s3_upload"],
        created_at=item["created_at"],
        state=item["state"],
        completed_at=item.get("completed_at"),
    )


class UploadStore:
    def __init__(self, table: Table) -> None:
        self.table = table

    def get(self, name: str, upload: str) -> UploadSession | None:
        """The session or layout `upload` of `name` (a consistent read), or None."""
        item = self.table.get(keys.upload_key(name, upload))
        return session_of(item) if item is not None else None

    def completed(self, name: str, sha256: str) -> Layout | None:
        """The newest completed layout of this content in `name`, or None: one Query of its layouts, without
        their part hashes (read by `get` when a version's answer needs them)."""
        items = self.table.query_all(
            keys.uploads_pk(name),
            sk_prefix=keys.upload_prefix(sha256),
            consistent=True,
            projection="sk, part_size, #state, completed_at",
            names={"#state": "state"},
        )
        done = [item for item in items if item.get("state") == COMPLETE]
        if not done:
            return None
        newest = max(done, key=lambda item: str(item.get("completed_at", "")))
        return Layout(part_size=int(newest["part_size"]), parts_sha256=keys.parse_upload_id(newest["sk"])[1])

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
        values: dict[str, Any] = {
            ":name": session.name,
            ":sha": session.sha256,
            ":size": session.size,
            ":part_size": session.part_size,
            ":parts": multipart.pack(session.parts),
            ":upload": session.s3_upload,
            ":state": UPLOADING,
            ":created": session.created_at,
            ":ttl": ttl,
            ":kind": "upload",
        }
        condition = ITEM_NOT_EXIST if replacing is None else Attr("s3_upload").eq(replacing)
        try:
            self.table.update(
                keys.upload_key(session.name, session.id),
                "SET kind = :kind, #name = :name, sha256 = :sha, #size = :size, part_size = :part_size, "
                "parts = :parts, s3_upload = :upload, #state = :state, created_at = :created, #ttl = :ttl",
                condition=condition,
                names={"#name": "name", "#size": "size", "#state": "state", "#ttl": "ttl"},
                values=values,
            )
        except ConditionFailed:
            return None
        return session

    def finish(self, session: UploadSession, *, now: str) -> UploadSession:
        """Mark the session's content assembled: a permanent layout (no TTL). Idempotent."""
        try:
            self.table.update(
                keys.upload_key(session.name, session.id),
                "SET #state = :complete, completed_at = :now REMOVE #ttl",
                condition=Attr("s3_upload").eq(session.s3_upload) & Attr("state").eq(UPLOADING),
                names={"#state": "state", "#ttl": "ttl"},
                values={":complete": COMPLETE, ":now": now},
            )
        except ConditionFailed as failed:
            if failed.item is None or failed.item.get("state") != COMPLETE:
                raise
            return session_of(failed.item)
        return UploadSession(**{**session.__dict__, "state": COMPLETE, "completed_at": now})

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
