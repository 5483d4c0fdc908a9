"""Retention's items (docs/access-patterns.md, "Retention"): the policy, the expiry transaction, the expired
markers and the blob counts' collection. The only code that knows their shapes and conditions.

- The policy item `__<name>-retention` / `policy` carries the search index keys `retention` / `<name>`, so the
  sweep lists every artifact with a policy by one Query of that sparse index partition; it is written only while
  the artifact's LATEST is live.
- An expiry is one transaction: the version becomes a tombstone (`expired`) only while it is soft-deleted since
  before the cutoff and unpinned; its blob count loses its reference; an `expired#%06d` marker records the
  clean-up still to do; LATEST announces `version.expired`.
- Collection of a content whose count reached zero: mark the count item `collecting` (only while no reference
  holds it: every new reference is added under `attribute_not_exists(collecting)`), delete the object, then
  delete the count and the marker together. A crash between any two of these leaves the marker, and the next
  run finishes from wherever it stopped.
"""

from __future__ import annotations

from dataclasses import dataclass

from boto3.dynamodb.conditions import Attr

from arca.adapters import keys
from arca.adapters.dynamo import ConditionFailed, Item, Reason, Table, TransactionCancelled, Update, Write
from arca.adapters.store.change import Change as Staged
from arca.adapters.store.conditions import ARTIFACT_IS_LIVE, ITEM_EXISTS, at_most, tags_unchanged
from arca.adapters.store.feed import Feed
from arca.adapters.store.records import blob_count_write
from arca.domain.aggregates import VersionRecord
from arca.domain.errors import ConflictError, ContentionError, LinkedNameError, NotFoundError, RegistryError
from arca.domain.events import Change, VersionExpired
from arca.domain.models import MAX_ALIASES
from arca.domain.retention import RetentionPolicy
from arca.domain.versions import encode_version

# Content-index hits a collection reads to find versions published before blob counts existed.
LEGACY_HOLDERS = 10


