"""Conditions, named for what they assert (as Powertools' idempotency layer names its own) and kept in one place.

Each is a ConditionExpression over the item a write names; the stores compose them with `AND` (a condition
built for one write is never edited afterwards).
"""

from __future__ import annotations

# The item does not exist yet (a put that creates).
ITEM_NOT_EXIST = "attribute_not_exists(pk)"
# The item exists (an update that must not create).
ITEM_EXISTS = "attribute_exists(pk)"
# LATEST can be written by PUT latest, publish and purge; the artifact is live only while neither flag is set.
ARTIFACT_IS_LIVE = "attribute_exists(pk) AND attribute_not_exists(purging) AND attribute_not_exists(purged)"
# The artifact's event order: LATEST's `last_event` only moves forwards (arca.adapters.store.feed).
EVENT_IS_NEWER = "(attribute_not_exists(last_event) OR last_event < :last_event)"
# LATEST as read: a compare-and-set on its `rev`, which every write of LATEST advances.
LATEST_UNCHANGED = "rev = :rev"
# An idempotency record that is absent or past its retention (TTL deletion lags).
RECEIPT_NOT_EXIST_OR_EXPIRED = "attribute_not_exists(pk) OR #ttl <= :now"
