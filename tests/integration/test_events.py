"""The event feed: every committed write announces itself in its own transaction; nothing else does."""

from __future__ import annotations

import importlib
import json
from types import SimpleNamespace
from typing import Any

import pytest

from arca import wiring
from arca.adapters import keys
from arca.adapters.store.feed import Feed
from arca.domain.events import Change, Detail, event_id
from local import iam
from local.events import api_event, lambda_context
from tests.helpers import HandlerApi, sha256
from tests.integration.conftest import snapshot


def events(api: HandlerApi, name: str = "app", **query: str) -> list[dict[str, Any]]:
    reply = api.call("GET", f"/artifacts/{name}/events", query=query or None)
    assert reply.status == 200, reply.body
    found: list[dict[str, Any]] = reply.body["events"]
    return found


def kinds(found: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [(e["type"], e.get("alias") or e.get("version")) for e in found]


def test_each_write_announces_its_event_in_commit_order(api: HandlerApi) -> None:
    # Given / When every kind of write, in turn
    api.set_latest("app", b"one")
    api.publish("app")
    api.publish("app", b"two")
    api.call("PUT", "/artifacts/app/aliases/prod", {"version": 1})
    api.call("PUT", "/artifacts/app/aliases/prod", {"version": 2, "reason": "release"})
    api.call("POST", "/artifacts/app/aliases/prod/rollback")
    api.call("PUT", "/artifacts/app/aliases/prod", {"version": 1})
    api.call("DELETE", "/artifacts/app/versions/2")
    api.call("POST", "/artifacts/app/versions/2/restore")
    api.call("DELETE", "/artifacts/app/aliases/prod")
    api.call("POST", "/artifacts/app/prune", {"keep_last": 0})
    # Then the feed has one event per change, oldest first, with increasing ids
    found = events(api)
    assert kinds(found) == [
        ("latest.updated", "LATEST"),
        ("version.published", 1),
        ("latest.updated", "LATEST"),
        ("version.published", 2),
        ("alias.updated", "prod"),
        ("alias.updated", "prod"),
        ("alias.updated", "prod"),
        ("alias.updated", "prod"),
        ("version.deleted", 2),
        ("version.restored", 2),
        ("alias.deleted", "prod"),
        ("version.deleted", 2),
        ("version.deleted", 1),
    ]
    ids = [e["id"] for e in found]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    # And each carries what changed
    assert found[1]["detail"] == {"sha256": sha256(b"one"), "size": 3, "content_type": "application/octet-stream"}
    moved, rolled = found[5], found[6]
    assert moved["version"] == 2 and moved["detail"]["previous_version"] == 1 and moved["detail"]["reason"] == "release"
    assert rolled["version"] == 1 and rolled["detail"]["rollback"] is True and rolled["detail"]["action"] == "rollback"
    assert found[11]["detail"] == {"prune": True}
    assert all(e["name"] == "app" and e["at"].endswith("Z") for e in found)


def test_events_record_the_caller_identity(api: HandlerApi) -> None:
    # Given a blob, and a caller whose identity API Gateway verified
    digest = api.upload("app", b"one")
    event, function = api_event(
        "POST",
        "/artifacts/app/versions",
        body=json.dumps({"sha256": digest, "size": 3}),
        headers={"Content-Type": "application/json"},
        identity="arn:aws:iam::123456789012:user/ana",
    )
    # When it publishes
    with iam.acting_as(str(function)):
        response = importlib.import_module(f"arca.handlers.{function}").handler(event, lambda_context(str(function)))
    # Then
    assert response["statusCode"] == 201, response
    assert {e["by"] for e in events(api)} == {"arn:aws:iam::123456789012:user/ana"}


def test_a_publish_that_snapshots_latest_unchanged_announces_only_the_version(api: HandlerApi) -> None:
    # Given
    api.set_latest("app", b"one")
    # When
    api.publish("app")
    # Then
    assert kinds(events(api))[1:] == [("version.published", 1)]


@pytest.mark.parametrize(
    ("method", "path", "body", "status"),
    [
        ("DELETE", "/artifacts/app/versions/1", None, 409),  # pinned by prod
        ("PUT", "/artifacts/app/aliases/beta", {"version": 7}, 409),  # no version 7
        ("PUT", "/artifacts/app/aliases/prod", {"version": 1, "expected_version": 2}, 412),
        ("POST", "/artifacts/app/aliases/prod/rollback", None, 409),  # no earlier revision
        ("POST", "/artifacts/app/versions/1/restore", None, 200),  # not deleted: nothing to do
        ("DELETE", "/artifacts/app/versions/9", None, 404),
    ],
)
def test_a_refused_or_unchanged_write_leaves_no_event(
    api: HandlerApi, aws: SimpleNamespace, method: str, path: str, body: Any, status: int
) -> None:
    # Given version 1 under the alias prod
    api.publish("app", b"one")
    api.call("PUT", "/artifacts/app/aliases/prod", {"version": 1})
    before = snapshot(aws)
    # When
    reply = api.call(method, path, body)
    # Then
    assert reply.status == status, reply.body
    assert snapshot(aws) == before


def test_a_deduplicated_publish_and_an_idempotent_replay_leave_no_event(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given a version published with an Idempotency-Key
    key = {"Idempotency-Key": "release-1"}
    digest = api.upload("app", b"one")
    body = {"sha256": digest, "size": 3}
    assert api.call("POST", "/artifacts/app/versions", body, headers=key).status == 201
    count = len(events(api))
    # When it is sent again, and the same content published again without a key
    assert api.call("POST", "/artifacts/app/versions", body, headers=key).status == 201
    assert api.call("POST", "/artifacts/app/versions", body).status == 200
    # Then no event was added
    assert len(events(api)) == count


def test_a_deduplicated_publish_with_other_fields_writes_nothing(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given content published by the CLI (a content type and the file's name) and published again by curl (neither)
    assert api.publish("app", b"one", content_type="application/zip", metadata={"filename": "app.zip"}).status == 201
    before = snapshot(aws)
    count = len(events(api))
    # When
    again = api.publish("app", b"one")
    # Then it is the same version, and nothing changed: LATEST still holds that content, so no event and no write
    assert again.status == 200 and again.body["deduplicated"] is True, again.body
    assert again.body["metadata"] == {"filename": "app.zip"}
    assert len(events(api)) == count
    assert snapshot(aws) == before


def test_a_failed_transaction_writes_no_event(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given an artifact whose purge has begun (its mark set), so the next publish's transaction is cancelled
    api.publish("app", b"one")
    with iam.acting_as("publish"):
        wiring.services().stores.purge.mark_purging(
            "app", token="t", force=True, now="2026-01-01T00:00:00.000Z", aliases=list, links=list
        )
    digest = api.upload("app", b"two")
    before = snapshot(aws)
    # When
    reply = api.call("POST", "/artifacts/app/versions", {"sha256": digest, "size": 3})
    # Then
    assert reply.status == 409, reply.body
    assert snapshot(aws) == before


def test_the_feed_pages_with_tokens_and_goes_on_after_an_id(api: HandlerApi) -> None:
    # Given 5 publishes (10 events)
    for i in range(5):
        api.publish("app", f"v{i}".encode())
    everything = events(api)
    # When read 3 at a time
    pages, token = [], None
    while True:
        reply = api.call(
            "GET", "/artifacts/app/events", query={"limit": "3", **({"next_token": token} if token else {})}
        )
        pages.append(reply.body["events"])
        token = reply.body["next_token"]
        if token is None:
            break
    # Then every event came once, in order; and `after` starts right after the id it names
    assert [e for page in pages for e in page] == everything
    assert events(api, after=everything[3]["id"]) == everything[4:]
    assert events(api, after=everything[-1]["id"]) == []


def test_events_of_an_unknown_artifact_are_a_404(api: HandlerApi) -> None:
    reply = api.call("GET", "/artifacts/nobody/events")
    assert reply.status == 404


def test_purge_removes_the_feed_and_a_new_artifact_starts_after_the_old_ids(
    api: HandlerApi, aws: SimpleNamespace
) -> None:
    # Given an artifact with events, purged
    api.publish("app", b"one")
    old = events(api)
    assert api.call("DELETE", "/artifacts/app").status == 204
    assert (
        aws.dynamodb.query(
            TableName=aws.table,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": keys.events_pk("app")}},
        )["Count"]
        == 0
    )
    # When it is made again
    api.publish("app", b"two")
    # Then its new feed starts after the ids of the purged one
    new = events(api)
    assert [e["type"] for e in new] == ["latest.updated", "version.published"]
    assert new[0]["id"] > old[-1]["id"]


def test_a_writer_whose_clock_is_behind_goes_after_the_newest_event(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given an artifact whose last event came from a clock far ahead, and a writer whose clock is in 1970
    api.publish("app", b"one")
    services = wiring.services()
    ahead = event_id(9_000_000_000_000_000, "00000000")
    aws.dynamodb.update_item(
        TableName=aws.table,
        Key={"pk": {"S": "app"}, "sk": {"S": "LATEST"}},
        UpdateExpression="SET last_event = :e",
        ExpressionAttributeValues={":e": {"S": ahead}},
    )
    services.stores.feed = behind = Feed(services.stores.table, micros=lambda: 1)
    for store in (services.stores.versions, services.stores.artifacts):
        store.feed = behind
    # When it deletes a version (a write with no compare-and-set loop of its own)
    assert api.call("DELETE", "/artifacts/app/versions/1").status == 200
    # Then its event sorts after the newest, and LATEST now names it
    last = events(api)[-1]
    assert last["type"] == "version.deleted" and last["id"] > ahead


def test_the_primitive_refuses_unknown_event_types() -> None:
    class Exploded(Detail):
        TYPE = "version.exploded"

    with pytest.raises(ValueError, match="unknown event detail Exploded"):
        Change(Exploded())


def test_tag_writes_announce_what_they_changed(api: HandlerApi) -> None:
    # Given an artifact with one version
    api.publish("app", b"one")
    before = len(events(api))
    # When the version and the artifact are tagged, and a patch that changes nothing is sent
    assert api.call("PATCH", "/artifacts/app/versions/1", {"tags": {"env": "prod", "team": "a"}}).status == 200
    assert api.call("PATCH", "/artifacts/app/versions/1", {"tags": {"team": None}}).status == 200
    assert api.call("PATCH", "/artifacts/app", {"tags": {"tier": "1"}, "description": "the app"}).status == 200
    assert api.call("PATCH", "/artifacts/app/versions/1", {"tags": {"env": "prod"}}).status == 200
    # Then one event per change, each saying which keys changed (None: removed)
    found = events(api)[before:]
    assert kinds(found) == [("version.tagged", 1), ("version.tagged", 1), ("artifact.updated", None)]
    assert [e["detail"] for e in found] == [
        {"tags": {"env": "prod", "team": "a"}},
        {"tags": {"team": None}},
        {"tags": {"tier": "1"}, "description": "the app"},
    ]


def test_link_writes_are_announced_in_the_targets_feed_and_read_through_the_link(api: HandlerApi) -> None:
    # Given two artifacts
    api.publish("team/app", b"one")
    api.publish("team/next", b"two")
    # When a name is linked, re-pointed, then unlinked
    assert api.call("PUT", "/artifacts/app/link", {"target": "team/app"}).status == 201
    through_link = api.call("GET", "/artifacts/app/events")
    assert api.call("PUT", "/artifacts/app/link", {"target": "team/next"}).status == 200
    assert api.call("DELETE", "/artifacts/app/link").status == 204
    # Then each target's feed says what happened to the links that point at it
    first = [e for e in events(api, "team/app") if e["type"].startswith("link.")]
    second = [e for e in events(api, "team/next") if e["type"].startswith("link.")]
    assert [(e["type"], e["detail"]) for e in first] == [
        ("link.updated", {"link": "app", "target": "team/app"}),
    ]
    assert [(e["type"], e["detail"]) for e in second] == [
        ("link.updated", {"link": "app", "target": "team/next", "previous_target": "team/app"}),
        ("link.deleted", {"link": "app", "target": "team/next"}),
    ]
    # and the feed read under the link name is the target's, with `via`
    assert through_link.status == 200 and through_link.body["via"] == "app"
    assert through_link.body["events"][-1]["type"] == "link.updated"


def test_a_rollout_announces_its_start_steps_and_end_beside_the_alias_moves(api: HandlerApi) -> None:
    # Given `prod` on version 1 of three
    for i in (1, 2, 3):
        api.publish("app", f"release {i}".encode())
    api.call("PUT", "/artifacts/app/aliases/prod", {"version": 1})
    before = len(events(api))
    # When a rollout of version 2 starts, takes its second step and is promoted, and one of 3 is aborted
    from arca.handlers import rollout as driver

    body = {"version": 2, "steps": [10, 50], "interval_seconds": 60}
    started = api.call("PUT", "/artifacts/app/aliases/prod/rollout", body).body
    state = {**started, "rollout_id": started["id"], "done": False}
    for _ in range(2):
        with iam.acting_as("rollout"):
            state = driver.handler(state, lambda_context("rollout"))
    again = api.call("PUT", "/artifacts/app/aliases/prod/rollout", {**body, "version": 3}).body
    assert api.call("DELETE", "/artifacts/app/aliases/prod/rollout").status == 200
    # Then every rollout write is an alias move followed by the rollout's own event, in one transaction each
    found = [(e["type"], e.get("detail", {}).get("step")) for e in events(api)[before:]]
    assert found == [
        ("alias.updated", None),
        ("rollout.started", 1),
        ("alias.updated", None),
        ("rollout.advanced", 2),
        ("alias.updated", None),
        ("rollout.completed", 3),
        ("alias.updated", None),
        ("rollout.started", 1),
        ("alias.updated", None),
        ("rollout.rolled_back", 2),
    ]
    rollout_events = [e for e in events(api)[before:] if e["type"].startswith("rollout.")]
    assert {e["by"] for e in rollout_events[:3]} == {f"rollout:{started['id']}"}
    assert rollout_events[-1]["detail"]["state"] == "aborted"
    assert rollout_events[-1]["detail"]["id"] == again["id"]
    assert rollout_events[0]["detail"] == {"id": started["id"], "step": 1, "weight": 10, "steps": [10, 50]}
