"""The SDK's event feed (list, iterate, follow with backoff) and `arca events`."""

from __future__ import annotations

import json
from typing import Any

import pytest

from arca_client import Event
from tests.client.test_cli_unit import FakeClient, run
from tests.client.test_sdk import Harness, make


def event(n: int, **extra: Any) -> dict[str, Any]:
    return {
        "id": f"{n:016d}-0000000{n % 10}",
        "type": "version.published",
        "at": "2026-05-01T12:00:00.000Z",
        "name": "app",
        "version": n,
        "detail": {},
        **extra,
    }


@pytest.fixture
def h() -> Harness:
    return make()


def test_iter_events_sends_after_and_follows_tokens(h: Harness) -> None:
    # Given
    h.answer((200, {"events": [event(2)], "next_token": "t2"}), (200, {"events": [event(3)], "next_token": None}))
    # When
    found = list(h.client.iter_events("team/app", after=event(1)["id"], page_size=1))
    # Then
    assert [e.version for e in found] == [2, 3]
    assert h.sent[0].path == "/artifacts/team/app/events"
    assert h.sent[0].query["after"] == [event(1)["id"]] and h.sent[0].query["limit"] == ["1"]
    assert h.sent[1].query["next_token"] == ["t2"]


def test_follow_polls_after_the_last_id_backing_off_while_nothing_comes(h: Harness) -> None:
    # Given one event, then two empty polls, then another event
    h.answer(
        (200, {"events": [event(1)], "next_token": None}),
        (200, {"events": [], "next_token": None}),
        (200, {"events": [], "next_token": None}),
        (200, {"events": [event(2)], "next_token": None}),
    )
    pauses: list[float] = []
    # When the first two events are read
    followed = h.client.follow_events("app", poll=1.0, max_poll=3.0, sleep=pauses.append)
    found = [next(followed), next(followed)]
    # Then each poll asked after the last id seen, and the pause doubled (capped) while polls came back empty
    assert [e.id for e in found] == [event(1)["id"], event(2)["id"]]
    assert [s.query.get("after") for s in h.sent] == [None, [event(1)["id"]], [event(1)["id"]], [event(1)["id"]]]
    assert pauses == [1.0, 2.0, 3.0]


def test_events_prints_one_line_per_event(capsys: pytest.CaptureFixture[str]) -> None:
    # Given
    fake = FakeClient(iter_events=lambda name, after: iter([Event.from_dict(event(1, by="ana"))]))
    # When
    code, _ = run(["events", "app", "--after", "0000000000000000-00000000"], fake)
    # Then
    assert code == 0
    line = capsys.readouterr().out.strip()
    assert "version.published" in line and "ana" in line and event(1)["id"] in line
    assert fake.called("iter_events") == (("app",), {"after": "0000000000000000-00000000"})


def test_events_json_prints_the_events_as_the_api_sent_them(capsys: pytest.CaptureFixture[str]) -> None:
    fake = FakeClient(iter_events=lambda name, after: iter([Event.from_dict(event(1))]))
    code, _ = run(["--json", "events", "app"], fake)
    assert code == 0
    assert json.loads(capsys.readouterr().out) == [event(1)]


def test_follow_stops_cleanly_on_ctrl_c(capsys: pytest.CaptureFixture[str]) -> None:
    # Given a feed that yields one event, then the user presses Ctrl-C
    def follow(name: str, after: str | None) -> Any:
        yield Event.from_dict(event(1))
        raise KeyboardInterrupt

    # When
    code, _ = run(["events", "app", "--follow", "--json"], FakeClient(follow_events=follow))
    # Then it exits 0, having printed the event as one JSON line, and nothing on stderr
    captured = capsys.readouterr()
    assert code == 0
    assert [json.loads(line) for line in captured.out.splitlines()] == [event(1)]
    assert captured.err == ""
