"""Use cases of the publishing side: uploads, LATEST, publish, versions, listing, prune, purge.

Invariants enforced here (each write names its conditions; docs/access-patterns.md lists them):
- A version number is taken only by advancing LATEST's `newest` counter under the condition that it
  still holds the value read, in the same TransactWriteItems that puts the version with
  attribute_not_exists: concurrent publishers never share or skip a number; a loser re-reads and retries.
- Purge leaves LATEST as a tombstone that keeps `newest`, so numbers are never reused.
- A version pinned by an alias (`pinned_by`) cannot be deleted, pruned or purged.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from arca.adapters import keys
from arca.adapters.dynamo import ConditionFailed, Item, Table, TransactionCancelled, Write
from arca.adapters.s3 import Blobs
from arca.domain.errors import (
    ConflictError,
    NotFoundError,
    PayloadTooLargeError,
    ValidationError,
    VersionLimitError,
    VersionPinnedError,
)
from arca.domain.models import MAX_BLOB_SIZE, BlobRef, Content
from arca.domain.names import validate_name
from arca.domain.versions import LATEST, MAX_VERSION

CONTENT_FIELDS = ("sha256", "size", "content_type", "metadata")
# Versions pruned per transaction: with LATEST's update, TransactWriteItems' limit of 100 items.
PRUNE_BATCH = 99
# LATEST can be written by PUT latest, publish and purge; it is live only while neither flag is set.
LIVE_LATEST = "attribute_exists(pk) AND attribute_not_exists(purging) AND attribute_not_exists(purged)"
_PREFIX_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789._-/")


def now_iso(clock: Callable[[], datetime]) -> str:
    return clock().isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class Published:
    version: dict[str, Any]
    created: bool  # False: deduplicated onto the newest version


def version_view(item: Item) -> dict[str, Any]:
    """The public shape of a version item (or of LATEST)."""
    view: dict[str, Any] = {
        "name": item["name"],
        "version": LATEST if item["sk"] == LATEST else int(item["sk"]),
        **{f: item.get(f) for f in CONTENT_FIELDS},
    }
    if item["sk"] == LATEST:
        view.update(updated_at=item.get("updated_at"), newest_version=item.get("newest", 0) or None)
    else:
        view.update(
            created_at=item.get("created_at"),
            deleted=bool(item.get("deleted")),
            deleted_at=item.get("deleted_at"),
            aliases=sorted(item.get("pinned_by") or ()),
        )
    return view


class Registry:
    """The publishing side. Collaborators are injected (arca.wiring builds the real ones)."""

    def __init__(
        self,
        table: Table,
        blobs: Blobs,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        max_attempts: int = 100,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.table = table
        self.blobs = blobs
        self.clock = clock
        self.max_attempts = max_attempts
        self._sleep = sleep

    def create_upload(self, name: str, blob: BlobRef) -> dict[str, Any]:
        """Where to upload a blob: `{exists: true}` when stored already, else a presigned PUT."""
        validate_name(name)
        _check_size(blob.size)
        key = keys.blob_key(name, blob.sha256)
        stat = self.blobs.stat(key)
        if stat is not None and stat.size == blob.size:
            return {"exists": True, "sha256": blob.sha256, "size": blob.size}
        return {
            "exists": False,
            "sha256": blob.sha256,
            "size": blob.size,
            "upload": self.blobs.presign_upload(key, blob.sha256),
        }

    def put_latest(self, name: str, content: Content) -> dict[str, Any]:
        """Point LATEST at an uploaded blob (verified in S3 first); creates the artifact if new."""
        validate_name(name)
        self._verify(name, content)
        return self._set_latest(name, content)

    def _set_latest(self, name: str, content: Content) -> dict[str, Any]:
        for attempt in self.attempts():
            latest = self._latest(name)
            writes = self._latest_writes(name, latest, content, publish_as=None)
            try:
                self.table.transact(writes)
            except TransactionCancelled as lost:
                self._raise_unless_race(lost, attempt)
                continue
            written = writes[0].item or {
                **(latest or {}),
                **content.model_dump(),
                "updated_at": writes[0].values[":now"],
            }
            return version_view({**written, **keys.latest_key(name)})
        raise AssertionError("unreachable")

    def publish(self, name: str, content: Content | None, *, force: bool = False) -> Published:
        """Snapshot LATEST (content None) or set LATEST to `content` and snapshot it, in one transaction.

        Deduplicates onto the newest version when it has the same sha256 and is not deleted, unless
        `force`. Raises NotFoundError (no LATEST to snapshot), VersionLimitError, ConflictError.
        """
        validate_name(name)
        if content is not None:
            self._verify(name, content)
        for attempt in self.attempts():
            latest = self._latest(name)
            if content is None and (latest is None or latest.get("purged")):
                raise NotFoundError(f"artifact {name!r} has no LATEST to publish; PUT …/latest first")
            snapshot = content or Content(**{f: latest[f] for f in CONTENT_FIELDS})  # type: ignore[index]
            newest = int((latest or {}).get("newest", 0))
            if latest is not None and not force and newest and latest.get("newest_sha256") == snapshot.sha256:
                existing = self.table.get(keys.version_key(name, newest))
                if existing is not None and not existing.get("deleted"):
                    if content is not None and any(latest.get(f) != v for f, v in content.model_dump().items()):
                        self._set_latest(name, content)
                    return Published(version_view(existing), created=False)
            if newest >= MAX_VERSION:
                raise VersionLimitError(f"artifact {name!r} has reached version {MAX_VERSION}, the last one")
            number = newest + 1
            version = {
                "kind": "version",
                "name": name,
                "version": number,
                **snapshot.model_dump(),
                "created_at": now_iso(self.clock),
                "deleted": False,
            }
            writes = self._latest_writes(name, latest, content or snapshot, publish_as=number)
            writes.append(
                Write(
                    "version", "Put", keys.version_key(name, number), item=version, condition="attribute_not_exists(pk)"
                )
            )
            try:
                self.table.transact(writes)
            except TransactionCancelled as lost:
                self._raise_unless_race(lost, attempt)
                continue
            return Published(version_view({**version, **keys.version_key(name, number)}), created=True)
        raise AssertionError("unreachable")

    def _latest_writes(
        self, name: str, latest: Item | None, content: Content, *, publish_as: int | None
    ) -> list[Write]:
        """The writes that set LATEST to `content` (and advance its counter when publishing).

        A new (or purged) artifact gets its LATEST put and its listing rows in the same transaction;
        an existing one is updated under the condition that nobody moved its counter since we read it.
        """
        now = now_iso(self.clock)
        fields = content.model_dump()
        if latest is None or latest.get("purged"):
            item = {
                "kind": "latest",
                "name": name,
                **fields,
                "created_at": now,
                "updated_at": now,
                "newest": publish_as or int((latest or {}).get("newest", 0)),
                "version_count": 1 if publish_as else 0,
                "deleted_count": 0,
                "rev": int((latest or {}).get("rev", 0)) + 1,
            }
            if publish_as:
                item["newest_sha256"] = content.sha256
            condition = "attribute_not_exists(pk)" if latest is None else "attribute_exists(purged)"
            return [Write("latest", "Put", keys.latest_key(name), item=item, condition=condition), *_listing_rows(name)]
        if latest.get("purging"):
            raise ConflictError(f"artifact {name!r} is being purged", field="name")
        # `rev` advances on every write of LATEST: the condition on it makes each write a compare-and-set,
        # so a publish never takes a number twice nor snapshots content that changed after it was read.
        sets = ["updated_at = :now"]
        adds = ["rev :one"]
        names: dict[str, str] = {}
        values: dict[str, Any] = {":now": now, ":one": 1, ":rev": latest.get("rev", 0)}
        if fields != {f: latest.get(f) for f in fields}:
            sets += [f"#{f} = :{f}" for f in fields]
            names.update({f"#{f}": f for f in fields})
            values.update({f":{f}": v for f, v in fields.items()})
        if publish_as:
            sets += ["newest = :next", "newest_sha256 = :sha"]
            adds.append("version_count :one")
            values.update({":next": publish_as, ":sha": content.sha256})
        update = f"SET {', '.join(sets)} ADD {', '.join(adds)}"
        return [
            Write(
                "latest",
                "Update",
                keys.latest_key(name),
                update=update,
                condition=f"{LIVE_LATEST} AND rev = :rev",
                names=names,
                values=values,
            )
        ]

    def _raise_unless_race(self, lost: TransactionCancelled, attempt: int) -> None:
        """A lost race on LATEST is retried (after a jittered pause); any other failure is a conflict.

        The loser of a publish race usually fails twice: the counter moved, and the winner's version now
        exists. DynamoDB Local reports both reasons; moto stops at the first.
        """
        if lost.failed("latest") is None:
            raise ConflictError(f"concurrent change: {lost}")
        self.pause(attempt)

    def pause(self, attempt: int) -> None:
        """Before retrying a lost race: a short jittered pause, or a 409 once attempts are spent."""
        if attempt >= self.max_attempts:
            raise ConflictError("too many concurrent writers on this artifact; retry")
        self._sleep(random.uniform(0, 0.002 * min(attempt, 20)))

    def attempts(self) -> Iterator[int]:
        """Attempt numbers for a compare-and-set loop; `pause` ends it with a 409 when they run out."""
        return iter(range(1, self.max_attempts + 1))

    def _latest(self, name: str) -> Item | None:
        """LATEST as stored (tombstones included), read strongly consistent."""
        return self.table.get(keys.latest_key(name))

    def live_latest(self, name: str) -> Item:
        """LATEST of an artifact that exists (being purged counts); NotFoundError otherwise."""
        validate_name(name)
        latest = self._latest(name)
        if latest is None or latest.get("purged"):
            raise NotFoundError(f"artifact {name!r} does not exist")
        return latest

    def live_aliases(self, name: str) -> list[Item]:
        """The artifact's aliases, without the tombstones of deleted ones (strongly consistent)."""
        return [a for a in self.table.query_all(keys.alias_pk(name), consistent=True) if not a.get("deleted")]

    def summary(self, name: str) -> dict[str, Any]:
        latest = self.live_latest(name)
        aliases = len(self.live_aliases(name))
        return {
            "name": name,
            "latest": version_view(latest),
            "newest_version": latest.get("newest") or None,
            "counts": {
                "versions": int(latest.get("version_count", 0)) - int(latest.get("deleted_count", 0)),
                "deleted_versions": int(latest.get("deleted_count", 0)),
                "aliases": aliases,
            },
            "created_at": latest.get("created_at"),
            "updated_at": latest.get("updated_at"),
        }

    def get_version(self, name: str, version: int | str) -> dict[str, Any]:
        if version == LATEST:
            return version_view(self.live_latest(name))
        validate_name(name)
        item = self.table.get(keys.version_key(name, int(version)))
        if item is None:
            raise NotFoundError(f"artifact {name!r} has no version {version}")
        return version_view(item)

    def list_versions(
        self, name: str, *, limit: int, token: str | None, order: str, include_deleted: bool
    ) -> dict[str, Any]:
        self.live_latest(name)
        scope = f"versions:{name}:{order}:{include_deleted}"
        items, next_token = self.query_page(
            name,
            scope,
            limit=limit,
            token=token,
            keep=lambda i: include_deleted or not i.get("deleted"),
            sk_between=(keys.FIRST_VERSION_SK, keys.LAST_VERSION_SK),
            forward=order == "asc",
        )
        return {"versions": [version_view(i) for i in items], "next_token": next_token}

    def query_page(
        self, pk: str, scope: str, *, limit: int, token: str | None, keep: Callable[[Item], bool], **query: Any
    ) -> tuple[list[Item], str | None]:
        """Up to `limit` kept items of a partition, and an opaque token for the rest (None at the end)."""
        start = keys.decode_token(token, scope) if token else None
        kept: list[Item] = []
        while True:
            page = self.table.query(pk, start=start, limit=limit, **query)
            for item in page.items:
                if keep(item):
                    kept.append(item)
                    if len(kept) == limit:
                        last = {"pk": item["pk"], "sk": item["sk"]}
                        more = item is not page.items[-1] or page.last_key is not None
                        return kept, keys.encode_token(last, scope) if more else None
            if page.last_key is None:
                return kept, None
            start = page.last_key

    def list_artifacts(self, *, prefix: str, delimiter: str | None, limit: int, token: str | None) -> dict[str, Any]:
        """Names under `prefix`; with delimiter "/", deeper names fold into `prefixes` (as S3 does).

        Without a delimiter: the flat `__names` partition, begins_with(prefix). With one: the folder rows
        of the prefix's parent folder (seeds/001_*), whose `children` count drops to 0 once purged.
        """
        if len(prefix) > 256 or not set(prefix) <= _PREFIX_CHARS:
            raise ValidationError("prefix may only contain a-z, 0-9, '.', '_', '-' and '/'", field="prefix")
        scope = f"artifacts:{prefix}:{delimiter}"
        if delimiter is None:
            items, next_token = self.query_page(
                keys.NAMES_PK, scope, limit=limit, token=token, keep=lambda i: True, sk_prefix=prefix
            )
            return {"artifacts": [{"name": i["sk"]} for i in items], "prefixes": [], "next_token": next_token}
        parent = prefix[: prefix.rfind("/") + 1]
        items, next_token = self.query_page(
            keys.dir_pk(parent),
            scope,
            limit=limit,
            token=token,
            keep=lambda i: not i["sk"].endswith("/") or int(i.get("children", 0)) > 0,
            sk_prefix=prefix[len(parent) :],
        )
        return {
            "artifacts": [{"name": parent + i["sk"]} for i in items if not i["sk"].endswith("/")],
            "prefixes": [parent + i["sk"] for i in items if i["sk"].endswith("/")],
            "next_token": next_token,
        }

    def delete_version(self, name: str, version: int) -> dict[str, Any]:
        """Soft-delete; idempotent. VersionPinnedError (409) names the aliases that point at it."""
        return self._set_deleted(name, version, deleted=True)

    def restore_version(self, name: str, version: int) -> dict[str, Any]:
        """Undo a soft delete; idempotent."""
        return self._set_deleted(name, version, deleted=False)

    def _set_deleted(self, name: str, version: int, *, deleted: bool) -> dict[str, Any]:
        validate_name(name)
        writes = self._deletion_writes(name, [version], deleted=deleted)
        try:
            self.table.transact(writes)
        except TransactionCancelled as cancelled:
            failed = cancelled.failed(f"v{version}")
            if failed is not None:
                if failed.item is None:
                    raise NotFoundError(f"artifact {name!r} has no version {version}") from None
                if bool(failed.item.get("deleted")) == deleted:
                    return version_view(failed.item)
                aliases = sorted(failed.item.get("pinned_by") or ())
                raise VersionPinnedError(
                    f"version {version} is the target of alias(es) {', '.join(aliases)}",
                    field="version",
                    details={"aliases": aliases},
                ) from None
            latest = cancelled.failed("latest")
            if latest is not None and (latest.item is None or latest.item.get("purged")):
                raise NotFoundError(f"artifact {name!r} does not exist") from None
            raise ConflictError(f"artifact {name!r} is being purged; retry") from None
        return self.get_version(name, version)

    def prune(self, name: str, *, keep_last: int, older_than_days: int | None, dry_run: bool) -> dict[str, Any]:
        """Soft-delete old live versions, never the newest `keep_last` and never a pinned one."""
        self.live_latest(name)
        live = [
            v
            for v in self.table.query_all(
                name, sk_between=(keys.FIRST_VERSION_SK, keys.LAST_VERSION_SK), forward=False, consistent=True
            )
            if not v.get("deleted")
        ]
        cutoff = None if older_than_days is None else now_iso(lambda: self.clock() - timedelta(days=older_than_days))
        deleted: list[int] = []
        skipped: list[dict[str, Any]] = []
        doomed: list[int] = []
        for item in live[keep_last:]:
            if cutoff is not None and item["created_at"] >= cutoff:
                continue
            if item.get("pinned_by"):
                skipped.append({"version": int(item["sk"]), "aliases": sorted(item["pinned_by"])})
            else:
                doomed.append(int(item["sk"]))
        if dry_run:
            return {"name": name, "dry_run": True, "deleted": doomed, "skipped": skipped}
        # One transaction per PRUNE_BATCH versions (100 items at most, with LATEST's count). If one of them was
        # pinned meanwhile the batch is cancelled whole, and its versions are then deleted one by one.
        for start in range(0, len(doomed), PRUNE_BATCH):
            batch = doomed[start : start + PRUNE_BATCH]
            try:
                self.table.transact(self._deletion_writes(name, batch))
                deleted.extend(batch)
                continue
            except TransactionCancelled:
                pass
            for number in batch:
                try:
                    self.delete_version(name, number)
                except VersionPinnedError as pinned:
                    skipped.append({"version": number, "aliases": pinned.details["aliases"]})
                    continue
                deleted.append(number)
        return {"name": name, "dry_run": False, "deleted": deleted, "skipped": skipped}

    def _deletion_writes(self, name: str, numbers: list[int], *, deleted: bool = True) -> list[Write]:
        """Soft-delete (or restore) versions and count them on LATEST, in one transaction.

        Items are named `v<n>`. A delete holds only for a live version no alias pins; a restore only for
        a deleted one, so that a repeat fails its condition and the caller can answer idempotently.
        """
        now = now_iso(self.clock)
        if deleted:
            update = "SET deleted = :yes, deleted_at = :at"
            condition = "attribute_exists(pk) AND deleted = :no AND attribute_not_exists(pinned_by)"
        else:
            update = "SET deleted = :no REMOVE deleted_at"
            condition = "attribute_exists(pk) AND deleted = :yes"
        values = {":yes": True, ":no": False, **({":at": now} if deleted else {})}
        writes = [
            Write(f"v{n}", "Update", keys.version_key(name, n), update=update, condition=condition, values=values)
            for n in numbers
        ]
        count = len(numbers) if deleted else -len(numbers)
        writes.append(
            Write(
                "latest",
                "Update",
                keys.latest_key(name),
                update="ADD deleted_count :n SET updated_at = :now",
                condition=LIVE_LATEST,
                values={":n": count, ":now": now},
            )
        )
        return writes

    def purge(self, name: str, *, force: bool) -> None:
        """Remove every item and object of the artifact; LATEST stays as a tombstone keeping the counter.

        Refused (409) while aliases exist unless `force`. Safe to re-run after a crash: the `purging`
        mark is set first and cleared only by the final transaction, and every step is idempotent.
        """
        latest = self.live_latest(name)
        self._refuse_aliases(name, force)
        if not latest.get("purging"):
            try:
                self.table.update(
                    keys.latest_key(name),
                    "SET purging = :now",
                    condition="attribute_exists(pk) AND attribute_not_exists(purged)",
                    values={":now": now_iso(self.clock)},
                )
            except ConditionFailed:
                raise NotFoundError(f"artifact {name!r} does not exist") from None
        # An alias written between the check and the mark is caught here; after the mark, alias writes fail.
        try:
            self._refuse_aliases(name, force)
        except ConflictError:
            self.table.update(keys.latest_key(name), "REMOVE purging")
            raise
        for pk in (keys.alias_pk(name), keys.history_pk(name)):
            self.table.batch_delete(
                [{"pk": i["pk"], "sk": i["sk"]} for i in self.table.query_all(pk, projection="pk, sk")]
            )
        versions = self.table.query_all(
            name, sk_between=(keys.FIRST_VERSION_SK, keys.LAST_VERSION_SK), projection="pk, sk", consistent=True
        )
        self.table.batch_delete([{"pk": i["pk"], "sk": i["sk"]} for i in versions])
        self.blobs.delete_prefix(keys.blob_prefix(name))
        rows = keys.dir_keys(name)
        writes = [
            Write(
                "latest",
                "Update",
                keys.latest_key(name),
                update="SET purged = :now, version_count = :zero, deleted_count = :zero "
                "REMOVE purging, sha256, #size, content_type, metadata, newest_sha256",
                condition="attribute_exists(purging)",
                names={"#size": "size"},
                values={":now": now_iso(self.clock), ":zero": 0},
            ),
            Write("name", "Delete", keys.name_key(name)),
            *(
                Write(f"dir{i}", "Update", key, update="ADD children :minus", values={":minus": -1})
                if folder
                else Write(f"dir{i}", "Delete", key)
                for i, (key, folder) in enumerate(rows)
            ),
        ]
        try:
            self.table.transact(writes)
        except TransactionCancelled:
            raise NotFoundError(f"artifact {name!r} was purged concurrently") from None

    def _refuse_aliases(self, name: str, force: bool) -> None:
        live = [a["sk"] for a in self.live_aliases(name)]
        if live and not force:
            raise ConflictError(
                f"artifact {name!r} has aliases ({', '.join(live)}); delete them or purge with force=true",
                details={"aliases": live},
            )

    def _verify(self, name: str, content: Content) -> None:
        _check_size(content.size)
        self.blobs.verify(keys.blob_key(name, content.sha256), content.sha256, content.size)


def _check_size(size: int) -> None:
    if size > MAX_BLOB_SIZE:
        raise PayloadTooLargeError(f"size {size} is over the {MAX_BLOB_SIZE}-byte limit of one upload", field="size")


def _listing_rows(name: str) -> list[Write]:
    """The name-index row and the folder rows (seeds/001_*) that make a new artifact listable."""
    writes = [Write("name", "Put", keys.name_key(name), item={"kind": "name"})]
    for i, (key, folder) in enumerate(keys.dir_keys(name)):
        if folder:
            writes.append(Write(f"dir{i}", "Update", key, update="ADD children :one", values={":one": 1}))
        else:
            writes.append(Write(f"dir{i}", "Put", key, item={"kind": "artifact"}))
    return writes
