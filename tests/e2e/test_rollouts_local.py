"""Rollouts in local mode over HTTP: the local server drives the steps (1-second intervals) and reads alarms from
the CloudWatch of its moto server. What a step does (abort, a foreign write) is tested on the handlers in
tests/integration/test_rollouts.py; here, what only the local server does: drive the steps, read its alarms."""

from __future__ import annotations

import os
import uuid
from typing import Any

import pytest

from arca.domain.models import AliasBody
from arca.wiring import build
from local.services import client
from tests.e2e.conftest import ArcaHttp
from tests.e2e.test_races import race
from tests.helpers import PATIENCE, acting, wait_for


def given_an_alias(arca: ArcaHttp, name: str) -> str:
    """`name` with versions 1 and 2, and `prod` on version 1; returns the alias's path."""
    for i in (1, 2):
        assert arca.published(name, f"{name} {i}".encode()) == i
    path = f"/artifacts/{name}/aliases/prod"
    assert arca.put(path, json={"version": 1}).status_code == 201
    return path


def wait_until_ended(arca: ArcaHttp, alias: str) -> dict[str, Any]:
    def ended() -> dict[str, Any] | None:
        status: dict[str, Any] = arca.get(f"{alias}/rollout").json()
        return status if status["state"] != "running" else None

    return wait_for(ended, timeout=PATIENCE, what=f"the end of the rollout of {alias}", interval=0.2)


def test_local_server_drives_a_rollout_to_completion(arca: ArcaHttp, unique: str) -> None:
    # Given
    alias = given_an_alias(arca, unique)
    # When
    started = arca.put(f"{alias}/rollout", json={"version": 2, "steps": [10, 50], "interval_seconds": 1})
    status = wait_until_ended(arca, alias)
    # Then
    assert started.status_code == 201, started.text
    assert status["state"] == "completed" and status["step"] == 3 and status["weight"] == 100
    current = arca.get(alias).json()
    assert current["version"] == 2 and current["secondary_version"] is None
    history = arca.get(f"{alias}/history").json()["history"]
    assert [r["reason"] for r in history[1:3]] == ["rollout step 2/2: 50%", "rollout step 1/2: 10%"]


def test_an_alarm_in_alarm_rolls_back_a_local_rollout(arca: ArcaHttp, unique: str) -> None:
    # Given an alarm in the local CloudWatch, in ALARM
    cloudwatch = client("cloudwatch", os.environ["AWS_ENDPOINT_URL_CLOUDWATCH"])
    alarm = f"errors-{uuid.uuid4().hex[:8]}"
    cloudwatch.put_metric_alarm(
        AlarmName=alarm,
        MetricName="Errors",
        Namespace="App",
        Statistic="Sum",
        Period=60,
        EvaluationPeriods=1,
        Threshold=1,
        ComparisonOperator="GreaterThanOrEqualToThreshold",
    )
    cloudwatch.set_alarm_state(AlarmName=alarm, StateValue="ALARM", StateReason="errors")
    alias = given_an_alias(arca, unique)
    # When
    arca.put(f"{alias}/rollout", json={"version": 2, "steps": [10, 50], "interval_seconds": 1, "alarms": [alarm]})
    status = wait_until_ended(arca, alias)
    # Then
    assert status["state"] == "rolled_back" and status["alarm"] == alarm
    current = arca.get(alias).json()
    assert current["version"] == 1 and current["secondary_version"] is None


@pytest.mark.parametrize("approvals", [1, 0])
def test_a_promotion_under_require_rollout_reaches_prod_locally(arca: ArcaHttp, unique: str, approvals: int) -> None:
    # Given prod on version 1, guarded: only a rollout may bring a version, with `approvals` approvals
    alias = given_an_alias(arca, unique)
    policy = arca.put(f"{alias}/policy", json={"require_rollout": True, "approvals": approvals})
    assert policy.status_code == 200, policy.text
    # When alice asks for version 2 by a rollout, and (when approvals are required) bob approves it
    rollout = {"steps": [10, 50], "interval_seconds": 1}
    alice, bob = ({"X-Arca-Local-User": user} for user in ("alice", "bob"))
    requested = arca.post(f"{alias}/promotions", json={"version": 2, "rollout": rollout}, headers=alice)
    assert requested.status_code == 201, requested.text
    if approvals:
        assert requested.json()["state"] == "pending"
        approved = arca.post(f"{alias}/promotions/{requested.json()['id']}/approve", headers=bob)
        assert approved.status_code == 200, approved.text
    # Then the rollout the promotion started is driven to its end (by the server, as the state machine on AWS)
    status = wait_until_ended(arca, alias)
    assert status["state"] == "completed" and status["weight"] == 100, status
    current = arca.get(alias).json()
    assert current["version"] == 2 and current["secondary_version"] is None


# Races on DynamoDB Local: threads run the driver's step with clients of their own, as concurrent invocations.


def test_eight_concurrent_runs_of_one_step_write_it_once(arca: ArcaHttp, unique: str) -> None:
    # Given a rollout whose own driver waits an hour
    alias = given_an_alias(arca, unique)
    started = arca.put(f"{alias}/rollout", json={"version": 2, "steps": [10, 50], "interval_seconds": 3600}).json()

    # When eight invocations run step 1 at once
    def advance(_: int) -> Any:
        return acting("rollout", build().rollouts).advance(unique, "prod", started["id"], 1)

    results = race(advance)
    # Then step 2 was written once, and the rollout is still running (no invocation took another's write for a
    # foreign one)
    assert {r.step for r in results} == {2}
    status = arca.get(f"{alias}/rollout").json()
    assert status["state"] == "running" and status["step"] == 2
    reasons = [r["reason"] for r in arca.get(f"{alias}/history").json()["history"]]
    assert reasons.count("rollout step 2/2: 50%") == 1


def test_steps_racing_foreign_writes_never_overwrite_them(arca: ArcaHttp, unique: str) -> None:
    # Given a rollout of three weights whose own driver waits an hour
    alias = given_an_alias(arca, unique)
    body = {"version": 2, "steps": [10, 20, 30], "interval_seconds": 3600}
    started = arca.put(f"{alias}/rollout", json=body).json()
    writer = f"rollout:{started['id']}"

    # When four threads drive the rollout step after step while four others move the alias
    def work(index: int) -> None:
        services = build()
        if index % 2:
            acting("alias", services.aliases).set(
                unique, "prod", AliasBody(version=1, reason=f"foreign {index}"), identity="someone"
            )
            return
        for number in (1, 2, 3):
            acting("rollout", services.rollouts).advance(unique, "prod", started["id"], number)

    race(work)
    # Then no rollout revision follows a foreign one, and the rollout is superseded
    history = sorted(arca.get(f"{alias}/history").json()["history"], key=lambda r: r["revision"])
    writers = [r["updated_by"] for r in history if r["revision"] > started["alias_revision"]]
    first_foreign = next(i for i, by in enumerate(writers) if by != writer)
    assert all(by != writer for by in writers[first_foreign:]), writers
    assert arca.get(f"{alias}/rollout").json()["state"] == "superseded"
