"""Item <-> aggregate mappers: what is stored, read back as the aggregates (arca.domain.aggregates) and the
entities the services speak in."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arca.adapters import keys
from arca.adapters.dynamo import Item, Update, Write, deserialize
from arca.adapters.store.conditions import receipt_not_exist_or_expired
from arca.domain.aggregates import AliasRecord, LatestRecord, RevisionRecord, VersionRecord
from arca.domain.entities import Rollout, Version
from arca.domain.signing import Signed

if TYPE_CHECKING:  # the write side's and the feed's: a resolve's cold start imports no event model
    from arca.domain.events import Event
    from arca.domain.receipts import Answer, Receipt

CONTENT_FIELDS = ("sha256", "size", "content_type", "metadata", "part_size", "parts_sha256", "files", "file_types")
TARGET_FIELDS = ("sha256", "size", "content_type")
ALIAS_FIELDS = ("version", "secondary_version", "secondary_version_weight", "description")


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
            writes.append(Write(f"dir{i}", "Update", key, update=Update(add=("children :n",)), values={":n": delta}))
        elif leaf is None:
            writes.append(Write(f"dir{i}", "Delete", key))
        else:
            writes.append(Write(f"dir{i}", "Put", key, item=leaf))
    return writes
