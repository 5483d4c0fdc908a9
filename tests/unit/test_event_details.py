"""Typed event details: each type's detail serialises to exactly the map the writers put before it was typed
(in memory, in the stored item, read back on the API and on the bus), and a change carries only its own."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from arca.adapters.store.aliases import _alias_change
from arca.adapters.store.records import event_entity, event_item
from arca.adapters.store.rollouts import _rollout_change
from arca.domain.aggregates import AliasRecord
from arca.domain.entities import Rollout
from arca.domain.events import (
    DETAILS,
    EVENT_TYPES,
    AliasDeleted,
    AliasPolicyUpdated,
    ArtifactCreated,
    ArtifactUpdated,
    AttestationAdded,
    Change,
    ConsumerReleased,
    ConsumerUpdated,
    Event,
    LatestUpdated,
    LinkDeleted,
    LinkUpdated,
    PromotionApplied,
    PromotionApproved,
    PromotionRejected,
    VersionDeleted,
    VersionExpired,
    VersionPublished,
    VersionRestored,
    VersionTagged,
)
from arca.domain.guards import Promotion, PromotionRollout
from arca.services.events import announcement
from arca.services.promotions import Promotions

CONTENT = {"sha256": "a" * 64, "size": 3, "content_type": "text/plain"}


def _alias(**fields: Any) -> AliasRecord:
    return AliasRecord(name="app", alias="prod", **fields)


def _rollout(**fields: Any) -> Rollout:
    base = {"id": "r1", "name": "app", "alias": "prod", "version": 2, "steps": [10, 50], "interval_seconds": 60}
    return Rollout(**{**base, "started_at": "t", "alias_revision": 3, **fields})


def _promotion(**fields: Any) -> Promotion:
    base = {"id": "p1", "name": "app", "alias": "prod", "state": "pending", "version": 2}
    return Promotion(**{**base, "requested_at": "t", "expires_at": "u", "required_approvals": 1, **fields})


def _purged(newest: int) -> Change:
    image = {"sk": {"S": "LATEST"}, "name": {"S": "app"}, "purged": {"S": "2026-01-01T00:00:00Z"}}
    image |= {"purges": {"N": "1"}, **({"newest": {"N": str(newest)}} if newest else {})}
    event = announcement({"eventName": "MODIFY", "dynamodb": {"NewImage": image, "OldImage": {}}})
    assert event is not None
    return Change(event.detail)


# (the change as the writers build it now, the map they built before details were typed)
CASES: list[tuple[Change, dict[str, Any]]] = [
    (Change(LatestUpdated(**CONTENT), "LATEST"), CONTENT),
    (Change(VersionPublished(**CONTENT), 1), CONTENT),
    (Change(VersionDeleted(), 1), {}),
    (Change(VersionDeleted(prune=True), 1), {"prune": True}),
    (Change(VersionDeleted(retention=True), 1), {"retention": True}),
    (Change(VersionRestored(), 1), {}),
    (Change(VersionTagged(tags={"env": "prod", "team": None}), 1), {"tags": {"env": "prod", "team": None}}),
    (Change(ArtifactUpdated(tags={"tier": "1"})), {"tags": {"tier": "1"}}),
    (Change(ArtifactUpdated(tags={}, description=None)), {"tags": {}, "description": None}),
    (Change(ArtifactUpdated(tags={}, description="the app")), {"tags": {}, "description": "the app"}),
    (Change(ArtifactCreated(tags={})), {"tags": {}}),
    (
        Change(ArtifactCreated(tags={"team": "risk"}, description="draft")),
        {"tags": {"team": "risk"}, "description": "draft"},
    ),
    (
        _alias_change(_alias(version=2, revision=4, reason="go"), _alias(version=1, revision=3), "set"),
        {
            "revision": 4,
            "action": "set",
            "secondary_version": None,
            "secondary_version_weight": None,
            "previous_version": 1,
            "reason": "go",
        },
    ),
    (
        _alias_change(_alias(version=1, secondary_version=2, secondary_version_weight=5, revision=2), None, "rollback"),
        {
            "revision": 2,
            "action": "rollback",
            "secondary_version": 2,
            "secondary_version_weight": 5,
            "previous_version": None,
            "reason": None,
            "rollback": True,
        },
    ),
    (_alias_change(_alias(revision=5, deleted=True), _alias(version=1, revision=4), "delete"), {"revision": 5}),
    (Change(LinkUpdated(link="old", target="app")), {"link": "old", "target": "app"}),
    (
        Change(LinkUpdated(link="old", target="app", previous_target="was")),
        {"link": "old", "target": "app", "previous_target": "was"},
    ),
    (Change(LinkDeleted(link="old", target="app")), {"link": "old", "target": "app"}),
    (Change(ConsumerUpdated(consumer="ecs:a", expires_at="t"), 2), {"consumer": "ecs:a", "expires_at": "t"}),
    (
        Change(ConsumerUpdated(consumer="ecs:a", expires_at="t", labels={"k": "v"}, previous_version=1), 2),
        {"consumer": "ecs:a", "expires_at": "t", "labels": {"k": "v"}, "previous_version": 1},
    ),
    (Change(ConsumerReleased(consumer="ecs:a"), 2), {"consumer": "ecs:a"}),
    *[
        (_rollout_change(_rollout(state=state, step=step, weight=weight)), facts)
        for state, step, weight in [("running", 1, 10), ("running", 2, 50), ("completed", 3, 100)]
        for facts in [{"id": "r1", "step": step, "weight": weight, "steps": [10, 50]}]
    ],
    (
        _rollout_change(_rollout(state="rolled_back", step=2, weight=0, alarm="errors")),
        {"id": "r1", "step": 2, "weight": 0, "steps": [10, 50], "state": "rolled_back", "alarm": "errors"},
    ),
    (
        _rollout_change(_rollout(state="aborted", step=2, weight=0)),
        {"id": "r1", "step": 2, "weight": 0, "steps": [10, 50], "state": "aborted", "alarm": None},
    ),
    (_purged(0), {"newest_version": None, "purges": 1}),
    (_purged(7), {"newest_version": 7, "purges": 1}),
    (Change(VersionExpired(), 1), {"retention": True}),
    (Change(AliasPolicyUpdated(revision=2, removed=True), alias="prod"), {"revision": 2, "removed": True}),
    (
        Change(AliasPolicyUpdated(revision=1, removed=False, policy={"approvals": 1}), alias="prod"),
        {"revision": 1, "removed": False, "policy": {"approvals": 1}},
    ),
    (Change(Promotions._detail(_promotion())), {"id": "p1", "required_approvals": 1}),
    (Change(Promotions._detail(_promotion(reason=""))), {"id": "p1", "required_approvals": 1}),
    (
        Change(Promotions._detail(_promotion(reason="ship", rollout=PromotionRollout(steps=[5], interval_seconds=9)))),
        {"id": "p1", "required_approvals": 1, "reason": "ship", "rollout": {"steps": [5], "interval_seconds": 9}},
    ),
    (
        Change(PromotionApproved(id="p1", by="bob", approvals=1, reason=None)),
        {"id": "p1", "by": "bob", "approvals": 1, "reason": None},
    ),
    (Change(PromotionApplied(id="p1", revision=4, approved_by=[])), {"id": "p1", "revision": 4}),
    (
        Change(PromotionApplied(id="p1", revision=4, approved_by=["bob"])),
        {"id": "p1", "revision": 4, "approved_by": ["bob"]},
    ),
    (
        Change(PromotionRejected(id="p1", by=None, reason="no")),
        {"id": "p1", "by": None, "reason": "no"},
    ),
    (
        Change(AttestationAdded(id="b" * 64, type="sbom", sha256="b" * 64)),
        {"id": "b" * 64, "type": "sbom", "sha256": "b" * 64},
    ),
]


def test_every_event_type_has_a_case() -> None:
    assert {change.type for change, _ in CASES} == set(EVENT_TYPES) == set(DETAILS)


@pytest.mark.parametrize(("change", "old"), CASES, ids=lambda case: getattr(case, "type", ""))
def test_a_detail_serialises_as_the_map_written_before_it_was_typed(change: Change, old: dict[str, Any]) -> None:
    # Given the event a transaction stamps on the change
    stamp = {"id": "0" * 16 + "-00000000", "type": change.type, "at": "t", "by": "ann", "name": "app"}
    event = Event(**stamp, version=change.version, alias=change.alias, detail=change.detail)
    # Then in memory, in the item stored and read back (the API's answer and the bus's payload), it is the old map,
    # in the same order
    assert list(change.detail.model_dump().items()) == list(old.items())
    item = event_item(event)
    assert item.get("detail", {}) == old and ("detail" in item) == bool(old)
    wire = {"id": event.id, "type": change.type, "at": "t", "by": "ann", "name": "app"}
    wire |= {"version": change.version, "alias": change.alias, "detail": old}
    read = event_entity(item)
    for answer in (event, read):
        assert json.dumps(answer.model_dump(mode="json"), separators=(",", ":")) == json.dumps(
            wire, separators=(",", ":")
        )


def test_a_change_carries_only_its_own_types_detail() -> None:
    # A detail does not take another type's fields, nor miss its own
    with pytest.raises(ValidationError, match="Extra inputs"):
        AliasDeleted(revision=1, action="set")  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="revision"):
        AliasDeleted()  # type: ignore[call-arg]
    # An event's type and detail agree, whether built or read from a stored map
    with pytest.raises(ValidationError, match="cannot carry AliasDeleted"):
        Event(id="x", type="alias.updated", at="t", name="app", detail=AliasDeleted(revision=1))
    with pytest.raises(ValidationError, match="previous_target"):
        Event(
            id="x", type="link.deleted", at="t", name="app", detail={"link": "a", "target": "b", "previous_target": "c"}
        )
    with pytest.raises(ValidationError, match="unknown event type"):
        Event(id="x", type="version.exploded", at="t", name="app")


def test_a_stored_detail_without_a_field_the_writer_left_out_answers_without_it() -> None:
    # A roll back of a superseded rollout names no state (the key was never written): none is answered
    item = {"kind": "event", "id": "x", "type": "rollout.rolled_back", "at": "t", "name": "app"}
    item["detail"] = {"id": "r1", "step": 2, "weight": 0, "steps": [10, 50]}
    assert event_entity(item).model_dump()["detail"] == item["detail"]
