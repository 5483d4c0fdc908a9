"""Retention: policies, the preview and its reasons, apply (soft delete, expiry, blob collection), paging."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest
import requests

from arca import wiring
from arca.adapters import keys
from tests.helpers import HandlerApi, sha256
from tests.integration.conftest import snapshot
from tests.integration.test_multipart import layout

NAME = "team/svc"
POLICY = f"/artifacts/{NAME}/retention"
START = datetime(2026, 1, 1, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture
def clock(aws: SimpleNamespace) -> Clock:
    found = Clock()
    wiring.services().policy.clock = found
    return found


def publish_many(api: HandlerApi, count: int, prefix: str = "v") -> None:
    for index in range(1, count + 1):
        assert api.publish(NAME, f"{prefix}{index}".encode()).status == 201


def preview(api: HandlerApi, **query: str) -> dict[str, Any]:
    reply = api.call("GET", f"{POLICY}/preview", query=query or None)
    assert reply.status == 200, reply.body
    return dict(reply.body)


def rows(api: HandlerApi) -> dict[int, tuple[str, list[str]]]:
    return {r["version"]: (r["action"], r["reasons"]) for r in preview(api)["versions"]}


def apply(api: HandlerApi) -> dict[str, Any]:
    reply = api.call("POST", f"{POLICY}/apply")
    assert reply.status == 200, reply.body
    return dict(reply.body)


def test_policy_is_stored_read_back_with_defaults_and_removed(api: HandlerApi, clock: Clock) -> None:
    # Given an artifact
    publish_many(api, 1)
    # When a policy is set with only keep_last
    put = api.call("PUT", POLICY, {"keep_last": 3, "keep_tags": ["env:prod"]})
    # Then it is answered and read back with the defaults
    assert put.status == 200, put.body
    got = api.call("GET", POLICY)
    assert got.status == 200
    for body in (put.body, got.body):
        assert body["keep_last"] == 3 and body["rollback_window"] == 5 and body["expire_after_days"] == 30
        assert body["keep_tags"] == ["env:prod"] and body["keep_days"] is None
    # And DELETE removes it: a read is then a 404, as is a second DELETE
    assert api.call("DELETE", POLICY).status == 204
    assert api.call("GET", POLICY).status == 404
    assert api.call("DELETE", POLICY).status == 404


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "keep_last"),
        ({"keep_last": 0}, "keep_last"),
        ({"keep_last": 10_001}, "keep_last"),
        ({"keep_last": "5"}, "keep_last"),
        ({"keep_last": 1, "keep_days": -1}, "keep_days"),
        ({"keep_last": 1, "rollback_window": 101}, "rollback_window"),
        ({"keep_last": 1, "expire_after_days": 3651}, "expire_after_days"),
        ({"keep_last": 1, "keep_tags": ["nocolon"]}, "keep_tags"),
        ({"keep_last": 1, "keep_tags": [f"k:{i}" for i in range(21)]}, "keep_tags"),
        ({"keep_last": 1, "other": 1}, "other"),
    ],
)
def test_a_bad_policy_is_a_400_naming_the_field_and_writes_nothing(
    api: HandlerApi, aws: SimpleNamespace, clock: Clock, body: dict[str, Any], field: str
) -> None:
    # Given an artifact
    publish_many(api, 1)
    before = snapshot(aws)
    # When a bad policy is sent
    reply = api.call("PUT", POLICY, body)
    # Then a 400 names the field and nothing is written
    assert reply.status == 400, reply.body
    assert reply.body["error"]["field"].startswith(field)
    assert snapshot(aws) == before


def test_policy_routes_refuse_a_link_and_a_missing_artifact(api: HandlerApi, clock: Clock) -> None:
    # Given an artifact and a link to it
    publish_many(api, 1)
    assert api.call("PUT", "/artifacts/team/alias-name/link", {"target": NAME}).status == 201
    # When a policy is written under the link, or under a name that does not exist
    linked = api.call("PUT", "/artifacts/team/alias-name/retention", {"keep_last": 1})
    missing = api.call("PUT", "/artifacts/team/none/retention", {"keep_last": 1})
    # Then the link is refused (409 naming its target) and the missing artifact is a 404
    assert linked.status == 409, linked.body
    assert missing.status == 404
    assert api.call("GET", f"{POLICY}/preview").status == 404  # no policy yet


def test_preview_names_every_reason_and_apply_does_what_it_said(api: HandlerApi, clock: Clock) -> None:
    # Given 12 versions: prod on 3 with a canary on 4, prod's history over 1 and 2, beta on 6, 8 tagged
    # env:prod, 11 and 12 newer than keep_days, LATEST on 12's content
    publish_many(api, 10)
    for target in (1, 2):
        assert api.call("PUT", f"/artifacts/{NAME}/aliases/prod", {"version": target}).status in (200, 201)
    body = {"version": 3, "secondary_version": 4, "secondary_version_weight": 10}
    assert api.call("PUT", f"/artifacts/{NAME}/aliases/prod", body).status == 200
    assert api.call("PUT", f"/artifacts/{NAME}/aliases/beta", {"version": 6}).status == 201
    assert api.call("PATCH", f"/artifacts/{NAME}/versions/8", {"tags": {"env": "prod"}}).status == 200
    clock.advance(days=10)
    publish_many(api, 2, prefix="new")
    policy = {"keep_last": 1, "keep_days": 2, "keep_tags": ["env:prod"], "rollback_window": 3}
    assert api.call("PUT", POLICY, policy).status == 200
    # When previewed
    found = rows(api)
    # Then every version is listed newest first with each reason it is kept
    assert list(found) == list(range(12, 0, -1))
    assert found[12] == ("keep", ["newest:1", "age:2", "latest"])
    assert found[11] == ("keep", ["age:2"])
    assert found[8] == ("keep", ["tag:env:prod"])
    assert found[6] == ("keep", ["alias:beta", "history:beta"])
    assert found[4] == ("keep", ["alias:prod:secondary", "history:prod"])
    assert found[3] == ("keep", ["alias:prod", "history:prod"])
    assert found[2] == ("keep", ["history:prod"])
    assert found[1] == ("keep", ["history:prod"])
    doomed = sorted(v for v, (action, _) in found.items() if action == "delete")
    assert doomed == [5, 7, 9, 10]
    # And apply soft-deletes exactly those, announced as retention's
    applied = apply(api)
    assert sorted(applied["deleted"]) == doomed and applied["expired"] == [] and applied["next_token"] is None
    listed = api.call("GET", f"/artifacts/{NAME}/versions", query={"limit": "100"}).body["versions"]
    assert sorted(v["version"] for v in listed) == [1, 2, 3, 4, 6, 8, 11, 12]
    deletions = [
        e for e in api.call("GET", f"/artifacts/{NAME}/events").body["events"] if e["type"] == "version.deleted"
    ]
    assert sorted(e["version"] for e in deletions) == doomed
    assert {e["by"] for e in deletions} == {"retention"}


def test_a_running_rollout_keeps_its_version(api: HandlerApi, clock: Clock) -> None:
    # Given prod on 1 and a rollout of 2 running on it
    publish_many(api, 3)
    assert api.call("PUT", f"/artifacts/{NAME}/aliases/prod", {"version": 1}).status == 201
    rollout = {"version": 2, "steps": [10, 50], "interval_seconds": 60}
    assert api.call("PUT", f"/artifacts/{NAME}/aliases/prod/rollout", rollout).status in (200, 201)
    assert api.call("PUT", POLICY, {"keep_last": 1, "rollback_window": 0}).status == 200
    # When previewed, then 2 is kept by the rollout (and as prod's canary)
    found = rows(api)
    assert "rollout:prod" in found[2][1] and found[2][0] == "keep"


def test_expiry_tombstones_the_version_and_collects_bytes_no_one_else_holds(
    api: HandlerApi, aws: SimpleNamespace, clock: Clock
) -> None:
    # Given 1 and 3 with the same content, 2 with content of its own, LATEST on 4's
    for data in (b"shared", b"own", b"shared", b"last"):
        assert api.publish(NAME, data, force=True).status == 201
    assert api.call("PUT", POLICY, {"keep_last": 1, "expire_after_days": 7}).status == 200
    assert sorted(apply(api)["deleted"]) == [1, 2, 3]
    # When the expiry time has not come, nothing expires; once it has, apply expires them
    clock.advance(days=6)
    assert [r["action"] for r in preview(api)["versions"]] == ["keep", "keep", "keep", "keep"]
    assert apply(api)["expired"] == []
    clock.advance(days=2)
    assert [r["action"] for r in preview(api)["versions"]] == ["keep", "expire", "expire", "expire"]
    applied = apply(api)
    # Then the three are tombstones: listed with include_deleted as {version, expired: true}, never restorable
    assert applied["expired"] == [3, 2, 1]
    listed = api.call("GET", f"/artifacts/{NAME}/versions", query={"include_deleted": "true"}).body["versions"]
    assert listed[1:] == [
        {"version": 3, "expired": True},
        {"version": 2, "expired": True},
        {"version": 1, "expired": True},
    ]
    assert api.call("GET", f"/artifacts/{NAME}/versions/2").body == {"version": 2, "expired": True}
    assert api.call("POST", f"/artifacts/{NAME}/versions/2/restore").status == 409
    assert api.call("GET", f"/artifacts/{NAME}/resolve", query={"ref": "2"}).status in (404, 410)
    # And the bytes of every expired content are gone; LATEST's are kept; numbers stay taken
    objects = {o["Key"].rsplit("/", 1)[-1] for o in aws.s3.list_objects_v2(Bucket=aws.bucket).get("Contents", [])}
    assert objects == {sha256(b"last")}
    assert api.publish(NAME, b"five").body["version"] == 5
    events = [e for e in api.call("GET", f"/artifacts/{NAME}/events").body["events"] if e["type"] == "version.expired"]
    assert sorted(e["version"] for e in events) == [1, 2, 3]
    # And nothing is left to clean up
    assert not [i for i in snapshot(aws)["items"] if i[0].endswith("-retention") and i[1].startswith("expired#")]


def test_expiry_keeps_bytes_latest_or_another_version_still_holds(
    api: HandlerApi, aws: SimpleNamespace, clock: Clock
) -> None:
    # Given 1 and 2 with LATEST's content, 3 with its own content and 4 with the same as 3
    for data in (b"a", b"a", b"b", b"b"):
        assert api.publish(NAME, data, force=True).status == 201
    assert api.set_latest(NAME, b"a").status == 200
    assert api.call("PUT", POLICY, {"keep_last": 1, "expire_after_days": 0}).status == 200
    # When everything but 4 is deleted and then expired (LATEST's content keeps 1 and 2)
    assert sorted(apply(api)["deleted"]) == [3]
    clock.advance(seconds=1)
    assert apply(api)["expired"] == [3]
    # Then the shared bytes of 3 stay (4 holds them), and LATEST's too
    objects = {o["Key"].rsplit("/", 1)[-1] for o in aws.s3.list_objects_v2(Bucket=aws.bucket).get("Contents", [])}
    assert objects == {sha256(b"a"), sha256(b"b")}
    found = rows(api)
    assert found[1] == ("keep", ["latest"]) and found[2] == ("keep", ["latest"])


def test_versions_published_before_blob_counts_keep_their_bytes(
    api: HandlerApi, aws: SimpleNamespace, clock: Clock
) -> None:
    # Given two versions of one content written as before blob counts existed (no `counted`, no count item)
    for data in (b"old", b"old", b"new"):
        assert api.publish(NAME, data, force=True).status == 201
    digest = sha256(b"old")
    for number in ("000001", "000002"):
        aws.dynamodb.update_item(
            TableName=aws.table, Key={"pk": {"S": NAME}, "sk": {"S": number}}, UpdateExpression="REMOVE counted"
        )
    aws.dynamodb.delete_item(TableName=aws.table, Key={"pk": {"S": f"__{NAME}-blobs"}, "sk": {"S": digest}})
    assert api.call("DELETE", f"/artifacts/{NAME}/versions/1").status == 200
    assert api.call("PUT", POLICY, {"keep_last": 2, "expire_after_days": 0}).status == 200
    clock.advance(seconds=1)
    # When 1 expires while 2 (uncounted) holds the same content
    assert apply(api)["expired"] == [1]
    # Then the bytes stay
    objects = {o["Key"].rsplit("/", 1)[-1] for o in aws.s3.list_objects_v2(Bucket=aws.bucket).get("Contents", [])}
    assert digest in objects


def test_apply_and_preview_are_bounded_and_go_on_with_a_token(api: HandlerApi, clock: Clock) -> None:
    # Given 30 versions and a policy keeping the newest 2
    publish_many(api, 30)
    assert api.call("PUT", POLICY, {"keep_last": 2}).status == 200
    # When previewed 7 at a time, the pages chain to every version, with the newest 2 kept
    seen: list[dict[str, Any]] = []
    token = None
    while True:
        page = preview(api, limit="7", **({"next_token": token} if token else {}))
        seen += page["versions"]
        token = page["next_token"]
        if token is None:
            break
    assert [r["version"] for r in seen] == list(range(30, 0, -1))
    assert [r["action"] for r in seen[:3]] == ["keep", "keep", "delete"]
    # And a forged token is a 400
    assert api.call("GET", f"{POLICY}/preview", query={"next_token": "nope"}).status == 400
    assert api.call("POST", f"{POLICY}/apply", {"next_token": "nope"}).status == 400


def test_the_scheduled_sweep_applies_every_policy_once_a_pass_and_goes_on_across_invocations(
    api: HandlerApi, aws: SimpleNamespace, clock: Clock
) -> None:
    from arca.handlers.retention import handler
    from arca.services.retry import Budget
    from local.events import invoke, lambda_context
    from local.iam import acting_as

    # Given three artifacts with 3 versions each, two of them with a policy keeping the newest one
    for name in ("a/one", "b/two", "c/three"):
        for index in range(3):
            assert api.publish(name, f"{name} {index}".encode()).status == 201
    for name in ("a/one", "c/three"):
        assert api.call("PUT", f"/artifacts/{name}/retention", {"keep_last": 1}).status == 200

    def sweep() -> dict[str, Any]:
        with acting_as("retention"):
            return dict(invoke(handler, {"every_seconds": 3600}, lambda_context("retention")))

    def live(name: str) -> list[int]:
        return [v["version"] for v in api.call("GET", f"/artifacts/{name}/versions").body["versions"]]

    # When the schedule invokes the function
    first = sweep()
    # Then both policies were applied (found through the index), the artifact without one untouched
    assert first["complete"] and first["artifacts"] == 2 and first["deleted"] == 4
    assert live("a/one") == [3] and live("c/three") == [3] and live("b/two") == [3, 2, 1]
    # And the next invocation within the period is idle; one after it starts a new pass
    assert sweep()["idle"] is True
    clock.advance(seconds=3601)
    assert sweep()["idle"] is False
    # And a pass over budget stops and hands on where it stopped (the first artifact done, then the index Query)
    for index in range(2):
        assert api.publish("c/three", f"more {index}".encode()).status == 201
    service = wiring.services().retention
    with acting_as("retention"):
        stopped = service.sweep(start=None, budget=Budget(calls=2))
        assert stopped.artifacts == 1 and stopped.next_token is not None
        rest = service.sweep(start=stopped.next_token, budget=Budget())
    assert rest.artifacts == 1 and rest.next_token is None and rest.deleted == 2


def test_expiry_collects_multipart_content_its_objects_and_its_layouts(
    api: HandlerApi, aws: SimpleNamespace, clock: Clock
) -> None:
    # Given version 1 of multipart content (one part) and version 2 of other bytes, LATEST on 2's
    data = b"weights" * 100
    reply = api.call("POST", f"/artifacts/{NAME}/uploads", layout(data, part_size=len(data)))
    target = reply.body["upload"]["parts"][0]
    assert requests.put(target["url"], data=data, headers=target["headers"], timeout=30).status_code == 200
    assert api.call("POST", f"/artifacts/{NAME}/uploads/{reply.body['upload']['id']}/complete").status == 200
    assert api.call("POST", f"/artifacts/{NAME}/versions", {"sha256": sha256(data), "size": len(data)}).status == 201
    assert api.publish(NAME, b"newer").status == 201
    # When retention deletes 1, then expires it
    assert api.call("PUT", POLICY, {"keep_last": 1, "expire_after_days": 0}).status == 200
    assert apply(api)["deleted"] == [1]
    clock.advance(seconds=1)
    assert apply(api)["expired"] == [1]
    # Then the multipart object and its layout record are gone with it: no later upload finds a layout
    # without its object
    left = snapshot(aws)
    assert [o for o in left["objects"] if sha256(data) in o] == []
    assert [i for i in left["items"] if i[0] == keys.uploads_pk(NAME)] == []
    again = api.call("POST", f"/artifacts/{NAME}/uploads", layout(data, part_size=len(data)))
    assert again.status == 201 and "upload" in again.body
