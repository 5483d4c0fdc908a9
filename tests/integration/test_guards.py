"""Guarded promotion through the real handlers: alias policies, every rule allowed and refused (nothing
written), the rollback exemption, promotions and approvals."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from tests.helpers import HandlerApi
from tests.integration.conftest import snapshot

ALIAS = "/artifacts/team/app/aliases/prod"
POLICY = f"{ALIAS}/policy"
USER = "arn:aws:iam::000000000000:user/{}"


def as_user(user: str) -> HandlerApi:
    api = HandlerApi()
    api.identity = USER.format(user)
    return api


@pytest.fixture
def app(api: HandlerApi) -> HandlerApi:
    """`team/app` with versions 1, 2, 3; prod on 1, staging on 2; version 2 tagged qa=passed."""
    for i in (1, 2, 3):
        assert api.publish("team/app", f"release {i}".encode()).status == 201
    assert api.call("PUT", ALIAS, {"version": 1}).status == 201
    assert api.call("PUT", "/artifacts/team/app/aliases/staging", {"version": 2}).status == 201
    assert api.call("PATCH", "/artifacts/team/app/versions/2", {"tags": {"qa": "passed"}}).status == 200
    return api


def rules(reply: object) -> list[str]:
    return [v["rule"] for v in reply.error["violations"]]  # type: ignore[attr-defined]


def test_a_policy_is_set_read_and_removed_with_events(app: HandlerApi) -> None:
    # When
    put = app.call("PUT", POLICY, {"require_tags": {"qa": "passed"}, "approvals": 1})
    got = app.call("GET", POLICY)
    removed = app.call("DELETE", POLICY)
    # Then
    assert put.status == 200 and put.body["require_tags"] == {"qa": "passed"} and put.body["revision"] == 1
    assert got.body == put.body
    assert removed.status == 204
    assert app.call("GET", POLICY).status == 404
    assert app.call("DELETE", POLICY).status == 404
    events = app.call("GET", "/artifacts/team/app/events").body["events"]
    assert [e["type"] for e in events].count("alias.policy_updated") == 2


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"approvals": 6}, "approvals"),
        ({"require_tags": {"BAD KEY": "x"}}, "require_tags"),
        ({"require_attestations": ["Not A Type"]}, "require_attestations"),
        ({"require_soak": {"alias": "prod", "seconds": 5}}, "require_soak.alias"),
        ({"require_rollout": "yes"}, "require_rollout"),
        ({"surprise": 1}, "surprise"),
    ],
)
def test_a_bad_policy_is_400_naming_the_field_and_writes_nothing(
    app: HandlerApi, aws: SimpleNamespace, body: dict[str, object], field: str
) -> None:
    before = snapshot(aws)
    reply = app.call("PUT", POLICY, body)
    assert reply.status == 400 and reply.error["field"].startswith(field)
    assert snapshot(aws) == before


@pytest.mark.parametrize(
    ("policy", "rule"),
    [
        ({"require_tags": {"qa": "passed"}}, "require_tags"),
        ({"require_attestations": ["sbom-spdx"]}, "require_attestations"),
        ({"require_soak": {"alias": "staging", "seconds": 3600}}, "require_soak"),
        ({"require_rollout": True}, "require_rollout"),
        ({"approvals": 1}, "approvals"),
        ({"allowed_principals": ["arn:aws:iam::*:user/alice"]}, "allowed_principals"),
    ],
)
def test_each_rule_refuses_a_direct_write_with_403_and_writes_nothing(
    app: HandlerApi, aws: SimpleNamespace, policy: dict[str, object], rule: str
) -> None:
    # Given (set by alice, whom the principals rule lets in)
    assert as_user("alice").call("PUT", POLICY, policy).status == 200
    before = snapshot(aws)
    # When version 3 (untagged, not on staging) is put directly
    refused = app.call("PUT", ALIAS, {"version": 3})
    # Then
    assert refused.status == 403 and refused.error["code"] == "PolicyViolation"
    assert rules(refused) == [rule]
    assert refused.error["details"]["violations"] == refused.error["violations"]
    assert snapshot(aws) == before


def test_every_broken_rule_is_listed_in_words(app: HandlerApi) -> None:
    # Given a policy whose every rule version 3 breaks
    policy = {
        "require_tags": {"qa": "passed"},
        "require_attestations": ["slsa-provenance"],
        "require_soak": {"alias": "staging", "seconds": 60},
        "require_rollout": True,
        "approvals": 2,
    }
    app.call("PUT", POLICY, policy)
    # When
    refused = app.call("PUT", ALIAS, {"version": 3})
    # Then
    assert rules(refused) == ["require_tags", "require_attestations", "require_soak", "require_rollout", "approvals"]
    messages = [v["message"] for v in refused.error["violations"]]
    assert "version 3 lacks qa=passed" in messages
    assert "version 3 has no slsa-provenance attestation" in messages


def test_a_version_that_passes_the_rules_moves_the_alias(app: HandlerApi) -> None:
    # Given tags and a principal glob the caller matches
    alice = as_user("alice")
    policy = {"require_tags": {"qa": "passed"}, "allowed_principals": ["arn:aws:iam::*:user/alice"]}
    assert alice.call("PUT", POLICY, policy).status == 200
    # When version 2 (tagged) is put
    moved = alice.call("PUT", ALIAS, {"version": 2})
    # Then
    assert moved.status == 200 and moved.body["version"] == 2


def test_soak_counts_the_time_the_version_has_been_the_other_alias_primary(app: HandlerApi) -> None:
    from arca import wiring

    app.call("PUT", POLICY, {"require_soak": {"alias": "staging", "seconds": 3600}})
    refused = app.call("PUT", ALIAS, {"version": 2})
    assert rules(refused) == ["require_soak"]
    # (seconds since the fixture set staging: 0 on an idle machine, a few on a loaded one)
    soaked = re.search(r"has been the primary of 'staging' for (\d+) s", refused.error["violations"][0]["message"])
    assert soaked is not None and int(soaked.group(1)) < 60, refused.error
    # When the clock moves on an hour
    from datetime import timedelta

    policy = wiring.services().policy
    start = policy.clock()
    policy.clock = lambda: start + timedelta(seconds=3601)
    moved = app.call("PUT", ALIAS, {"version": 2})
    assert moved.status == 200


def test_a_principal_glob_star_stays_within_one_segment(app: HandlerApi) -> None:
    policy = {"allowed_principals": ["arn:aws:iam::000000000000:user/*"]}
    assert as_user("alice").call("PUT", POLICY, policy).status == 200
    assert as_user("alice").call("PUT", ALIAS, {"version": 2}).status == 200
    # `*` does not cross a `/`: a role session is not a user
    bob = HandlerApi()
    bob.identity = "arn:aws:iam::000000000000:user/team/bob"
    assert bob.call("PUT", ALIAS, {"version": 3}).status == 403
    # only the allowed principals may change the policy
    assert app.call("DELETE", POLICY).status == 403
    assert as_user("alice").call("DELETE", POLICY).status == 204


def test_a_rollback_is_exempt_from_every_rule_but_allowed_principals(app: HandlerApi) -> None:
    # Given prod moved to 2, then a policy that version 1 breaks in every way
    assert app.call("PUT", ALIAS, {"version": 2}).status == 200
    policy = {
        "require_tags": {"qa": "x"},
        "require_attestations": ["t"],
        "require_rollout": True,
        "approvals": 3,
        "allowed_principals": ["arn:aws:iam::*:user/ops"],
    }
    assert as_user("ops").call("PUT", POLICY, policy).status == 200
    # When anyone but ops rolls back, then ops does
    refused = app.call("POST", f"{ALIAS}/rollback", {})
    rolled = as_user("ops").call("POST", f"{ALIAS}/rollback", {})
    # Then
    assert refused.status == 403 and rules(refused) == ["allowed_principals"]
    assert rolled.status == 200 and rolled.body["version"] == 1


def test_require_rollout_lets_a_rollout_start(app: HandlerApi) -> None:
    app.call("PUT", POLICY, {"require_rollout": True, "require_tags": {"qa": "passed"}})
    refused = app.call("PUT", f"{ALIAS}/rollout", {"version": 3, "steps": [10], "interval_seconds": 60})
    started = app.call("PUT", f"{ALIAS}/rollout", {"version": 2, "steps": [10], "interval_seconds": 60})
    assert refused.status == 403 and rules(refused) == ["require_tags"]
    assert started.status == 201


def test_an_approved_promotion_moves_the_alias_as_the_requester(app: HandlerApi, aws: SimpleNamespace) -> None:
    # Given a policy of two approvals
    app.call("PUT", POLICY, {"approvals": 2, "require_tags": {"qa": "passed"}})
    alice, bob, carol = as_user("alice"), as_user("bob"), as_user("carol")
    # When alice requests version 2
    requested = alice.call("POST", f"{ALIAS}/promotions", {"version": 2, "reason": "ship it"})
    pid = requested.body["id"]
    base = f"{ALIAS}/promotions/{pid}"
    self_approval = alice.call("POST", f"{base}/approve", {})
    first = bob.call("POST", f"{base}/approve", {})
    again = bob.call("POST", f"{base}/approve", {})
    assert app.call("GET", ALIAS).body["version"] == 1
    last = carol.call("POST", f"{base}/approve", {"reason": "ok"})
    # Then
    assert requested.status == 201 and requested.body["state"] == "pending"
    assert requested.body["requested_by"] == USER.format("alice") and requested.body["approvals"] == []
    assert self_approval.status == 403 and rules(self_approval) == ["approvals"]
    assert first.status == 200 and first.body["state"] == "pending"
    assert again.status == 403
    assert last.status == 200 and last.body["state"] == "applied"
    assert [a["by"] for a in last.body["approvals"]] == [USER.format("bob"), USER.format("carol")]
    prod = app.call("GET", ALIAS).body
    assert prod["version"] == 2 and prod["updated_by"] == USER.format("alice")
    assert "bob" in prod["reason"] and "carol" in prod["reason"]
    listed = app.call("GET", f"{ALIAS}/promotions", query={"state": "applied"}).body["promotions"]
    assert [p["id"] for p in listed] == [pid]
    types = [e["type"] for e in app.call("GET", "/artifacts/team/app/events").body["events"]]
    assert types.count("promotion.approved") == 2
    assert {"promotion.requested", "promotion.applied"} <= set(types)


def test_a_promotion_is_refused_when_its_target_breaks_the_policy(app: HandlerApi, aws: SimpleNamespace) -> None:
    app.call("PUT", POLICY, {"approvals": 1, "require_tags": {"qa": "passed"}})
    before = snapshot(aws)
    refused = as_user("alice").call("POST", f"{ALIAS}/promotions", {"version": 3})
    assert refused.status == 403 and rules(refused) == ["require_tags"]
    assert snapshot(aws) == before
    # and a pending one whose target lost its tag stays pending when the approval would apply it
    pid = as_user("alice").call("POST", f"{ALIAS}/promotions", {"version": 2}).body["id"]
    app.call("PATCH", "/artifacts/team/app/versions/2", {"tags": {"qa": None}})
    approval = as_user("bob").call("POST", f"{ALIAS}/promotions/{pid}/approve", {})
    assert approval.status == 403 and rules(approval) == ["require_tags"]
    assert app.call("GET", f"{ALIAS}/promotions/{pid}").body["state"] == "pending"


def test_without_approvals_a_promotion_applies_at_once_and_a_rejected_one_cannot_be_approved(app: HandlerApi) -> None:
    applied = app.call("POST", f"{ALIAS}/promotions", {"version": 2})
    assert applied.status == 201 and applied.body["state"] == "applied"
    assert app.call("GET", ALIAS).body["version"] == 2
    app.call("PUT", POLICY, {"approvals": 1})
    pid = as_user("alice").call("POST", f"{ALIAS}/promotions", {"version": 3}).body["id"]
    rejected = as_user("bob").call("POST", f"{ALIAS}/promotions/{pid}/reject", {"reason": "no"})
    late = as_user("carol").call("POST", f"{ALIAS}/promotions/{pid}/approve", {})
    assert rejected.status == 200 and rejected.body["state"] == "rejected"
    assert late.status == 409


def test_a_promotion_with_a_rollout_starts_it_on_approval(app: HandlerApi) -> None:
    app.call("PUT", POLICY, {"approvals": 1, "require_rollout": True})
    body = {"version": 3, "rollout": {"steps": [10, 50], "interval_seconds": 60}}
    pid = as_user("alice").call("POST", f"{ALIAS}/promotions", body).body["id"]
    approved = as_user("bob").call("POST", f"{ALIAS}/promotions/{pid}/approve", {})
    assert approved.status == 200 and approved.body["state"] == "applied"
    rollout = app.call("GET", f"{ALIAS}/rollout").body
    assert rollout["state"] == "running" and rollout["version"] == 3
    assert rollout["started_by"] == USER.format("alice")


def test_a_promotion_expires_after_seven_days(app: HandlerApi) -> None:
    from datetime import timedelta

    from arca import wiring

    app.call("PUT", POLICY, {"approvals": 1})
    pid = as_user("alice").call("POST", f"{ALIAS}/promotions", {"version": 2}).body["id"]
    policy = wiring.services().policy
    start = policy.clock()
    policy.clock = lambda: start + timedelta(days=7, seconds=1)
    assert app.call("GET", f"{ALIAS}/promotions/{pid}").body["state"] == "expired"
    assert as_user("bob").call("POST", f"{ALIAS}/promotions/{pid}/approve", {}).status == 409


def test_a_running_rollouts_steps_and_alarm_rollback_are_never_blocked_by_a_policy(app: HandlerApi) -> None:
    import boto3

    from tests.integration.test_rollouts import step

    # Given a rollout of 3 started, an alarm, and then a policy that every write would break
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
    body = {"version": 3, "steps": [10, 50, 90], "interval_seconds": 60, "alarms": ["app-errors"]}
    started = app.call("PUT", f"{ALIAS}/rollout", body).body
    closed = {"require_tags": {"qa": "never"}, "approvals": 5, "allowed_principals": ["arn:aws:iam::*:user/nobody"]}
    assert as_user("nobody").call("PUT", POLICY, closed).status == 200
    # When a step runs, then the alarm fires
    first = step(started)
    cloudwatch.set_alarm_state(AlarmName="app-errors", StateValue="ALARM", StateReason="errors")
    second = step(first)
    # Then both were written: the canary moved to 50%, then was rolled back
    assert first["done"] is False and second["done"] is True
    revisions = app.call("GET", f"{ALIAS}/history").body["history"]
    assert [(r["version"], r["secondary_version_weight"]) for r in revisions[:3]] == [(1, None), (1, 50), (1, 10)]
    assert app.call("GET", f"{ALIAS}/rollout").body["state"] == "rolled_back"


def test_require_attestations_passes_a_version_carrying_them_and_refuses_one_without(
    app: HandlerApi, aws: SimpleNamespace
) -> None:
    from arca.adapters import keys
    from tests.integration.conftest import TABLE

    # Given versions 2 and 3 carrying an SBOM (the attribute their attestations keep on them)
    for number in (2, 3):
        aws.dynamodb.update_item(
            TableName=TABLE,
            Key={k: {"S": v} for k, v in keys.version_key("team/app", number).items()},
            UpdateExpression="ADD attestations :t",
            ExpressionAttributeValues={":t": {"SS": ["sbom-spdx", "test-report"]}},
        )
    app.call("PUT", POLICY, {"require_attestations": ["sbom-spdx", "test-report"]})
    # When 2 arrives as a canary, then becomes the primary (it arrived already), 1 (without) is put back, then
    # rolled back to
    canary = app.call("PUT", ALIAS, {"version": 1, "secondary_version": 2, "secondary_version_weight": 10})
    primary = app.call("PUT", ALIAS, {"version": 2})
    refused = app.call("PUT", ALIAS, {"version": 1})
    rolled = app.call("POST", f"{ALIAS}/rollback", {"to_revision": 1})
    # Then
    assert canary.status == 200 and primary.status == 200
    assert refused.status == 403 and rules(refused) == ["require_attestations"]
    assert refused.error["violations"][0]["message"] == ("version 1 has no sbom-spdx or test-report attestation")
    assert rolled.status == 200 and rolled.body["version"] == 1
