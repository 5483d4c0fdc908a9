"""Versions: `<name>` / `%012d` items, their soft deletion and restore, and their listings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from boto3.dynamodb.conditions import Attr, ConditionBase

from arca.adapters import keys
from arca.adapters.dynamo import Item, Table, TransactionCancelled, Update, Write
from arca.adapters.store.conditions import ARTIFACT_IS_LIVE, ITEM_EXISTS, leases_unchanged, tags_unchanged
from arca.adapters.store.feed import Feed
from arca.adapters.store.pages import digest, first_at, index_page, page, sk_test
from arca.adapters.store.receipts import raise_if_key_taken, sealed
from arca.adapters.store.records import VersionRecord, version_entity, version_record
from arca.domain.entities import Version
from arca.domain.errors import ConflictError, ContentionError, LinkedNameError, NotFoundError, VersionPinnedError
from arca.domain.receipts import Seal

if TYPE_CHECKING:  # the event models are imported by the writes that announce them: a resolve imports none
    from arca.domain.events import VersionDeleted

# Versions soft-deleted per transaction: each with its event item, plus LATEST's count and an idempotency
# record, within TransactWriteItems' limit of 100 items.
DELETE_BATCH = 49
# Index candidates a `sha256:` reference confirms by a consistent read before answering that none is live.
CONTENT_CANDIDATES = 3


class VersionStore:
    def __init__(self, table: Table, feed: Feed) -> None:
        self.table = table
        self.feed = feed

    def version(self, name: str, number: int) -> VersionRecord | None:
        """One version; LinkedNameError when `name` is a link (its LATEST is the first item at or after the key)."""
        item = first_at(self.table, keys.version_key(name, number))
        if item is not None and item["sk"] == keys.latest_key(name)["sk"] and item.get("link"):
            raise LinkedNameError(name, item["link"])
        return None if item is None or item["sk"] != keys.version_key(name, number)["sk"] else version_record(item)

    def versions_page(
        self, name: str, *, limit: int, token: str | None, newest_first: bool, include_deleted: bool
    ) -> tuple[list[Version], str | None]:
        scope = f"versions:{name}:{'desc' if newest_first else 'asc'}:{include_deleted}"
        items, next_token = page(
            self.table,
            name,
            scope,
            limit=limit,
            token=token,
            keep=lambda i: include_deleted or not i.get("deleted"),
            sk_between=keys.VERSIONS,
            forward=not newest_first,
        )
        return [version_entity(i) for i in items], next_token

    def versions_chunk(
        self, name: str, *, start: dict[str, str] | None, size: int
    ) -> tuple[list[VersionRecord], dict[str, str] | None]:
        """One Query of up to `size` versions, newest first, deleted ones included; and the key to go on from."""
        page = self.table.query(name, sk_between=keys.VERSIONS, forward=False, consistent=True, limit=size, start=start)
        return [version_record(i) for i in page.items], page.last_key

    @staticmethod
    def resume_token(name: str, scope: str, key: dict[str, str], state: dict[str, int]) -> str:
        """A token that continues a paged operation over the versions of `name` after `key`, with its counters."""
        return keys.encode_token(dict(key), scope, state)

    @staticmethod
    def resume_from(name: str, scope: str, token: str) -> tuple[dict[str, str], dict[str, int]]:
        """The key and counters of a `resume_token`; ValidationError(next_token) for any other token."""
        return keys.decode_token_state(token, scope, pk=name, within=sk_test(sk_between=keys.VERSIONS))

    def set_deleted(
        self,
        name: str,
        number: int,
        *,
        deleted: bool,
        now: str,
        by: str | None = None,
        tag_rev: int | None = None,
        lease_rev: int | None = None,
    ) -> VersionRecord | None:
        """Soft-delete (or restore) one version and count it on LATEST, in one transaction.

        Returns None when written, or the version as it is when it was already in that state (idempotent).
        Raises NotFoundError (no such version or artifact), VersionPinnedError naming the aliases, or
        ConflictError while a purge runs. With `tag_rev`, a delete holds only while the version's tags are as they
        were read (ContentionError otherwise); with `lease_rev`, only while no consumer lease was taken on it since
        (its `lease_rev` as read; ContentionError otherwise: the caller reads the leases again).
        """
        from arca.domain.events import Change, VersionDeleted, VersionRestored

        change = Change(VersionDeleted() if deleted else VersionRestored(), number)
        revs = None if tag_rev is None else {number: tag_rev}
        leases = None if lease_rev is None else {number: lease_rev}
        try:
            self.feed.commit(
                self._deletion_writes(name, [number], deleted=deleted, now=now, tag_revs=revs, lease_revs=leases),
                name,
                [change],
                by=by,
                now=now,
            )
        except TransactionCancelled as cancelled:
            failed = cancelled.failed(f"v{number}")
            if failed is not None:
                if failed.item is None:
                    self._refuse_link(name)
                    raise NotFoundError(f"artifact {name!r} has no version {number}") from None
                if bool(failed.item.get("deleted")) == deleted:
                    return version_record(failed.item)
                if failed.item.get("expired"):
                    raise ConflictError(f"version {number} expired; it cannot be restored", field="version") from None
                if tag_rev is not None and int(failed.item.get("tag_rev", 0)) != tag_rev:
                    raise ContentionError(f"the tags of version {number} changed since they were read") from None
                if lease_rev is not None and int(failed.item.get("lease_rev", 0)) != lease_rev:
                    raise ContentionError(f"a consumer leased version {number} since its leases were read") from None
                aliases = sorted(failed.item.get("pinned_by") or ())
                raise VersionPinnedError(
                    f"version {number} is the target of alias(es) {', '.join(aliases)}",
                    field="version",
                    details={"aliases": aliases},
                ) from None
            latest = cancelled.failed("latest")
            if latest is not None and (latest.item is None or latest.item.get("purged")):
                self._refuse_link(name)
                raise NotFoundError(f"artifact {name!r} does not exist") from None
            raise ConflictError(f"artifact {name!r} is being purged; retry") from None
        return None

    def _refuse_link(self, name: str) -> None:
        """On a failure path only (a miss costs nothing extra on success): LinkedNameError if `name` is a link."""
        item = self.table.get(keys.latest_key(name))
        if item is not None and item.get("link"):
            raise LinkedNameError(name, item["link"])

    def delete_versions(
        self,
        name: str,
        numbers: list[int],
        *,
        now: str,
        seal: Seal | None = None,
        by: str | None = None,
        detail: VersionDeleted | None = None,
        tag_revs: Mapping[int, int] | None = None,
        lease_revs: Mapping[int, int] | None = None,
    ) -> bool:
        """Soft-delete up to DELETE_BATCH versions in one transaction; False (nothing written) if any failed.

        With `seal`, its idempotency record is written in the same transaction (its answer rendered from
        `numbers`); IdempotencyKeyTakenError when that key was used meanwhile. With `tag_revs` (by version), each
        holds only while its tags are as they were read; with `lease_revs`, only while no lease was taken on it.
        """
        from arca.domain.events import Change, VersionDeleted

        changes = [Change(VersionDeleted(prune=True) if detail is None else detail, n) for n in numbers]
        try:
            self.feed.commit(
                sealed(seal, numbers)
                + self._deletion_writes(name, numbers, deleted=True, now=now, tag_revs=tag_revs, lease_revs=lease_revs),
                name,
                changes,
                by=by,
                now=now,
            )
        except TransactionCancelled as cancelled:
            raise_if_key_taken(cancelled)
            return False
        return True

    def _deletion_writes(
        self,
        name: str,
        numbers: list[int],
        *,
        deleted: bool,
        now: str,
        tag_revs: Mapping[int, int] | None = None,
        lease_revs: Mapping[int, int] | None = None,
    ) -> list[Write]:
        """Items `v<n>`: a delete holds only for a live version no alias pins; a restore only for a deleted one.
        With `tag_revs` (retention's deletes), a delete holds only while the version's tags are as they were judged
        (a tag a policy keeps, added since, stops it); with `lease_revs`, only while no consumer lease was taken on
        the version since its leases were read."""
        if deleted:
            update = Update(set=("deleted = :yes", "deleted_at = :at"))
            condition = ITEM_EXISTS & Attr("deleted").eq(False) & Attr("pinned_by").not_exists()
        else:
            update = Update(set=("deleted = :no",), remove=("deleted_at",))
            condition = ITEM_EXISTS & Attr("deleted").eq(True) & Attr("expired").not_exists()
        values = {":yes": True, ":at": now} if deleted else {":no": False}
        writes = [
            Write(
                f"v{n}",
                "Update",
                keys.version_key(name, n),
                update=update,
                condition=_unchanged(condition, n, tag_revs, lease_revs),
                values=values,
            )
            for n in numbers
        ]
        writes.append(
            Write(
                "latest",
                "Update",
                keys.latest_key(name),
                update=Update(set=("updated_at = :now",), add=("deleted_count :n",)),
                condition=ARTIFACT_IS_LIVE,
                values={":n": len(numbers) if deleted else -len(numbers), ":now": now},
            )
        )
        return writes

    def newest_with_content(self, name: str, sha256: str) -> VersionRecord | None:
        """The newest version of `name` holding `sha256` that is not deleted.

        The search index (eventually consistent) names the candidates, newest first, deleted ones skipped within
        the query budget; each is then confirmed by a strongly consistent read of the version itself, so a
        version deleted a moment ago is never answered while the index still shows it live. At most
        CONTENT_CANDIDATES candidates are confirmed (one read when the index is current).
        """
        items, _ = index_page(
            self.table,
            keys.SEARCH_INDEX,
            keys.content_search_pk(sha256),
            f"content-ref:{name}",
            limit=CONTENT_CANDIDATES,
            token=None,
            keep=lambda i: not i.get("deleted"),
            sk_prefix=keys.search_prefix(name),
            forward=False,
        )
        for item in items:
            confirmed = self.version(name, int(item.get("version") or item["sk"]))
            if confirmed is not None and not confirmed.deleted and confirmed.sha256 == sha256:
                return confirmed
        return None

    def filtered_versions_page(
        self,
        name: str,
        *,
        filters: VersionFilters,
        limit: int,
        token: str | None,
        newest_first: bool,
        include_deleted: bool,
    ) -> tuple[list[Version], str | None]:
        """Versions matching every filter (AND). One key drives the Queries, the rest is checked per item:
        the digest (search index, `<name>#` prefix), else the time range (time index), else the artifact's
        own partition (tags alone). Bounded as every listing (QUERY_BUDGET Queries)."""

        def keep(item: Item) -> bool:
            tags = item.get("tags") or {}
            return (
                (include_deleted or not item.get("deleted"))
                and (filters.sha256 is None or item["sha256"] == filters.sha256)
                and (filters.after is None or item["created_at"] > filters.after)
                and (filters.before is None or item["created_at"] < filters.before)
                and all(tags.get(k) == v for k, v in filters.tags)
            )

        scope = f"versions:{name}:{'desc' if newest_first else 'asc'}:{include_deleted}:{filters.fingerprint()}"
        forward = not newest_first
        if filters.sha256 is not None:
            items, next_token = index_page(
                self.table,
                keys.SEARCH_INDEX,
                keys.content_search_pk(filters.sha256),
                scope,
                limit=limit,
                token=token,
                keep=keep,
                sk_prefix=keys.search_prefix(name),
                forward=forward,
            )
        elif filters.after is not None or filters.before is not None:
            # Strict bounds on `<created_at>#<n>`: every stored time has one length, `#~` sorts after any
            # `#<digits>` and `#` before it.
            low = f"{filters.after}#~" if filters.after else "0"
            high = f"{filters.before}#" if filters.before else "~"
            if low >= high:  # an empty window (after >= before): DynamoDB refuses a BETWEEN whose bounds cross
                return [], None
            items, next_token = index_page(
                self.table,
                keys.TIME_INDEX,
                name,
                scope,
                limit=limit,
                token=token,
                keep=keep,
                sk_between=(low, high),
                forward=forward,
            )
        else:
            items, next_token = page(
                self.table, name, scope, limit=limit, token=token, keep=keep, sk_between=keys.VERSIONS, forward=forward
            )
        return [version_entity(i) for i in items], next_token


@dataclass(frozen=True)
class VersionFilters:
    """The filters of a version listing, combined with AND. Times are in the stored ISO form."""

    tags: tuple[tuple[str, str], ...] = ()
    sha256: str | None = None
    after: str | None = None
    before: str | None = None

    @property
    def active(self) -> bool:
        return bool(self.tags or self.sha256 or self.after or self.before)

    def fingerprint(self) -> str:
        """Binds a page token to these filters (short, whatever the tags' length)."""
        return digest((sorted(self.tags), self.sha256, self.after, self.before))


def _unchanged(
    condition: ConditionBase, number: int, tag_revs: Mapping[int, int] | None, lease_revs: Mapping[int, int] | None
) -> ConditionBase:
    """A version's deletion condition, also under its tags and its leases as they were read (when given)."""
    if tag_revs is not None:
        condition &= tags_unchanged(tag_revs[number])
    if lease_revs is not None:
        condition &= leases_unchanged(lease_revs[number])
    return condition
