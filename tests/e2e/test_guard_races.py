"""Guarded promotion under concurrency, on DynamoDB Local: what an alias policy's verdict read is changed by
another writer (a thread of its own, through the API) after the verdict and before the alias write commits.
The write's transaction carries conditions on all of it, so it is judged again and refused, never committed."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from arca.domain.errors import PolicyViolation
from arca.domain.models import AliasBody
from arca.services.retry import Policy
from arca.wiring import build
from tests.e2e.conftest import ArcaHttp
from tests.e2e.test_races import publish_versions, race
from tests.helpers import acting


def interfering(services: Any, meddle: Callable[[], None]) -> list[bool]:
    """Make the first guarded alias transaction of `services` wait for `meddle`, run in another thread."""
    table = services.stores.table
    original = table.transact
    done: list[bool] = []

    def transact(writes: list[Any], **kwargs: Any) -> None:
        if not done and any(w.name.startswith("guard") for w in writes):
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
