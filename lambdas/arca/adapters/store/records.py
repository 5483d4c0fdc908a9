"""Item <-> entity mappers: what is stored, read back as the entities the services speak in."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from arca.adapters import keys
from arca.adapters.dynamo import Item, Update, Write, deserialize
from arca.adapters.store.conditions import receipt_not_exist_or_expired
from arca.domain.downloads import recorded_filename
from arca.domain.entities import (
    Alias,
    AliasAction,
    AliasRevision,
    Latest,
    Rollout,
    Target,
    Version,
    VersionRef,
)
from arca.domain.signing import Signed

if TYPE_CHECKING:  # the write side's and the feed's: a resolve's cold start imports neither the guards' models
    from arca.domain.events import Event  # nor the events'
    from arca.domain.guards import Serving
    from arca.domain.receipts import Answer, Receipt

CONTENT_FIELDS = ("sha256", "size", "content_type", "metadata", "part_size", "parts_sha256", "files", "file_types")
TARGET_FIELDS = ("sha256", "size", "content_type")
ALIAS_FIELDS = ("version", "secondary_version", "secondary_version_weight", "description")


class LatestRecord(BaseModel):
    """What LATEST's item holds: the working copy (the API answers it as `Latest`, see `entity`) and the
    artifact's state the writes keep there."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    name: str
    sha256: str | None = None
    size: int | None = None
    content_type: str | None = None
    metadata: dict[str, str] | None = None
    created_at: str | None = None
    updated_at: str | None = None
    newest_version: int | None = None
    rev: int = 0  # compare-and-set counter advanced by every LATEST write
    newest_sha256: str | None = None
    # The content whose reference LATEST holds in the artifact's blob counts (absent: written before counts).
    counted_sha256: str | None = None
    version_count: int = 0
    deleted_count: int = 0
    alias_count: int = 0  # live aliases, kept by the alias transactions
    purging: str | None = None
    purged: str | None = None
    purges: int = 0  # finished purges: a publish re-checks its blob when this moved
    # Collections of the artifact's content claimed or finished (retention): a reference is added only under this
    # count as read when the bytes were checked, so no collection can start between the check and the write.
    collections: int = 0
    revision_base: int = 0  # the highest alias revision purges removed: new aliases go on from it
    link: str | None = None  # set: this name is a link to that artifact, not an artifact
    link_count: int = 0  # links that point at this artifact
    part_size: int | None = None
    parts_sha256: str | None = None  # the layout of multipart content (arca.domain.multipart)
    files: int | None = None  # a tree's count of files (None: one blob)
    file_types: str | None = None  # the sha256 of a tree's types document (decision 113)
    tags: dict[str, str] = Field(default_factory=dict)  # the artifact's tags (the summary shows them)
    description: str | None = None
    tag_rev: int = 0  # compare-and-set counter of the artifact's tags and description
    last_event: str | None = None  # the newest event id: the next one must sort after it
    # The signed manifest of the newest version while LATEST holds its bytes (resolving LATEST shows it).
    manifest: str | None = None
    signature: str | None = None

    @property
    def newest(self) -> int:
        return self.newest_version or 0

    def entity(self) -> Latest:
        """LATEST as the API answers it."""
        return Latest.model_validate({f: getattr(self, f) for f in _LATEST_FIELDS})


_LATEST_FIELDS = tuple(f for f in LatestRecord.model_fields if f in Latest.model_fields)


