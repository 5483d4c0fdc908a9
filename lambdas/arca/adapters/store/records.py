"""Item <-> aggregate mappers, the stores' shared helpers: what is stored, read back as the aggregates
(arca.domain.aggregates) and the entities the services speak in.

Each aggregate's pair lives here, side by side: `latest_record`/`latest_item`, `version_record`/`version_item`,
`alias_record`/`alias_item`, `revision_record`/`revision_item`. Several stores read and write the same items (LATEST:
artifacts, links, tags, …), and a store imports no other store; so no Put names their attributes but these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from boto3.dynamodb.conditions import Attr

from arca.adapters import keys
from arca.adapters.dynamo import Item, Table, Update, Write, deserialize
from arca.adapters.store.conditions import receipt_not_exist_or_expired
from arca.adapters.store.pages import first_at
from arca.domain.aggregates import AliasRecord, LatestRecord, RevisionRecord, VersionRecord
from arca.domain.entities import Rollout, Version
from arca.domain.errors import LinkedNameError
from arca.domain.signing import Signed

if TYPE_CHECKING:  # the write side's and the feed's: a resolve's cold start imports no event model
    from arca.domain.events import Event
    from arca.domain.receipts import Answer, Receipt

CONTENT_FIELDS = ("sha256", "size", "content_type", "metadata", "part_size", "parts_sha256", "files", "file_types")
TARGET_FIELDS = ("sha256", "size", "content_type")
ALIAS_FIELDS = ("version", "secondary_version", "secondary_version_weight", "description")


def latest_record(item: Item) -> LatestRecord:
    """LATEST's item read back (`latest_item` writes it)."""
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
        tagged_at=item.get("tagged_at"),
        manifest=item.get("manifest"),
        signature=item.get("signature"),
    )


# What LATEST's item holds only when set (a null is never written for them).
_LATEST_OPTIONAL = (
    "newest_sha256",
    "counted_sha256",
    "manifest",
    "signature",
    "link",
    "purged",
    "purging",
    "description",
    "last_event",
    "tagged_at",
)


def latest_item(latest: LatestRecord) -> Item:
    """LATEST's item (with its key), as a Put writes it whole: an artifact's (kind `latest`) holds its content once
    it has some (every content attribute, nulls included) and its counts; a link's (kind `link`) its target and the
    counters a name keeps across lives. Attributes with no value are left out; counters read as 0 when absent are
    written only where they move (`collections`, `link_count`, `tag_rev`)."""
    item: Item = {"kind": "link" if latest.link else "latest", "name": latest.name}
    if latest.sha256 is not None:
        item.update({f: getattr(latest, f) for f in CONTENT_FIELDS})
    item.update({f: value for f in _LATEST_OPTIONAL if (value := getattr(latest, f)) is not None})
    item.update({f: value for f in ("created_at", "updated_at") if (value := getattr(latest, f)) is not None})
    if latest.tags:
        item["tags"] = dict(latest.tags)
    item.update({f: value for f in ("tag_rev", "collections", "link_count") if (value := getattr(latest, f))})
    item.update(newest=latest.newest, rev=latest.rev, purges=latest.purges, revision_base=latest.revision_base)
    if not latest.link:
        item.update(
            version_count=latest.version_count, deleted_count=latest.deleted_count, alias_count=latest.alias_count
        )
    return {**item, **keys.latest_key(latest.name)}


def version_record(item: Item) -> VersionRecord:
    """A version's item read back (`version_item` writes it)."""
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


def version_item(version: VersionRecord) -> Item:
    """A version's item (with its key and index attributes), as its publish puts it: every content attribute
    (nulls included), the rest only when set. Its reference is in the blob counts from the start (`counted`:
    versions published before counts lack it)."""
    item: Item = {
        "kind": "version",
        "name": version.name,
        **{f: getattr(version, f) for f in CONTENT_FIELDS},
        "created_at": version.created_at,
        "deleted": version.deleted,
    }
    item.update(
        {f: value for f in ("deleted_at", "manifest", "signature") if (value := getattr(version, f)) is not None}
    )
    sets = {"pinned_by": set(version.aliases), "attestations": set(version.attestations)}
    item.update({f: value for f, value in sets.items() if value})
    item.update({f: value for f in ("tags", "tag_rev", "lease_rev", "expired") if (value := getattr(version, f))})
    item["counted"] = True
    index = keys.version_index_attributes(version.name, version.version, version.sha256, version.created_at)
    return {**item, **index, **keys.version_key(version.name, version.version)}


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
    """An alias's item read back (`alias_item` writes it)."""
    return AliasRecord(
        name=item["name"],
        alias=item["alias"],
        created_at=item.get("created_at"),
        first_revision=int(item.get("first_revision", 1)),
        policy_revision=None if item.get("policy_revision") is None else int(item["policy_revision"]),
        **_alias_state(item),
    )


def alias_at(table: Table, name: str, alias: str) -> AliasRecord | None:
    """The alias's item read now, a deletion tombstone included (one item read); LinkedNameError when `name` is a
    link (its marker is the first item at or after any alias name)."""
    item = first_at(table, keys.alias_key(name, alias))
    if item is not None and item["sk"] == keys.LINK_SK:
        raise LinkedNameError(name, item["link"])
    return None if item is None or item["sk"] != alias else alias_record(item)


def revision_record(item: Item) -> RevisionRecord:
    """A history record read back (`revision_item` writes it)."""
    return RevisionRecord(action=item["action"], **_alias_state(item))


def alias_item(new: AliasRecord) -> Item:
    """The alias's item (with its key): its state's attributes that hold a value, its targets' content, its
    tombstone mark and where its history starts."""
    state = new.model_dump(exclude={"primary", "secondary", "deleted", "first_revision"})
    return {
        "kind": "alias",
        **{k: v for k, v in state.items() if v is not None},
        **{side: getattr(new, side).model_dump() for side in ("primary", "secondary") if getattr(new, side)},
        "deleted": new.deleted,
        "first_revision": new.first_revision,
        **keys.alias_key(new.name, new.alias),
    }


def revision_item(alias: AliasRecord, action: str, *, timed: bool = False) -> Item:
    """The history record of `alias` at its revision (with its key): the alias's item as written then, but for
    its mark of the policy, and the `action` that wrote it. `timed`: the same record under the time-ordered key
    ("the alias at time T" is one Query)."""
    key = (
        keys.history_time_key(alias.name, alias.alias, str(alias.updated_at), alias.revision)
        if timed
        else keys.history_key(alias.name, alias.alias, alias.revision)
    )
    written = {k: v for k, v in alias_item(alias).items() if k not in ("policy_revision", "pk", "sk")}
    return {**written, "kind": "alias-history-time" if timed else "alias-history", "action": action, **key}


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


def signed_attributes(signed: Signed | None) -> dict[str, str]:
    return {} if signed is None else {"manifest": signed.manifest, "signature": signed.signature}


def blob_count_write(label: str, name: str, sha256: str, delta: int) -> Write:
    """`delta` references added to (or taken from) a content's blob count: an addition holds only while no collection
    of the content is under way (`collecting`), a removal always."""
    return Write(
        label,
        "Update",
        keys.blob_count_key(name, sha256),
        update=Update(add={"refs": delta}),
        condition=Attr("collecting").not_exists() if delta > 0 else None,
    )


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
