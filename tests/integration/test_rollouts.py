"""Progressive rollouts through the real handlers under moto; the driver (the `rollout` function) is invoked
directly, as the state machine invokes it, one step at a time."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import boto3
import pytest
from pydantic import ValidationError

from arca import wiring
from arca.handlers import rollout as driver
from local import iam
from local.events import lambda_context
from tests.helpers import HandlerApi
from tests.integration.conftest import snapshot

ALIAS = "/artifacts/team/app/aliases/prod"
ROLLOUT = f"{ALIAS}/rollout"


@pytest.fixture
def app(api: HandlerApi) -> HandlerApi:
    """`team/app` with versions 1, 2, 3 and `prod` on version 1."""
    for i in (1, 2, 3):
        assert api.publish("team/app", f"release {i}".encode()).status == 201
    assert api.call("PUT", ALIAS, {"version": 1}).status == 201
    return api


def start(api: HandlerApi, **body: Any) -> Any:
    return api.call("PUT", ROLLOUT, {"version": 2, "steps": [10, 50], "interval_seconds": 60, **body})


def step_event(rollout: dict[str, Any], number: int | None = None) -> dict[str, Any]:
    """The driver's event for `rollout` as the API answers it (the first step), or its previous output."""
    return {
        "name": rollout["name"],
        "alias": rollout["alias"],
        "rollout_id": rollout.get("rollout_id", rollout.get("id")),
        "step": rollout["step"] if number is None else number,
        "interval_seconds": rollout["interval_seconds"],
        "done": False,
    }


def step(rollout: dict[str, Any], number: int | None = None) -> dict[str, Any]:
    """One invocation of the driver, as the state machine makes it."""
    with iam.acting_as("rollout"):
        result: dict[str, Any] = driver.handler(step_event(rollout, number), lambda_context("rollout"))
    return result


def history(api: HandlerApi) -> list[dict[str, Any]]:
    return api.call("GET", f"{ALIAS}/history").body["history"]  # type: ignore[no-any-return]


def test_rollout_moves_through_its_weights_then_promotes_the_version(app: HandlerApi) -> None:
    # When
    started = start(app, reason="release 2")
    alias_at_start = app.call("GET", ALIAS).body
    first = step(started.body)
    alias_at_50 = app.call("GET", ALIAS).body
    second = step(first)
    status = app.call("GET", ROLLOUT).body
    alias = app.call("GET", ALIAS).body
    # Then
    assert started.status == 201, started.body
    assert started.body["state"] == "running" and started.body["step"] == 1 and started.body["weight"] == 10
    assert started.body["next_at"] > started.body["started_at"]
    assert (alias_at_start["version"], alias_at_start["secondary_version"]) == (1, 2)
    assert alias_at_start["secondary_version_weight"] == 10
    assert first == {**first, "step": 2, "done": False}
    assert alias_at_50["secondary_version_weight"] == 50
    assert second["done"] is True
    assert status["state"] == "completed" and status["weight"] == 100 and status["next_at"] is None
    assert status["ended_at"] >= status["started_at"] and status["reason"] == "release 2"
    assert alias["version"] == 2 and alias["secondary_version"] is None
    writer = f"rollout:{started.body['id']}"
    revisions = history(app)[:3]
    assert [r["updated_by"] for r in revisions] == [writer] * 3
    assert [r["action"] for r in revisions] == ["rollout"] * 3
    assert revisions[1]["reason"] == "rollout step 2/2: 50%"
    assert revisions[2]["reason"] == "rollout step 1/2: 10%"
    assert "complete" in revisions[0]["reason"]


def test_a_step_run_twice_writes_nothing_the_second_time(app: HandlerApi, aws: SimpleNamespace) -> None:
    # Given a rollout one step on
    started = start(app).body
    first = step(started)
    before = snapshot(aws)
    # When the driver runs step 1 again (a retried invocation)
    again = step(started, number=1)
    # Then nothing changed, and the answer says where the rollout is
    assert snapshot(aws) == before
    assert again["step"] == first["step"] == 2 and again["done"] is False