class RetentionStore:
    """Retention's items; an expiry announces itself through the feed."""

    def __init__(self, table: Table, feed: Feed) -> None:
        self.table = table
        self.feed = feed

    # The policy.

    def policy(self, name: str) -> RetentionPolicy | None:
        item = self.table.get(keys.retention_policy_key(name))
        return None if item is None else RetentionPolicy.model_validate(item)

    def commit(self, change: Staged) -> None:
        """Commit a change staged with this store (forwarded to the feed, the one place a change commits)."""
        self.feed.commit(change)

    def stage_policy(self, change: Staged, policy: RetentionPolicy) -> None:
        """Stage the policy, while the artifact is live (the commit raises NotFoundError / LinkedNameError
        otherwise)."""
        item = {
            "kind": "retention-policy",
            **policy.model_dump(exclude_none=True),
            **keys.retention_index_attributes(policy.name),
        }
        change.stage(Write("policy", "Put", keys.retention_policy_key(policy.name), item=item))
        change.stage(
            Write("latest", "ConditionCheck", keys.latest_key(policy.name), condition=ARTIFACT_IS_LIVE),
            refused=lambda reason: _not_live(reason, policy.name),
        )

    def delete_policy(self, name: str) -> bool:
        """True when a policy was removed."""
        try:
            self.table.transact([Write("policy", "Delete", keys.retention_policy_key(name), condition=ITEM_EXISTS)])
        except TransactionCancelled:
            return False
        return True

    def policies_page(self, *, start: dict[str, str] | None, limit: int) -> tuple[list[str], dict[str, str] | None]:
        """Names of artifacts with a policy, in name order, from the sparse index (one Query)."""
        page = self.table.query_index(
            keys.SEARCH_INDEX, keys.INDEX_KEYS[keys.SEARCH_INDEX], keys.RETENTION_INDEX_PK, start=start, limit=limit
        )
        return [str(i["gsi1sk"]) for i in page.items], page.last_key

    @staticmethod
    def index_key(name: str) -> dict[str, str]:
        """The sparse index key of `name`'s policy, to go on after it (`policies_page`'s `start`)."""
        return {**keys.retention_policy_key(name), **keys.retention_index_attributes(name)}

    def sweep_state(self) -> tuple[dict[str, str] | None, str | None]:
        """Where the scheduled sweep's current pass goes on (None: between passes) and when that pass started."""
        item = self.table.get(keys.sweep_key()) or {}
        return item.get("resume_at"), item.get("started_at")

    def save_sweep(self, cursor: dict[str, str] | None, started_at: str) -> None:
        if cursor:
            update = Update(set={"started_at": started_at, "resume_at": cursor})
        else:
            update = Update(set={"started_at": started_at}, remove=("resume_at",))
        self.table.update(keys.sweep_key(), update)

    # The roots' reads: the alias partition, the rollouts, each live alias's last revisions.

    def running_rollouts(self, name: str) -> list[tuple[str, int]]:
        """(alias, version) of every running rollout (one Query: one item per alias)."""
        page = self.table.query(keys.rollout_pk(name), consistent=True, limit=MAX_ALIASES)
        return [(str(i["alias"]), int(i["version"])) for i in page.items if i.get("state") == "running"]

    def recent_targets(self, name: str, alias: str, window: int) -> list[int]:
        """The versions the alias's last `window` revisions pointed at (one Query of `window` records)."""
        if window == 0:
            return []
        page = self.table.query(
            keys.history_pk(name),
            sk_prefix=keys.history_prefix(alias),
            forward=False,
            limit=window,
            consistent=True,
            projection="version, secondary_version",
        )
        found: list[int] = []
        for item in page.items:
            found += [int(v) for f in ("version", "secondary_version") if isinstance(v := item.get(f), int | float)]
        return found

    # Expiry.

    def stage_expiry(self, change: Staged, version: VersionRecord, *, cutoff: str) -> bool:
        """Stage the turning of a soft-deleted version into a tombstone; False (nothing staged) when the version is
        gone. The commit raises ExpiryRefused when its state changed since it was read (restored, pinned, already
        expired, its tags written, or LATEST took its content): then nothing was written.

        The version keeps its number (the item stays, `expired`), leaves the content index, and its reference
        leaves its blob count; the marker `expired#%06d` holds what `finish` still has to clean up.
        """
        name, number, now = version.name, version.version, change.now
        item = self.table.get(keys.version_key(name, number))
        if item is None:
            return False
        # Its tags go with it (the item and their index rows), as read: a tag write since moved `tag_rev`.
        tags = sorted(item.get("tags") or {})
        tag_rev = int(item.get("tag_rev", 0))
        refused = ExpiryRefused(f"version {number} of {name!r} changed since it was judged")
        writes = [
            Write(
                "version",
                "Update",
                keys.version_key(name, number),
                update=Update(
                    set={"expired": True, "expired_at": now},
                    remove=("gsi1pk", "gsi1sk", "tags", "tagged_at"),
                    add={"tag_rev": 1},
                ),
                condition=(
                    Attr("deleted").eq(True)
                    & Attr("deleted_at").lte(cutoff)
                    & Attr("expired").not_exists()
                    & Attr("pinned_by").not_exists()
                    & tags_unchanged(tag_rev)
                ),
            ),
            *(Write(f"tag{i}", "Delete", keys.version_tag_key(name, number, tag)) for i, tag in enumerate(tags)),
            Write(
                "marker",
                "Put",
                keys.expired_marker_key(name, number),
                item={"kind": "retention-expired", "version": number, "sha256": version.sha256, "at": now},
            ),
            # LATEST may have taken this content after the roots were read: then the version is one of LATEST's.
            Write(
                "latest",
                "Update",
                keys.latest_key(name),
                update=Update(set={"updated_at": now}),
                condition=ARTIFACT_IS_LIVE & Attr("sha256").ne(version.sha256),
            ),
        ]
        if item.get("counted"):
            writes.append(blob_count_write("blob", name, version.sha256, -1))
        for write in writes:
            change.stage(write, refused=refused if write.condition is not None else None)
        change.announce(Change(VersionExpired(), number))
        return True

    def markers(self, name: str, *, limit: int) -> list[tuple[int, str]]:
        """(version, sha256) of expiries whose clean-up is unfinished, oldest first (one Query)."""
        page = self.table.query(keys.retention_pk(name), sk_prefix=keys.EXPIRED_PREFIX, consistent=True, limit=limit)
        return [(int(i["version"]), str(i["sha256"])) for i in page.items]

    def attestation_keys(self, name: str, version: int) -> list[dict[str, str]]:
        """The keys of a version's attestation items (one Query of up to 100: a version has at most that many)."""
        page = self.table.query(
            keys.attestations_pk(name),
            sk_prefix=keys.attestation_prefix(version),
            consistent=True,
            limit=100,
            projection="pk, sk",
        )
        return [{"pk": i["pk"], "sk": i["sk"]} for i in page.items]

    def delete_items(self, item_keys: list[dict[str, str]]) -> None:
        if item_keys:
            self.table.batch_delete(item_keys)

    def blob_count(self, name: str, sha256: str) -> Item | None:
        return self.table.get(keys.blob_count_key(name, sha256))

    def legacy_holder(self, name: str, sha256: str, *, expiring: int | None) -> bool:
        """Whether a version other than `expiring` that is not expired holds the content: the content index
        (versions published before blob counts existed are counted nowhere else), each hit confirmed by a
        consistent read, since the index lags."""
        page = self.table.query_index(
            keys.SEARCH_INDEX,
            keys.INDEX_KEYS[keys.SEARCH_INDEX],
            keys.content_search_pk(sha256),
            sk_prefix=keys.search_prefix(name),
            limit=LEGACY_HOLDERS,
        )
        for hit in page.items:
            if expiring is not None and hit["sk"] == encode_version(expiring):
                continue
            item = self.table.get({"pk": hit["pk"], "sk": hit["sk"]})
            if item is not None and not item.get("expired"):
                return True
        return len(page.items) == LEGACY_HOLDERS and page.last_key is not None

    def stage_claim(self, change: Staged, sha256: str, *, token: str, objects: list[StoredObject]) -> Claim:
        """Stage the marking of the content's count `collecting` with our `token` while nothing references it (a
        count of zero or none) and no other collection holds it, recording the `objects` (the exact versions) to
        delete; and LATEST's `collections` advanced, so a reference checked before cannot commit after (the fence,
        arca.adapters.store.artifacts). The claim made once the change commits; the commit raises CollectionHeld
        (with the other collection's claim) when one holds the content, NotCollectable when a reference holds it
        or the artifact is gone."""
        name, now = change.name, change.now
        change.stage(
            Write(
                "count",
                "Update",
                keys.blob_count_key(name, sha256),
                update=_claiming(token, now, objects),
                condition=at_most("refs", 0) & Attr("collecting").not_exists(),
            ),
            refused=lambda reason: _held(reason, sha256),
        )
        change.stage(_advance_collections(name), refused=NotCollectable(f"artifact {name!r} is gone"))
        return Claim(token=token, claimed_at=now, objects=tuple(objects))

    def take_over(
        self, name: str, sha256: str, held: Claim, *, token: str, now: str, objects: list[StoredObject]
    ) -> Claim | None:
        """Take over an abandoned collection (`held`, claimed longer ago than any function runs), to delete
        `objects` (the ones it recorded). None when its owner finished or someone else took it over first."""
        since = Attr("claimed_at").eq(held.claimed_at) if held.claimed_at else Attr("claimed_at").not_exists()
        try:
            self.table.update(
                keys.blob_count_key(name, sha256),
                _claiming(token, now, objects),
                condition=Attr("collecting").eq(held.token) & since,
            )
        except ConditionFailed:
            return None
        return Claim(token=token, claimed_at=now, objects=tuple(objects))

    def release(self, name: str, version: int | None, sha256: str, *, token: str | None) -> bool:
        """Finish a clean-up: delete the expiry's marker (`version`; None: none), and with our collection's `token`
        its count too, advancing LATEST's `collections` (a reference checked while the bytes were still there
        cannot commit now). False, with nothing written, when the collection is no longer ours."""
        writes = [] if version is None else [Write("marker", "Delete", keys.expired_marker_key(name, version))]
        if token is not None:
            writes += [
                Write("count", "Delete", keys.blob_count_key(name, sha256), condition=Attr("collecting").eq(token)),
                _advance_collections(name),
            ]
        if not writes:
            return True
        try:
            self.table.transact(writes)
        except TransactionCancelled:
            return False
        return True


