"""The artifact's event feed: a page, every event, and following it as it grows."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from arca_client.calls.http import HttpCalls, artifact_path
from arca_client.models import Event, Page


class EventCalls(HttpCalls):
    def list_events(
        self, name: str, *, after: str | None = None, limit: int | None = None, next_token: str | None = None
    ) -> Page[Event]:
        """One page of the artifact's events, oldest first, after the event id `after`."""
        data = self._get(artifact_path(name, "events"), {"after": after, "limit": limit, "next_token": next_token})
        return Page([Event.from_dict(e) for e in data.get("events") or []], data.get("next_token"))

    def iter_events(self, name: str, *, after: str | None = None, page_size: int | None = None) -> Iterator[Event]:
        """Every event after `after` (default: from the first), oldest first, each once."""
        return self._pages(
            artifact_path(name, "events"), "events", Event.from_dict, {"after": after, "limit": page_size}
        )

    def follow_events(
        self,
        name: str,
        *,
        after: str | None = None,
        poll: float = 1.0,
        max_poll: float = 15.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> Iterator[Event]:
        """The events after `after`, then each new one as it is committed, forever (stop iterating to stop).

        Polls with `after` = the last id seen, so no event is missed or repeated; an empty poll doubles the
        pause (from `poll` up to `max_poll` seconds), an event brings it back to `poll`.
        """
        pause = poll
        while True:
            came = False
            for event in self.iter_events(name, after=after):
                came = True
                after = event.id
                yield event
            pause = poll if came else min(pause * 2, max_poll)
            sleep(pause)