@pytest.mark.parametrize(
    ("change", "fields"),
    [
        ({"rollout_id": None}, {"rollout_id"}),
        ({"step": "2", "interval_seconds": 6.5}, {"step", "interval_seconds"}),
        ({"name": "", "done": "no"}, {"name", "done"}),
    ],
)
def test_a_malformed_driver_event_is_refused_naming_its_fields_and_writes_nothing(
    app: HandlerApi, aws: SimpleNamespace, change: dict[str, Any], fields: set[str]
) -> None:
    # Given a running rollout and its driver's event, spoilt
    started = start(app).body
    event = {k: v for k, v in {**step_event(started), **change}.items() if v is not None}
    before = snapshot(aws)
    # When the driver is invoked with it
    with iam.acting_as("rollout"), pytest.raises(ValidationError) as refused:
        driver.handler(event, lambda_context("rollout"))
    # Then it is refused naming exactly the fields at fault, and nothing was written
    assert {error["loc"][0] for error in refused.value.errors()} == fields
    assert snapshot(aws) == before


def test_abort_rolls_back_to_the_primary_and_stops_the_driver(app: HandlerApi, aws: SimpleNamespace) -> None:
    # Given
    started = start(app).body
    # When
    aborted = app.call("DELETE", ROLLOUT)
    before = snapshot(aws)
    late_step = step(started)
    # Then
    assert aborted.status == 200 and aborted.body["state"] == "aborted" and aborted.body["weight"] == 0
    alias = app.call("GET", ALIAS).body
    assert alias["version"] == 1 and alias["secondary_version"] is None
    assert history(app)[0]["updated_by"] == "arca:local" and "aborted" in history(app)[0]["reason"]
    assert late_step["done"] is True and snapshot(aws) == before
    assert app.call("DELETE", ROLLOUT).status == 409


def test_a_foreign_alias_write_supersedes_the_rollout_and_is_never_overwritten(app: HandlerApi) -> None:
    # Given
    started = start(app).body
    # When someone else moves the alias, then the driver's next step runs
    moved = app.call("PUT", ALIAS, {"version": 3, "reason": "hotfix"})
    shown = app.call("GET", ROLLOUT).body
    progress = step(started)
    # Then
    assert moved.status == 200
    assert shown["state"] == "superseded"  # seen by the read before the driver records it
    assert progress["done"] is True
    status = app.call("GET", ROLLOUT).body
    assert status["state"] == "superseded" and status["ended_at"] == moved.body["updated_at"]
    alias = app.call("GET", ALIAS).body
    assert alias["version"] == 3 and alias["revision"] == moved.body["revision"]
    assert history(app)[0]["reason"] == "hotfix"


def test_an_alarm_in_alarm_rolls_the_rollout_back(app: HandlerApi) -> None:
    # Given an alarm, OK at the first step and in ALARM at the second
    cloudwatch = boto3.client("cloudwatch")
    cloudwatch.put_metric_alarm(
        AlarmName="app-errors",
        MetricName="Errors",
        Namespace="App",
        Statistic="Sum",
        Period=60,
        EvaluationPeriods=1,
        Threshold=1,
        ComparisonOperator="GreaterThanOrEqualToThreshold",
    )
    cloudwatch.set_alarm_state(AlarmName="app-errors", StateValue="OK", StateReason="fine")
    started = start(app, steps=[10, 50, 90], alarms=["app-errors"]).body
    first = step(started)
    cloudwatch.set_alarm_state(AlarmName="app-errors", StateValue="ALARM", StateReason="errors")
    # When
    second = step(first)
    # Then
    assert first["done"] is False and second["done"] is True
    status = app.call("GET", ROLLOUT).body
    assert status["state"] == "rolled_back" and status["alarm"] == "app-errors" and status["weight"] == 0
    alias = app.call("GET", ALIAS).body
    assert alias["version"] == 1 and alias["secondary_version"] is None
    assert "app-errors" in history(app)[0]["reason"]