def latest_record(item: Item) -> LatestRecord:
    fields = {f: item.get(f) for f in (*CONTENT_FIELDS, "created_at", "updated_at", "newest_sha256", "counted_sha256")}
    return LatestRecord(
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
        collections=int(item.get("collections", 0)),
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


class VersionRecord(BaseModel):
    """What a version's item holds: the version (the API answers it as `Version`, see `entity`) and the state
    the services need besides: the tags' compare-and-set counter and the name of a multipart layout."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    name: str
    version: int
    sha256: str
    size: int
    content_type: str
    metadata: dict[str, str]
    created_at: str
    deleted: bool = False
    deleted_at: str | None = None
    aliases: list[str] = Field(default_factory=list)
    tags: dict[str, str] = Field(default_factory=dict)
    tag_rev: int = 0  # compare-and-set counter of the tags
    lease_rev: int = 0  # counts the leases taken on it: a soft delete holds only while none was taken since
    attestations: list[str] = Field(default_factory=list)
    part_size: int | None = None
    part_count: int | None = None
    parts_sha256: str | None = None  # the layout's name (arca.domain.multipart)
    files: int | None = None  # a tree's count of files (None: one blob)
    file_types: str | None = None  # the sha256 of a tree's types document (decision 113)
    manifest: str | None = None
    signature: str | None = None
    expired: bool = False

    def entity(self, parts: list[str] | None = None) -> Version:
        """The version as the API answers it (with `parts`, the part hashes of multipart content)."""
        return Version.model_validate({**{f: getattr(self, f) for f in _VERSION_FIELDS}, "parts": parts})


_VERSION_FIELDS = tuple(f for f in VersionRecord.model_fields if f in Version.model_fields)


def version_record(item: Item) -> VersionRecord:
    return VersionRecord(
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
        lease_rev=int(item.get("lease_rev", 0)),
        attestations=sorted(item.get("attestations") or ()),
        manifest=item.get("manifest"),
        signature=item.get("signature"),
        expired=bool(item.get("expired")),
    )


def version_entity(item: Item) -> Version:
    """A version's item as the API answers it (listings)."""
    return version_record(item).entity()


class _AliasStateRecord(BaseModel):
    """What an alias item and a history record hold of an alias's state besides what the API answers: the
    targets' content copied on the item (an alias resolves with one item read) and the deletion tombstone."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    version: VersionRef | None = None
    secondary_version: VersionRef | None = None
    secondary_version_weight: int | None = None
    description: str | None = None
    revision: int
    updated_at: str | None = None
    updated_by: str | None = None
    reason: str | None = None
    primary: Target | None = None
    secondary: Target | None = None
    deleted: bool = False  # a tombstone keeps the revision counter after a delete

    @property
    def pinned(self) -> set[int]:
        """The numbered versions this state points at (LATEST is never pinned: it cannot be deleted)."""
        if self.deleted:
            return set()
        return {v for v in (self.version, self.secondary_version) if isinstance(v, int)}

    def serving(self) -> Serving | None:
        """What this state serves (None: a deletion), as a policy judges it."""
        from arca.domain.guards import Serving

        if self.deleted or self.version is None:
            return None
        weight = self.secondary_version_weight or 0
        return Serving(self.version, self.secondary_version, weight if self.secondary_version is not None else 0)


class AliasRecord(_AliasStateRecord):
    """What an alias item holds (the API answers it as `Alias`, see `entity`)."""

    name: str
    alias: str
    created_at: str | None = None
    first_revision: int = 1  # where this alias's history starts (after a purge: later)
    # The revision of the alias's live policy (0: none), kept true by the alias's writes and its policy's writes,
    # so a write of an alias without a policy reads none; None: an item written before the alias carried it.
    policy_revision: int | None = None

    def entity(self) -> Alias:
        """The alias as the API answers it."""
        return Alias.model_validate({f: getattr(self, f) for f in _ALIAS_FIELDS})


class RevisionRecord(_AliasStateRecord):
    """What a history record holds (the API answers it as `AliasRevision`, see `entity`)."""

    action: AliasAction

    def entity(self) -> AliasRevision:
        """The revision as the API answers it."""
        return AliasRevision.model_validate({f: getattr(self, f) for f in _REVISION_FIELDS})


_ALIAS_FIELDS = tuple(f for f in AliasRecord.model_fields if f in Alias.model_fields)
_REVISION_FIELDS = tuple(f for f in RevisionRecord.model_fields if f in AliasRevision.model_fields)


def _alias_state(item: Item) -> dict[str, Any]:
    return {
        **{f: item.get(f) for f in (*ALIAS_FIELDS, "updated_at", "updated_by", "reason")},
        "revision": item["revision"],
        "primary": item.get("primary"),
        "secondary": item.get("secondary"),
        "deleted": bool(item.get("deleted")),
    }


def alias_record(item: Item) -> AliasRecord:
    return AliasRecord(
        name=item["name"],
        alias=item["alias"],
        created_at=item.get("created_at"),
        first_revision=int(item.get("first_revision", 1)),
        policy_revision=None if item.get("policy_revision") is None else int(item["policy_revision"]),
        **_alias_state(item),
    )


def revision_record(item: Item) -> RevisionRecord:
    return RevisionRecord(action=item["action"], **_alias_state(item))


def rollout_entity(item: Item) -> Rollout:
    fields = {k: v for k, v in item.items() if k in Rollout.model_fields}
    # Lists come back from DynamoDB as they went in (numbers as numbers); the entity wants plain ints.
    fields.update(steps=[int(w) for w in item["steps"]], alarms=list(item.get("alarms") or ()))
    return Rollout(**fields)


def rollout_item(rollout: Rollout) -> Item:
    return {"kind": "rollout", **rollout.model_dump(exclude_none=True)}


def image_item(image: dict[str, Any]) -> Item:
    """An item as a stream record's image carries it (DynamoDB JSON)."""
    return deserialize(image) or {}


def event_entity(item: Item) -> Event:
    from arca.domain.events import Event

    return Event(**{f: item[f] for f in Event.model_fields if f in item})


def event_item(event: Event) -> Item:
    """The event's item: its null fields left out, but not its detail's (a null there is part of the detail).
    An empty `detail` is left out: DynamoDB Local's stream gives an empty map as `{}`, which no decoder reads."""
    item = {
        "kind": "event",
        **event.model_dump(exclude_none=True, exclude={"detail"}),
        "detail": event.detail.model_dump(),
    }
    if not item.get("detail"):
        item.pop("detail", None)
    return item


def artifact_tag_item(name: str, tag: str, value: str) -> Item:
    """The row that makes an artifact found by its tag `tag=value` (the search index's GSI1)."""
    return {
        "kind": "artifact-tag",
        "name": name,
        "tag": tag,
        "value": value,
        "gsi1pk": keys.artifact_tag_search_pk(tag, value),
        "gsi1sk": name,
    }


def alias_item(new: AliasRecord) -> dict[str, Any]:
    """The alias item's attributes (without its key)."""
    state = new.model_dump(exclude={"primary", "secondary", "deleted", "first_revision"})
    return {
        "kind": "alias",
        **{k: v for k, v in state.items() if v is not None},
        **{side: getattr(new, side).model_dump() for side in ("primary", "secondary") if getattr(new, side)},
        "deleted": new.deleted,
        "first_revision": new.first_revision,
    }


def target_of(source: LatestRecord | VersionRecord) -> Target:
    return Target(
        sha256=str(source.sha256),
        size=int(source.size or 0),
        content_type=str(source.content_type),
        filename=recorded_filename(source.metadata),
        part_size=source.part_size,
        parts_sha256=source.parts_sha256,
        files=source.files,
        file_types=source.file_types,
        manifest=source.manifest,
        signature=source.signature,
    )


def signed_attributes(signed: Signed | None) -> dict[str, str]:
    return {} if signed is None else {"manifest": signed.manifest, "signature": signed.signature}


def receipt_write(receipt: Receipt, answer: Answer) -> Write:
    """The idempotency record `__idem#<scope>` / `<key>`, put only where none is retained (an expired one is
    replaced)."""
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
        condition=receipt_not_exist_or_expired(receipt.now),
    )


