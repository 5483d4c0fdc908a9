"""Guarded promotion under concurrency, on DynamoDB Local: what an alias policy's verdict read is changed by
another writer (a thread of its own, through the API) after the verdict and before the alias write commits.
The write's transaction carries conditions on all of it, so it is judged again and refused, never committed.
And the other way round: what a policy write read (the alias) is changed before it commits."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from arca.domain.errors import ConflictError, PolicyViolation
from arca.domain.guards import PolicyBody
from arca.domain.models import AliasBody
from arca.services.retry import Policy
from arca.wiring import build
from tests.e2e.conftest import ArcaHttp
from tests.e2e.test_races import publish_versions, race
from tests.helpers import acting


def interfering(services: Any, meddle: Callable[[], None], *, writing: str = "alias") -> list[bool]:
    """Make the first transaction of `services` that puts an item of the kind `writing` (an alias write: "alias";
    a policy write: "alias-policy") wait for `meddle`, run in another thread."""
    table = services.stores.table
    original = table.transact
    done: list[bool] = []

    def transact(writes: list[Any], **kwargs: Any) -> None:
        if not done and any(w.kind == "Put" and (w.item or {}).get("kind") == writing for w in writes):
            done.append(True)
            other = threading.Thread(target=meddle)
            other.start()
            other.join()
        original(writes, **kwargs)

    table.transact = transact
    return done


@pytest.fixture
def name(arca: ArcaHttp, unique: str) -> str:
    """Versions 1-3; prod on 1, staging on 2; version 2 tagged qa=passed."""
    name = f"{unique}/guarded"
    publish_versions(arca, name, 3)
    assert arca.put(f"/artifacts/{name}/aliases/prod", json={"version": 1}).status_code == 201
    assert arca.put(f"/artifacts/{name}/aliases/staging", json={"version": 2}).status_code == 201
    assert arca.request("PATCH", f"/artifacts/{name}/versions/2", json={"tags": {"qa": "passed"}}).status_code == 200
    return name


def attempt_move(name: str, meddle: Callable[[], None], *, ahead: float = 0) -> tuple[Any, list[bool]]:
    """Move prod to version 2 as a writer of its own whose clock is `ahead` seconds in the future."""
    services = build(Policy(clock=lambda: datetime.now(UTC) + timedelta(seconds=ahead)))
    meddled = interfering(services, meddle)
    aliases = acting("alias", services.aliases)
    try:
        return aliases.set(name, "prod", AliasBody(version=2), identity="ci"), meddled
    except PolicyViolation as refused:
        return refused, meddled


def test_a_tag_removed_between_the_verdict_and_the_write_refuses_the_write(arca: ArcaHttp, name: str) -> None:
    # Given a policy that version 2 passes
    assert arca.put(f"/artifacts/{name}/aliases/prod/policy", json={"require_tags": {"qa": "passed"}}).ok
    # When its tag is removed after the verdict, before the commit
    result, meddled = attempt_move(
        name,
        lambda: arca.request("PATCH", f"/artifacts/{name}/versions/2", json={"tags": {"qa": None}}).raise_for_status(),
    )
    # Then the write was judged again and refused; prod never moved
    assert meddled
    assert isinstance(result, PolicyViolation)
    assert [v["rule"] for v in result.details["violations"]] == ["require_tags"]
    history = arca.get(f"/artifacts/{name}/aliases/prod/history").json()["history"]
    assert [h["version"] for h in history] == [1]


def test_a_soak_interrupted_between_the_verdict_and_the_write_refuses_the_write(arca: ArcaHttp, name: str) -> None:
    # Given a soak of a minute that version 2 has passed on staging by the writer's clock
    policy = {"require_soak": {"alias": "staging", "seconds": 60}}
    assert arca.put(f"/artifacts/{name}/aliases/prod/policy", json=policy).ok

    # When staging moves on to 3 after the verdict (version 2's run on it is over)
    def meddle() -> None:
        arca.put(f"/artifacts/{name}/aliases/staging", json={"version": 3}).raise_for_status()

    result, meddled = attempt_move(name, meddle, ahead=120)
    # Then
    assert meddled
    assert isinstance(result, PolicyViolation)
    assert [v["rule"] for v in result.details["violations"]] == ["require_soak"]
    assert arca.get(f"/artifacts/{name}/aliases/prod").json()["version"] == 1


def test_a_policy_tightened_between_the_verdict_and_the_write_refuses_the_write(arca: ArcaHttp, name: str) -> None:
    # Given no policy; then one requiring an approval set after the verdict
    result, meddled = attempt_move(
        name,
        lambda: arca.put(f"/artifacts/{name}/aliases/prod/policy", json={"approvals": 1}).raise_for_status(),
    )
    assert meddled
    assert isinstance(result, PolicyViolation)
    assert [v["rule"] for v in result.details["violations"]] == ["approvals"]
    assert arca.get(f"/artifacts/{name}/aliases/prod").json()["version"] == 1


def test_racing_approvals_apply_a_promotion_once(arca: ArcaHttp, name: str) -> None:
    # Given a promotion needing two approvals, and six approvers at once
    assert arca.put(f"/artifacts/{name}/aliases/prod/policy", json={"approvals": 2}).ok
    requested = arca.post(
        f"/artifacts/{name}/aliases/prod/promotions", json={"version": 2}, headers={"X-Arca-Local-User": "alice"}
    )
    pid = requested.json()["id"]

    def approve(t: int) -> int:
        reply = arca.post(
            f"/artifacts/{name}/aliases/prod/promotions/{pid}/approve",
            json={},
            headers={"X-Arca-Local-User": f"approver{t}"},
        )
        return reply.status_code

    statuses = race(approve, threads=6)
    # Then two approvals were taken, the one that reached the count applied it, the others found it applied
    assert statuses.count(200) == 2 and statuses.count(409) == 4
    promotion = arca.get(f"/artifacts/{name}/aliases/prod/promotions/{pid}").json()
    assert promotion["state"] == "applied" and len(promotion["approvals"]) == 2
    history = arca.get(f"/artifacts/{name}/aliases/prod/history").json()["history"]
    assert [h["version"] for h in history] == [2, 1]


USER = "arn:aws:iam::000000000000:user/{}"


def as_user(name: str) -> dict[str, str]:
    """The headers of a local-mode request by the IAM user `name`."""
    return {"X-Arca-Local-User": name}


def test_a_policy_tightened_between_an_approvals_verdict_and_its_write_refuses_it(arca: ArcaHttp, name: str) -> None:
    # Given a pending promotion of 2 needing one approval
    assert arca.put(f"/artifacts/{name}/aliases/prod/policy", json={"approvals": 1}).ok
    base = f"/artifacts/{name}/aliases/prod/promotions"
    pid = arca.post(base, json={"version": 2}, headers=as_user("alice")).json()["id"]
    tightened = {"approvals": 1, "require_tags": {"qa": "never"}}

    # When the policy is tightened after bob's approval was judged, before it commits
    def meddle() -> None:
        arca.put(f"/artifacts/{name}/aliases/prod/policy", json=tightened).raise_for_status()

    services = build()
    meddled = interfering(services, meddle)
    promotions = acting("alias", services.promotions)
    with pytest.raises(PolicyViolation) as refused:
        promotions.approve(name, "prod", pid, identity=USER.format("bob"), reason=None)
    # Then the approval was judged again on the new policy and refused; prod never moved, the promotion waits
    assert meddled
    assert [v["rule"] for v in refused.value.details["violations"]] == ["require_tags"]
    assert arca.get(f"/artifacts/{name}/aliases/prod").json()["version"] == 1
    assert arca.get(f"{base}/{pid}").json()["state"] == "pending"


def test_approvals_racing_policy_changes_never_apply_what_the_policy_in_force_refuses(
    arca: ArcaHttp, unique: str
) -> None:
    # Given, each round, a pending promotion of 2 (untagged) needing one approval; then at once: bob approves,
    # and the policy starts requiring a tag 2 lacks
    rounds = 6
    for r in range(rounds):
        name = f"{unique}/approvals-{r}"
        publish_versions(arca, name, 2)
        assert arca.put(f"/artifacts/{name}/aliases/prod", json={"version": 1}).status_code == 201
        assert arca.put(f"/artifacts/{name}/aliases/prod/policy", json={"approvals": 1}).ok
        base = f"/artifacts/{name}/aliases/prod/promotions"
        pid = arca.post(base, json={"version": 2}, headers=as_user("alice")).json()["id"]

        def work(t: int, name: str = name, pid: str = pid) -> str:
            services = build()
            if t == 0:
                try:
                    acting("alias", services.promotions).approve(
                        name, "prod", pid, identity=USER.format("bob"), reason=None
                    )
                except PolicyViolation:
                    return "refused"
                return "applied"
            policy = PolicyBody(approvals=1, require_tags={"qa": "never"})
            acting("alias", services.guards).set_policy(name, "prod", policy, identity="ops")
            return "tightened"

        approval, _ = race(work, threads=2)
        # Then in commit order: the move to 2 came before the tightening, or it never came
        events = arca.get(f"/artifacts/{name}/events").json()["events"]
        order = [e["type"] for e in events if e["type"] in ("promotion.applied", "alias.policy_updated")]
        prod = arca.get(f"/artifacts/{name}/aliases/prod").json()
        if approval == "applied":
            assert prod["version"] == 2
            assert order == ["alias.policy_updated", "promotion.applied", "alias.policy_updated"], order
        else:
            assert prod["version"] == 1 and "promotion.applied" not in order


def test_an_alias_moved_to_latest_before_a_policy_write_commits_makes_it_a_409(arca: ArcaHttp, name: str) -> None:
    # When prod is pointed at LATEST after a policy of tags read it, before the policy commits
    def meddle() -> None:
        arca.put(f"/artifacts/{name}/aliases/prod", json={"version": "LATEST"}).raise_for_status()

    services = build()
    meddled = interfering(services, meddle, writing="alias-policy")
    guards = acting("alias", services.guards)
    with pytest.raises(ConflictError) as refused:
        guards.set_policy(name, "prod", PolicyBody(require_tags={"qa": "passed"}), identity="ops")
    # Then the policy write read the alias again and refused: no such policy guards an alias on LATEST
    assert meddled and refused.value.field == "alias"
    assert arca.get(f"/artifacts/{name}/aliases/prod/policy").status_code == 404


def test_a_rollout_step_racing_a_policy_write_runs_and_is_not_superseded(arca: ArcaHttp, name: str) -> None:
    # Given a rollout of 2 on prod
    body = {"version": 2, "steps": [10, 50], "interval_seconds": 60}
    started = arca.put(f"/artifacts/{name}/aliases/prod/rollout", json=body).json()

    # When a policy is set while its first step is about to commit (the alias's mark of the policy moves)
    def meddle() -> None:
        arca.put(f"/artifacts/{name}/aliases/prod/policy", json={"allowed_principals": ["*"]}).raise_for_status()

    services = build()
    meddled = interfering(services, meddle)
    stepped = acting("rollout", services.rollouts).advance(name, "prod", started["id"], 1)
    # Then the step read the alias again and ran: the rollout goes on at 50 %
    assert meddled
    assert stepped is not None and stepped.state == "running" and stepped.weight == 50
    assert arca.get(f"/artifacts/{name}/aliases/prod").json()["secondary_version_weight"] == 50


def test_an_abort_racing_a_policy_that_shuts_its_caller_out_is_refused(arca: ArcaHttp, name: str) -> None:
    # Given a rollout of 2 on prod
    body = {"version": 2, "steps": [10], "interval_seconds": 60}
    assert arca.put(f"/artifacts/{name}/aliases/prod/rollout", json=body).status_code == 201

    # When only ops may write prod from just before mallory's abort commits
    def meddle() -> None:
        policy = {"allowed_principals": [USER.format("ops")]}
        arca.put(f"/artifacts/{name}/aliases/prod/policy", json=policy, headers=as_user("ops")).raise_for_status()

    services = build()
    meddled = interfering(services, meddle)
    with pytest.raises(PolicyViolation) as refused:
        acting("alias", services.rollouts).abort(name, "prod", identity=USER.format("mallory"))
    # Then it was judged again and refused; the rollout runs on
    assert meddled
    assert [v["rule"] for v in refused.value.details["violations"]] == ["allowed_principals"]
    assert arca.get(f"/artifacts/{name}/aliases/prod/rollout").json()["state"] == "running"


def test_a_direct_write_racing_a_rollout_start_under_require_rollout_is_refused(arca: ArcaHttp, name: str) -> None:
    # Given require_rollout on prod (on 1)
    assert arca.put(f"/artifacts/{name}/aliases/prod/policy", json={"require_rollout": True}).ok

    # When a rollout of 2 starts after a description change was judged, before it commits
    def meddle() -> None:
        body = {"version": 2, "steps": [10], "interval_seconds": 60}
        arca.put(f"/artifacts/{name}/aliases/prod/rollout", json=body).raise_for_status()

    services = build()
    meddled = interfering(services, meddle)
    aliases = acting("alias", services.aliases)
    with pytest.raises(PolicyViolation) as refused:
        aliases.set(name, "prod", AliasBody(version=1, description="quiet"), identity="ci")
    # Then it was judged again with the rollout running, and refused: the rollout still owns prod
    assert meddled
    assert [v["rule"] for v in refused.value.details["violations"]] == ["require_rollout"]
    assert arca.get(f"/artifacts/{name}/aliases/prod/rollout").json()["state"] == "running"
    assert arca.get(f"/artifacts/{name}/aliases/prod").json()["secondary_version"] == 2
