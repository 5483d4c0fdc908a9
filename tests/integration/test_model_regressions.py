"""Counterexamples the reference-model test found (tests/model), shrunk by hand to plain tests.

Each test states one contract rule. Those whose fix has not merged yet are marked by `until_fixed(rule)`
(tests/model/pending.py): a strict xfail while the rule is pending, so that the test reports its fix.
"""

from __future__ import annotations

from types import SimpleNamespace

from tests.helpers import HandlerApi
from tests.integration.conftest import snapshot
from tests.model.pending import until_fixed
from tests.model.spec import IDENTITIES

NAME = "model/app"
BASE = f"/artifacts/{NAME}"
PROD = f"{BASE}/aliases/prod"


def acting(who: str) -> HandlerApi:
    api = HandlerApi()
    api.identity = IDENTITIES[who]
    return api


def published(api: HandlerApi, count: int) -> None:
    for index in range(1, count + 1):
        assert api.publish(NAME, f"release {index}\n".encode()).status == 201


def rules(reply: object) -> set[str]:
    return {v["rule"] for v in reply.error["violations"]}  # type: ignore[attr-defined]


def alias(api: HandlerApi) -> tuple[object, object, object]:
    body = api.call("GET", PROD).body
    return body["version"], body["secondary_version"], body["secondary_version_weight"]


# A policy judges every change of what an alias serves.


