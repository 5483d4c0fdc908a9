"""Versions: `<name>` / `%012d` items, their soft deletion and restore, and their listings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from boto3.dynamodb.conditions import Attr, ConditionBase

from arca.adapters import keys
from arca.adapters.dynamo import Item, Reason, Table, Update, Write
from arca.adapters.store.change import Change, Refusal
from arca.adapters.store.conditions import ARTIFACT_IS_LIVE, ITEM_EXISTS, leases_unchanged, tags_unchanged
from arca.adapters.store.feed import Feed
from arca.adapters.store.pages import digest, first_at, index_page, page, sk_test
from arca.adapters.store.records import version_entity, version_record
from arca.domain.aggregates import VersionRecord
from arca.domain.entities import Version
from arca.domain.errors import (
    ConflictError,
    ContentionError,
    LinkedNameError,
    NotFoundError,
    RegistryError,
    VersionPinnedError,
)

if TYPE_CHECKING:  # the event models are imported by the writes that announce them: a resolve imports none
    from arca.domain.events import VersionDeleted

# Versions soft-deleted per transaction: each with its event item, plus LATEST's count and an idempotency
# record, within TransactWriteItems' limit of 100 items.
DELETE_BATCH = 49
# Index candidates a `sha256:` reference confirms by a consistent read before answering that none is live.
CONTENT_CANDIDATES = 3


# A deletion's version refusals are asked before LATEST's (a missing version is said before a missing artifact).
LATEST_RANK = 1


class VersionUnchanged(ConflictError):
    """Not a failure: the version was already in the state a delete or restore asked for (`record`, as it was)."""

    def __init__(self, record: VersionRecord) -> None:
        super().__init__(f"version {record.version} is already {'deleted' if record.deleted else 'live'}")
        self.record = record


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

    def commit(self, change: Change) -> None:
        """Commit a change staged into by the stores (Feed.commit: its refusals say what a failure means)."""
        self.feed.commit(change)

    def stage_deleted(
        self,
        change: Change,
        numbers: list[int],
        *,
        deleted: bool,
        tag_revs: Mapping[int, int] | None = None,
        lease_revs: Mapping[int, int] | None = None,
        explained: bool = True,
        detail: VersionDeleted | None = None,
    ) -> None:
        """Stage versions soft-deleted (or restored; up to DELETE_BATCH) and counted on LATEST, with their events
        (`detail`, or a plain `version.deleted` / `version.restored`).

        A delete holds only for a live version no alias pins; a restore only for a deleted, unexpired one. With
        `tag_revs` (by version; retention's deletes), a delete holds only while the version's tags are as they were
        judged (a tag a policy keeps, added since, stops it); with `lease_revs`, only while no consumer lease was
        taken on the version since its leases were read.

        `explained`: once committed, a failure raises what it means for the version as it was: NotFoundError (no
        such version or artifact), VersionUnchanged (already in that state: not a failure, the caller answers it),
        ConflictError (expired; a purge running), VersionPinnedError naming the aliases, ContentionError (its tags
        or leases moved). Unexplained (a batch the caller then writes one by one), a failure is a ContentionError.
        """
        name = change.name
        if deleted:
            update = Update(set={"deleted": True, "deleted_at": change.now})
            condition = ITEM_EXISTS & Attr("deleted").eq(False) & Attr("pinned_by").not_exists()
        else:
            update = Update(set={"deleted": False}, remove=("deleted_at",))
            condition = ITEM_EXISTS & Attr("deleted").eq(True) & Attr("expired").not_exists()
        for n in numbers:
            tag_rev = None if tag_revs is None else tag_revs.get(n)
            lease_rev = None if lease_revs is None else lease_revs.get(n)
            change.stage(
                Write(
                    f"v{n}",
                    "Update",
                    keys.version_key(name, n),
                    update=update,
                    condition=_unchanged(condition, n, tag_revs, lease_revs),
                ),
                refused=self._version_refusal(name, n, deleted, tag_rev, lease_rev) if explained else None,
            )
        change.stage(
            Write(
                "latest",
                "Update",
                keys.latest_key(name),
                update=Update(
                    set={"updated_at": change.now}, add={"deleted_count": len(numbers) if deleted else -len(numbers)}
                ),
                condition=ARTIFACT_IS_LIVE,
            ),
            refused=self._latest_refusal(name) if explained else None,
            rank=LATEST_RANK,
        )
        from arca.domain.events import Change as Announced
        from arca.domain.events import VersionDeleted, VersionRestored

        for n in numbers:
            if not deleted:
                change.announce(Announced(VersionRestored(), n))
            else:
                change.announce(Announced(detail or VersionDeleted(), n))

    def _version_refusal(
        self, name: str, number: int, deleted: bool, tag_rev: int | None, lease_rev: int | None
    ) -> Refusal:
        """What a version's failed delete (or restore) means, by the version as it was."""

        def refused(reason: Reason) -> RegistryError:
            item = reason.item
            if item is None:
                return self._link_error(name) or NotFoundError(f"artifact {name!r} has no version {number}")
            if bool(item.get("deleted")) == deleted:
                return VersionUnchanged(version_record(item))
            if item.get("expired"):
                return ConflictError(f"version {number} expired; it cannot be restored", field="version")
            if tag_rev is not None and int(item.get("tag_rev", 0)) != tag_rev:
                return ContentionError(f"the tags of version {number} changed since they were read")
            if lease_rev is not None and int(item.get("lease_rev", 0)) != lease_rev:
                return ContentionError(f"a consumer leased version {number} since its leases were read")
            aliases = sorted(item.get("pinned_by") or ())
            return VersionPinnedError(
                f"version {number} is the target of alias(es) {', '.join(aliases)}",
                field="version",
                details={"aliases": aliases},
            )

        return refused

    def _latest_refusal(self, name: str) -> Refusal:
        """What LATEST's failed count of a deletion means, by LATEST as it was: no artifact, or a purge running."""

        def refused(reason: Reason) -> RegistryError:
            if reason.item is None or reason.item.get("purged"):
                return self._link_error(name) or NotFoundError(f"artifact {name!r} does not exist")
            return ConflictError(f"artifact {name!r} is being purged; retry")

        return refused

    def _link_error(self, name: str) -> LinkedNameError | None:
        """On a failure path only (a miss costs nothing extra on success): LinkedNameError if `name` is a link."""
        item = self.table.get(keys.latest_key(name))
        return LinkedNameError(name, item["link"]) if item is not None and item.get("link") else None

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
