"""The one form of a stored time: ISO 8601 in UTC with milliseconds and `Z` (`2026-05-01T12:00:00.000Z`)."""

from __future__ import annotations

from datetime import UTC, datetime


def to_iso(moment: datetime) -> str:
    """A moment as every stored time is written (a naive moment is taken as the machine's local time)."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def from_iso(text: str) -> datetime:
    """A stored time read back; raises ValueError for text that is not ISO 8601."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
