"""Artifacts: LATEST (the working copy and the artifact's counters), its listing rows and its blob counts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from boto3.dynamodb.conditions import Attr

from arca.adapters import keys
from arca.adapters.dynamo import Item, Reason, Table, Update, Write
from arca.adapters.store.change import Change, Refusal
from arca.adapters.store.conditions import ARTIFACT_IS_LIVE, ITEM_NOT_EXIST, latest_unchanged, no_collection_since
from arca.adapters.store.feed import Feed
from arca.adapters.store.pages import page
from arca.adapters.store.records import (
    artifact_tag_item,
    blob_count_write,
    latest_item,
    latest_record,
    listing_rows,
    signed_attributes,
    version_item,
    version_record,
)
from arca.domain.aggregates import LatestRecord, VersionRecord
from arca.domain.errors import ConflictError, ContentionError, LinkedNameError, RegistryError
from arca.domain.signing import Signed

if TYPE_CHECKING:  # the request and event models are not needed on the read path (the resolve function's cold start)
    from arca.domain.models import Content


# Blob counts one change adds a reference to (DynamoDB takes 100 actions a transaction).
COUNT_BATCH = 100
# The order in which a LATEST write's refusals are asked: a collection holding the content, then LATEST moved (the
# writer re-reads), then the version taken.
COUNT_RANK, LATEST_RANK, VERSION_RANK = 0, 1, 2


class ArtifactStore:
    def __init__(self, table: Table, feed: Feed) -> None:
        self.table = table
        self.feed = feed

    def latest(self, name: str) -> LatestRecord | None:
        """LATEST as stored, tombstones (purged) and marks (purging) included."""
        item = self.table.get(keys.latest_key(name))
        return None if item is None else latest_record(item)

    def names_page(
        self, prefix: str, *, limit: int, token: str | None
    ) -> tuple[list[tuple[str, str | None]], str | None]:
        """(name, link target or None) from the flat `__names` partition, begins_with(prefix)."""
        items, next_token = page(
            self.table,
            keys.NAMES_PK,
            f"artifacts:{prefix}:None",
            limit=limit,
            token=token,
            keep=lambda i: True,
            sk_prefix=prefix,
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
        items, next_token = page(
            self.table,
            keys.dir_pk(parent),
            f"artifacts:{prefix}:/",
            limit=limit,
            token=token,
            keep=lambda i: not i["sk"].endswith("/") or int(i.get("children", 0)) > 0,
            sk_prefix=prefix[len(parent) :],
        )
        return [(parent + i["sk"], i.get("link")) for i in items], next_token

    def commit(self, change: Change) -> None:
        """Commit a change staged into by the stores (Feed.commit: its refusals say what a failure means)."""
        self.feed.commit(change)

    def stage_latest(
        self,
        change: Change,
        seen: LatestRecord | None,
        content: Content,
        *,
        publish_as: int | None = None,
        signed: Signed | None = None,
    ) -> LatestRecord | VersionRecord:
        """Stage LATEST set to `content` (a compare-and-set on what was `seen`), its blob counts and, with
        `publish_as`, that version, with the events they announce.

        `signed` (the version's manifest and signature) goes on the version item and on LATEST, which keeps it
        while its bytes stay the newest version's; a LATEST write of other bytes removes it.

        A new (or purged) artifact gets its LATEST and its listing rows in the same change. Returns the new version
        when publishing, else LATEST as written. Raises LinkedNameError for a link and ConflictError while a purge
        runs (as `seen` shows); once committed, ConflictError when a collection holds the content, ContentionError
        when LATEST moved since it was read.
        """
        name, now = change.name, change.now
        latest = self._latest_writes(name, seen, content, now=now, publish_as=publish_as, signed=signed)
        # Asked after the blob counts (a collection holding the content is said first), before the version: the
        # loser of a publish race usually fails twice (the counter moved, and the winner's version exists), and
        # re-reads.
        change.stage(latest[0], refused=ContentionError(f"LATEST of {name!r} changed concurrently"), rank=LATEST_RANK)
        for row in latest[1:]:
            change.stage(row)
        for sha256, count in blob_count_writes(name, seen, content.sha256, published=publish_as is not None):
            change.stage(count, refused=_collecting(sha256), rank=COUNT_RANK)
        version: Item | None = None
        if publish_as is not None:
            version = version_item(
                VersionRecord(
                    name=name, version=publish_as, **content.model_dump(), created_at=now, **signed_attributes(signed)
                )
            )
            key = keys.version_key(name, publish_as)
            change.stage(
                Write("version", "Put", key, item=version, condition=ITEM_NOT_EXIST),
                refused=ConflictError(f"concurrent change: version {publish_as} of {name!r} exists"),
                rank=VERSION_RANK,
            )
        written: LatestRecord | VersionRecord
        if version is not None:
            written = version_record(version)
        elif seen is None or seen.purged:
            written = latest_record(dict(latest[0].item or {}))
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
        from arca.domain.events import Change as Announced
        from arca.domain.events import LatestUpdated, VersionPublished

        fields = content.model_dump()
        changed = seen is None or seen.purged or fields != {f: getattr(seen, f) for f in fields}
        # A publish that snapshots LATEST as it is announces only the version; PUT latest always writes LATEST.
        if changed or publish_as is None:
            change.announce(Announced(LatestUpdated(**_content_detail(content)), "LATEST"))
        if publish_as is not None:
            change.announce(Announced(VersionPublished(**_content_detail(content)), publish_as))
        return written

    def stage_created(
        self, change: Change, seen: LatestRecord | None, *, description: str | None, tags: dict[str, str]
    ) -> LatestRecord:
        """Stage `name` created with no version yet: its LATEST (holding no content), its listing rows, its tags'
        search rows and the `artifact.created` event. Returns LATEST as written.

        `seen` is the name's LATEST as read: None (never used) or a tombstone (a purged artifact: its counters
        stay, so version numbers are not reused). Raises ConflictError (field name) when it is live; once
        committed, ConflictError (field name) or LinkedNameError when the name is an artifact or a link meanwhile,
        ContentionError when the tombstone changed since it was read.
        """
        name, now = change.name, change.now
        if seen is not None and not seen.purged:
            raise exists_error(name)
        latest = first_latest(
            name,
            seen,
            now=now,
            newest=seen.newest if seen else 0,
            version_count=0,
            fields={
                **({"tags": tags} if tags else {}),
                **({"description": description} if description is not None else {}),
                **({"tag_rev": 1, "tagged_at": now} if tags or description is not None else {}),
            },
        )

        def taken(reason: Reason) -> RegistryError:
            found = reason.item
            if found is not None and found.get("link"):
                return LinkedNameError(name, str(found["link"]))
            if found is not None and not found.get("purged"):
                return exists_error(name)
            return ContentionError(f"{name!r} changed concurrently")

        change.stage(latest, refused=taken)
        for row in listing_rows(name):
            change.stage(row)
        for i, (tag, value) in enumerate(sorted(tags.items())):
            change.stage(
                Write(f"tag{i}", "Put", keys.artifact_tag_key(name, tag), item=artifact_tag_item(name, tag, value))
            )
        from arca.domain.events import ArtifactCreated
        from arca.domain.events import Change as Announced

        change.announce(Announced(ArtifactCreated(tags=tags, **({"description": description} if description else {}))))
        return latest_record(dict(latest.item or {}))

    def stage_counts(self, change: Change, contents: list[str]) -> None:
        """Stage a reference added to each content's blob count (a tree's files, before the write that makes the
        tree; at most COUNT_BATCH a change). Each holds only while no collection of that content is under way
        (`collecting`): once committed, ConflictError naming the first content refused otherwise. A reference added
        by a write that then fails or is deduplicated stays (the content is then kept longer, never removed while
        referenced)."""
        if len(contents) > COUNT_BATCH:
            raise ValueError(f"at most {COUNT_BATCH} blob counts a change")
        for index, sha in enumerate(contents):
            change.stage(blob_count_write(f"blob{index}", change.name, sha, 1), refused=_collecting(sha))

    def _latest_writes(
        self,
        name: str,
        seen: LatestRecord | None,
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
            latest = first_latest(
                name,
                seen,
                now=now,
                newest=publish_as or (seen.newest if seen else 0),
                version_count=1 if publish_as else 0,
                fields={
                    **fields,
                    **({"newest_sha256": content.sha256} if publish_as else {}),
                    **(signed_attributes(signed) if publish_as else {}),
                    "counted_sha256": content.sha256,
                },
            )
            return [latest, *listing_rows(name)]
        if seen.purging:
            raise ConflictError(f"artifact {name!r} is being purged", field="name")
        # `rev` advances on every write of LATEST: the condition on it makes each write a compare-and-set,
        # so a publish never takes a number twice nor snapshots content that changed after it was read.
        sets: dict[str, Any] = {"updated_at": now}
        adds = {"rev": 1}
        if fields != {f: getattr(seen, f) for f in fields}:
            sets.update(fields)
            if fields["sha256"] != seen.sha256:  # LATEST's reference moves in the blob counts (blob_count_writes)
                sets["counted_sha256"] = fields["sha256"]
        removes: list[str] = []
        if publish_as:
            sets.update({"newest": publish_as, "newest_sha256": content.sha256})
            adds["version_count"] = 1
            if signed is not None:
                sets.update({"manifest": signed.manifest, "signature": signed.signature})
            else:
                removes = ["manifest", "signature"]
        elif not _same_bytes(seen, content):
            removes = ["manifest", "signature"]  # LATEST no longer holds the bytes the manifest names
        return [
            Write(
                "latest",
                "Update",
                keys.latest_key(name),
                update=Update(set=sets, remove=removes, add=adds),
                # And no collection began or ended since the bytes were checked (under `seen`): the fence that
                # keeps a reference from being added to bytes a collection deletes.
                condition=ARTIFACT_IS_LIVE & latest_unchanged(seen.rev) & no_collection_since(seen.collections),
                compare={"rev": seen.rev, "collections": seen.collections or None},
            )
        ]


def first_latest(
    name: str, seen: LatestRecord | None, *, now: str, newest: int, version_count: int, fields: dict[str, Any]
) -> Write:
    """The Put of LATEST for a new artifact (`seen` None) or over a purged one's tombstone (whose counters go on, so
    version numbers are never reused), holding `fields` (LATEST's, as its aggregate names them) besides its counters.

    Over a tombstone, a compare-and-set on `rev` too: a purge finished after `seen` was read (its blobs gone), a
    link or another write must send the writer back to re-read.
    """
    item = latest_item(
        LatestRecord(
            name=name,
            **fields,
            created_at=now,
            updated_at=now,
            newest_version=newest,
            version_count=version_count,
            rev=(seen.rev if seen else 0) + 1,
            purges=seen.purges if seen else 0,
            revision_base=seen.revision_base if seen else 0,
        )
    )
    if seen is None:
        return Write("latest", "Put", keys.latest_key(name), item=item, condition=ITEM_NOT_EXIST)
    condition = Attr("purged").exists() & Attr("link").not_exists() & latest_unchanged(seen.rev)
    return Write("latest", "Put", keys.latest_key(name), item=item, condition=condition, compare={"rev": seen.rev})


def exists_error(name: str) -> ConflictError:
    """The 409 of creating an artifact that exists."""
    return ConflictError(f"artifact {name!r} exists already", field="name", details={"exists": True})


def _content_detail(content: Content) -> dict[str, Any]:
    return {"sha256": content.sha256, "size": content.size, "content_type": content.content_type}


def _same_bytes(seen: LatestRecord, content: Content) -> bool:
    return seen.sha256 == content.sha256 and seen.size == content.size


def _collecting(sha256: str) -> Refusal:
    """The refusal of a reference to `sha256` added to its blob count: the count as it was names the collection."""
    return lambda reason: collecting_error(sha256, reason.item)


def collecting_error(sha256: str, count: Item | None) -> ConflictError:
    """The 409 of a reference refused because retention is removing the content (its count is `collecting`)."""
    since = f" since {count['claimed_at']}" if count and count.get("claimed_at") else ""
    return ConflictError(
        f"retention is removing the content {sha256}{since}; upload it again once it is gone "
        "(POST …/uploads then answers exists: false)",
        field="sha256",
        details={"collecting": True},
    )


def blob_count_writes(name: str, seen: LatestRecord | None, sha256: str, *, published: bool) -> list[tuple[str, Write]]:
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
    changed = sorted((sha, delta) for sha, delta in deltas.items() if delta)
    return [(sha, blob_count_write(f"blob{index}", name, sha, delta)) for index, (sha, delta) in enumerate(changed)]
