"""`arca rollout` and the SDK's rollout calls: the requests they send, and what they print."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from arca_client import ConflictError, Rollout, TransportError
from tests.client.test_cli_unit import FakeClient, run
from tests.client.test_sdk import Harness, error, make


def rollout(**extra: Any) -> dict[str, Any]:
    return {
        "id": "r1",
        "name": "app",
        "alias": "prod",
        "state": "running",
        "version": 4,
        "from_version": 3,
        "steps": [10, 50],
        "step": 1,
        "weight": 10,
        "interval_seconds": 60,
        "alarms": ["errors"],
        "next_at": "2026-11-23T12:01:00.000Z",
        "started_at": "2026-11-23T12:00:00.000Z",
        "reason": None,
        "alias_revision": 7,
        **extra,
    }


# ---- SDK ------------------------------------------------------------------------------------------


@pytest.fixture
def h() -> Harness:
    return make()


def test_start_rollout_sends_the_body_and_parses_the_rollout(h: Harness) -> None:
    # Given
    h.answer((201, rollout()))
    # When
    started = h.client.start_rollout(
        "team/app", "prod", 4, steps=[10, 50], interval_seconds=60, alarms=["errors"], reason="r"
    )
    # Then
    sent = h.sent[0]
    assert (sent.method, sent.path) == ("PUT", "/artifacts/team/app/aliases/prod/rollout")
    assert sent.json() == {"version": 4, "steps": [10, 50], "interval_seconds": 60, "alarms": ["errors"], "reason": "r"}
    assert "Idempotency-Key" not in sent.headers
    assert started.running and started.steps == [10, 50] and started.from_version == 3


def test_a_start_whose_answer_is_lost_is_not_sent_again(h: Harness) -> None:
    # Given a dropped connection: the first start may have been applied, and a second would meet it (409)
    h.answer(requests.ConnectionError("reset"))
    # When / Then
    with pytest.raises(TransportError):
        h.client.start_rollout("app", "prod", 4, steps=[10], interval_seconds=1)
    assert len(h.sent) == 1


def test_a_second_rollout_is_a_conflict(h: Harness) -> None:
    # Given
    h.answer((409, error("RolloutRunningError", field="alias")))
    # When / Then
    with pytest.raises(ConflictError):
        h.client.start_rollout("app", "prod", 4, steps=[10], interval_seconds=1)


def test_abort_and_status(h: Harness) -> None:
    # Given
    h.answer((200, rollout(state="aborted", step=2, weight=0)), (200, rollout(state="aborted", step=2, weight=0)))
    # When
    aborted = h.client.abort_rollout("app", "prod")
    status = h.client.get_rollout("app", "prod")
    # Then
    assert [(s.method, s.path) for s in h.sent] == [
        ("DELETE", "/artifacts/app/aliases/prod/rollout"),
        ("GET", "/artifacts/app/aliases/prod/rollout"),
    ]
    assert aborted.state == status.state == "aborted" and not status.running


def test_watch_reports_each_step_once_and_returns_the_end(h: Harness) -> None:
    # Given three polls: step 1, step 1 again, then completed
    h.answer((200, rollout()), (200, rollout()), (200, rollout(state="completed", step=3, weight=100)))
    seen: list[Rollout] = []
    # When
    final = h.client.watch_rollout("app", "prod", on_change=seen.append, sleep=lambda _: None)
    # Then
    assert [(r.state, r.step) for r in seen] == [("running", 1), ("completed", 3)]
    assert final.state == "completed" and len(h.sent) == 3


# ---- CLI ------------------------------------------------------------------------------------------


def test_rollout_start_parses_steps_interval_and_alarms(capsys: pytest.CaptureFixture[str]) -> None:
    # Given
    fake = FakeClient(start_rollout=Rollout.from_dict(rollout()))
    # When
    code, _ = run(
        [
            "rollout",
            "start",
            "app",
            "prod",
            "4",
            "--steps",
            "10,50",
            "--interval",
            "60",
            "--alarm",
            "a",
            "--alarm",
            "b",
        ],
        fake,
    )
    # Then
    assert code == 0
    args, kwargs = fake.called("start_rollout")
    assert args == ("app", "prod", 4)
    assert kwargs == {"steps": [10, 50], "interval_seconds": 60, "alarms": ["a", "b"], "reason": None}
    assert capsys.readouterr().out == (
        "app: prod rollout of version 4 (from 3): running: step 1/2 at 10%, next step 2026-11-23 12:01:00 UTC\n"
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["rollout", "start", "app", "prod", "4", "--steps", "10,x", "--interval", "60"],
        ["rollout", "start", "app", "prod", "4", "--interval", "60"],
        ["rollout", "start", "app", "prod", "4", "--steps", "10"],
        ["rollout", "start", "app", "prod", "LATEST", "--steps", "10", "--interval", "1"],
    ],
)
def test_rollout_start_usage_errors_exit_1(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    # When
    code, fake = run(argv)
    # Then
    assert code == 1 and not fake.calls
    assert capsys.readouterr().err


def test_rollout_status_watch_prints_each_change(capsys: pytest.CaptureFixture[str]) -> None:
    # Given a client whose watch reports two changes
    def watch(name: str, alias: str, *, poll_seconds: float, on_change: Any) -> Rollout:
        on_change(Rollout.from_dict(rollout()))
        end = Rollout.from_dict(
            rollout(state="rolled_back", step=2, weight=0, alarm="errors", ended_at="2026-11-23T12:01:00.000Z")
        )
        on_change(end)
        return end

    # When
    code, fake = run(["rollout", "status", "app", "prod", "--watch", "--poll", "0.5"], FakeClient(watch_rollout=watch))
    # Then: it was rolled back, which a watch exits 7 for (as kubectl rollout status exits non-zero)
    assert code == 7
    assert fake.called("watch_rollout")[1]["poll_seconds"] == 0.5
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "app: prod rollout of version 4 (from 3): rolled_back (alarm errors) at 2026-11-23 12:01:00 UTC"
    assert len(lines) == 2


def test_rollout_abort_and_status_json(capsys: pytest.CaptureFixture[str]) -> None:
    # Given
    aborted = Rollout.from_dict(rollout(state="aborted", step=2, weight=0))
    fake = FakeClient(abort_rollout=aborted, get_rollout=aborted)
    # When
    abort_code, _ = run(["rollout", "abort", "app", "prod"], fake)
    capsys.readouterr()
    status_code, _ = run(["rollout", "status", "app", "prod", "--json"], fake)
    # Then
    assert abort_code == status_code == 0
    assert '"state": "aborted"' in capsys.readouterr().out


def test_a_conflicting_rollout_exits_3(capsys: pytest.CaptureFixture[str]) -> None:
    # When
    code, _ = run(
        ["rollout", "start", "app", "prod", "4", "--steps", "10", "--interval", "1"],
        FakeClient(error=ConflictError("running", code="RolloutRunningError", status=409)),
    )
    # Then
    assert code == 3
    assert "RolloutRunningError" in capsys.readouterr().err
