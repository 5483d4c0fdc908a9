"""What an alias policy judges, through the real handlers: principals compared as principals, every change of
what the alias serves (not only a version that newly arrives), LATEST under rules, and no policy that locks its
writer out."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from arca.domain.errors import PolicyViolation
from arca.handlers import alias as alias_function
from local import iam
from local.events import lambda_context
from tests.helpers import HandlerApi
from tests.integration.conftest import snapshot

ALIAS = "/artifacts/team/app/aliases/prod"
POLICY = f"{ALIAS}/policy"
ROLE = "arn:aws:sts::000000000000:assumed-role/deployer"
USER = "arn:aws:iam::000000000000:user/{}"
FUNCTION = "arn:aws:lambda:us-east-1:000000000000:function:arca-alias"


def caller(identity: str) -> HandlerApi:
    api = HandlerApi()
    api.identity = identity
    return api


def user(name: str) -> HandlerApi:
    return caller(USER.format(name))


def rules(reply: object) -> list[str]:
    return [v["rule"] for v in reply.error["violations"]]  # type: ignore[attr-defined]


@pytest.fixture
def app(api: HandlerApi) -> HandlerApi:
    """`team/app` with versions 1, 2, 3; prod on 1; version 2 tagged qa=passed."""
    for i in (1, 2, 3):
        assert api.publish("team/app", f"release {i}".encode()).status == 201
    assert api.call("PUT", ALIAS, {"version": 1}).status == 201
    assert api.call("PATCH", "/artifacts/team/app/versions/2", {"tags": {"qa": "passed"}}).status == 200
    return api


def served(app: HandlerApi) -> tuple[object, object, object]:
    body = app.call("GET", ALIAS).body
    return body["version"], body.get("secondary_version"), body.get("secondary_version_weight")


# A person is one principal.


def test_two_sessions_of_one_role_are_one_principal_and_cannot_approve_each_others_request(
    app: HandlerApi, aws: SimpleNamespace
) -> None:
    # Given a policy of one approval, and a promotion requested by a session of the deployer role
    assert app.call("PUT", POLICY, {"approvals": 1}).status == 200
    pid = caller(f"{ROLE}/ci-run-1").call("POST", f"{ALIAS}/promotions", {"version": 2}).body["id"]
    before = snapshot(aws)
    # When another session of the same role approves it
    refused = caller(f"{ROLE}/ci-run-1-approve").call("POST", f"{ALIAS}/promotions/{pid}/approve", {})
    # Then it is the requester, under another spelling: refused, nothing written
    assert refused.status == 403 and rules(refused) == ["approvals"]
    assert ROLE in refused.error["violations"][0]["message"]
    assert snapshot(aws) == before
    # and another role's session may
    other = caller("arn:aws:sts::000000000000:assumed-role/reviewer/bob")
    assert other.call("POST", f"{ALIAS}/promotions/{pid}/approve", {}).body["state"] == "applied"
    assert served(app)[0] == 2


def test_one_principal_approves_once_whatever_its_session(app: HandlerApi) -> None:
    assert app.call("PUT", POLICY, {"approvals": 2}).status == 200
    pid = user("alice").call("POST", f"{ALIAS}/promotions", {"version": 2}).body["id"]
    first = caller(f"{ROLE}/one").call("POST", f"{ALIAS}/promotions/{pid}/approve", {})
    second = caller(f"{ROLE}/two").call("POST", f"{ALIAS}/promotions/{pid}/approve", {})
    assert first.status == 200 and first.body["state"] == "pending"
    assert second.status == 403 and "approved this promotion already" in second.error["violations"][0]["message"]


def direct(qualifier: str, operation: str, **fields: object) -> object:
    context = lambda_context("alias")
    context.invoked_function_arn = FUNCTION + qualifier
    with iam.acting_as("alias"):
        return alias_function.handler({"operation": operation, "name": "team/app", "alias": "prod", **fields}, context)


def test_a_direct_invocation_cannot_approve_its_own_request_through_another_qualifier(app: HandlerApi) -> None:
    # Given a promotion requested by invoking the function through its `live` alias
    assert app.call("PUT", POLICY, {"approvals": 1}).status == 200
    requested = direct(":live", "request_promotion", version=2)
    assert requested["requested_by"] == f"direct:{FUNCTION}:live"  # type: ignore[index]
    # When the unqualified function (or a version of it) approves it
    for qualifier in ("", ":3"):
        with pytest.raises(PolicyViolation):
            direct(qualifier, "approve_promotion", promotion_id=requested["id"])  # type: ignore[index]
    # Then it stays pending
    assert app.call("GET", f"{ALIAS}/promotions/{requested['id']}").body["state"] == "pending"  # type: ignore[index]


def test_a_glob_over_every_session_of_a_role_is_stored_as_the_role(app: HandlerApi) -> None:
    session = caller(f"{ROLE}/ci-7")
    put = session.call("PUT", POLICY, {"allowed_principals": [f"{ROLE}/*", USER.format("ops")]})
    assert put.status == 200 and put.body["allowed_principals"] == [ROLE, USER.format("ops")]
    assert caller(f"{ROLE}/another").call("PUT", ALIAS, {"version": 2}).status == 200


# A policy judges every change of what the alias serves.


@pytest.fixture
def canary(app: HandlerApi) -> HandlerApi:
    """prod serves {1, 2 @ 5}, set before any policy; then a policy of tags, an approval and a rollout."""
    assert app.call("PUT", ALIAS, {"version": 1, "secondary_version": 2, "secondary_version_weight": 5}).status == 200
    policy = {"require_tags": {"qa": "approved"}, "approvals": 1, "require_rollout": True}
    assert app.call("PUT", POLICY, policy).status == 200
    return app


@pytest.mark.parametrize(
    "body",
    [
        {"version": 1, "secondary_version": 2, "secondary_version_weight": 99},
        {"version": 2},
        {"version": 2, "secondary_version": 1, "secondary_version_weight": 50},
    ],
    ids=["weight-raised-to-99", "secondary-made-primary", "swapped"],
)
def test_a_canary_set_before_a_policy_cannot_grow_past_it(
    canary: HandlerApi, aws: SimpleNamespace, body: dict[str, object]
) -> None:
    before = snapshot(aws)
    refused = canary.call("PUT", ALIAS, body)
    assert refused.status == 403
    assert rules(refused) == ["require_tags", "require_rollout", "approvals"]
    assert "version 2 lacks qa=approved" in refused.error["violations"][0]["message"]
    assert snapshot(aws) == before


def test_a_rollout_of_the_current_secondary_is_judged_as_its_version_arriving(
    canary: HandlerApi, aws: SimpleNamespace
) -> None:
    before = snapshot(aws)
    refused = canary.call("PUT", f"{ALIAS}/rollout", {"version": 2, "steps": [5, 50], "interval_seconds": 60})
    assert refused.status == 403 and rules(refused) == ["require_tags", "approvals"]
    assert snapshot(aws) == before


def test_lowering_or_dropping_a_canary_is_the_way_back_and_only_needs_approval_to_move(canary: HandlerApi) -> None:
    # The primary gains nothing it did not hold: no rule on versions is broken, but the alias moves
    lowered = canary.call("PUT", ALIAS, {"version": 1, "secondary_version": 2, "secondary_version_weight": 1})
    assert rules(lowered) == ["approvals"]
    # A write that changes nothing the alias serves is judged by allowed_principals alone
    described = canary.call(
        "PUT", ALIAS, {"version": 1, "secondary_version": 2, "secondary_version_weight": 5, "description": "canary"}
    )
    assert described.status == 200


def test_an_approved_rollout_cannot_be_skipped_by_direct_writes(app: HandlerApi, aws: SimpleNamespace) -> None:
    # Given an approved promotion whose rollout of 2 runs, under require_rollout alone
    assert app.call("PUT", POLICY, {"require_rollout": True, "require_tags": {"qa": "passed"}}).status == 200
    body = {"version": 2, "rollout": {"steps": [10, 50], "interval_seconds": 60}}
    assert app.call("POST", f"{ALIAS}/promotions", body).body["state"] == "applied"
    before = snapshot(aws)
    # When it is skipped (2 made the primary), its weight raised, or the canary dropped, directly
    for skip, why in (
        ({"version": 2}, "only through a rollout"),
        ({"version": 1, "secondary_version": 2, "secondary_version_weight": 90}, "only through a rollout"),
        ({"version": 1}, "running"),
        ({"version": 1, "secondary_version": 2, "secondary_version_weight": 10, "description": "x"}, "running"),
    ):
        refused = app.call("PUT", ALIAS, skip)
        # Then each is refused while the rollout runs; the rollout still owns the alias
        assert refused.status == 403 and rules(refused) == ["require_rollout"], skip
        assert why in refused.error["violations"][0]["message"], skip
    assert snapshot(aws) == before
    assert app.call("GET", f"{ALIAS}/rollout").body["state"] == "running"
    # and a plain promotion of 2 cannot skip it either
    assert rules(app.call("POST", f"{ALIAS}/promotions", {"version": 2})) == ["require_rollout"]
    # the way back stays open
    assert app.call("POST", f"{ALIAS}/rollback", {}).status == 200


def test_aborting_a_rollout_needs_the_aliases_allowed_principals(app: HandlerApi, aws: SimpleNamespace) -> None:
    # Given a rollout of 2 running, then a policy letting only ops write the alias
    ops = user("ops")
    assert ops.call("PUT", f"{ALIAS}/rollout", {"version": 2, "steps": [10], "interval_seconds": 60}).status == 201
    assert ops.call("PUT", POLICY, {"allowed_principals": [USER.format("ops")]}).status == 200
    before = snapshot(aws)
    # When someone else aborts it
    refused = user("mallory").call("DELETE", f"{ALIAS}/rollout")
    # Then refused, nothing written; ops may
    assert refused.status == 403 and rules(refused) == ["allowed_principals"]
    assert snapshot(aws) == before
    aborted = ops.call("DELETE", f"{ALIAS}/rollout")
    assert aborted.status == 200 and aborted.body["state"] == "aborted"
    assert served(app) == (1, None, None)


# An alias on LATEST takes no rule but allowed_principals.


def test_a_policy_with_rules_is_refused_on_an_alias_serving_latest(app: HandlerApi, aws: SimpleNamespace) -> None:
    on_latest = {"version": 1, "secondary_version": "LATEST", "secondary_version_weight": 5}
    assert app.call("PUT", ALIAS, on_latest).status == 200
    before = snapshot(aws)
    refused = app.call("PUT", POLICY, {"require_tags": {"qa": "passed"}})
    assert refused.status == 409 and refused.error["field"] == "alias" and "LATEST" in refused.error["message"]
    assert snapshot(aws) == before
    assert app.call("PUT", POLICY, {"allowed_principals": ["*"]}).status == 200


@pytest.mark.parametrize(
    "body",
    [{"version": "LATEST"}, {"version": 1, "secondary_version": "LATEST", "secondary_version_weight": 1}],
)
def test_an_alias_under_rules_cannot_be_pointed_at_latest(
    app: HandlerApi, aws: SimpleNamespace, body: dict[str, object]
) -> None:
    assert app.call("PUT", POLICY, {"require_tags": {"qa": "passed"}}).status == 200
    before = snapshot(aws)
    refused = app.call("PUT", ALIAS, body)
    assert refused.status == 409 and refused.error["field"] == "version"
    assert snapshot(aws) == before


def test_a_rollback_to_a_revision_on_latest_is_refused_under_rules(app: HandlerApi, aws: SimpleNamespace) -> None:
    # Given prod on LATEST at revision 2, then on 2, then a policy of tags
    assert app.call("PUT", ALIAS, {"version": "LATEST"}).status == 200
    assert app.call("PUT", ALIAS, {"version": 2}).status == 200
    assert app.call("PUT", POLICY, {"require_tags": {"qa": "passed"}}).status == 200
    before = snapshot(aws)
    # When it is rolled back to revision 2
    refused = app.call("POST", f"{ALIAS}/rollback", {"to_revision": 2})
    # Then
    assert refused.status == 409 and refused.error["field"] == "to_revision"
    assert "no longer holds what it served" in refused.error["message"]
    assert snapshot(aws) == before
    assert app.call("POST", f"{ALIAS}/rollback", {"to_revision": 1}).status == 200


# No lock-out.


def test_a_policy_that_would_lock_its_writer_out_is_refused(app: HandlerApi, aws: SimpleNamespace) -> None:
    alice = user("alice")
    before = snapshot(aws)
    for globs in (["arn:aws:iam::000000000000:user/bob"], ["arn:aws:iam::000000000000:user/Alice"]):
        refused = alice.call("PUT", POLICY, {"allowed_principals": globs})
        assert refused.status == 409 and refused.error["field"] == "allowed_principals"
        assert "lock you out" in refused.error["message"]
    assert snapshot(aws) == before
    # a lone `*` is anyone, the writer too
    assert alice.call("PUT", POLICY, {"allowed_principals": ["*"]}).status == 200
    assert user("bob").call("PUT", ALIAS, {"version": 2}).status == 200


@pytest.mark.parametrize(
    ("glob", "words"),
    [
        (" arn:aws:iam::000000000000:user/alice", "whitespace"),
        ("arn:aws:iam::000000000000:user/alice/", "empty segment"),
        ("ARN:AWS:IAM::000000000000:user/alice", "lower case"),
        ("alice", "ARN pattern"),
        (f"{ROLE}/ci-*", "session"),
    ],
)
def test_a_glob_no_caller_can_match_is_400_naming_it_and_writes_nothing(
    app: HandlerApi, aws: SimpleNamespace, glob: str, words: str
) -> None:
    before = snapshot(aws)
    refused = user("alice").call("PUT", POLICY, {"allowed_principals": ["*", glob]})
    assert refused.status == 400 and refused.error["field"] == "allowed_principals.1"
    assert words in refused.error["message"]
    assert snapshot(aws) == before


# Who did what, in the events.


def events_by(app: HandlerApi) -> list[tuple[str, str]]:
    feed = app.call("GET", "/artifacts/team/app/events").body["events"]
    return [(e["type"], e["by"]) for e in feed if e["type"].startswith(("promotion.", "alias.updated", "rollout."))]


def test_the_approval_that_applies_a_promotion_is_the_approvers_event(app: HandlerApi) -> None:
    assert app.call("PUT", POLICY, {"approvals": 1}).status == 200
    pid = user("alice").call("POST", f"{ALIAS}/promotions", {"version": 2}).body["id"]
    assert user("bob").call("POST", f"{ALIAS}/promotions/{pid}/approve", {}).body["state"] == "applied"
    alice, bob = USER.format("alice"), USER.format("bob")
    assert events_by(app)[-4:] == [
        ("promotion.requested", alice),
        ("alias.updated", alice),  # the alias moves as the requester's revision
        ("promotion.approved", bob),
        ("promotion.applied", bob),
    ]


@pytest.mark.parametrize("approvals", [0, 1])
def test_a_promotion_that_starts_a_rollout_records_who_asked_and_who_approved(app: HandlerApi, approvals: int) -> None:
    assert app.call("PUT", POLICY, {"approvals": approvals}).status == 200
    body = {"version": 2, "rollout": {"steps": [10], "interval_seconds": 60}}
    pid = user("alice").call("POST", f"{ALIAS}/promotions", body).body["id"]
    if approvals:
        assert user("bob").call("POST", f"{ALIAS}/promotions/{pid}/approve", {}).body["state"] == "applied"
    found = dict(events_by(app))
    assert found["promotion.requested"] == USER.format("alice")
    assert found["promotion.applied"] == USER.format("bob" if approvals else "alice")
    if approvals:
        assert found["promotion.approved"] == USER.format("bob")
    assert found["rollout.started"].startswith("rollout:")  # the rollout writes the alias
