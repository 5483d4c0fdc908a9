"""Links: a name that reads as another artifact.

A link is its name's LATEST item with `link` (and `purged`, so every artifact condition already
refuses it), a marker at `~link` in its alias partition, a row in the target's reverse index, and its listing rows
carrying `link`. The target's LATEST counts its links (`link_count`), and a link is made only while the target is
live (no purge mark), so the purge mark (under `link_count <= 0` unless forced) and link creation serialise on that
one item.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from boto3.dynamodb.conditions import Attr, ConditionBase

from arca.adapters import keys
from arca.adapters.dynamo import Reason, Table, TransactionCancelled, Update, Write
from arca.adapters.store.change import Change as Staged
from arca.adapters.store.conditions import ARTIFACT_IS_LIVE, ITEM_EXISTS, ITEM_NOT_EXIST, latest_unchanged
from arca.adapters.store.feed import Feed
from arca.adapters.store.pages import PURGE_PAGE
from arca.adapters.store.records import latest_item, listing_rows, unlisting_rows
from arca.domain.aggregates import LatestRecord
from arca.domain.entities import Link
from arca.domain.errors import ConflictError, ContentionError, NotFoundError, RegistryError
from arca.domain.events import Change, LinkDeleted, LinkUpdated
from arca.domain.models import MAX_ALIASES


class LinkStore:
    def __init__(self, table: Table, feed: Feed) -> None:
        self.table = table
        self.feed = feed

    def links_to(self, target: str, *, limit: int = MAX_ALIASES) -> list[str]:
        """Names of the links to `target`, the first `limit` (one Query of its reverse index): a 409 names at most
        that many."""
        page = self.table.query(keys.links_pk(target), consistent=True, limit=limit, projection="pk, sk")
        return [i["sk"] for i in page.items]

    def commit(self, change: Staged) -> None:
        """Commit a change staged with this store (forwarded to the feed, the one place a change commits)."""
        self.feed.commit(change)

    def stage_link(self, change: Staged, name: str, target: str, seen: LatestRecord | None) -> Link:
        """Stage `name` as a link to `target`, or its re-pointing (a compare-and-set on `seen`), into `change`:
        a change of `target` (announced in its feed: reads under the link name follow it there).

        `seen` is the name's LATEST as read: None (never used), a tombstone (a purged artifact: its counters
        stay, so version numbers are not reused if it is an artifact again) or a link (re-pointed). The commit
        raises ContentionError when the name changed since, ConflictError when the name is an artifact,
        NotFoundError (field target) when the target is not a live artifact, ConflictError when the target is a
        link or being purged.
        """
        now = change.now
        old = seen.link if seen is not None else None
        latest_key = keys.latest_key(name)
        if seen is None:
            item = latest_item(LatestRecord(name=name, link=target, purged=now, created_at=now, updated_at=now, rev=1))
            own = Write("link", "Put", latest_key, item=item, condition=ITEM_NOT_EXIST)
        else:
            # Over a tombstone: still a tombstone, nobody linked it meanwhile; re-pointing: still this link.
            condition = Attr("purged").exists() & Attr("purging").not_exists() & latest_unchanged(seen.rev)
            condition &= Attr("link").eq(old) if old else Attr("link").not_exists()
            sets: dict[str, Any] = {"link": target, "updated_at": now}
            if not old:
                sets.update({"created_at": now, "kind": "link"})
            own = Write(
                "link",
                "Update",
                latest_key,
                update=Update(set=sets, add={"rev": 1}),
                condition=condition,
            )
        change.stage(own, refused=lambda reason: _name_refusal(reason, name))
        change.stage(
            _link_count("target", target, 1, condition=ARTIFACT_IS_LIVE),
            refused=lambda reason: _target_refusal(reason, target),
        )
        change.stage(Write("row", "Put", keys.link_row_key(target, name), item={"kind": "link-row"}))
        change.stage(Write("marker", "Put", keys.link_marker_key(name), item={"kind": "link-marker", "link": target}))
        if old:
            change.stage(_link_count("old_target", old, -1, condition=ITEM_EXISTS))
            change.stage(Write("old_row", "Delete", keys.link_row_key(old, name)))
            change.stage(Write("name", "Update", keys.name_key(name), update=Update(set={"link": target})))
            leaf = keys.dir_keys(name)[-1][0]
            change.stage(Write("leaf", "Update", leaf, update=Update(set={"link": target})))
        else:
            for write in listing_rows(name, link=target):
                change.stage(write)
        change.announce(Change(LinkUpdated(link=name, target=target, previous_target=old or None)))
        created = seen.created_at if seen is not None and old else now
        return Link(name=name, link=target, created_at=created, updated_at=now)

    def stage_unlink(self, change: Staged, name: str, seen: LatestRecord) -> None:
        """Stage the removal of the link `seen` (its name stays a tombstone keeping its counters) into `change`, a
        change of its target, announced as `link.deleted` in the target's feed; the commit raises ContentionError
        if the link moved."""
        assert seen.link is not None
        writes = _unlink_writes(name, seen.link, condition=Attr("link").eq(seen.link) & latest_unchanged(seen.rev))
        change.stage(writes[0], refused=ContentionError(f"link {name!r} changed concurrently"))
        for write in writes[1:]:
            change.stage(write)
        change.announce(Change(LinkDeleted(link=name, target=seen.link)))

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
                    self.table.transact(_unlink_writes(link, target, condition=Attr("link").eq(target)))
                except TransactionCancelled:
                    # Re-pointed or removed meanwhile: that write removed this row; one left over goes alone.
                    with contextlib.suppress(TransactionCancelled):
                        self.table.transact(
                            [
                                Write(
                                    "row",
                                    "Delete",
                                    keys.link_row_key(target, link),
                                    condition=ITEM_EXISTS,
                                )
                            ]
                        )


def _name_refusal(reason: Reason, name: str) -> RegistryError:
    """The link's own name: an artifact now (live, or being purged), or changed since it was read."""
    found = reason.item
    if found is not None and (not found.get("purged") or found.get("purging")):
        return ConflictError(f"{name!r} is an artifact; a link needs a free name", field="name")
    return ContentionError(f"{name!r} changed concurrently")


def _target_refusal(reason: Reason, target: str) -> RegistryError:
    """The target is a link itself, being purged, or no live artifact."""
    found = reason.item
    if found is not None and found.get("link"):
        return ConflictError(f"target {target!r} is a link itself; link to {found['link']!r}", field="target")
    if found is not None and found.get("purging"):
        return ConflictError(f"target {target!r} is being purged", field="target")
    return NotFoundError(f"target {target!r} is not an artifact", field="target")


def _unlink_writes(name: str, target: str, *, condition: ConditionBase) -> list[Write]:
    """Remove the link `name` → `target`: its LATEST goes back to a tombstone (counters kept), the marker, the
    reverse-index row and the listing rows go, and the target counts one link less."""
    writes = [
        Write(
            "link",
            "Update",
            keys.latest_key(name),
            update=Update(set={"kind": "latest"}, remove=("link",), add={"rev": 1}),
            condition=condition,
        ),
        Write("marker", "Delete", keys.link_marker_key(name)),
        Write("row", "Delete", keys.link_row_key(target, name)),
        _link_count("target", target, -1, condition=ITEM_EXISTS),
    ]
    return writes + unlisting_rows(name)


def _link_count(write: str, target: str, delta: int, *, condition: ConditionBase) -> Write:
    """The target's LATEST counts its links: `delta` more (a new link only while the target is live)."""
    return Write(
        write,
        "Update",
        keys.latest_key(target),
        update=Update(add={"link_count": delta}),
        condition=condition,
    )
