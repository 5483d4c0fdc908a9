"""Consumer leases: one item per consumer in the artifact's partition `__<name>-consumers`.

A lease item holds the version, `expires_at` (what every reader judges it by) and `ttl` (epoch seconds, DynamoDB's
TTL attribute: it only tidies lapsed leases away, late by up to days). A renewal that changes neither the version
nor the labels is one UpdateItem of the lease, conditioned on the lease still naming that version with at least
RENEW_MARGIN left. Anything else (a new lease, a lapsed one taken again, another version or other labels) is one
TransactWriteItems: the lease under a compare-and-set on its `rev`, the version's `lease_rev` moved under the
condition that the version is live, and the `consumer.updated` event (with LATEST's event order). A soft delete
holds only while the version's `lease_rev` is as it read it, so a lease taken meanwhile either wins (the delete is
refused) or is refused (the version is deleted first).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from boto3.dynamodb.conditions import Attr

from arca.adapters import keys
from arca.adapters.dynamo import ConditionFailed, Item, Reason, Table, Update, Write
from arca.adapters.store.change import Change as Staged
from arca.adapters.store.conditions import ARTIFACT_IS_LIVE, ITEM_EXISTS, ITEM_NOT_EXIST
from arca.adapters.store.feed import Feed
from arca.adapters.store.pages import page
from arca.domain.consumers import SHOWN_CONSUMERS
from arca.domain.entities import Lease, VersionConsumers
from arca.domain.errors import ConflictError, ContentionError, LinkedNameError, NotFoundError, RegistryError
from arca.domain.events import Change, ConsumerReleased, ConsumerUpdated


@dataclass(frozen=True)
class LeaseRecord:
    """A lease item as stored (live or lapsed)."""

    consumer: str
    version: int
    expires_at: str
    rev: int
    by: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    updated_at: str | None = None

    def live(self, now: str) -> bool:
        return self.expires_at > now

    def entity(self) -> Lease:
        return Lease(
            consumer=self.consumer,
            version=self.version,
            expires_at=self.expires_at,
            by=self.by,
            labels=self.labels,
            updated_at=self.updated_at,
        )


def lease_record(item: Item) -> LeaseRecord:
    return LeaseRecord(
        consumer=item["sk"],
        version=int(item["version"]),
        expires_at=item["expires_at"],
        rev=int(item.get("rev", 0)),
        by=item.get("by"),
        labels=dict(item.get("labels") or {}),
        updated_at=item.get("updated_at"),
    )


@dataclass(frozen=True)
class LeaseWrite:
    """What a PUT asks for: `expires_at` (ISO, as every stored time) and `ttl` (the same moment in epoch seconds)."""

    name: str
    consumer: str
    version: int
    labels: Mapping[str, str]
    expires_at: str
    ttl: int
    by: str | None
    now: str


class ConsumerStore:
    def __init__(self, table: Table, feed: Feed) -> None:
        self.table = table
        self.feed = feed

    def lease(self, name: str, consumer: str) -> LeaseRecord | None:
        item = self.table.get(keys.consumer_key(name, consumer))
        return None if item is None else lease_record(item)

    def live_leases(self, name: str, *, now: str, version: int | None = None) -> list[LeaseRecord]:
        """Every live lease of `name` (on `version`), one consistent Query page after page; bounded by the
        leases an artifact may hold."""
        found = (lease_record(i) for i in self.table.query_all(keys.consumers_pk(name), consistent=True))
        return [r for r in found if r.live(now) and (version is None or r.version == version)]

    def on_versions(self, name: str, versions: list[int], *, now: str) -> list[VersionConsumers]:
        """The live consumers on each of `versions` (in that order, each once): one consistent Query of the
        leases, the first SHOWN_CONSUMERS ids of each version and their count."""
        by_version: dict[int, list[str]] = {v: [] for v in versions}
        for lease in self.live_leases(name, now=now):
            if lease.version in by_version:
                by_version[lease.version].append(lease.consumer)
        return [
            VersionConsumers(version=v, count=len(ids), consumers=sorted(ids)[:SHOWN_CONSUMERS])
            for v, ids in by_version.items()
        ]

    def leases_page(
        self, name: str, *, now: str, version: int | None, limit: int, token: str | None
    ) -> tuple[list[Lease], str | None]:
        """Live leases in consumer order (lapsed ones skipped), cut by count and bytes as every listing."""

        def keep(item: Item) -> bool:
            return str(item["expires_at"]) > now and (version is None or int(item["version"]) == version)

        items, next_token = page(
            self.table, keys.consumers_pk(name), f"consumers:{name}:{version}", limit=limit, token=token, keep=keep
        )
        return [lease_record(i).entity() for i in items], next_token

    def renew(self, request: LeaseWrite, *, live_after: str) -> LeaseRecord | None:
        """Extend a lease that names the same version and labels and stays live past `live_after`: one UpdateItem.
        None when the lease is not such a lease (absent, lapsing, another version or other labels); the caller then
        takes it with `take`."""
        condition = (
            Attr("version").eq(request.version)
            & Attr("labels_key").eq(_labels_key(request.labels))
            & Attr("expires_at").gt(live_after)
        )
        try:
            item = self.table.update(
                keys.consumer_key(request.name, request.consumer),
                Update(set={"expires_at": request.expires_at, "ttl": request.ttl, "by": request.by}),
                condition=condition,
            )
        except ConditionFailed:
            return None
        return lease_record(item)

    def commit(self, change: Staged) -> None:
        """Commit a change staged with this store (forwarded to the feed, the one place a change commits)."""
        self.feed.commit(change)

    def stage_take(self, change: Staged, request: LeaseWrite, seen: LeaseRecord | None) -> LeaseRecord:
        """Stage the lease as `request` says, over `seen` (the lease as read, None when absent), with the version's
        `lease_rev` and the `consumer.updated` event. The commit raises ContentionError when the lease changed
        since it was read, NotFoundError (field version) when the version does not exist, ConflictError (field
        version) when it is deleted, NotFoundError when the artifact does not exist, LinkedNameError when `name` is
        a link."""
        name, consumer = request.name, request.consumer
        rev = (seen.rev if seen is not None else 0) + 1
        item: Item = {
            "kind": "lease",
            "version": request.version,
            "labels": dict(request.labels),
            "labels_key": _labels_key(request.labels),
            "expires_at": request.expires_at,
            "ttl": request.ttl,
            "updated_at": request.now,
            "rev": rev,
        }
        if request.by is not None:
            item["by"] = request.by
        condition = ITEM_NOT_EXIST if seen is None else Attr("rev").eq(seen.rev)
        change.stage(
            Write("lease", "Put", keys.consumer_key(name, consumer), item=item, condition=condition),
            refused=ContentionError(f"the lease of {consumer!r} changed concurrently"),
        )
        change.stage(
            Write(
                "version",
                "Update",
                keys.version_key(name, request.version),
                update=Update(add={"lease_rev": 1}),
                condition=ITEM_EXISTS & Attr("deleted").eq(False),
            ),
            refused=lambda reason: _version_refusal(reason, name, request.version),
            rank=1,  # the artifact's refusal is said first
        )
        change.stage(
            Write("latest", "ConditionCheck", keys.latest_key(name), condition=ARTIFACT_IS_LIVE),
            refused=lambda reason: _artifact_refusal(reason, name),
        )
        previous = seen.version if seen is not None and seen.version != request.version else None
        detail = ConsumerUpdated(
            consumer=consumer, expires_at=request.expires_at, labels=dict(request.labels), previous_version=previous
        )
        change.announce(Change(detail, request.version))
        return LeaseRecord(
            consumer=consumer,
            version=request.version,
            expires_at=request.expires_at,
            rev=rev,
            by=request.by,
            labels=dict(request.labels),
            updated_at=request.now,
        )

    def stage_release(self, change: Staged, seen: LeaseRecord) -> None:
        """Stage the deletion of the lease `seen` (the commit raises ContentionError if it changed since). A lapsed
        lease goes quietly; a live one's release is also announced (`stage_released`)."""
        change.stage(
            Write("lease", "Delete", keys.consumer_key(change.name, seen.consumer), condition=Attr("rev").eq(seen.rev)),
            refused=ContentionError(f"the lease of {seen.consumer!r} changed concurrently"),
        )

    def stage_released(self, change: Staged, seen: LeaseRecord) -> None:
        """Stage the `consumer.released` event of a live lease's release (with LATEST's event order)."""
        change.stage(Write("latest", "ConditionCheck", keys.latest_key(change.name), condition=ITEM_EXISTS))
        change.announce(Change(ConsumerReleased(consumer=seen.consumer), seen.version))


def _artifact_refusal(reason: Reason, name: str) -> RegistryError:
    """The artifact a lease is taken on is a link, gone, or being purged."""
    found = reason.item
    if found is not None and found.get("link"):
        return LinkedNameError(name, found["link"])
    if found is None or found.get("purged"):
        return NotFoundError(f"artifact {name!r} does not exist")
    return ConflictError(f"artifact {name!r} is being purged", field="name")


def _version_refusal(reason: Reason, name: str, version: int) -> RegistryError:
    """The version a lease names is gone, or deleted."""
    if reason.item is None:
        return NotFoundError(f"artifact {name!r} has no version {version}", field="version")
    return ConflictError(f"version {version} is deleted; a lease names a live version", field="version")


def _labels_key(labels: Mapping[str, str]) -> str:
    """The labels as one comparable string (sorted keys): a renewal's condition compares it."""
    return json.dumps(dict(labels), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