def listing_rows(name: str, *, link: str | None = None) -> list[Write]:
    """The name-index row and the folder rows that make a new artifact (or a link, carrying its target)
    listable: each folder counts one child more, the leaf row is put."""
    extra = {"link": link} if link else {}
    leaf = {"kind": "link" if link else "artifact", **extra}
    return [Write("name", "Put", keys.name_key(name), item={"kind": "name", **extra}), *_folder_rows(name, 1, leaf)]


def unlisting_rows(name: str) -> list[Write]:
    """The opposite of `listing_rows`, for a purged artifact or a removed link: its rows go, each folder counts
    one child less (a folder row with no children left is skipped by the listing)."""
    return [Write("name", "Delete", keys.name_key(name)), *_folder_rows(name, -1, None)]


def _folder_rows(name: str, delta: int, leaf: Item | None) -> list[Write]:
    """Each folder row of `name` counts `delta` children more; its own row is put as `leaf`, or deleted."""
    writes = []
    for i, (key, folder) in enumerate(keys.dir_keys(name)):
        if folder:
            writes.append(Write(f"dir{i}", "Update", key, update=Update(add={"children": delta})))
        elif leaf is None:
            writes.append(Write(f"dir{i}", "Delete", key))
        else:
            writes.append(Write(f"dir{i}", "Put", key, item=leaf))
    return writes
