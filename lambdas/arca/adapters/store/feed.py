"""The per-artifact event feed, written in the transaction of the change it announces."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from arca.adapters import keys
from arca.adapters.dynamo import Table, TransactionCancelled, Update, Write
from arca.adapters.store.conditions import ITEM_NOT_EXIST, event_is_newer
from arca.adapters.store.pages import fitting
from arca.adapters.store.records import event_entity, event_item
from arca.domain.errors import ContentionError

if TYPE_CHECKING:  # the events' models are imported by the writes that announce them: a resolve imports none
    from arca.adapters.store.change import Change as StagedChange
    from arca.domain.events import Change, Event

# Tries of one event-carrying transaction that later ids keep overtaking (each try goes after the last seen).
EVENT_ATTEMPTS = 10
# Artifacts whose newest event id a warm instance remembers, so its memory stays bounded.
MAX_FLOORS = 10_000


class Feed:
    """Events over one table, and the one place a staged change (arca.adapters.store.change) is committed."""

    def __init__(self, table: Table, *, micros: Callable[[], int] | None = None) -> None:
        self.table = table
        self._micros = micros or (lambda: time.time_ns() // 1000)
        # The newest event id this instance saw per artifact: its next ids go after it, whatever its clock says.
        self._floors: dict[str, str] = {}

    def events_page(
        self, name: str, *, after: str | None, limit: int, token: str | None
    ) -> tuple[list[Event], str | None]:
        """Events oldest first, after the id `after` (or where `token` left off); one strongly consistent Query.

        Consistent, and ids only grow in commit order: whatever commits later sorts after every id read here.
        """
        pk = keys.events_pk(name)
        scope = f"events:{name}"
        start = keys.decode_token(token, scope, pk=pk) if token else None
        if start is None and after is not None:
            start = keys.event_key(name, after)  # an ExclusiveStartKey need not be an item: read after it
        page = self.table.query(pk, consistent=True, limit=limit, start=start)
        fit = fitting(page.items)  # cut at PAGE_BYTES as every listing
        events = [event_entity(i) for i in page.items[:fit]]
        if fit < len(page.items):
            last = page.items[fit - 1]
            return events, keys.encode_token({"pk": last["pk"], "sk": last["sk"]}, scope)
        return events, keys.encode_token(page.last_key, scope) if page.last_key else None

    def _send(self, writes: list[Write], name: str, changes: list[Change], *, by: str | None, now: str) -> list[Event]:
        """Commit `writes` (which must include the artifact's LATEST) with one event item per change, each by `by`
        unless the change names its own author.

        The events get increasing ids after the artifact's `last_event`, and LATEST's write also sets
        `last_event` to the newest of them under `last_event < :id`: two transactions on one artifact then
        commit in the order of their ids. A transaction refused only because a later id committed first
        (another writer, or a clock behind) is sent again with ids after that one; any other cancellation is
        raised as TransactionCancelled, which `commit` answers with the staged items' refusals.
        """
        if not changes:
            self.table.transact(writes)
            return []
        from arca.domain.events import Event, next_ids

        for _ in range(EVENT_ATTEMPTS):
            ids = next_ids(self._micros(), self._floors.get(name), len(changes))
            events = [
                Event(
                    id=i,
                    type=c.type,
                    at=now,
                    by=c.by or by,
                    name=name,
                    version=c.version,
                    alias=c.alias,
                    detail=c.detail,
                )
                for i, c in zip(ids, changes, strict=True)
            ]
            stamped, latest = _stamped(writes, name, events)
            try:
                self.table.transact(stamped)
            except TransactionCancelled as cancelled:
                behind = _overtaken(cancelled, latest, ids)
                if behind is None:
                    raise
                self._raise_floor(name, behind)
                continue
            self._raise_floor(name, ids[-1])
            return events
        raise ContentionError(f"events of {name!r} kept being overtaken; retry")

    def commit(self, change: StagedChange) -> list[Event]:
        """Commit one staged change (arca.adapters.store.change): its items and an event item per announced change,
        in one transaction ordered as `commit` orders it. A cancellation raises what the staged items' refusals
        say it means (a ContentionError, for the service's compare-and-set to retry, when none speaks)."""
        try:
            return self._send(change.writes(), change.name, change.announced, by=change.by, now=change.now)
        except TransactionCancelled as cancelled:
            raise change.refusal(cancelled) from None

    def _raise_floor(self, name: str, event: str) -> None:
        if len(self._floors) >= MAX_FLOORS and name not in self._floors:
            self._floors.clear()  # only a head start: the condition on LATEST is what orders the ids
        if event > self._floors.get(name, ""):
            self._floors[name] = event


def _stamped(writes: list[Write], name: str, events: list[Event]) -> tuple[list[Write], Write]:
    """`writes` with the event Puts added and LATEST's write moving `last_event` forwards (a ConditionCheck
    of LATEST becomes an Update). Returns them and that LATEST write."""
    last = events[-1].id
    at = next(i for i, w in enumerate(writes) if dict(w.key) == keys.latest_key(name))
    write = writes[at]
    condition = event_is_newer(last) if write.condition is None else write.condition & event_is_newer(last)
    if write.kind == "Put":
        latest = dataclasses.replace(write, item={**(write.item or {}), "last_event": last}, condition=condition)
    else:
        update = (write.update or Update()).also(set={"last_event": last})
        latest = dataclasses.replace(write, kind="Update", update=update, condition=condition)
    puts = [
        Write(f"event{i}", "Put", keys.event_key(name, e.id), item=event_item(e), condition=ITEM_NOT_EXIST)
        for i, e in enumerate(events)
    ]
    return [*writes[:at], latest, *writes[at + 1 :], *puts], latest


def _overtaken(cancelled: TransactionCancelled, latest: Write, ids: list[str]) -> str | None:
    """The id to go after when only event ordering refused the transaction; None when something else did.

    LATEST's reason carries the item as it was: a `last_event` at or after ours means a later id committed
    first. A LATEST write that also compares `rev` lost a real race when `rev` moved: the caller re-reads.
    """
    if any(name.startswith("event") for name in cancelled.reasons):  # an id taken: vanishingly rare
        return ids[-1]
    reason = cancelled.failed(latest.name)
    if reason is None or reason.item is None:
        return None
    if any(cancelled.failed(name) for name in cancelled.reasons if name != latest.name):
        return None  # another item's condition failed too: sending it again cannot help
    seen = reason.item.get("last_event")
    if seen is None or seen < ids[0]:
        return None
    # LATEST's own compare-and-sets (`rev`, the tags' `tag_rev`): when they moved, the caller must re-read
    if any(reason.item.get(attribute) != value for attribute, value in latest.compare.items()):
        return None
    return str(seen)