@until_fixed("judge-every-change")
def test_raising_a_canary_weight_is_judged_by_the_policy(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given prod on 1 with 2 as a 5 % canary, then a policy that version 2 (untagged) does not pass
    published(api, 2)
    assert api.call("PUT", PROD, {"version": 1, "secondary_version": 2, "secondary_version_weight": 5}).status == 201
    assert api.call("PUT", f"{PROD}/policy", {"require_tags": {"qa": "passed"}}).status == 200
    before = snapshot(aws)
    # When the canary's weight is raised to 99
    raised = api.call("PUT", PROD, {"version": 1, "secondary_version": 2, "secondary_version_weight": 99})
    # Then it is refused, naming the rule, and nothing is written
    assert raised.status == 403, raised.body
    assert rules(raised) == {"require_tags"}
    assert snapshot(aws) == before


@until_fixed("judge-every-change")
def test_making_the_secondary_the_primary_is_judged_by_the_policy(api: HandlerApi) -> None:
    # Given prod on 1 with 2 as a canary, then a policy that version 2 does not pass
    published(api, 2)
    api.call("PUT", PROD, {"version": 1, "secondary_version": 2, "secondary_version_weight": 5})
    api.call("PUT", f"{PROD}/policy", {"require_tags": {"qa": "passed"}})
    # When 2 is made the primary
    promoted = api.call("PUT", PROD, {"version": 2})
    # Then it is refused and prod still serves 1 with its canary
    assert promoted.status == 403, promoted.body
    assert rules(promoted) == {"require_tags"}
    assert alias(api) == (1, 2, 5)


@until_fixed("judge-every-change")
def test_under_approvals_a_direct_write_never_moves_the_canary(api: HandlerApi) -> None:
    # Given prod on 1 with 2 as a canary, then a policy asking for one approval
    published(api, 2)
    api.call("PUT", PROD, {"version": 1, "secondary_version": 2, "secondary_version_weight": 5})
    api.call("PUT", f"{PROD}/policy", {"approvals": 1})
    # When the weight is raised, or the secondary made primary, directly
    raised = api.call("PUT", PROD, {"version": 1, "secondary_version": 2, "secondary_version_weight": 50})
    swapped = api.call("PUT", PROD, {"version": 2, "secondary_version": 1, "secondary_version_weight": 5})
    # Then both are refused: only an approved promotion moves the alias
    assert (raised.status, swapped.status) == (403, 403), (raised.body, swapped.body)
    assert rules(raised) == rules(swapped) == {"approvals"}
    assert alias(api) == (1, 2, 5)


@until_fixed("judge-every-change")
def test_a_promotion_that_makes_the_canary_primary_is_judged(api: HandlerApi) -> None:
    # Given prod on 1 with 2 as a canary, then a policy (no approvals) that version 2 does not pass
    published(api, 2)
    api.call("PUT", PROD, {"version": 1, "secondary_version": 2, "secondary_version_weight": 10})
    api.call("PUT", f"{PROD}/policy", {"require_tags": {"qa": "passed"}})
    # When a promotion of 2 is requested (applied at once, as nobody needs to approve it)
    promoted = acting("alice").call("POST", f"{PROD}/promotions", {"version": 2})
    # Then it is refused, naming the rule, and prod still serves 1 with its canary
    assert promoted.status == 403, promoted.body
    assert rules(promoted) == {"require_tags"}
    assert alias(api) == (1, 2, 10)


# An alias on LATEST takes no rule but allowed_principals.


@until_fixed("latest-alias")
def test_a_policy_with_rules_is_refused_on_an_alias_on_latest(api: HandlerApi, aws: SimpleNamespace) -> None:
    published(api, 1)
    assert api.call("PUT", PROD, {"version": "LATEST"}).status == 201
    before = snapshot(aws)
    refused = api.call("PUT", f"{PROD}/policy", {"require_tags": {"qa": "passed"}})
    assert refused.status == 409, refused.body
    assert snapshot(aws) == before
    # allowed_principals alone is taken
    assert api.call("PUT", f"{PROD}/policy", {"allowed_principals": ["*"]}).status == 200


@until_fixed("latest-alias")
def test_a_guarded_alias_is_never_pointed_at_latest(api: HandlerApi) -> None:
    # Given prod on 1 (tagged), guarded by require_tags
    published(api, 1)
    api.call("PATCH", f"{BASE}/versions/1", {"tags": {"qa": "passed"}})
    api.call("PUT", PROD, {"version": 1})
    api.call("PUT", f"{PROD}/policy", {"require_tags": {"qa": "passed"}})
    # When LATEST is made its canary, or its primary
    canary = api.call("PUT", PROD, {"version": 1, "secondary_version": "LATEST", "secondary_version_weight": 10})
    primary = api.call("PUT", PROD, {"version": "LATEST"})
    # Then both are 409 and prod still serves 1 alone
    assert (canary.status, primary.status) == (409, 409), (canary.body, primary.body)
    assert alias(api) == (1, None, None)


@until_fixed("latest-alias")
def test_a_guarded_alias_is_not_rolled_back_to_latest(api: HandlerApi) -> None:
    # Given prod on LATEST (revision 1), then on 1 (revision 2), then guarded by approvals
    published(api, 1)
    api.call("PUT", PROD, {"version": "LATEST"})
    api.call("PUT", PROD, {"version": 1})
    api.call("PUT", f"{PROD}/policy", {"approvals": 1})
    # When rolled back to revision 1
    back = api.call("POST", f"{PROD}/rollback", {"to_revision": 1})
    # Then 409: LATEST no longer holds what that revision served
    assert back.status == 409, back.body
    assert alias(api) == (1, None, None)


# No lock-out.


@until_fixed("no-lock-out")
def test_a_policy_that_would_lock_its_writer_out_is_refused(api: HandlerApi, aws: SimpleNamespace) -> None:
    published(api, 1)
    before = snapshot(aws)
    refused = acting("ci-run").call("PUT", f"{PROD}/policy", {"allowed_principals": [IDENTITIES["alice"]]})
    assert refused.status == 409, refused.body
    assert snapshot(aws) == before


@until_fixed("no-lock-out")
def test_a_lone_star_lets_anyone_write(api: HandlerApi) -> None:
    published(api, 1)
    assert acting("alice").call("PUT", f"{PROD}/policy", {"allowed_principals": ["*"]}).status == 200
    assert acting("bob").call("PUT", PROD, {"version": 1}).status == 201


# A person is one principal.


@until_fixed("one-principal")
def test_another_session_of_the_requesters_role_cannot_approve(api: HandlerApi) -> None:
    # Given a policy asking for one approval, and a promotion requested by one session of the deployer role
    published(api, 2)
    api.call("PUT", PROD, {"version": 1})
    api.call("PUT", f"{PROD}/policy", {"approvals": 1})
    requested = acting("ci-run").call("POST", f"{PROD}/promotions", {"version": 2})
    assert requested.status == 201, requested.body
    # When another session of that role approves it
    approved = acting("ci-approve").call("POST", f"{PROD}/promotions/{requested.body['id']}/approve", {})
    # Then it is refused, and prod has not moved
    assert approved.status == 403, approved.body
    assert rules(approved) == {"approvals"}
    assert alias(api) == (1, None, None)


@until_fixed("one-principal")
def test_two_sessions_of_one_role_are_one_approval(api: HandlerApi) -> None:
    published(api, 2)
    api.call("PUT", PROD, {"version": 1})
    api.call("PUT", f"{PROD}/policy", {"approvals": 2})
    promotion = acting("alice").call("POST", f"{PROD}/promotions", {"version": 2}).body["id"]
    first = acting("ci-run").call("POST", f"{PROD}/promotions/{promotion}/approve", {})
    second = acting("ci-approve").call("POST", f"{PROD}/promotions/{promotion}/approve", {})
    assert first.status == 200 and first.body["state"] == "pending", first.body
    assert second.status == 403, second.body
    assert alias(api) == (1, None, None)


@until_fixed("approved-by")
def test_the_approved_event_names_the_approver(api: HandlerApi) -> None:
    published(api, 2)
    api.call("PUT", PROD, {"version": 1})
    api.call("PUT", f"{PROD}/policy", {"approvals": 1})
    promotion = acting("alice").call("POST", f"{PROD}/promotions", {"version": 2}).body["id"]
    assert acting("bob").call("POST", f"{PROD}/promotions/{promotion}/approve", {}).status == 200
    events = api.call("GET", f"{BASE}/events", query={"limit": "1000"}).body["events"]
    approved = [e for e in events if e["type"] == "promotion.approved"]
    assert [e["by"] for e in approved] == [IDENTITIES["bob"]]


# Retention.


@until_fixed("keep-tags-empty")
def test_keep_tags_takes_an_empty_value(api: HandlerApi) -> None:
    # Given versions 1 (tagged qa with an empty value) and 2, and a policy keeping the newest and qa:
    published(api, 2)
    api.call("PATCH", f"{BASE}/versions/1", {"tags": {"qa": ""}})
    put = api.call("PUT", f"{BASE}/retention", {"keep_last": 1, "keep_tags": ["qa:"]})
    assert put.status == 200, put.body
    assert put.body["keep_tags"] == ["qa:"]
    # When it is applied, version 1 is kept by its tag
    applied = api.call("POST", f"{BASE}/retention/apply")
    assert applied.status == 200 and applied.body["deleted"] == [], applied.body


@until_fixed("expired-no-tags")
def test_an_expired_version_carries_no_tags(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given version 1 tagged, soft-deleted, then expired by retention
    published(api, 2)
    api.call("PATCH", f"{BASE}/versions/1", {"tags": {"qa": "passed"}})
    api.call("DELETE", f"{BASE}/versions/1")
    api.call("PUT", f"{BASE}/retention", {"keep_last": 1, "expire_after_days": 0})
    assert api.call("POST", f"{BASE}/retention/apply").body["expired"] == [1]
    # Then no search answers it, no tag row is left, and a tag write on it is a 409
    listed = api.call("GET", f"{BASE}/versions", query={"tag": "qa:passed", "include_deleted": "true"})
    searched = api.call("GET", "/versions", query={"tag": "qa:passed"})
    assert listed.body["versions"] == [] and searched.body["versions"] == [], (listed.body, searched.body)
    assert not [i for i in snapshot(aws)["items"] if i[0] == f"__{NAME}-tags"]
    tagged = api.call("PATCH", f"{BASE}/versions/1", {"tags": {"qa": "again"}})
    assert tagged.status == 409, tagged.body


@until_fixed("deleted-alias-window")
def test_a_deleted_alias_rollback_window_keeps_its_versions(api: HandlerApi) -> None:
    # Given prod on 1, then deleted; versions 2 and 3 newer
    published(api, 3)
    api.call("PUT", PROD, {"version": 1})
    assert api.call("DELETE", PROD).status == 204
    api.call("PUT", f"{BASE}/retention", {"keep_last": 1, "rollback_window": 5})
    # When retention is applied, version 1 (in prod's last revisions) is kept
    applied = api.call("POST", f"{BASE}/retention/apply")
    assert applied.status == 200 and 1 not in applied.body["deleted"], applied.body
    # And a rollback re-creates prod on it
    back = api.call("POST", f"{PROD}/rollback", {})
    assert back.status == 200 and back.body["version"] == 1, back.body
