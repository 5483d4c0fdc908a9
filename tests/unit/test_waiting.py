"""wait_for, the tests' one way to wait on another process or thread, on a fake clock."""

from __future__ import annotations

import pytest

from tests.helpers import wait_for


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.pauses: list[float] = []

    def __call__(self) -> float:
        return self.now

    def pause(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.now += seconds


def test_a_condition_already_met_is_answered_without_a_pause() -> None:
    clock = FakeClock()
    assert wait_for(lambda: "ready", timeout=5, what="x", clock=clock, pause=clock.pause) == "ready"
    assert clock.pauses == []


def test_the_condition_is_polled_every_interval_until_it_answers() -> None:
    # Given a condition met at its third poll
    clock = FakeClock()
    answers = iter([None, "", {"state": "completed"}])
    # When
    found = wait_for(lambda: next(answers), timeout=5, what="x", interval=0.25, clock=clock, pause=clock.pause)
    # Then its answer is returned, after two pauses of the interval
    assert found == {"state": "completed"}
    assert clock.pauses == [0.25, 0.25]


def test_a_condition_never_met_fails_naming_what_was_awaited_once_the_deadline_passes() -> None:
    clock = FakeClock()
    with pytest.raises(AssertionError, match=r"the rollout's end: not within 1 s"):
        wait_for(lambda: False, timeout=1, what="the rollout's end", interval=0.25, clock=clock, pause=clock.pause)
    assert clock.now == 1.0 and len(clock.pauses) == 4
