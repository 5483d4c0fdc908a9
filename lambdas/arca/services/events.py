"""The event feed of an artifact: every committed change, oldest first (written by the feed's
transactions themselves, see Feed.commit in arca.adapters.store.feed)."""

from __future__ import annotations

from typing import Any

from arca.adapters.bus import Bus
from arca.adapters.store.feed import Feed
from arca.adapters.store.records import event_entity, image_item
from arca.domain.events import ArtifactPurged, Event, EventPage, event_id
from arca.domain.moments import from_iso
from arca.services.reading import Reading


class Events:
    def __init__(self, feed: Feed, reading: Reading) -> None:
        self.feed = feed
        self.reading = reading

    def page(self, name: str, *, after: str | None, limit: int, token: str | None) -> EventPage:
        """Events after the id `after` (or where `token` left off), oldest first; 404 for no such artifact.

        A reader that keeps asking with `after=<the last id it saw>` sees every event exactly once.
        """
        self.reading.live_latest(name)
        events, next_token = self.feed.events_page(name, after=after, limit=limit, token=token)
        return EventPage(events=events, next_token=next_token)


class Announcer:
    """Puts what the table's stream records announce on the bus."""

    def __init__(self, bus: Bus) -> None:
        self.bus = bus

    def deliver(self, record: dict[str, Any]) -> Event | None:
        """Put the record's event on the bus (raises DeliveryError if refused); None when it announces nothing."""
        event = announcement(record)
        if event is not None:
            self.bus.put(event)
        return event


def announcement(record: dict[str, Any]) -> Event | None:
    """The event a stream record of the table announces, or None for any other change.

    An event item's INSERT is its event. `artifact.purged` has no item: it is the change of LATEST into a
    tombstone (MODIFY, `purged` set where it was not). Its id is made from the tombstone (the purge's time and
    count), so the same record always announces the same id, however often it is delivered.
    """
    change = record.get("dynamodb") or {}
    new_image, old_image = change.get("NewImage") or {}, change.get("OldImage") or {}
    if record.get("eventName") == "INSERT" and new_image.get("kind") == {"S": "event"}:
        return event_entity(image_item(new_image))
    # Only the attributes read here are decoded: the rest of LATEST is none of this function's business.
    tombstone = record.get("eventName") == "MODIFY" and new_image.get("sk") == {"S": "LATEST"}
    if tombstone and "purged" in new_image and "purged" not in old_image:
        latest = image_item({k: new_image[k] for k in ("name", "purged", "newest", "purges") if k in new_image})
        purged = str(latest["purged"])
        return Event(
            id=event_id(_micros(purged), f"{int(latest.get('purges', 0)):08x}"),
            type="artifact.purged",
            at=purged,
            name=str(latest["name"]),
            detail=ArtifactPurged(
                newest_version=int(latest.get("newest", 0)) or None, purges=int(latest.get("purges", 0))
            ),
        )
    return None


def _micros(iso: str) -> int:
    return int(from_iso(iso).timestamp() * 1_000_000)
