"""Events: what each committed change announces, and the ids that order them (pure; no I/O).

An event id is `<microseconds since the epoch, 16 digits>-<8 hex digits>`: fixed width, so ids sort as
strings in time order. Ids are made strictly increasing per artifact by the writer (after the artifact's
`last_event`, the floor), and the transaction that stores an event also moves `last_event` on LATEST
only forwards, so the order of ids is the order of commits.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any

EVENT_TYPES = (
    "latest.updated",
    "version.published",
    "version.deleted",
    "version.restored",
    "version.tagged",
    "artifact.updated",
    "alias.updated",
    "alias.deleted",
    "link.updated",
    "link.deleted",
    "rollout.started",
    "rollout.advanced",
    "rollout.completed",
    "rollout.rolled_back",
    "artifact.purged",
    "version.expired",
    "alias.policy_updated",
    "promotion.requested",
    "promotion.approved",
    "promotion.applied",
    "promotion.rejected",
    "attestation.added",
)
ID_PATTERN = r"^[0-9]{16}-[0-9a-f]{8}$"
_DIGITS = 16


@dataclass(frozen=True)
class Change:
    """One event a write announces, before it has an id, a time and an author (the transaction gives those)."""

    type: str
    version: int | str | None = None
    alias: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.type not in EVENT_TYPES:
            raise ValueError(f"unknown event type {self.type!r}")


def event_id(micros: int, suffix: str | None = None) -> str:
    return f"{micros:0{_DIGITS}d}-{suffix or secrets.token_hex(4)}"


def micros_of(event: str) -> int:
    return int(event[:_DIGITS])


def next_ids(now_micros: int, floor: str | None, count: int) -> list[str]:
    """`count` increasing ids, all after `floor` (the artifact's `last_event`) even when this clock is behind.

    Each takes a microsecond of its own, so ids of one transaction never tie whatever their suffixes.
    """
    start = now_micros if floor is None else max(now_micros, micros_of(floor) + 1)
    return [event_id(start + i) for i in range(count)]