class ExpiryRefused(ContentionError):
    """An expiry's version or LATEST changed since they were read: the version is not expired now."""


class CollectionHeld(ConflictError):
    """Another collection holds the content (`claim`): a claim of it is refused."""

    def __init__(self, message: str, claim: Claim) -> None:
        super().__init__(message)
        self.claim = claim


class NotCollectable(ConflictError):
    """A reference holds the content (or its artifact is gone): a claim of it is refused."""


def _held(reason: Reason, sha256: str) -> RegistryError:
    held = claim_of(reason.item) if reason.item is not None else None
    if held is not None:
        return CollectionHeld(f"content {sha256} is being collected", held)
    return NotCollectable(f"content {sha256} is referenced")


def _not_live(reason: Reason, name: str) -> RegistryError:
    if reason.item is not None and reason.item.get("link"):
        return LinkedNameError(name, reason.item["link"])
    return NotFoundError(f"artifact {name!r} does not exist")


@dataclass(frozen=True)
class StoredObject:
    """One object version a collection deletes: its key, and its version id (`null` on an unversioned bucket)."""

    key: str
    version: str

    def item(self) -> dict[str, str]:
        return {"key": self.key, "version": self.version}


@dataclass(frozen=True)
class Claim:
    """A collection's hold on a content's count: whose (`token`), since when, and the object versions it deletes."""

    token: str
    claimed_at: str
    objects: tuple[StoredObject, ...]


def claim_of(count: Item) -> Claim | None:
    """The collection holding a count item, if any (items claimed before `claimed_at` existed: the epoch)."""
    if not count.get("collecting"):
        return None
    objects = tuple(StoredObject(str(o["key"]), str(o["version"])) for o in count.get("claimed") or ())
    return Claim(token=str(count["collecting"]), claimed_at=str(count.get("claimed_at", "")), objects=objects)


def _advance_collections(name: str) -> Write:
    """LATEST counts one more collection claimed or finished (it exists: a tombstone too, which nothing fences)."""
    return Write(
        "latest",
        "Update",
        keys.latest_key(name),
        update=Update(add={"collections": 1}),
        condition=ITEM_EXISTS,
    )


def _claiming(token: str, now: str, objects: list[StoredObject]) -> Update:
    """A collection's claim on a content's blob count: its token, when, and the object versions it will delete."""
    return Update(set={"collecting": token, "claimed_at": now, "claimed": [o.item() for o in objects]})
