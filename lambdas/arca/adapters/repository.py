"""The repository: the only code that knows item shapes, expressions and keys (via arca.adapters.keys).

It turns items into domain entities and entities into named, conditioned transaction items, so the
services speak only in entities. Conditions and what their failure means:
- LATEST is written under `rev = :seen` (or `attribute_not_exists(pk)` for a new artifact): a lost race
  raises ContentionError, which the services' compare-and-set helper retries.
- A version is put under `attribute_not_exists(pk)`; deleted only while live and unpinned.
- An alias is put under `revision = :seen`, its history record under `attribute_not_exists(pk)` (and the same
  record again under a time-ordered key, for `revision_at`), with a ConditionCheck that the artifact is live
  and net pin deltas on its target versions.
- A link is made under its target's LATEST being live (which no link record ever is: it carries `purged`),
  counted there in `link_count`; a plain purge marks only while that count is zero.
- Every write's transaction carries its events (Put under `attribute_not_exists(pk)`) and moves LATEST's
  `last_event` forwards under `last_event < :id`, so event ids sort in commit order (transact_with_events).
docs/access-patterns.md lists every access pattern.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from arca.adapters import keys
from arca.adapters.dynamo import ConditionFailed, Item, Page, Table, TransactionCancelled, Write
from arca.adapters.keys import Key
from arca.domain.downloads import recorded_filename
from arca.domain.entities import Alias, AliasRevision, Event, Latest, Link, Rollout, Target, Version, VersionHit
from arca.domain.errors import (
    AliasLimitError,
    ConflictError,
    ContentionError,
    IdempotencyKeyTakenError,
    LinkedNameError,
    NotFoundError,
    PolicyMovedError,
    RegistryError,
    RolloutMovedError,
    RolloutRunningError,
    VersionPinnedError,
)
from arca.domain.events import Change, next_ids
from arca.domain.receipts import Answer, Receipt, Seal, StoredReceipt
from arca.domain.signing import Signed

if TYPE_CHECKING:  # the request models are not needed on the read path (the resolve function's cold start)
    from arca.adapters.store.guards import Guard
    from arca.domain.models import Content

CONTENT_FIELDS = ("sha256", "size", "content_type", "metadata", "part_size", "parts_sha256")
TARGET_FIELDS = ("sha256", "size", "content_type")
ALIAS_FIELDS = ("version", "secondary_version", "secondary_version_weight", "description")
# LATEST can be written by PUT latest, publish and purge; it is live only while neither flag is set.
LIVE_LATEST = "attribute_exists(pk) AND attribute_not_exists(purging) AND attribute_not_exists(purged)"
# Every attribute an alias transaction (write_alias, a rollout's start and steps) names on the artifact's own items,
# LATEST and its versions: the pins (`ADD`/`DELETE pinned_by`, on a live version only), LATEST's alias count and
# event order (`alias_count`, `last_event`), the key and LIVE_LATEST's checks. The alias and rollout roles may name
# no other attribute of those items (infra/functions.py grants them under dynamodb:Attributes); the IAM check of
# local mode and the tests refuses a transaction that names one more, so this list cannot fall behind. An alias
# policy's `require_attestations` is a condition on a target version's `attestations` (arca.adapters.store.guards).
ALIAS_ITEM_ATTRIBUTES = (
    "pk",
    "sk",
    "pinned_by",
    "deleted",
    "alias_count",
    "last_event",
    "purging",
    "purged",
    "attestations",
)
VERSIONS = (keys.FIRST_VERSION_SK, keys.LAST_VERSION_SK)
# Versions soft-deleted per transaction: each with its event item, plus LATEST's count and an idempotency
# record, within TransactWriteItems' limit of 100 items.
DELETE_BATCH = 49
# Rows read and deleted per purge step: one BatchWriteItem call (its limit is 25).
PURGE_PAGE = 25
# A listing request makes at most QUERY_BUDGET Queries (the first of `limit` items, then PAGE_SIZE or
# more), so its time is bounded however many skipped items lie between two kept ones.
QUERY_BUDGET = 5
PAGE_SIZE = 100
# Index candidates a `sha256:` reference confirms by a consistent read before answering that none is live.
CONTENT_CANDIDATES = 3
# A page is also cut at PAGE_BYTES of its items' JSON (`json_size`), whatever `limit` says, and its token goes
# on from there: a Lambda answer may not exceed 6 MB, and 95 versions each carrying 50 tags of 256
# characters outside ASCII (12 bytes each as JSON escapes) come to 15 MB. One item always fits: the input
# limits keep any item's JSON far below it.
PAGE_BYTES = 2 * 1024 * 1024
# Live aliases an artifact may have. Each pins its versions in their `pinned_by` sets, so this also keeps
# every version item far below DynamoDB's 400 KB item limit (100 names of at most 64 bytes).
MAX_ALIASES = 100


def latest_entity(item: Item) -> Latest:
    fields = {f: item.get(f) for f in (*CONTENT_FIELDS, "created_at", "updated_at", "newest_sha256", "counted_sha256")}
    return Latest(
        name=item["name"],
        **fields,
        newest_version=int(item.get("newest", 0)) or None,
        rev=int(item.get("rev", 0)),
        version_count=int(item.get("version_count", 0)),
        deleted_count=int(item.get("deleted_count", 0)),
        alias_count=int(item.get("alias_count", 0)),
        purging=item.get("purging"),
        purged=item.get("purged"),
        purges=int(item.get("purges", 0)),
        revision_base=int(item.get("revision_base", 0)),
        link=item.get("link"),
        link_count=int(item.get("link_count", 0)),
        tags=item.get("tags") or {},
        description=item.get("description"),
        tag_rev=int(item.get("tag_rev", 0)),
        last_event=item.get("last_event"),
        manifest=item.get("manifest"),
        signature=item.get("signature"),
    )


def version_entity(item: Item) -> Version:
    return Version(
        name=item["name"],
        version=int(item["sk"]),
        **{f: item.get(f) for f in CONTENT_FIELDS},
        part_count=-(-int(item["size"]) // int(item["part_size"])) if item.get("part_size") else None,
        created_at=item["created_at"],
        deleted=bool(item.get("deleted")),
        deleted_at=item.get("deleted_at"),
        aliases=sorted(item.get("pinned_by") or ()),
        tags=item.get("tags") or {},
        tag_rev=int(item.get("tag_rev", 0)),
        attestations=sorted(item.get("attestations") or ()),
        manifest=item.get("manifest"),
        signature=item.get("signature"),
        expired=bool(item.get("expired")),
    )


def _alias_state(item: Item) -> dict[str, Any]:
    return {
        **{f: item.get(f) for f in (*ALIAS_FIELDS, "updated_at", "updated_by", "reason")},
        "revision": item["revision"],
        "primary": item.get("primary"),
        "secondary": item.get("secondary"),
        "deleted": bool(item.get("deleted")),
    }


def alias_entity(item: Item) -> Alias:
    return Alias(
        name=item["name"],
        alias=item["alias"],
        created_at=item.get("created_at"),
        first_revision=int(item.get("first_revision", 1)),
        **_alias_state(item),
    )


def revision_entity(item: Item) -> AliasRevision:
    return AliasRevision(action=item["action"], **_alias_state(item))


class Repository:
    """Entities in, entities out, over one table (arca.adapters.dynamo.Table)."""

    def __init__(self, table: Table, *, micros: Callable[[], int] | None = None) -> None:
        self.table = table
        self._micros = micros or (lambda: time.time_ns() // 1000)
        # The newest event id this instance saw per artifact: its next ids go after it, whatever its clock says.
        self._floors: dict[str, str] = {}

    # Reads. GetItem and the queries that decide a write are strongly consistent.

    def latest(self, name: str) -> Latest | None:
        """LATEST as stored, tombstones (purged) and marks (purging) included."""
        item = self.table.get(keys.latest_key(name))
        return None if item is None else latest_entity(item)

    def version(self, name: str, number: int) -> Version | None:
        """One version; LinkedNameError when `name` is a link (its LATEST is the first item at or after the key)."""
        item = self._probe(keys.version_key(name, number))
        if item is not None and item["sk"] == keys.latest_key(name)["sk"] and item.get("link"):
            raise LinkedNameError(name, item["link"])
        return None if item is None or item["sk"] != keys.version_key(name, number)["sk"] else version_entity(item)

    def alias(self, name: str, alias: str) -> Alias | None:
        """The alias item, a deletion tombstone (`deleted`) included; LinkedNameError when `name` is a link
        (its marker is the first item at or after any alias name)."""
        item = self._probe(keys.alias_key(name, alias))
        if item is not None and item["sk"] == keys.LINK_SK:
            raise LinkedNameError(name, item["link"])
        return None if item is None or item["sk"] != alias else alias_entity(item)

    def _probe(self, key: Key) -> Item | None:
        """The first item of the partition at or after `key`: the item itself if it exists, for the cost of a
        GetItem (one item read, strongly consistent); in a link's partition, the link's record."""
        page = self.table.query(key["pk"], sk_from=key["sk"], limit=1, consistent=True)
        return page.items[0] if page.items else None

    def revision(self, name: str, alias: str, revision: int) -> AliasRevision | None:
        item = self.table.get(keys.history_key(name, alias, revision))
        return None if item is None else revision_entity(item)

    def live_aliases(self, name: str) -> list[Alias]:
        """The live aliases (at most MAX_ALIASES), as far as one bounded listing reaches past tombstones."""
        return self.aliases_page(name, limit=MAX_ALIASES, token=None)[0]

    def aliases_page(self, name: str, *, limit: int, token: str | None) -> tuple[list[Alias], str | None]:
        """Live aliases in name order; deletion tombstones are skipped (within the listing's query budget)."""
        items, next_token = self.page(
            keys.alias_pk(name),
            f"aliases:{name}",
            limit=limit,
            token=token,
            keep=lambda i: not i.get("deleted") and i["sk"] != keys.LINK_SK,
            consistent=True,
        )
        return [alias_entity(i) for i in items], next_token

    def versions_page(
        self, name: str, *, limit: int, token: str | None, newest_first: bool, include_deleted: bool
    ) -> tuple[list[Version], str | None]:
        scope = f"versions:{name}:{'desc' if newest_first else 'asc'}:{include_deleted}"
        items, next_token = self.page(
            name,
            scope,
            limit=limit,
            token=token,
            keep=lambda i: include_deleted or not i.get("deleted"),
            sk_between=VERSIONS,
            forward=not newest_first,
        )
        return [version_entity(i) for i in items], next_token

    def names_page(
        self, prefix: str, *, limit: int, token: str | None
    ) -> tuple[list[tuple[str, str | None]], str | None]:
        """(name, link target or None) from the flat `__names` partition, begins_with(prefix)."""
        items, next_token = self.page(
            keys.NAMES_PK, f"artifacts:{prefix}:None", limit=limit, token=token, keep=lambda i: True, sk_prefix=prefix
        )
        return [(i["sk"], i.get("link")) for i in items], next_token

    def folder_page(
        self, prefix: str, *, limit: int, token: str | None
    ) -> tuple[list[tuple[str, str | None]], str | None]:
        """Children of the prefix's folder (hierarchical key rows): (name, link target or None), and folders
        ending in `/`.

        A folder row counts its children and is skipped once they are all purged.
        """
        parent = prefix[: prefix.rfind("/") + 1]
        items, next_token = self.page(
            keys.dir_pk(parent),
            f"artifacts:{prefix}:/",
            limit=limit,
            token=token,
            keep=lambda i: not i["sk"].endswith("/") or int(i.get("children", 0)) > 0,
            sk_prefix=prefix[len(parent) :],
        )
        return [(parent + i["sk"], i.get("link")) for i in items], next_token

    def history_page(
        self, name: str, alias: str, *, limit: int, token: str | None
    ) -> tuple[list[AliasRevision], str | None]:
        items, next_token = self.page(
            keys.history_pk(name),
            f"history:{name}:{alias}",
            limit=limit,
            token=token,
            keep=lambda i: True,
            sk_prefix=keys.history_prefix(alias),
            forward=False,
        )
        return [revision_entity(i) for i in items], next_token

    def versions_chunk(
        self, name: str, *, start: dict[str, str] | None, size: int
    ) -> tuple[list[Version], dict[str, str] | None]:
        """One Query of up to `size` versions, newest first, deleted ones included; and the key to go on from."""
        page = self.table.query(name, sk_between=VERSIONS, forward=False, consistent=True, limit=size, start=start)
        return [version_entity(i) for i in page.items], page.last_key

    @staticmethod
    def resume_token(name: str, scope: str, key: dict[str, str], state: dict[str, int]) -> str:
        """A token that continues a paged operation over the versions of `name` after `key`, with its counters."""
        return keys.encode_token(dict(key), scope, state)

    @staticmethod
    def resume_from(name: str, scope: str, token: str) -> tuple[dict[str, str], dict[str, int]]:
        """The key and counters of a `resume_token`; ValidationError(next_token) for any other token."""
        return keys.decode_token_state(token, scope, pk=name, within=_sk_test(sk_between=VERSIONS))

    def revision_before(self, name: str, alias: str, current: int) -> AliasRevision | None:
        """The newest revision before `current` that is not a deletion (a few records a page)."""
        below = (keys.history_key(name, alias, 0)["sk"], keys.history_key(name, alias, current - 1)["sk"])
        for item in self.table.query_all(
            keys.history_pk(name), sk_between=below, forward=False, consistent=True, limit=5
        ):
            if not item.get("deleted"):
                return revision_entity(item)
        return None

    def revision_at(self, name: str, alias: str, moment: str) -> AliasRevision | None:
        """The alias as it stood at `moment`: its newest revision written at or before it; None if deleted then.

        One Query of the alias's time rows (`<alias>@<updated_at>#n`, written with every revision), `sk <=
        moment`, newest first, Limit 1, strongly consistent: one item read however long the history. Every
        revision written before time rows existed is older than every revision that has one, so a time row found
        is the answer; none found means the alias did not exist then, or the answer is such an older revision
        (`_untimed_revision_at`).
        """
        page = self.table.query(
            keys.history_pk(name),
            sk_between=keys.history_time_bounds(alias, moment),
            forward=False,
            limit=1,
            consistent=True,
        )
        found = page.items[0] if page.items else self._untimed_revision_at(name, alias, moment)
        return None if found is None or found.get("deleted") else revision_entity(found)

    def _untimed_revision_at(self, name: str, alias: str, moment: str) -> Item | None:
        """No time row at or before `moment`: the alias's oldest record says whether it existed then (one item
        read, and a 404 costs no more). When it did, the answer was written before time rows existed: a binary
        search by revision over its records, at most 1 + ceil(log2(revisions + 1)) GetItems (sound because
        revisions are dense, 1..current, and `updated_at` grows with the revision)."""
        pk = keys.history_pk(name)
        oldest = self.table.query(pk, sk_prefix=keys.history_prefix(alias), limit=1, consistent=True).items
        if not oldest:
            self.alias(name, alias)  # no history at all: a link name shows here (LinkedNameError)
            return None
        if oldest[0]["updated_at"] > moment:
            return None
        current = self.alias(name, alias)
        if current is None:
            return None
        found: Item | None = None
        # invariant: revision `low` is at or before `moment`
        low, high = int(oldest[0]["revision"]), current.revision
        while low < high:
            middle = (low + high + 1) // 2
            item = self.table.get(keys.history_key(name, alias, middle))
            if item is not None and item["updated_at"] <= moment:
                low, found = middle, item
            else:
                high = middle - 1
        return found if found is not None else oldest[0]  # `found` is the record of `low` once it moved

    def page(
        self, pk: str, scope: str, *, limit: int, token: str | None, keep: Callable[[Item], bool], **query: Any
    ) -> tuple[list[Item], str | None]:
        """Up to `limit` kept items of a partition, and an opaque token for the rest (None at the end).

        Bounded whatever was skipped (soft-deleted versions, emptied folders): at most QUERY_BUDGET
        Queries, the first of `limit` items and the rest of max(limit, PAGE_SIZE). When the budget is
        spent the page may hold fewer than `limit` items, even none, and the token continues after the
        last key read. Bounded in bytes too (PAGE_BYTES, `_budgeted`). A token is honoured only by its own
        listing and only inside its partition and range.
        """
        start = keys.decode_token(token, scope, pk=pk, within=_sk_test(**query)) if token else None
        return _budgeted(
            lambda begin, size: self.table.query(pk, start=begin, limit=size, **query),
            start,
            limit=limit,
            keep=keep,
            token_of=lambda key: keys.encode_token(key, scope),
            key_of=lambda item: {"pk": item["pk"], "sk": item["sk"]},
        )

    # LATEST and publishing.

    def write_latest(
        self,
        name: str,
        seen: Latest | None,
        content: Content,
        *,
        now: str,
        publish_as: int | None = None,
        signed: Signed | None = None,
        seal: Seal | None = None,
        by: str | None = None,
    ) -> Latest | Version:
        """Set LATEST to `content` (a compare-and-set on what was `seen`) and, with `publish_as`, put that version.

        `signed` (the version's manifest and signature) goes on the version item and on LATEST, which keeps it
        while its bytes stay the newest version's; a LATEST write of other bytes removes it.

        A new (or purged) artifact gets its LATEST and its listing rows in the same transaction, and so does
        the idempotency record of `seal`. Returns the new version when publishing, else LATEST as written.
        Raises ContentionError when LATEST moved since it was read, ConflictError when the artifact is being
        purged, IdempotencyKeyTakenError when the seal's key was used meanwhile.
        """
        writes = self._latest_writes(name, seen, content, now=now, publish_as=publish_as, signed=signed)
        writes += blob_count_writes(name, seen, content.sha256, published=publish_as is not None)
        version: Item | None = None
        if publish_as is not None:
            version = {
                "kind": "version",
                "name": name,
                **content.model_dump(),
                "created_at": now,
                "deleted": False,
                **_signed_attributes(signed),
                "counted": True,  # its reference is in the blob count (versions published before counts lack it)
                **keys.version_index_attributes(name, publish_as, content.sha256, now),
                **keys.version_key(name, publish_as),
            }
            key = keys.version_key(name, publish_as)
            writes.append(Write("version", "Put", key, item=version, condition="attribute_not_exists(pk)"))
        written: Latest | Version
        if version is not None:
            written = version_entity(version)
        elif seen is None or seen.purged:
            written = latest_entity(dict(writes[0].item or {}))
        else:
            written = seen.model_copy(
                update={
                    **content.model_dump(),
                    "updated_at": now,
                    "rev": seen.rev + 1,
                    "newest_sha256": seen.newest_sha256,
                    **({} if _same_bytes(seen, content) else {"manifest": None, "signature": None}),
                }
            )
        writes = self._sealed(seal, written) + writes
        changes = []
        fields = content.model_dump()
        changed = seen is None or seen.purged or fields != {f: getattr(seen, f) for f in fields}
        # A publish that snapshots LATEST as it is announces only the version; PUT latest always writes LATEST.
        if changed or publish_as is None:
            changes.append(Change("latest.updated", "LATEST", detail=_content_detail(content)))
        if publish_as is not None:
            changes.append(Change("version.published", publish_as, detail=_content_detail(content)))
        try:
            self.transact_with_events(writes, name, changes, by=by, now=now)
        except TransactionCancelled as lost:
            _raise_if_key_taken(lost)
            if any(n.startswith("blob") and lost.failed(n) for n in lost.reasons):
                raise ConflictError(
                    f"the content {content.sha256} is being removed by retention; upload it again", field="sha256"
                ) from None
            # The loser of a publish race usually fails twice: the counter moved, and the winner's version
            # exists. DynamoDB Local reports both reasons; moto stops at the first.
            if lost.failed("latest") is None:
                raise ConflictError(f"concurrent change: {lost}") from None
            raise ContentionError(f"LATEST of {name!r} changed concurrently") from None
        return written

    def _latest_writes(
        self,
        name: str,
        seen: Latest | None,
        content: Content,
        *,
        now: str,
        publish_as: int | None,
        signed: Signed | None = None,
    ) -> list[Write]:
        fields = content.model_dump()
        if seen is not None and seen.link:
            raise LinkedNameError(name, seen.link)
        if seen is None or seen.purged:
            item = {
                "kind": "latest",
                "name": name,
                **fields,
                "created_at": now,
                "updated_at": now,
                "newest": publish_as or (seen.newest if seen else 0),
                "version_count": 1 if publish_as else 0,
                "deleted_count": 0,
                "rev": (seen.rev if seen else 0) + 1,
                "purges": seen.purges if seen else 0,
                "revision_base": seen.revision_base if seen else 0,
                "alias_count": 0,
                **({"newest_sha256": content.sha256} if publish_as else {}),
                **(_signed_attributes(signed) if publish_as else {}),
                "counted_sha256": content.sha256,
                **keys.latest_key(name),
            }
            # Over a tombstone, compare-and-set on `rev` too: a purge finished after `seen` was read
            # (its blobs gone) must send the writer back to re-read and re-verify.
            if seen is None:
                latest = Write("latest", "Put", keys.latest_key(name), item=item, condition="attribute_not_exists(pk)")
            else:
                latest = Write(
                    "latest",
                    "Put",
                    keys.latest_key(name),
                    item=item,
                    condition="attribute_exists(purged) AND attribute_not_exists(link) AND rev = :rev",
                    values={":rev": seen.rev},
                )
            return [latest, *_listing_rows(name)]
        if seen.purging:
            raise ConflictError(f"artifact {name!r} is being purged", field="name")
        # `rev` advances on every write of LATEST: the condition on it makes each write a compare-and-set,
        # so a publish never takes a number twice nor snapshots content that changed after it was read.
        sets = ["updated_at = :now"]
        adds = ["rev :one"]
        names: dict[str, str] = {}
        values: dict[str, Any] = {":now": now, ":one": 1, ":rev": seen.rev}
        if fields != {f: getattr(seen, f) for f in fields}:
            sets += [f"#{f} = :{f}" for f in fields]
            names.update({f"#{f}": f for f in fields})
            values.update({f":{f}": v for f, v in fields.items()})
            if fields["sha256"] != seen.sha256:  # LATEST's reference moves in the blob counts (blob_count_writes)
                sets.append("counted_sha256 = :sha256")
        removes = []
        if publish_as:
            sets += ["newest = :next", "newest_sha256 = :sha"]
            adds.append("version_count :one")
            values.update({":next": publish_as, ":sha": content.sha256})
            if signed is not None:
                sets += ["manifest = :manifest", "signature = :signature"]
                values.update({":manifest": signed.manifest, ":signature": signed.signature})
            else:
                removes = ["manifest", "signature"]
        elif not _same_bytes(seen, content):
            removes = ["manifest", "signature"]  # LATEST no longer holds the bytes the manifest names
        remove = f" REMOVE {', '.join(removes)}" if removes else ""
        return [
            Write(
                "latest",
                "Update",
                keys.latest_key(name),
                update=f"SET {', '.join(sets)}{remove} ADD {', '.join(adds)}",
                condition=f"{LIVE_LATEST} AND rev = :rev",
                names=names,
                values=values,
            )
        ]

    # Soft delete and restore.

    def set_deleted(self, name: str, number: int, *, deleted: bool, now: str, by: str | None = None) -> Version | None:
        """Soft-delete (or restore) one version and count it on LATEST, in one transaction.

        Returns None when written, or the version as it is when it was already in that state (idempotent).
        Raises NotFoundError (no such version or artifact), VersionPinnedError naming the aliases, or
        ConflictError while a purge runs.
        """
        change = Change("version.deleted" if deleted else "version.restored", number)
        try:
            self.transact_with_events(
                self._deletion_writes(name, [number], deleted=deleted, now=now), name, [change], by=by, now=now
            )
        except TransactionCancelled as cancelled:
            failed = cancelled.failed(f"v{number}")
            if failed is not None:
                if failed.item is None:
                    self._refuse_link(name)
                    raise NotFoundError(f"artifact {name!r} has no version {number}") from None
                if bool(failed.item.get("deleted")) == deleted:
                    return version_entity(failed.item)
                if failed.item.get("expired"):
                    raise ConflictError(f"version {number} expired; it cannot be restored", field="version") from None
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
        latest = self.latest(name)
        if latest is not None and latest.link:
            raise LinkedNameError(name, latest.link)

    def delete_versions(
        self,
        name: str,
        numbers: list[int],
        *,
        now: str,
        seal: Seal | None = None,
        by: str | None = None,
        detail: dict[str, Any] | None = None,
    ) -> bool:
        """Soft-delete up to DELETE_BATCH versions in one transaction; False (nothing written) if any failed.

        With `seal`, its idempotency record is written in the same transaction (its answer rendered from
        `numbers`); IdempotencyKeyTakenError when that key was used meanwhile.
        """
        changes = [Change("version.deleted", n, detail={"prune": True} if detail is None else detail) for n in numbers]
        try:
            self.transact_with_events(
                self._sealed(seal, numbers) + self._deletion_writes(name, numbers, deleted=True, now=now),
                name,
                changes,
                by=by,
                now=now,
            )
        except TransactionCancelled as cancelled:
            _raise_if_key_taken(cancelled)
            return False
        return True

    def _deletion_writes(self, name: str, numbers: list[int], *, deleted: bool, now: str) -> list[Write]:
        """Items `v<n>`: a delete holds only for a live version no alias pins; a restore only for a deleted one."""
        if deleted:
            update = "SET deleted = :yes, deleted_at = :at"
            condition = "attribute_exists(pk) AND deleted = :no AND attribute_not_exists(pinned_by)"
        else:
            update = "SET deleted = :no REMOVE deleted_at"
            condition = "attribute_exists(pk) AND deleted = :yes AND attribute_not_exists(expired)"
        values = {":yes": True, ":no": False, **({":at": now} if deleted else {})}
        writes = [
            Write(f"v{n}", "Update", keys.version_key(name, n), update=update, condition=condition, values=values)
            for n in numbers
        ]
        writes.append(
            Write(
                "latest",
                "Update",
                keys.latest_key(name),
                update="ADD deleted_count :n SET updated_at = :now",
                condition=LIVE_LATEST,
                values={":n": len(numbers) if deleted else -len(numbers), ":now": now},
            )
        )
        return writes

    # Purge.

    def mark_purging(self, name: str, *, token: str, force: bool, now: str) -> None:
        """Set the `purging` mark, owned by `token`; after it, publishes and alias writes fail.

        Without `force` the mark is set only under `alias_count <= 0` (the count the alias transactions
        keep on LATEST), so "no aliases" and the mark are one condition, and a plain purge never takes
        over a forced one's mark. A re-run takes over its own kind of mark (a crashed or budget-stopped
        purge is continued by calling again). Setting the mark advances `rev`, so a publish that read
        LATEST before it fails its condition. Raises NotFoundError (absent or purged), AliasesExistError-like
        ConflictError (details: the aliases) or ConflictError (a forced purge holds the mark).
        """
        condition = "attribute_exists(pk) AND attribute_not_exists(purged)"
        values: dict[str, Any] = {":token": token, ":now": now, ":force": force, ":one": 1}
        if not force:
            condition += (
                " AND (attribute_not_exists(alias_count) OR alias_count <= :zero)"
                " AND (attribute_not_exists(link_count) OR link_count <= :zero)"
                " AND (attribute_not_exists(purging) OR attribute_not_exists(purging_force) OR purging_force = :no)"
            )
            values.update({":zero": 0, ":no": False})
        try:
            self.table.update(
                keys.latest_key(name),
                "SET purging = :token, purging_at = :now, purging_force = :force ADD rev :one",
                condition=condition,
                values=values,
            )
        except ConditionFailed as failed:
            if failed.item is not None and failed.item.get("link"):
                raise LinkedNameError(name, failed.item["link"]) from None
            if failed.item is None or failed.item.get("purged"):
                raise NotFoundError(f"artifact {name!r} does not exist") from None
            if failed.item.get("purging") and failed.item.get("purging_force"):
                raise ConflictError(
                    f"a forced purge of {name!r} is running; purge with force=true to continue"
                ) from None
            if int(failed.item.get("alias_count", 0)) > 0:
                live = [a.alias for a in self.live_aliases(name)]
                raise ConflictError(
                    f"artifact {name!r} has aliases ({', '.join(live)}); delete them or purge with force=true",
                    details={"aliases": live},
                ) from None
            if int(failed.item.get("link_count", 0)) > 0:
                links = self.links_to(name)
                raise ConflictError(
                    f"artifact {name!r} is the target of links ({', '.join(links)}); delete them or purge with "
                    "force=true",
                    details={"links": links},
                ) from None
            raise ConflictError(f"artifact {name!r} changed during the purge; retry") from None

    def clear_purging(self, name: str, *, token: str) -> None:
        """Remove the mark only if this purge still owns it (never another purge's)."""
        with contextlib.suppress(ConditionFailed):
            self.table.update(
                keys.latest_key(name),
                "REMOVE purging, purging_at, purging_force ADD rev :one",
                condition="purging = :token",
                values={":token": token, ":one": 1},
            )

    def delete_rows(self, name: str, *, spend: Callable[[], bool] = lambda: True) -> bool:
        """Delete the artifact's events, history, alias and version items page by page (idempotent).

        Reads are strongly consistent, so every row committed before the mark is seen. `spend` is asked
        before each page's BatchWriteItem call; False stops early and this returns False (call again).
        """
        # History before aliases before versions: a purge stopped midway leaves no history without its
        # alias and no alias on a missing version. Tag rows go first: none outlives its version.
        # Rollouts first too: once its item is gone, a running rollout's next write fails its own condition.
        partitions = (
            (keys.uploads_pk(name), None),
            (keys.retention_pk(name), None),
            (keys.blobs_pk(name), None),
            (keys.rollout_pk(name), None),
            (keys.events_pk(name), None),
            (keys.tags_pk(name), None),
            (keys.history_pk(name), None),
            (keys.alias_pk(name), None),
        )
        for pk, bounds in (*partitions, (name, VERSIONS)):
            start = None
            aliases = pk == keys.alias_pk(name)
            while True:
                page = self.table.query(
                    pk,
                    sk_between=bounds,
                    projection="pk, sk, revision" if aliases else "pk, sk",
                    consistent=True,
                    limit=PURGE_PAGE,
                    start=start,
                )
                if page.items:
                    if not spend():
                        return False
                    if aliases:
                        self._raise_revision_base(name, max(int(i["revision"]) for i in page.items))
                    self.table.batch_delete([{"pk": i["pk"], "sk": i["sk"]} for i in page.items])
                if page.last_key is None:
                    break
                start = page.last_key
        return True

    def _raise_revision_base(self, name: str, revision: int) -> None:
        """Keep on LATEST (and so on its tombstone) the highest alias revision a purge removes, before removing
        it: an alias made after the purge numbers its revisions on from there, so a revision number (an ETag)
        never names two states of one alias."""
        with contextlib.suppress(ConditionFailed):
            self.table.update(
                keys.latest_key(name),
                "SET revision_base = :r",
                condition="attribute_exists(pk) AND (attribute_not_exists(revision_base) OR revision_base < :r)",
                values={":r": revision},
            )

    def finish_purge(self, name: str, *, token: str, now: str) -> bool:
        """Turn LATEST into a tombstone that keeps the counter and drop the listing rows, in one transaction.

        Conditioned on the mark still being this purge's: False when another purge took it over (that one
        finishes). The tombstone advances `rev` and `purges`, and resets `alias_count` and `link_count` (a forced
        purge removed the links first).
        """
        writes = [
            Write(
                "latest",
                "Update",
                keys.latest_key(name),
                update="SET purged = :now, version_count = :zero, deleted_count = :zero, alias_count = :zero, "
                "link_count = :zero "
                "REMOVE purging, purging_at, purging_force, sha256, #size, content_type, metadata, newest_sha256, "
                "part_size, parts_sha256, "
                "tags, description, tag_rev, manifest, signature "
                "ADD rev :one, purges :one",
                condition="purging = :token",
                names={"#size": "size"},
                values={":now": now, ":zero": 0, ":one": 1, ":token": token},
            ),
            Write("name", "Delete", keys.name_key(name)),
            *(
                Write(f"dir{i}", "Update", key, update="ADD children :minus", values={":minus": -1})
                if folder
                else Write(f"dir{i}", "Delete", key)
                for i, (key, folder) in enumerate(keys.dir_keys(name))
            ),
        ]
        try:
            self.table.transact(writes)
        except TransactionCancelled:
            return False
        return True

    # Events: the per-artifact feed, written in the transaction of the change it announces.

    def events_page(
        self, name: str, *, after: str | None, limit: int, token: str | None
    ) -> tuple[list[Event], str | None]:
        """Events oldest first, after the id `after` (or where `token` left off); one strongly consistent Query.

        Consistent, and ids only grow in commit order: whatever commits later sorts after every id read here.
        """
        pk = keys.events_pk(name)
        scope = f"events:{name}"
        start = keys.decode_token(token, scope, pk=pk) if token else None
        if start is None and after is not None:
            start = keys.event_key(name, after)  # an ExclusiveStartKey need not be an item: read after it
        page = self.table.query(pk, consistent=True, limit=limit, start=start)
        fitting = _fitting(page.items)  # cut at PAGE_BYTES as every listing
        events = [event_entity(i) for i in page.items[:fitting]]
        if fitting < len(page.items):
            last = page.items[fitting - 1]
            return events, keys.encode_token({"pk": last["pk"], "sk": last["sk"]}, scope)
        return events, keys.encode_token(page.last_key, scope) if page.last_key else None

    def transact_with_events(
        self, writes: list[Write], name: str, changes: list[Change], *, by: str | None, now: str
    ) -> list[Event]:
        """Commit `writes` (which must include the artifact's LATEST) with one event item per change.

        The events get increasing ids after the artifact's `last_event`, and LATEST's write also sets
        `last_event` to the newest of them under `last_event < :id`: two transactions on one artifact then
        commit in the order of their ids. A transaction refused only because a later id committed first
        (another writer, or a clock behind) is sent again with ids after that one; any other cancellation is
        raised as TransactionCancelled for the caller to read. The one call a new write needs to be announced.
        """
        if not changes:
            self.table.transact(writes)
            return []
        for _ in range(EVENT_ATTEMPTS):
            ids = next_ids(self._micros(), self._floors.get(name), len(changes))
            events = [
                Event(id=i, type=c.type, at=now, by=by, name=name, version=c.version, alias=c.alias, detail=c.detail)
                for i, c in zip(ids, changes, strict=True)
            ]
            stamped, latest = _stamped(writes, name, events)
            try:
                self.table.transact(stamped)
            except TransactionCancelled as cancelled:
                behind = _overtaken(cancelled, latest, ids)
                if behind is None:
                    raise
                self._raise_floor(name, behind)
                continue
            self._raise_floor(name, ids[-1])
            return events
        raise ContentionError(f"events of {name!r} kept being overtaken; retry")

    def _raise_floor(self, name: str, event: str) -> None:
        if len(self._floors) >= MAX_FLOORS and name not in self._floors:
            self._floors.clear()  # only a head start: the condition on LATEST is what orders the ids
        if event > self._floors.get(name, ""):
            self._floors[name] = event

    # Idempotency records.

    def receipt(self, scope: str, key: str, *, now: int) -> StoredReceipt | None:
        """The key's record if it is still retained (TTL deletion lags, so `ttl` is checked here too)."""
        item = self.table.get(keys.receipt_key(scope, key))
        if item is None or int(item["ttl"]) <= now:
            return None
        return StoredReceipt(item["fingerprint"], Answer(int(item["status"]), item["body"]))

    def put_receipt(self, receipt: Receipt, answer: Answer) -> None:
        """The record alone, for a write that changed nothing (a deduplicated publish, a dry run)."""
        try:
            self.table.transact([_receipt_write(receipt, answer)])
        except TransactionCancelled as cancelled:
            _raise_if_key_taken(cancelled)
            raise

    @staticmethod
    def _sealed(seal: Seal | None, entity: Any) -> list[Write]:
        return [] if seal is None else [_receipt_write(seal.receipt, seal.respond(entity))]

    # Aliases.

    def write_alias(
        self,
        new: Alias,
        old: Alias | None,
        *,
        action: str,
        seal: Seal | None = None,
        also: Sequence[Write] = (),
        announce: Sequence[Change] = (),
        guard: Guard | None = None,
    ) -> Alias:
        """One transaction: the alias (compare-and-set on `old`), its history record, the artifact check, pins.

        `guard` holds an alias policy's verdict (arca.adapters.store.guards): its checks join the transaction and
        its condition on an arriving version joins that version's pin. When one fails, PolicyMovedError: the write
        must be judged again.

        `also` are more items of the same transaction (a rollout's state); when one of their conditions fails,
        the TransactionCancelled is raised as it is, for the caller (in this module) to read. `announce` are
        events of the same change after the alias's own (a rollout's step).

        Pins are net deltas: `ADD pinned_by` (only on a live version) for new targets, `DELETE pinned_by` for
        released ones, nothing for a target kept (DynamoDB refuses two actions on one item, and a version this
        alias pins cannot have been deleted meanwhile). Raises ContentionError when the alias moved,
        NotFoundError / ConflictError when the artifact is gone or being purged, ConflictError when a target
        version was deleted meanwhile.
        """
        name, alias = new.name, new.alias
        item = _alias_item(new)
        history = {**item, "kind": "alias-history", "action": action}
        alias_key = keys.alias_key(name, alias)
        writes = [
            Write(
                "alias",
                "Put",
                alias_key,
                item={**item, **alias_key},
                condition="attribute_not_exists(pk)" if old is None else "revision = :seen",
                values={} if old is None else {":seen": old.revision},
            ),
            Write(
                "history",
                "Put",
                keys.history_key(name, alias, new.revision),
                item=history,
                condition="attribute_not_exists(pk)",
            ),
            # The same record under a time-ordered key: "the alias at time T" is one Query (revision_at).
            Write(
                "history-time",
                "Put",
                keys.history_time_key(name, alias, str(new.updated_at), new.revision),
                item={**history, "kind": "alias-history-time"},
            ),
        ]
        # Every alias write, deletions included, holds only while the artifact is live and unmarked, so
        # nothing is written to its partitions once a purge has marked it (a plain purge marks LATEST only
        # where `alias_count` is zero).
        writes.append(self._alias_count_write(name, live_before=old is not None and not old.deleted, new=new))
        writes += _guarded(_pin_writes(name, alias, old.pinned if old else set(), new.pinned), guard)
        try:
            self.transact_with_events(
                self._sealed(seal, new) + writes + list(also),
                name,
                [_alias_change(new, old, action), *announce],
                by=new.updated_by,
                now=str(new.updated_at),
            )
        except TransactionCancelled as cancelled:
            _raise_if_key_taken(cancelled)
            if guard is not None and guard.broken(cancelled):
                raise PolicyMovedError(f"what the policy of {alias!r} read changed; judged again") from None
            if any(cancelled.failed(w.name) for w in also):
                raise
            raise _alias_refusal(cancelled, name, alias) from None
        return new

    @staticmethod
    def _alias_count_write(name: str, *, live_before: bool, new: Alias) -> Write:
        """LATEST's part of an alias transaction: `alias_count` counts live aliases, under MAX_ALIASES.

        A new live alias adds one only while the count is below the cap (so concurrent creations cannot
        pass it), a deletion takes one away; a move only checks that the artifact is live.
        """
        key = keys.latest_key(name)
        delta = int(not new.deleted) - int(live_before)
        if delta == 0:
            return Write("artifact", "ConditionCheck", key, condition=LIVE_LATEST)
        condition, values = LIVE_LATEST, {":delta": delta}
        if delta > 0:  # a new live alias: only under the cap
            condition += " AND (attribute_not_exists(alias_count) OR alias_count < :cap)"
            values[":cap"] = MAX_ALIASES
        return Write("artifact", "Update", key, update="ADD alias_count :delta", condition=condition, values=values)

    # Rollouts: one item per alias, `__<name>-rollout` / `<alias>`, written in the alias's own transactions.

    def rollout(self, name: str, alias: str) -> Rollout | None:
        """The alias's latest rollout, whatever its state."""
        item = self.table.get(keys.rollout_key(name, alias))
        return None if item is None else rollout_entity(item)

    def start_rollout(
        self,
        new: Alias,
        old: Alias,
        rollout: Rollout,
        *,
        guard: Guard | None = None,
        also: Sequence[Write] = (),
        announce: Sequence[Change] = (),
    ) -> Alias:
        """The alias's first rollout revision and the rollout item, in one transaction (with `guard`, `also` and
        `announce` as write_alias: a policy's conditions, a promotion's item and its events).

        The item is put only where no rollout of the alias is running (one at a time). Raises
        RolloutRunningError (409) when one is, and what write_alias raises (ContentionError when the alias moved).
        """
        put = _rollout_write(
            rollout,
            condition="attribute_not_exists(pk) OR #state <> :running",
            names={"#state": "state"},
            values={":running": "running"},
        )
        try:
            return self.write_alias(
                new,
                old,
                action="rollout",
                also=[put, *also],
                announce=[_rollout_change(rollout), *announce],
                guard=guard,
            )
        except TransactionCancelled as cancelled:
            if not cancelled.failed("rollout"):
                raise
            raise RolloutRunningError(
                f"alias {new.alias!r} has a running rollout; abort it first", field="alias"
            ) from None

    def step_rollout(self, rollout: Rollout, seen: Rollout, new: Alias, old: Alias) -> Alias:
        """One rollout step: the alias revision `new` (compare-and-set on `old`, the revision the rollout wrote
        last) and the rollout as `rollout`, only while it is still `seen` (running, at the same step).

        Raises RolloutMovedError when the rollout moved on or ended meanwhile (a repeated step, an abort, a
        purge: do nothing), ContentionError when someone else wrote the alias (the rollout is superseded), and
        what write_alias raises otherwise.
        """
        put = _rollout_write(rollout, **_still(seen))
        try:
            return self.write_alias(new, old, action="rollout", also=[put], announce=[_rollout_change(rollout)])
        except TransactionCancelled:
            raise RolloutMovedError(f"rollout {seen.id} moved on since step {seen.step}") from None

    def end_rollout(self, rollout: Rollout, seen: Rollout) -> bool:
        """Store `rollout` (an end without an alias write: superseded) only while it is still `seen`.

        False when the rollout moved on meanwhile (or was purged): then nothing is written.
        """
        put = _rollout_write(rollout, **_still(seen))
        try:
            self.table.transact([put])
        except TransactionCancelled:
            return False
        return True

    # Links. A link is its name's LATEST item with `link` (and `purged`, so every artifact condition already
    # refuses it), a marker at `~link` in its alias partition, a row in the target's reverse index, and its
    # listing rows carrying `link`. The target's LATEST counts its links (`link_count`), and a link is made
    # only while the target is live (LIVE_LATEST: no purge mark), so the purge mark (under `link_count <= 0`
    # unless forced) and link creation serialise on that one item.

    def links_to(self, target: str, *, limit: int = MAX_ALIASES) -> list[str]:
        """Names of the links to `target`, the first `limit` (one Query of its reverse index): a 409 names at most
        that many."""
        page = self.table.query(keys.links_pk(target), consistent=True, limit=limit, projection="pk, sk")
        return [i["sk"] for i in page.items]

    def write_link(self, name: str, target: str, seen: Latest | None, *, now: str, by: str | None = None) -> Link:
        """Make `name` a link to `target`, or re-point it, in one transaction (a compare-and-set on `seen`).

        `seen` is the name's LATEST as read: None (never used), a tombstone (a purged artifact: its counters
        stay, so version numbers are not reused if it is an artifact again) or a link (re-pointed). Raises
        ContentionError when the name changed since, ConflictError when the name is an artifact, NotFoundError
        (field target) when the target is not a live artifact, ConflictError when the target is a link or
        being purged.
        """
        old = seen.link if seen is not None else None
        latest_key = keys.latest_key(name)
        if seen is None:
            item: Item = {"kind": "link", "name": name, "link": target, "purged": now, "created_at": now}
            item.update({"updated_at": now})
            item.update({"rev": 1, "newest": 0, "purges": 0, "revision_base": 0, **latest_key})
            own = Write("link", "Put", latest_key, item=item, condition="attribute_not_exists(pk)")
        else:
            # Over a tombstone: still a tombstone, nobody linked it meanwhile; re-pointing: still this link.
            condition = "attribute_exists(purged) AND attribute_not_exists(purging) AND rev = :rev AND "
            condition += "link = :old" if old else "attribute_not_exists(link)"
            values: dict[str, Any] = {":t": target, ":now": now, ":one": 1, ":rev": seen.rev}
            values.update({":old": old} if old else {":kind": "link"})
            own = Write(
                "link",
                "Update",
                latest_key,
                update="SET link = :t, updated_at = :now"
                + ("" if old else ", created_at = :now, kind = :kind")
                + " ADD rev :one",
                condition=condition,
                values=values,
            )
        writes = [
            own,
            Write(
                "target",
                "Update",
                keys.latest_key(target),
                update="ADD link_count :one",
                condition=LIVE_LATEST,
                values={":one": 1},
            ),
            Write("row", "Put", keys.link_row_key(target, name), item={"kind": "link-row"}),
            Write("marker", "Put", keys.link_marker_key(name), item={"kind": "link-marker", "link": target}),
        ]
        if old:
            writes += [
                Write(
                    "old_target",
                    "Update",
                    keys.latest_key(old),
                    update="ADD link_count :minus",
                    condition="attribute_exists(pk)",
                    values={":minus": -1},
                ),
                Write("old_row", "Delete", keys.link_row_key(old, name)),
                Write("name", "Update", keys.name_key(name), update="SET link = :t", values={":t": target}),
                Write("leaf", "Update", keys.dir_keys(name)[-1][0], update="SET link = :t", values={":t": target}),
            ]
        else:
            writes += _listing_rows(name, link=target)
        # Announced in the target's feed (reads under the link name follow it there), ordered on its LATEST.
        detail = {"link": name, "target": target, **({"previous_target": old} if old else {})}
        change = Change("link.updated", detail=detail)
        try:
            self.transact_with_events(writes, target, [change], by=by, now=now)
        except TransactionCancelled as cancelled:
            failed = cancelled.failed("link")
            if failed is not None:
                now_item = failed.item
                if now_item is not None and (not now_item.get("purged") or now_item.get("purging")):
                    raise ConflictError(f"{name!r} is an artifact; a link needs a free name", field="name") from None
                raise ContentionError(f"{name!r} changed concurrently") from None
            reason = cancelled.failed("target")
            found = reason.item if reason is not None else None
            if found is not None and found.get("link"):
                raise ConflictError(
                    f"target {target!r} is a link itself; link to {found['link']!r}", field="target"
                ) from None
            if found is not None and found.get("purging"):
                raise ConflictError(f"target {target!r} is being purged", field="target") from None
            if reason is not None:
                raise NotFoundError(f"target {target!r} is not an artifact", field="target") from None
            raise ConflictError(f"concurrent change: {cancelled}") from None
        created = seen.created_at if seen is not None and old else now
        return Link(name=name, link=target, created_at=created, updated_at=now)

    def delete_link(self, name: str, seen: Latest, *, now: str, by: str | None = None) -> None:
        """Remove the link `seen` (its name stays a tombstone keeping its counters); ContentionError if it moved.
        Announced as `link.deleted` in the target's feed."""
        assert seen.link is not None
        writes = _unlink_writes(name, seen.link, condition="link = :old AND rev = :rev", values={":rev": seen.rev})
        change = Change("link.deleted", detail={"link": name, "target": seen.link})
        try:
            self.transact_with_events(writes, seen.link, [change], by=by, now=now)
        except TransactionCancelled as cancelled:
            if cancelled.failed("link") is not None:
                raise ContentionError(f"link {name!r} changed concurrently") from None
            raise ConflictError(f"concurrent change: {cancelled}") from None

    def remove_links(self, target: str, *, spend: Callable[[], bool] = lambda: True) -> bool:
        """A forced purge's step: remove every link to `target` (marked: no new link can be made), one
        transaction per link; a link re-pointed meanwhile is left alone. False when `spend` says stop."""
        while True:
            links = self.links_to(target, limit=PURGE_PAGE)
            if not links:
                return True
            for link in links:
                if not spend():
                    return False
                try:
                    self.table.transact(_unlink_writes(link, target, condition="link = :old", values={}))
                except TransactionCancelled:
                    # Re-pointed or removed meanwhile: that write removed this row; one left over goes alone.
                    with contextlib.suppress(TransactionCancelled):
                        self.table.transact(
                            [
                                Write(
                                    "row",
                                    "Delete",
                                    keys.link_row_key(target, link),
                                    condition="attribute_exists(pk)",
                                )
                            ]
                        )

    # Tags and search. Tag changes are one transaction each: the tagged item under a compare-and-set on its
    # `tag_rev`, one index row per changed key, and the artifact live. Search reads the secondary indexes:
    # eventually consistent, so a change shows there a moment after it is committed.

    def write_version_tags(self, seen: Version, tags: dict[str, str], *, now: str, by: str | None = None) -> Version:
        """Replace the version's tags with `tags` (the merge decided from `seen`), and their index rows.

        Allowed on a soft-deleted version. Raises ContentionError when the tags changed since `seen` was read,
        NotFoundError when the version or the artifact is gone, ConflictError while a purge runs.
        """
        name, number = seen.name, seen.version
        key = keys.version_key(name, number)
        condition, values = _tag_rev_condition(seen.tag_rev)
        writes = [
            Write(
                "version",
                "Update",
                key,
                update="SET tags = :tags, tagged_at = :now ADD tag_rev :one",
                condition=f"attribute_exists(pk) AND {condition}",
                values={**values, ":tags": tags, ":now": now, ":one": 1},
            ),
            Write("artifact", "ConditionCheck", keys.latest_key(name), condition=LIVE_LATEST),
        ]
        facts = {f: getattr(seen, f) for f in (*TARGET_FIELDS, "created_at")}
        changed = _changed(seen.tags, tags)
        writes += _tag_row_writes(
            changed,
            lambda tag: keys.version_tag_key(name, number, tag),
            lambda tag, value: {
                "kind": "version-tag",
                "name": name,
                "version": number,
                "tag": tag,
                "value": value,
                **facts,
                "gsi1pk": keys.version_tag_search_pk(tag, value),
                "gsi1sk": keys.version_search_sk(name, number),
            },
        )
        change = Change("version.tagged", number, detail={"tags": dict(changed)})
        self._transact_tags(name, writes, what=f"version {number}", change=change, by=by, now=now)
        return seen.model_copy(update={"tags": tags, "tag_rev": seen.tag_rev + 1})

    def write_artifact_tags(
        self, seen: Latest, tags: dict[str, str], description: str | None, *, now: str, by: str | None = None
    ) -> Latest:
        """Replace the artifact's tags and description (kept on LATEST, under its own `tag_rev`), and their rows.

        LATEST's `rev` does not move: tags are not content, so a publish racing this is not sent back.
        Raises ContentionError, NotFoundError or ConflictError as `write_version_tags`.
        """
        name = seen.name
        condition, values = _tag_rev_condition(seen.tag_rev)
        sets, removes = ["tags = :tags", "tagged_at = :now"], []
        if description is None:
            removes.append("description")
        else:
            sets.append("description = :description")
            values[":description"] = description
        update = f"SET {', '.join(sets)} {'REMOVE description ' if removes else ''}ADD tag_rev :one"
        writes = [
            Write(
                "artifact",
                "Update",
                keys.latest_key(name),
                update=update,
                condition=f"{LIVE_LATEST} AND {condition}",
                values={**values, ":tags": tags, ":now": now, ":one": 1},
            )
        ]
        changed = _changed(seen.tags, tags)
        writes += _tag_row_writes(
            changed,
            lambda tag: keys.artifact_tag_key(name, tag),
            lambda tag, value: {
                "kind": "artifact-tag",
                "name": name,
                "tag": tag,
                "value": value,
                "gsi1pk": keys.artifact_tag_search_pk(tag, value),
                "gsi1sk": name,
            },
        )
        detail: dict[str, Any] = {"tags": dict(changed)}
        if description != seen.description:
            detail["description"] = description
        change = Change("artifact.updated", detail=detail)
        self._transact_tags(name, writes, what="the artifact", change=change, by=by, now=now)
        return seen.model_copy(update={"tags": tags, "description": description, "tag_rev": seen.tag_rev + 1})

    def _transact_tags(
        self, name: str, writes: list[Write], *, what: str, change: Change, by: str | None, now: str
    ) -> None:
        try:
            self.transact_with_events(writes, name, [change], by=by, now=now)
        except TransactionCancelled as cancelled:
            artifact = cancelled.failed("artifact")
            version = cancelled.failed("version")
            if version is not None and version.item is None:
                raise NotFoundError(f"artifact {name!r} has no {what}") from None
            if artifact is not None and (artifact.item is None or artifact.item.get("purged")):
                raise NotFoundError(f"artifact {name!r} does not exist") from None
            if artifact is not None and artifact.item is not None and artifact.item.get("purging"):
                raise ConflictError(f"artifact {name!r} is being purged") from None
            raise ContentionError(f"the tags of {what} of {name!r} changed concurrently") from None

    def newest_with_content(self, name: str, sha256: str) -> Version | None:
        """The newest version of `name` holding `sha256` that is not deleted.

        The search index (eventually consistent) names the candidates, newest first, deleted ones skipped within
        the query budget; each is then confirmed by a strongly consistent read of the version itself, so a
        version deleted a moment ago is never answered while the index still shows it live. At most
        CONTENT_CANDIDATES candidates are confirmed (one read when the index is current).
        """
        items, _ = self._index_page(
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
            items, next_token = self._index_page(
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
            items, next_token = self._index_page(
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
            items, next_token = self.page(
                name, scope, limit=limit, token=token, keep=keep, sk_between=VERSIONS, forward=forward
            )
        return [version_entity(i) for i in items], next_token

    def search_versions(
        self, *, sha256: str | None = None, tag: tuple[str, str] | None = None, limit: int, token: str | None
    ) -> tuple[list[VersionHit], str | None]:
        """Every version, registry-wide, holding the content `sha256` or the tag (key, value): one index Query
        a page (more only to fill a page, within the query budget). Soft-deleted versions included, said so.

        A content hit is the version item itself; a tag hit is the tag's index row, completed with the
        version's tags and state by one BatchGetItem a Query (a version purged or untagged since is no hit)."""
        enrich, keep = None, lambda item: True
        if sha256 is not None:
            pk, scope = keys.content_search_pk(sha256), f"search:sha256:{sha256}"
        else:
            assert tag is not None
            pk, scope = keys.version_tag_search_pk(*tag), f"search:tag:{_digest(tag)}"
            # The version as it is now still carries the tag (the index may lag a change by a moment).
            enrich, keep = self._with_version_state, lambda item: item.get("tags", {}).get(tag[0]) == tag[1]
        items, next_token = self._index_page(
            keys.SEARCH_INDEX, pk, scope, limit=limit, token=token, keep=keep, enrich=enrich
        )
        hits = [
            VersionHit(
                name=i["name"],
                version=int(i.get("version") or i["sk"]),
                deleted=bool(i.get("deleted")),
                tags=i.get("tags") or {},
                **{f: i[f] for f in (*TARGET_FIELDS, "created_at")},
            )
            for i in items
        ]
        return hits, next_token

    def _with_version_state(self, rows: list[Item]) -> list[Item]:
        """Tag index rows with their versions' `tags` and `deleted` (a row whose version is gone gets neither)."""
        wanted = {(r["name"], int(r["version"])) for r in rows}
        found = self.table.batch_get([keys.version_key(*w) for w in sorted(wanted)], projection=("tags", "deleted"))
        state = {(i["pk"], i["sk"]): i for i in found}
        completed = []
        for row in rows:
            version = state.get((row["name"], keys.version_key(row["name"], int(row["version"]))["sk"]))
            if version is not None:
                row = {**row, "tags": version.get("tags") or {}, "deleted": bool(version.get("deleted"))}
            completed.append(row)
        return completed

    def search_artifacts(self, tag: tuple[str, str], *, limit: int, token: str | None) -> tuple[list[str], str | None]:
        """Names of the artifacts carrying the tag (key, value), in name order: one index Query a page."""
        items, next_token = self._index_page(
            keys.SEARCH_INDEX,
            keys.artifact_tag_search_pk(*tag),
            f"search:artifact-tag:{_digest(tag)}",
            limit=limit,
            token=token,
            keep=lambda i: True,
        )
        return [i["name"] for i in items], next_token

    def _index_page(
        self,
        index: str,
        pk: str,
        scope: str,
        *,
        limit: int,
        token: str | None,
        keep: Callable[[Item], bool],
        sk_between: tuple[str, str] | None = None,
        sk_prefix: str | None = None,
        forward: bool = True,
        enrich: Callable[[list[Item]], list[Item]] | None = None,
    ) -> tuple[list[Item], str | None]:
        """`_page` over a secondary index: the same budgets, tokens bound to the index partition and range.

        `enrich` completes each Query's items before they are kept and measured (one read for the page)."""
        index_keys = keys.INDEX_KEYS[index]
        within = _sk_test(sk_between=sk_between, sk_prefix=sk_prefix)
        start = keys.decode_index_token(token, scope, index=index, pk=pk, within=within) if token else None

        def query(begin: dict[str, str] | None, size: int) -> Page:
            page = self.table.query_index(
                index,
                index_keys,
                pk,
                start=begin,
                limit=size,
                sk_between=sk_between,
                sk_prefix=sk_prefix,
                forward=forward,
            )
            return page if enrich is None else Page(enrich(page.items), page.last_key)

        return _budgeted(
            query,
            start,
            limit=limit,
            keep=keep,
            token_of=lambda key: keys.encode_index_token(key, scope, index=index),
            key_of=lambda item: {k: str(item[k]) for k in ("pk", "sk", *index_keys)},
        )


def _budgeted(
    query: Callable[[dict[str, str] | None, int], Page],
    start: dict[str, str] | None,
    *,
    limit: int,
    keep: Callable[[Item], bool],
    token_of: Callable[[dict[str, str]], str],
    key_of: Callable[[Item], dict[str, str]],
) -> tuple[list[Item], str | None]:
    """The budgeted page loop of every listing: up to `limit` kept items, within QUERY_BUDGET Queries and
    PAGE_BYTES of JSON, and the token (`token_of` a key) that goes on after the last item kept or read."""
    kept: list[Item] = []
    spent_bytes = 0
    last_read: dict[str, str] | None = None
    for spent in range(1, QUERY_BUDGET + 1):
        size = limit if spent == 1 else max(limit - len(kept), PAGE_SIZE)
        page = query(start, size)
        for item in page.items:
            if not keep(item):
                continue
            weight = json_size(item)
            if kept and spent_bytes + weight > PAGE_BYTES:
                return kept, token_of(key_of(kept[-1]))  # this item and what follows: the next page
            kept.append(item)
            spent_bytes += weight
            if len(kept) == limit:
                more = item is not page.items[-1] or page.last_key is not None
                return kept, token_of(key_of(item)) if more else None
        if page.last_key is None:
            return kept, None
        start = last_read = page.last_key
    return kept, token_of(dict(last_read or {}))


def _fitting(items: list[Item]) -> int:
    """How many of `items`, from the first, fit in PAGE_BYTES of JSON (one at least, when there is one)."""
    spent = 0
    for count, item in enumerate(items):
        spent += json_size(item)
        if count and spent > PAGE_BYTES:
            return count
    return len(items)


def json_size(item: Item) -> int:
    """An item's size as JSON with every non-ASCII character escaped (as the API answers): an upper bound of
    what it adds to an answer, whose fields are the item's or fewer."""
    return len(json.dumps(item, default=_plain))


def _plain(value: Any) -> Any:
    """What JSON cannot hold as read from DynamoDB (sets; numbers inside lists stay Decimals), as near its size."""
    return sorted(value) if isinstance(value, set | frozenset) else str(value)


def rollout_entity(item: Item) -> Rollout:
    fields = {k: v for k, v in item.items() if k in Rollout.model_fields}
    # Lists come back from DynamoDB as they went in (numbers as numbers); the entity wants plain ints.
    fields.update(steps=[int(w) for w in item["steps"]], alarms=list(item.get("alarms") or ()))
    return Rollout(**fields)


def _rollout_write(rollout: Rollout, *, condition: str, names: dict[str, str], values: dict[str, Any]) -> Write:
    item = {"kind": "rollout", **rollout.model_dump(exclude_none=True)}
    return Write(
        "rollout",
        "Put",
        keys.rollout_key(rollout.name, rollout.alias),
        item=item,
        condition=condition,
        names=names,
        values=values,
    )


def _still(seen: Rollout) -> dict[str, Any]:
    """The condition that the rollout is the one read: same id, running, at the same step. Conditioning every
    write on the step makes a repeated step (a retried invocation) write nothing."""
    return {
        "condition": "#id = :id AND #state = :running AND #step = :step",
        "names": {"#id": "id", "#state": "state", "#step": "step"},
        "values": {":id": seen.id, ":running": "running", ":step": seen.step},
    }


# Tries of one event-carrying transaction that later ids keep overtaking (each try goes after the last seen).
EVENT_ATTEMPTS = 10
# Artifacts whose newest event id a warm instance remembers, so its memory stays bounded.
MAX_FLOORS = 10_000
_SET = re.compile(r"\bSET\b")
_AFTER_LAST = "(attribute_not_exists(last_event) OR last_event < :last_event)"


def event_entity(item: Item) -> Event:
    return Event(**{f: item[f] for f in Event.model_fields if f in item})


def _event_item(event: Event) -> Item:
    # An empty `detail` is left out: DynamoDB Local's stream gives an empty map as `{}`, which no decoder reads.
    item = {"kind": "event", **event.model_dump(exclude_none=True)}
    if not item.get("detail"):
        item.pop("detail", None)
    return item


def _stamped(writes: list[Write], name: str, events: list[Event]) -> tuple[list[Write], Write]:
    """`writes` with the event Puts added and LATEST's write moving `last_event` forwards (a ConditionCheck
    of LATEST becomes an Update). Returns them and that LATEST write."""
    last = events[-1].id
    at = next(i for i, w in enumerate(writes) if dict(w.key) == keys.latest_key(name))
    write = writes[at]
    condition = f"({write.condition}) AND {_AFTER_LAST}" if write.condition else _AFTER_LAST
    values = {**write.values, ":last_event": last}
    if write.kind == "Put":
        latest = dataclasses.replace(
            write, item={**(write.item or {}), "last_event": last}, condition=condition, values=values
        )
    else:
        update = write.update or ""
        if _SET.search(update):
            update = _SET.sub("SET last_event = :last_event,", update, count=1)
        else:
            update = f"SET last_event = :last_event {update}".strip()
        latest = dataclasses.replace(write, kind="Update", update=update, condition=condition, values=values)
    puts = [
        Write(f"event{i}", "Put", keys.event_key(name, e.id), item=_event_item(e), condition="attribute_not_exists(pk)")
        for i, e in enumerate(events)
    ]
    return [*writes[:at], latest, *writes[at + 1 :], *puts], latest


def _overtaken(cancelled: TransactionCancelled, latest: Write, ids: list[str]) -> str | None:
    """The id to go after when only event ordering refused the transaction; None when something else did.

    LATEST's reason carries the item as it was: a `last_event` at or after ours means a later id committed
    first. A LATEST write that also compares `rev` lost a real race when `rev` moved: the caller re-reads.
    """
    if any(name.startswith("event") for name in cancelled.reasons):  # an id taken: vanishingly rare
        return ids[-1]
    reason = cancelled.failed(latest.name)
    if reason is None or reason.item is None:
        return None
    if any(cancelled.failed(name) for name in cancelled.reasons if name != latest.name):
        return None  # another item's condition failed too: sending it again cannot help
    seen = reason.item.get("last_event")
    if seen is None or seen < ids[0]:
        return None
    # LATEST's own compare-and-sets (`rev`, the tags' `tag_rev`): when they moved, the caller must re-read
    if ":rev" in latest.values and reason.item.get("rev") != latest.values[":rev"]:
        return None
    if "tag_rev" in (latest.condition or "") and reason.item.get("tag_rev") != latest.values.get(":seen"):
        return None
    return str(seen)


def _content_detail(content: Content) -> dict[str, Any]:
    return {"sha256": content.sha256, "size": content.size, "content_type": content.content_type}


def _alias_change(new: Alias, old: Alias | None, action: str) -> Change:
    """alias.updated (a set or a rollback, with the targets before and after) or alias.deleted."""
    before = old.version if old is not None and not old.deleted else None
    if new.deleted:
        return Change("alias.deleted", before, alias=new.alias, detail={"revision": new.revision})
    detail: dict[str, Any] = {
        "revision": new.revision,
        "action": action,
        "secondary_version": new.secondary_version,
        "secondary_version_weight": new.secondary_version_weight,
        "previous_version": before,
        "reason": new.reason,
    }
    if action == "rollback":
        detail["rollback"] = True
    return Change("alias.updated", new.version, alias=new.alias, detail=detail)


def _sk_test(
    *, sk_between: tuple[str, str] | None = None, sk_prefix: str | None = None, **_: Any
) -> Callable[[str], bool]:
    """Whether a sort key lies in a listing's range (a token's key must)."""
    if sk_between is not None:
        low, high = sk_between
        return lambda sk: low <= sk <= high
    return lambda sk: sk.startswith(sk_prefix or "")


def _receipt_write(receipt: Receipt, answer: Answer) -> Write:
    """The record `__idem#<scope>` / `<key>`, put only where none is retained (an expired one is replaced)."""
    item = {
        "kind": "idempotency",
        "fingerprint": receipt.fingerprint,
        "status": answer.status,
        "body": answer.body,
        "ttl": receipt.expires,
    }
    return Write(
        "receipt",
        "Put",
        keys.receipt_key(receipt.scope, receipt.key),
        item=item,
        condition="attribute_not_exists(pk) OR #ttl <= :now",
        names={"#ttl": "ttl"},
        values={":now": receipt.now},
    )


def _raise_if_key_taken(cancelled: TransactionCancelled) -> None:
    if cancelled.failed("receipt") is not None:
        raise IdempotencyKeyTakenError("this Idempotency-Key was used by a concurrent request") from None


def target_of(source: Latest | Version) -> Target:
    return Target(
        sha256=str(source.sha256),
        size=int(source.size or 0),
        content_type=str(source.content_type),
        filename=recorded_filename(source.metadata),
        part_size=source.part_size,
        parts_sha256=source.parts_sha256,
        manifest=source.manifest,
        signature=source.signature,
    )


def _signed_attributes(signed: Signed | None) -> dict[str, str]:
    return {} if signed is None else {"manifest": signed.manifest, "signature": signed.signature}


def _same_bytes(seen: Latest, content: Content) -> bool:
    return seen.sha256 == content.sha256 and seen.size == content.size


def _listing_rows(name: str, *, link: str | None = None) -> list[Write]:
    """The name-index row and the folder rows that make a new artifact (or a link, carrying its target)
    listable."""
    extra = {"link": link} if link else {}
    writes = [Write("name", "Put", keys.name_key(name), item={"kind": "name", **extra})]
    for i, (key, folder) in enumerate(keys.dir_keys(name)):
        if folder:
            writes.append(Write(f"dir{i}", "Update", key, update="ADD children :one", values={":one": 1}))
        else:
            writes.append(Write(f"dir{i}", "Put", key, item={"kind": "link" if link else "artifact", **extra}))
    return writes


def _rollout_change(rollout: Rollout) -> Change:
    """The rollout's own event for the alias write it makes: started, advanced, then completed or rolled back
    (an abort is a roll back that says so)."""
    kind = {
        "running": "rollout.started" if rollout.step == 1 else "rollout.advanced",
        "completed": "rollout.completed",
    }.get(rollout.state, "rollout.rolled_back")
    detail: dict[str, Any] = {"id": rollout.id, "step": rollout.step, "weight": rollout.weight, "steps": rollout.steps}
    if rollout.state in ("aborted", "rolled_back"):
        detail.update({"state": rollout.state, "alarm": rollout.alarm})
    return Change(kind, rollout.version, alias=rollout.alias, detail=detail)


def _unlink_writes(name: str, target: str, *, condition: str, values: dict[str, Any]) -> list[Write]:
    """Remove the link `name` → `target`: its LATEST goes back to a tombstone (counters kept), the marker, the
    reverse-index row and the listing rows go, and the target counts one link less."""
    writes = [
        Write(
            "link",
            "Update",
            keys.latest_key(name),
            update="REMOVE link SET kind = :kind ADD rev :one",
            condition=condition,
            values={":old": target, ":kind": "latest", ":one": 1, **values},
        ),
        Write("marker", "Delete", keys.link_marker_key(name)),
        Write("row", "Delete", keys.link_row_key(target, name)),
        Write(
            "target",
            "Update",
            keys.latest_key(target),
            update="ADD link_count :minus",
            condition="attribute_exists(pk)",
            values={":minus": -1},
        ),
        Write("name", "Delete", keys.name_key(name)),
    ]
    for i, (key, folder) in enumerate(keys.dir_keys(name)):
        if folder:
            writes.append(Write(f"dir{i}", "Update", key, update="ADD children :minus", values={":minus": -1}))
        else:
            writes.append(Write(f"dir{i}", "Delete", key))
    return writes


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
        return _digest((sorted(self.tags), self.sha256, self.after, self.before))


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value).encode()).hexdigest()[:16]


def _tag_rev_condition(seen: int) -> tuple[str, dict[str, Any]]:
    """Compare-and-set on the tags' counter as it was read (absent before the first tag change)."""
    if seen == 0:
        return "attribute_not_exists(tag_rev)", {}
    return "tag_rev = :seen", {":seen": seen}


def _tag_row_writes(
    changed: list[tuple[str, str | None]], key_of: Callable[[str], Key], item_of: Callable[[str, str], Item]
) -> list[Write]:
    """One write per changed tag: its index row put with the new value, or deleted for a key removed."""
    return [
        Write(f"tag{i}", "Delete", key_of(tag))
        if value is None
        else Write(f"tag{i}", "Put", key_of(tag), item=item_of(tag, value))
        for i, (tag, value) in enumerate(changed)
    ]


def _changed(before: dict[str, str], after: dict[str, str]) -> list[tuple[str, str | None]]:
    """The keys whose index rows change: (key, new value), None for a removed key."""
    changed: list[tuple[str, str | None]] = [(k, v) for k, v in after.items() if before.get(k) != v]
    changed += [(k, None) for k in before if k not in after]
    return sorted(changed, key=lambda change: change[0])


def _alias_item(new: Alias) -> dict[str, Any]:
    """The alias item's attributes (without its key)."""
    return {
        "kind": "alias",
        **{k: v for k, v in new.model_dump(exclude={"primary", "secondary"}).items() if v is not None},
        **{side: getattr(new, side).model_dump() for side in ("primary", "secondary") if getattr(new, side)},
        "deleted": new.deleted,
        "first_revision": new.first_revision,
    }


def _pin_writes(name: str, alias: str, before: set[int], after: set[int]) -> list[Write]:
    """The net pin changes of an alias write: `ADD pinned_by` (only on a live version) for new targets, `DELETE
    pinned_by` for released ones, nothing for a target kept."""
    pins = [(n, "ADD", "attribute_exists(pk) AND deleted = :no") for n in sorted(after - before)]
    pins += [(n, "DELETE", "attribute_exists(pk)") for n in sorted(before - after)]
    writes = []
    for number, verb, condition in pins:
        values: dict[str, Any] = {":me": {alias}, **({":no": False} if verb == "ADD" else {})}
        key = keys.version_key(name, number)
        writes.append(
            Write(f"v{number}", "Update", key, update=f"{verb} pinned_by :me", condition=condition, values=values)
        )
    return writes


def _guarded(pins: list[Write], guard: Guard | None) -> list[Write]:
    """The pin writes with a guard's conditions on their versions merged in (DynamoDB takes one action per item in
    a transaction), and the guard's checks. A guarded version is one the write brings in, so it has its pin."""
    if guard is None:
        return pins
    found = []
    for write in pins:
        extra = guard.versions.get(int(write.name[1:]))
        if extra is not None and "ADD" in (write.update or ""):
            write = dataclasses.replace(
                write, condition=f"({write.condition}) AND {extra[0]}", values={**write.values, **extra[1]}
            )
        found.append(write)
    return [*guard.checks, *found]


def _alias_refusal(cancelled: TransactionCancelled, name: str, alias: str) -> RegistryError:
    """What a cancelled alias transaction means: the alias moved, the artifact is gone, linked, being purged or
    at its alias limit, or a target version was deleted meanwhile."""
    if cancelled.failed("alias") or cancelled.failed("history"):
        return ContentionError(f"alias {alias!r} changed concurrently")
    artifact = cancelled.failed("artifact")
    if artifact is not None:
        if artifact.item is not None and artifact.item.get("link"):
            return LinkedNameError(name, artifact.item["link"])
        if artifact.item is None or artifact.item.get("purged"):
            return NotFoundError(f"artifact {name!r} does not exist")
        if artifact.item.get("purging"):
            return ConflictError(f"artifact {name!r} is being purged")
        return AliasLimitError(
            f"artifact {name!r} has {MAX_ALIASES} aliases, the most it may have; delete one first",
            field="alias",
            details={"limit": MAX_ALIASES},
        )
    number = next(int(n[1:]) for n in cancelled.reasons if n.startswith("v"))
    return ConflictError(f"version {number} was deleted or removed meanwhile", field="version")


def blob_count_writes(name: str, seen: Latest | None, sha256: str, *, published: bool) -> list[Write]:
    """The blob counts' part of a LATEST write (keys.blob_count_key): +1 for a published version, and LATEST's
    reference moved from its counted content to `sha256` when that changes, netted per content (one action per
    item). A new reference holds only while no collection of that content is under way (`collecting`), so
    retention never removes bytes that a reference committed after it decided to."""
    deltas: dict[str, int] = {sha256: int(published)}
    if seen is None or seen.purged:
        deltas[sha256] += 1
    elif seen.sha256 != sha256:
        deltas[sha256] += 1
        if seen.counted_sha256 is not None:
            deltas[seen.counted_sha256] = deltas.get(seen.counted_sha256, 0) - 1
    return [
        Write(
            f"blob{index}",
            "Update",
            keys.blob_count_key(name, sha),
            update="ADD refs :delta",
            condition="attribute_not_exists(collecting)" if delta > 0 else None,
            values={":delta": delta},
        )
        for index, (sha, delta) in enumerate(sorted(deltas.items()))
        if delta
    ]