def test_an_alarm_that_does_not_exist_rolls_the_rollout_back_at_its_first_step(app: HandlerApi) -> None:
    # Given a rollout naming an alarm nobody defined (a typo must not take its protection away silently)
    started = start(app, alarms=["app-erors"]).body
    # When its first step runs
    first = step(started)
    # Then it rolls back, naming the alarm and why
    assert first["done"] is True
    status = app.call("GET", ROLLOUT).body
    assert (status["state"], status["alarm"]) == ("rolled_back", "app-erors")
    assert "alarm app-erors does not exist" in history(app)[0]["reason"]
    assert app.call("GET", ALIAS).body["secondary_version"] is None


def test_one_rollout_per_alias_at_a_time(app: HandlerApi, aws: SimpleNamespace) -> None:
    # Given
    assert start(app).status == 201
    before = snapshot(aws)
    # When
    second = start(app, version=3)
    # Then
    assert second.status == 409 and second.error["code"] == "RolloutRunningError"
    assert snapshot(aws) == before


def test_a_new_rollout_may_start_once_the_last_ended(app: HandlerApi) -> None:
    # Given a rollout aborted, and one superseded by a foreign write
    start(app)
    app.call("DELETE", ROLLOUT)
    start(app)
    app.call("PUT", ALIAS, {"version": 1})
    # When
    third = start(app, version=3)
    # Then
    assert third.status == 201 and third.body["from_version"] == 1


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"version": 1}, 409, "version"),  # already the alias's target
        ({"version": 9}, 409, "version"),  # no such version
    ],
)
def test_rollout_to_the_current_or_a_missing_version_is_refused(
    app: HandlerApi, aws: SimpleNamespace, body: dict[str, Any], status: int, field: str
) -> None:
    # Given
    before = snapshot(aws)
    # When
    reply = start(app, **body)
    # Then
    assert reply.status == status and reply.error["field"] == field
    assert snapshot(aws) == before


def test_rollout_to_a_deleted_version_is_refused(app: HandlerApi, aws: SimpleNamespace) -> None:
    # Given
    app.call("DELETE", "/artifacts/team/app/versions/3")
    before = snapshot(aws)
    # When
    reply = start(app, version=3)
    # Then
    assert reply.status == 409 and reply.error["field"] == "version"
    assert snapshot(aws) == before


def test_rollout_of_a_missing_alias_or_artifact_is_404(app: HandlerApi) -> None:
    missing_alias = app.call(
        "PUT", "/artifacts/team/app/aliases/nope/rollout", {"version": 2, "steps": [5], "interval_seconds": 1}
    )
    missing_artifact = app.call(
        "PUT", "/artifacts/nope/aliases/prod/rollout", {"version": 2, "steps": [5], "interval_seconds": 1}
    )
    no_rollout = app.call("GET", ROLLOUT)
    assert missing_alias.status == 404 and missing_alias.error["field"] == "alias"
    assert missing_artifact.status == 404
    assert no_rollout.status == 404


def test_purge_during_a_rollout_removes_it_and_the_driver_writes_nothing_after(
    app: HandlerApi, aws: SimpleNamespace
) -> None:
    # Given
    started = start(app).body
    # When
    purged = app.call("DELETE", "/artifacts/team/app", query={"force": "true"})
    after_purge = snapshot(aws)
    progress = step(started)
    # Then
    assert purged.status == 204
    assert not [i for i in after_purge["items"] if i[0] == "__team/app-rollout"]
    assert progress["done"] is True and snapshot(aws) == after_purge


def test_a_rollout_started_before_a_purge_does_not_drive_a_recreated_alias(
    app: HandlerApi, aws: SimpleNamespace
) -> None:
    # Given a rollout, a purge, then the artifact and alias made again
    started = start(app).body
    app.call("DELETE", "/artifacts/team/app", query={"force": "true"})
    for i in (1, 2):
        app.publish("team/app", f"again {i}".encode())
    app.call("PUT", ALIAS, {"version": 1})
    before = snapshot(aws)
    # When
    progress = step(started)
    # Then
    assert progress["done"] is True and snapshot(aws) == before


