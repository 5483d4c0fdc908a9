"""Consumer leases: taken, renewed in one write, listed while live (judged by `expires_at`), released; a lease names
a live version, and a leased version is not soft-deleted."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from arca import wiring
from arca.adapters import keys
from arca.domain.consumers import MAX_LEASES_PER_VERSION
from tests.helpers import HandlerApi, counted
from tests.integration.conftest import snapshot
from tests.integration.test_retention import Clock

NAME = "team/app"
BASE = f"/artifacts/{NAME}/consumers"


@pytest.fixture
def clock(aws: SimpleNamespace) -> Clock:
    found = Clock()
    wiring.services().policy.clock = found
    return found


@pytest.fixture
def app(api: HandlerApi, clock: Clock) -> HandlerApi:
    """`team/app` with versions 1 and 2."""
    assert api.publish(NAME, b"one").status == 201
    assert api.publish(NAME, b"two").status == 201
    return api


def events(api: HandlerApi, kind: str) -> list[dict[str, Any]]:
    reply = api.call("GET", f"/artifacts/{NAME}/events")
    assert reply.status == 200, reply.body
    return [e for e in reply.body["events"] if e["type"] == kind]


def lease(api: HandlerApi, consumer: str, **body: Any) -> Any:
    return api.call("PUT", f"{BASE}/{consumer}", body)


def test_a_lease_is_taken_listed_and_released(app: HandlerApi, clock: Clock) -> None:
    # When a consumer leases version 1 with labels
    taken = lease(app, "ecs:prod.payments", version=1, ttl_seconds=3600, labels={"env": "prod"})
    # Then the lease is answered with its expiry, listed, and announced once
    assert taken.status == 200, taken.body
    assert taken.body["consumer"] == "ecs:prod.payments"
    assert taken.body["version"] == 1
    assert taken.body["labels"] == {"env": "prod"}
    assert taken.body["expires_at"] == "2026-01-01T01:00:00.000Z"
    listed = app.call("GET", BASE)
    assert listed.status == 200, listed.body
    assert [c["consumer"] for c in listed.body["consumers"]] == ["ecs:prod.payments"]
    assert [e["detail"]["consumer"] for e in events(app, "consumer.updated")] == ["ecs:prod.payments"]
    # When it is released
    released = app.call("DELETE", f"{BASE}/ecs:prod.payments")
    # Then it is no longer listed, the release is announced, and releasing again is a no-op
    assert released.status == 204, released.body
    assert app.call("GET", BASE).body["consumers"] == []
    assert len(events(app, "consumer.released")) == 1
    assert app.call("DELETE", f"{BASE}/ecs:prod.payments").status == 204
    assert len(events(app, "consumer.released")) == 1


def test_a_renewal_of_the_same_version_and_labels_is_one_write_and_announces_nothing(
    app: HandlerApi, clock: Clock
) -> None:
    assert lease(app, "lambda:us-east-1:checkout", version=2, labels={"team": "pay"}).status == 200
    clock.advance(hours=1)
    # When the same lease is renewed
    with counted("before-call.dynamodb.*") as calls:
        renewed = lease(app, "lambda:us-east-1:checkout", version=2, labels={"team": "pay"})
    # Then one write (after one read), the expiry moves on, and no event is added
    assert renewed.status == 200, renewed.body
    assert renewed.body["expires_at"] == "2026-01-02T01:00:00.000Z"
    writes = [c for c in calls if c not in ("GetItem", "Query")]
    assert writes == ["UpdateItem"], calls
    assert len(events(app, "consumer.updated")) == 1
    # And a renewal that omits the labels keeps them, still one write
    with counted("before-call.dynamodb.*") as calls:
        kept = lease(app, "lambda:us-east-1:checkout", version=2)
    assert kept.body["labels"] == {"team": "pay"}
    assert [c for c in calls if c not in ("GetItem", "Query")] == ["UpdateItem"]


def test_moving_to_another_version_or_changing_labels_is_announced(app: HandlerApi, clock: Clock) -> None:
    assert lease(app, "ecs:prod.api", version=1).status == 200
    assert lease(app, "ecs:prod.api", version=2).status == 200
    assert lease(app, "ecs:prod.api", version=2, labels={"region": "eu"}).status == 200
    updated = events(app, "consumer.updated")
    assert [e["version"] for e in updated] == [1, 2, 2]
    assert updated[1]["detail"]["previous_version"] == 1
    assert updated[2]["detail"]["labels"] == {"region": "eu"}


def test_a_lapsed_lease_is_never_listed_whatever_the_ttl_deletion_left(
    app: HandlerApi, aws: SimpleNamespace, clock: Clock
) -> None:
    assert lease(app, "ecs:a", version=1, ttl_seconds=60).status == 200
    assert lease(app, "ecs:b", version=2, ttl_seconds=7200).status == 200
    # When the first lease lapses (its item still stored: TTL deletion is late)
    clock.advance(minutes=2)
    item = aws.dynamodb.get_item(
        TableName=aws.table, Key={k: {"S": v} for k, v in keys.consumer_key(NAME, "ecs:a").items()}
    )
    assert "Item" in item
    # Then only the live lease is listed, and the version filter applies
    assert [c["consumer"] for c in app.call("GET", BASE).body["consumers"]] == ["ecs:b"]
    assert app.call("GET", BASE, query={"version": "1"}).body["consumers"] == []
    assert [c["consumer"] for c in app.call("GET", BASE, query={"version": "2"}).body["consumers"]] == ["ecs:b"]
    # And the lapsed lease is taken again (announced: it had lapsed)
    assert lease(app, "ecs:a", version=1, ttl_seconds=60).status == 200
    assert len(events(app, "consumer.updated")) == 3


def test_listing_is_paged(app: HandlerApi, clock: Clock) -> None:
    for index in range(5):
        assert lease(app, f"ecs:svc-{index}", version=1).status == 200
    seen: list[str] = []
    token = None
    while True:
        query = {"limit": "2", **({"next_token": token} if token else {})}
        reply = app.call("GET", BASE, query=query)
        assert reply.status == 200, reply.body
        seen += [c["consumer"] for c in reply.body["consumers"]]
        token = reply.body.get("next_token")
        if not token:
            break
    assert seen == [f"ecs:svc-{i}" for i in range(5)]


@pytest.mark.parametrize(
    ("path", "body", "status", "field"),
    [
        (f"{BASE}/ecs:x", {"version": 9}, 404, "version"),
        ("/artifacts/team/none/consumers/ecs:x", {"version": 1}, 404, None),
    ],
)
def test_a_lease_names_a_version_that_exists(
    app: HandlerApi, aws: SimpleNamespace, path: str, body: dict[str, Any], status: int, field: str | None
) -> None:
    before = snapshot(aws)
    reply = app.call("PUT", path, body)
    assert reply.status == status, reply.body
    assert reply.body["error"].get("field") == field
    assert snapshot(aws) == before


def test_a_deleted_version_cannot_be_leased(app: HandlerApi, aws: SimpleNamespace) -> None:
    assert app.call("DELETE", f"/artifacts/{NAME}/versions/1").status in (200, 204)
    before = snapshot(aws)
    reply = lease(app, "ecs:x", version=1)
    assert reply.status == 409, reply.body
    assert reply.body["error"]["field"] == "version"
    assert snapshot(aws) == before


def test_a_version_holds_a_bounded_number_of_leases(
    app: HandlerApi, aws: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("arca.services.consumers.MAX_LEASES_PER_VERSION", 2)
    assert MAX_LEASES_PER_VERSION > 2
    assert lease(app, "ecs:a", version=1).status == 200
    assert lease(app, "ecs:b", version=1).status == 200
    before = snapshot(aws)
    refused = lease(app, "ecs:c", version=1)
    assert refused.status == 409, refused.body
    assert refused.body["error"]["code"] == "LeaseLimitError"
    assert refused.body["error"]["field"] == "version"
    assert refused.body["error"]["limit"] == 2
    assert snapshot(aws) == before
    # A renewal of a lease already held is not refused
    assert lease(app, "ecs:a", version=1).status == 200
    monkeypatch.setattr("arca.services.consumers.MAX_LEASES", 2)
    refused = lease(app, "ecs:c", version=2)
    assert refused.status == 409, refused.body
    assert refused.body["error"]["field"] == "consumer"


def test_a_link_name_is_followed_by_the_listing_and_refused_for_a_lease(app: HandlerApi) -> None:
    assert app.call("PUT", "/artifacts/app/link", {"target": NAME}).status == 201
    assert lease(app, "ecs:a", version=1).status == 200
    listed = app.call("GET", "/artifacts/app/consumers")
    assert listed.status == 200, listed.body
    assert listed.body["via"] == "app"
    refused = app.call("PUT", "/artifacts/app/consumers/ecs:a", {"version": 1})
    assert refused.status == 409, refused.body
    assert refused.body["error"]["code"] == "LinkedNameError"


def test_a_leased_version_is_not_soft_deleted_and_the_409_names_its_consumers(
    app: HandlerApi, aws: SimpleNamespace, clock: Clock
) -> None:
    assert lease(app, "ecs:prod.api", version=1, ttl_seconds=600).status == 200
    assert lease(app, "lambda:eu-west-1:worker", version=1, ttl_seconds=600).status == 200
    before = snapshot(aws)
    refused = app.call("DELETE", f"/artifacts/{NAME}/versions/1")
    assert refused.status == 409, refused.body
    assert refused.body["error"]["code"] == "VersionLeasedError"
    assert refused.body["error"]["field"] == "version"
    assert refused.body["error"]["consumers"] == ["ecs:prod.api", "lambda:eu-west-1:worker"]
    assert snapshot(aws) == before
    # Once the leases lapse (their items still stored), the version is deleted
    clock.advance(minutes=11)
    assert app.call("DELETE", f"/artifacts/{NAME}/versions/1").status == 200


def test_a_lease_taken_between_the_deletes_read_and_its_write_wins(
    app: HandlerApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a delete that reads no lease, and a lease taken right after that read, before the delete's write
    store = type(wiring.services().stores.consumers)
    read = store.live_leases
    raced: list[int] = []

    def then_a_lease(self: Any, name: str, **kwargs: Any) -> Any:
        found = read(self, name, **kwargs)
        if not raced:
            raced.append(1)
            assert lease(app, "ecs:late", version=1).status == 200
        return found

    monkeypatch.setattr(store, "live_leases", then_a_lease)
    # When the delete goes on
    reply = app.call("DELETE", f"/artifacts/{NAME}/versions/1")
    # Then it is refused naming the late consumer, and the version stays live
    assert reply.status == 409, reply.body
    assert reply.body["error"]["consumers"] == ["ecs:late"]
    assert app.call("GET", f"/artifacts/{NAME}/versions/1").body["deleted"] is False


def test_prune_skips_leased_versions_and_names_their_consumers(app: HandlerApi) -> None:
    assert app.publish(NAME, b"three").status == 201
    assert lease(app, "ecs:old", version=1).status == 200
    reply = app.call("POST", f"/artifacts/{NAME}/prune", {"keep_last": 1})
    assert reply.status == 200, reply.body
    assert reply.body["deleted"] == [2]
    assert reply.body["skipped"] == [{"version": 1, "aliases": [], "consumers": ["ecs:old"]}]


def test_retention_keeps_leased_versions_and_names_their_consumers(app: HandlerApi, clock: Clock) -> None:
    # Given four versions, a policy keeping the newest, and a lease on version 1
    assert app.publish(NAME, b"three").status == 201
    assert app.publish(NAME, b"four").status == 201
    assert app.call("PUT", f"/artifacts/{NAME}/retention", {"keep_last": 1}).status == 200
    assert lease(app, "ecs:prod.api", version=1, ttl_seconds=3600).status == 200
    # When previewed and applied
    preview = app.call("GET", f"/artifacts/{NAME}/retention/preview")
    assert preview.status == 200, preview.body
    found = {r["version"]: (r["action"], r["reasons"]) for r in preview.body["versions"]}
    applied = app.call("POST", f"/artifacts/{NAME}/retention/apply")
    # Then the leased version is kept for its consumer, the others go
    assert found[1] == ("keep", ["consumer:ecs:prod.api"])
    assert found[2] == ("delete", []) and found[3] == ("delete", [])
    assert applied.status == 200, applied.body
    assert sorted(applied.body["deleted"]) == [2, 3]
    # And once the lease lapses, the next apply deletes it
    clock.advance(hours=2)
    assert app.call("POST", f"/artifacts/{NAME}/retention/apply").body["deleted"] == [1]


def test_a_lease_taken_after_retention_read_the_leases_still_wins(
    app: HandlerApi, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert app.call("PUT", f"/artifacts/{NAME}/retention", {"keep_last": 1}).status == 200
    store = type(wiring.services().stores.consumers)
    read = store.live_leases
    raced: list[int] = []

    def then_a_lease(self: Any, name: str, **kwargs: Any) -> Any:
        found = read(self, name, **kwargs)
        if not raced:
            raced.append(1)
            assert lease(app, "ecs:late", version=1).status == 200
        return found

    monkeypatch.setattr(store, "live_leases", then_a_lease)
    applied = app.call("POST", f"/artifacts/{NAME}/retention/apply")
    assert applied.status == 200, applied.body
    assert applied.body["deleted"] == []
    assert app.call("GET", f"/artifacts/{NAME}/versions/1").body["deleted"] is False


def test_a_plain_purge_is_refused_while_leases_are_live_and_a_forced_one_removes_them(
    app: HandlerApi, aws: SimpleNamespace
) -> None:
    assert lease(app, "ecs:prod.api", version=2).status == 200
    refused = app.call("DELETE", f"/artifacts/{NAME}")
    assert refused.status == 409, refused.body
    assert refused.body["error"]["consumers"] == ["ecs:prod.api"]
    # The refused purge's mark is cleared: the artifact takes writes and leases again
    assert app.publish(NAME, b"three").status == 201
    assert lease(app, "ecs:prod.api", version=3).status == 200
    assert app.call("DELETE", f"/artifacts/{NAME}", query={"force": "true"}).status == 204
    items = aws.dynamodb.query(
        TableName=aws.table,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": keys.consumers_pk(NAME)}},
    )["Items"]
    assert items == []


def test_a_forced_purge_says_which_leases_it_released(app: HandlerApi, clock: Clock) -> None:
    # Given two live leases and one that lapsed
    assert lease(app, "ecs:prod.api", version=2).status == 200
    assert lease(app, "ecs:prod.worker", version=1).status == 200
    assert lease(app, "lambda:old", version=1, ttl_seconds=60).status == 200
    clock.advance(seconds=120)
    # When the artifact is purged with force
    purged = app.call("DELETE", f"/artifacts/{NAME}", query={"force": "true"})
    # Then the answer counts and names the live leases it removed (the lapsed one protected nothing)
    assert purged.status == 204, purged.body
    assert purged.headers["Arca-Released-Leases"] == "2"
    assert purged.headers["Arca-Released-Consumers"] == "ecs:prod.api,ecs:prod.worker"


def test_a_purge_that_released_no_lease_says_nothing_of_leases(app: HandlerApi) -> None:
    purged = app.call("DELETE", f"/artifacts/{NAME}", query={"force": "true"})
    assert purged.status == 204, purged.body
    assert "Arca-Released-Leases" not in purged.headers
    assert "Arca-Released-Consumers" not in purged.headers


def test_a_forced_purge_names_at_most_twenty_consumers_and_counts_them_all(app: HandlerApi) -> None:
    for i in range(23):
        assert lease(app, f"c{i:02d}", version=1).status == 200
    purged = app.call("DELETE", f"/artifacts/{NAME}", query={"force": "true"})
    assert purged.status == 204, purged.body
    assert purged.headers["Arca-Released-Leases"] == "23"
    assert purged.headers["Arca-Released-Consumers"].split(",") == [f"c{i:02d}" for i in range(20)]


def test_rollout_status_names_the_consumers_still_on_each_version(app: HandlerApi, clock: Clock) -> None:
    # Given prod on version 1, a rollout of version 2, two consumers on 1, one on 2 and a lapsed one on 2
    assert app.call("PUT", f"/artifacts/{NAME}/aliases/prod", {"version": 1}).status == 201
    started = app.call(
        "PUT", f"/artifacts/{NAME}/aliases/prod/rollout", {"version": 2, "steps": [10], "interval_seconds": 60}
    )
    assert started.status == 201, started.body
    assert "consumers" not in started.body
    for consumer, version in (("ecs:b", 1), ("ecs:a", 1), ("ecs:c", 2)):
        assert lease(app, consumer, version=version).status == 200
    assert lease(app, "ecs:gone", version=2, ttl_seconds=60).status == 200
    clock.advance(seconds=120)
    # When the status is read
    with counted("before-call.dynamodb.*") as calls:
        status = app.call("GET", f"/artifacts/{NAME}/aliases/prod/rollout")
    # Then it names the live consumers on the version rolled out from and on the one rolled out, in one Query
    assert status.status == 200, status.body
    assert status.body["consumers"] == [
        {"version": 1, "count": 2, "consumers": ["ecs:a", "ecs:b"]},
        {"version": 2, "count": 1, "consumers": ["ecs:c"]},
    ]
    assert calls == ["GetItem", "Query", "Query"]  # the rollout, the alias, the leases


def test_rollout_status_counts_every_consumer_and_names_the_first_twenty(app: HandlerApi) -> None:
    assert app.call("PUT", f"/artifacts/{NAME}/aliases/prod", {"version": 1}).status == 201
    body = {"version": 2, "steps": [10], "interval_seconds": 60}
    assert app.call("PUT", f"/artifacts/{NAME}/aliases/prod/rollout", body).status == 201
    for i in range(22):
        assert lease(app, f"c{i:02d}", version=1).status == 200
    status = app.call("GET", f"/artifacts/{NAME}/aliases/prod/rollout")
    assert status.status == 200, status.body
    assert status.body["consumers"][0] == {"version": 1, "count": 22, "consumers": [f"c{i:02d}" for i in range(20)]}
    assert status.body["consumers"][1] == {"version": 2, "count": 0, "consumers": []}
