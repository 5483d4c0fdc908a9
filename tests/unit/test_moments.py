"""The one form of a stored time, and that no other module writes or parses one its own way."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from arca.domain.moments import from_iso, to_iso

PACKAGE = Path(__file__).resolve().parents[2] / "lambdas" / "arca"


def test_a_moment_is_written_in_utc_with_milliseconds_and_z() -> None:
    # Given a moment two hours east of Greenwich, with microseconds
    moment = datetime(2026, 5, 1, 14, 0, 0, 123456, tzinfo=timezone(timedelta(hours=2)))
    # Then it is written in UTC, to the millisecond, with Z
    assert to_iso(moment) == "2026-05-01T12:00:00.123Z"


def test_a_written_moment_reads_back_as_the_same_instant() -> None:
    # Given a moment written
    moment = datetime(2026, 5, 1, 12, 0, 0, 123000, tzinfo=UTC)
    # Then it reads back aware and equal, and so do the forms written before (offset, no fraction)
    assert from_iso(to_iso(moment)) == moment
    assert from_iso("2026-05-01T14:00:00.123+02:00") == moment
    assert from_iso("2026-05-01T12:00:00Z") == moment.replace(microsecond=0)


def test_text_that_is_no_time_is_refused() -> None:
    with pytest.raises(ValueError):
        from_iso("yesterday")


def test_no_other_module_writes_or_parses_a_stored_time() -> None:
    # Given every module of the functions but the one form's
    own = PACKAGE / "domain" / "moments.py"
    other = [f for f in sorted(PACKAGE.rglob("*.py")) if f != own]
    # Then none parses ISO text or writes the millisecond form itself
    written = re.compile(r"fromisoformat|isoformat\(timespec=\"milliseconds\"\)")
    assert [f.relative_to(PACKAGE).as_posix() for f in other if written.search(f.read_text())] == []