def test_the_driver_is_started_on_aws_with_the_rollout(app: HandlerApi, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a state machine (moto) named by the setting
    sfn = boto3.client("stepfunctions")
    iam = boto3.client("iam")
    role = iam.create_role(RoleName="sfn", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    machine = sfn.create_state_machine(
        name="rollouts", definition='{"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}}', roleArn=role
    )["stateMachineArn"]
    monkeypatch.setenv("ARCA_ROLLOUT_STATE_MACHINE_ARN", machine)
    wiring.reset()
    # When
    started = start(app).body
    # Then
    executions = sfn.list_executions(stateMachineArn=machine)["executions"]
    assert [e["name"] for e in executions] == [started["id"]]
    described = sfn.describe_execution(executionArn=executions[0]["executionArn"])
    assert '"step": 1' in described["input"] and f'"rollout_id": "{started["id"]}"' in described["input"]


# Interleavings forced inside a step: between the step's reads (alarms are read last) and its transaction.


def during_the_step(monkeypatch: pytest.MonkeyPatch, action: Any) -> None:
    """Run `action` once, when the driver reads the alarms: after its reads, before its write."""
    rollouts = wiring.rollouts()
    firing = rollouts.alarms.firing
    done: list[bool] = []

    def interleaved(names: list[str]) -> str | None:
        if not done:
            done.append(True)
            action()
        return firing(names)

    monkeypatch.setattr(rollouts.alarms, "firing", interleaved)


def test_a_foreign_write_between_a_steps_reads_and_its_write_supersedes_it(
    app: HandlerApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a step that finds the alias at the rollout's revision, then someone else writes it
    started = start(app).body
    moved: list[Any] = []
    during_the_step(monkeypatch, lambda: moved.append(app.call("PUT", ALIAS, {"version": 3, "reason": "hotfix"})))
    # When
    progress = step(started)
    # Then the step's condition failed on the alias: the rollout is superseded, the foreign write kept
    assert progress["done"] is True
    assert app.call("GET", ROLLOUT).body["state"] == "superseded"
    alias = app.call("GET", ALIAS).body
    assert alias["version"] == 3 and alias["revision"] == moved[0].body["revision"]


def test_an_abort_between_a_steps_reads_and_its_write_wins(app: HandlerApi, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a step that reads the rollout running, then it is aborted
    started = start(app).body
    during_the_step(monkeypatch, lambda: app.call("DELETE", ROLLOUT))
    # When
    progress = step(started)
    # Then the step wrote nothing: the abort's revision is the last
    assert progress["done"] is True
    assert app.call("GET", ROLLOUT).body["state"] == "aborted"
    assert "aborted" in history(app)[0]["reason"] and history(app)[1]["reason"] == "rollout step 1/2: 10%"


def test_the_same_step_run_twice_at_once_is_written_once(app: HandlerApi, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a step that reads the rollout, then the same step runs to its end (a retried invocation)
    started = start(app).body
    inner: list[dict[str, Any]] = []
    during_the_step(monkeypatch, lambda: inner.append(step(started)))
    # When
    outer = step(started)
    # Then one step 2 was written, by whichever committed first; the other found it done
    assert inner[0]["step"] == outer["step"] == 2
    assert app.call("GET", ROLLOUT).body["state"] == "running"  # not mistaken for another writer
    reasons = [r["reason"] for r in history(app)]
    assert reasons.count("rollout step 2/2: 50%") == 1


def test_a_step_committed_between_the_status_reads_is_shown_as_the_step_not_superseded(
    app: HandlerApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a running rollout whose status read its rollout item just before the next step committed (the step
    # writes the alias and the rollout in one transaction; the status reads them one after the other)
    started = start(app).body
    rollouts = wiring.services().rollouts
    with iam.acting_as("alias"):
        before_the_step = rollouts._rollout("team/app", "prod")
    assert step(started)["done"] is False
    read_rollout = rollouts._rollout
    reads: list[Any] = []

    def first_read_before_the_step(name: str, alias: str) -> Any:
        reads.append(alias)
        return before_the_step if len(reads) == 1 else read_rollout(name, alias)

    monkeypatch.setattr(rollouts, "_rollout", first_read_before_the_step)
    # When the status is read
    shown = app.call("GET", ROLLOUT).body
    # Then it is the rollout after that step (running at its second weight), never "superseded"
    assert len(reads) == 2 and shown["state"] == "running" and shown["weight"] == 50, shown
