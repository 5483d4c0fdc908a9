"""Conditions, named for what they assert (as Powertools' idempotency layer names its own) and kept in one place.

Each is a condition on the item a write names, built with boto3's condition builders: the stores compose them
with `&`, `|` and `~` (a condition built for one write is never edited as text), and the table renders them, with
generated placeholders, when it builds the request (arca.adapters.dynamo.expressions).
"""

from __future__ import annotations

from typing import Any

from boto3.dynamodb.conditions import Attr, ConditionBase

# The item does not exist yet (a put that creates).
ITEM_NOT_EXIST = Attr("pk").not_exists()
# The item exists (an update that must not create).
ITEM_EXISTS = Attr("pk").exists()
# LATEST can be written by PUT latest, publish and purge; the artifact is live only while neither flag is set.
ARTIFACT_IS_LIVE = ITEM_EXISTS & Attr("purging").not_exists() & Attr("purged").not_exists()


def event_is_newer(last_event: str) -> ConditionBase:
    """The artifact's event order: LATEST's `last_event` only moves forwards (arca.adapters.store.feed)."""
    return Attr("last_event").not_exists() | Attr("last_event").lt(last_event)


def latest_unchanged(rev: int) -> ConditionBase:
    """LATEST as read: a compare-and-set on its `rev`, which every write of LATEST advances."""
    return Attr("rev").eq(rev)


def no_collection_since(collections: int) -> ConditionBase:
    """LATEST's count of collections as read: no collection of the artifact's content was claimed or finished
    since (arca.adapters.store.retention)."""
    return Attr("collections").eq(collections) if collections else Attr("collections").not_exists()


def tags_unchanged(tag_rev: int) -> ConditionBase:
    """A version's (or LATEST's) tags as read: their counter unchanged (absent before the first tag write)."""
    return Attr("tag_rev").eq(tag_rev) if tag_rev else Attr("tag_rev").not_exists()


def below(attribute: str, cap: Any) -> ConditionBase:
    """A counter under its cap (absent: zero)."""
    return Attr(attribute).not_exists() | Attr(attribute).lt(cap)


def at_most(attribute: str, limit: Any) -> ConditionBase:
    """A counter at or under `limit` (absent: zero)."""
    return Attr(attribute).not_exists() | Attr(attribute).lte(limit)


def receipt_expired(now: int) -> ConditionBase:
    """An idempotency record past its retention (TTL deletion lags)."""
    return Attr("ttl").lte(now)


def receipt_not_exist_or_expired(now: int) -> ConditionBase:
    """An idempotency record that is absent or past its retention: the only one a new record replaces."""
    return ITEM_NOT_EXIST | receipt_expired(now)
