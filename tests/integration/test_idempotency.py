"""Idempotency-Key: a retry gets the first answer and changes nothing; a reused key is refused."""

from __future__ import annotations

import json
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from arca import wiring
from arca.handlers.publish import handler
from local import iam
from local.events import Reply, api_event, lambda_context, response_body
from tests.helpers import HandlerApi, sha256
from tests.integration.conftest import snapshot

KEY = {"Idempotency-Key": "retry-me-1"}


def given_two_versions(api: HandlerApi) -> dict[str, Any]:
    api.publish("app", b"one")
    api.publish("app", b"two")
    api.call("PUT", "/artifacts/app/aliases/prod", {"version": 1})
    api.call("PUT", "/artifacts/app/aliases/prod", {"version": 2})
    blob = b"three"
    return {"sha256": api.upload("app", blob), "size": len(blob)}


WRITES: dict[str, Callable[[dict[str, Any]], tuple[str, str, Any]]] = {
    "publish": lambda blob: ("POST", "/artifacts/app/versions", blob),
    "latest": lambda blob: ("PUT", "/artifacts/app/latest", {**blob, "metadata": {"k": "v"}}),
    "alias": lambda blob: ("PUT", "/artifacts/app/aliases/beta", {"version": 1}),
    "rollback": lambda blob: ("POST", "/artifacts/app/aliases/prod/rollback", {}),
    "prune": lambda blob: ("POST", "/artifacts/app/prune", {"keep_last": 0}),
    "create": lambda blob: ("PUT", "/artifacts/app/new", {"description": "empty", "tags": {"a": "b"}}),
}
# A change to each body that makes it another request.
OTHER: dict[str, dict[str, Any]] = {
    "publish": {"force": True},
    "latest": {"metadata": {"k": "w"}},
    "alias": {"version": 2},
    "rollback": {"reason": "again"},
    "prune": {"keep_last": 1},
    "create": {"description": "other"},
}


@pytest.mark.parametrize("write", sorted(WRITES))
def test_retry_with_the_same_key_replays_the_first_answer_and_writes_nothing(
    api: HandlerApi, aws: SimpleNamespace, write: str
) -> None:
    # Given a first write sent with a key
    method, path, body = WRITES[write](given_two_versions(api))
    first = api.call(method, path, body, headers=KEY)
    assert first.status in (200, 201), first.body
    before = snapshot(aws)
    # When it is sent again with the same key
    again = api.call(method, path, body, headers=KEY)
    # Then the answer is the same, marked as a replay, and nothing changed
    assert (again.status, again.body) == (first.status, first.body)
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert again.headers.get("ETag") == first.headers.get("ETag")
    assert snapshot(aws) == before


def test_without_a_key_a_repeat_is_a_second_write(api: HandlerApi) -> None:
    # Given
    given_two_versions(api)
    # When the same rollback is sent twice without a key
    first = api.call("POST", "/artifacts/app/aliases/prod/rollback", {})
    second = api.call("POST", "/artifacts/app/aliases/prod/rollback", {})
    # Then each made a revision (which is what the key prevents)
    assert (first.body["revision"], second.body["revision"]) == (3, 4)


@pytest.mark.parametrize("write", sorted(WRITES))
def test_same_key_with_a_different_request_is_422_and_writes_nothing(
    api: HandlerApi, aws: SimpleNamespace, write: str
) -> None:
    # Given a key used for one write
    method, path, body = WRITES[write](given_two_versions(api))
    assert api.call(method, path, body, headers=KEY).status in (200, 201)
    before = snapshot(aws)
    # When the key comes with another body
    other = api.call(method, path, {**body, **OTHER[write]}, headers=KEY)
    # Then
    assert other.status == 422, other.body
    assert other.error["field"] == "Idempotency-Key" and other.error["code"] == "IdempotencyKeyReusedError"
    assert snapshot(aws) == before


def test_keys_are_scoped_by_caller(api: HandlerApi) -> None:
    # Given a key used by one caller (the identity API Gateway verified)
    api.publish("app", b"one")
    blob = json.dumps({"sha256": api.upload("app", b"two"), "size": 3})

    def publish_as(caller: str) -> dict[str, Any]:
        event, _ = api_event(
            "POST",
            "/artifacts/app/versions",
            body=blob,
            headers={"Content-Type": "application/json", "Idempotency-Key": "k"},
            identity=caller,
        )
        with iam.acting_as("publish"):
            return json.loads(response_body(handler(event, lambda_context("publish"))))

    first = publish_as("arn:aws:iam::111111111111:user/a")
    # When another caller sends the same key and request
    second = publish_as("arn:aws:iam::111111111111:user/b")
    # Then it is not a replay of the first caller's answer
    assert first["version"] == 2 and not first["deduplicated"]
    assert second["version"] == 2 and second["deduplicated"]


def test_concurrent_requests_with_one_key_make_one_change(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given a publish with a key, and the same request arriving (and committing) while the first is
    # between its record check and its transaction
    blob = {"sha256": api.upload("app", b"one"), "size": 3, "force": True}
    api.publish("app", b"zero")
    repository = wiring.services().stores.artifacts
    stage_latest = repository.stage_latest
    inner: list[Reply] = []

    def the_other_commits_first(*args: Any, **kwargs: Any) -> Any:
        repository.stage_latest = stage_latest  # type: ignore[method-assign]
        inner.append(api.call("POST", "/artifacts/app/versions", blob, headers=KEY))
        return stage_latest(*args, **kwargs)

    repository.stage_latest = the_other_commits_first  # type: ignore[method-assign]
    # When the first goes on
    outer = api.call("POST", "/artifacts/app/versions", blob, headers=KEY)
    # Then one version was made, and both got its answer
    assert inner[0].status == 201 and (outer.status, outer.body) == (inner[0].status, inner[0].body)
    versions = api.call("GET", "/artifacts/app/versions").body["versions"]
    assert [v["version"] for v in versions] == [2, 1]
    assert outer.body["sha256"] == sha256(b"one")


# Each answer a writing route renders (its status and body): the live one and its replay must be the same.
THREE = {"sha256": sha256(b"three"), "size": 5}
TWO = {"sha256": sha256(b"two"), "size": 3}
ANSWERS: dict[str, tuple[tuple[str, str, Any], int]] = {
    "publish, a new version": (("POST", "/artifacts/app/versions", THREE), 201),
    "publish, deduplicated": (("POST", "/artifacts/app/versions", TWO), 200),
    "publish, deduplicated, LATEST moved": (("POST", "/artifacts/app/versions", {**TWO, "metadata": {"k": "v"}}), 200),
    "latest": (("PUT", "/artifacts/app/latest", THREE), 200),
    "alias, created": (("PUT", "/artifacts/app/aliases/beta", {"version": 1}), 201),
    "alias, moved": (("PUT", "/artifacts/app/aliases/prod", {"version": 1}), 200),
    "rollback": (("POST", "/artifacts/app/aliases/prod/rollback", {}), 200),
    "prune": (("POST", "/artifacts/app/prune", {"keep_last": 0}), 200),
    "prune, dry run": (("POST", "/artifacts/app/prune", {"keep_last": 0, "dry_run": True}), 200),
    "create": (("PUT", "/artifacts/app/new", {"tags": {"a": "b"}}), 201),
}


@pytest.mark.parametrize("kind", sorted(ANSWERS))
def test_each_answer_a_route_renders_is_replayed_as_it_was_sent(api: HandlerApi, kind: str) -> None:
    # Given a write whose answer is this one (status included), sent with a key
    given_two_versions(api)
    (method, path, body), status = ANSWERS[kind]
    first = api.call(method, path, body, headers=KEY)
    assert first.status == status, first.body
    # When it is sent again
    again = api.call(method, path, body, headers=KEY)
    # Then the route rendered the replay as it rendered the live answer
    assert (again.status, again.body, again.headers.get("ETag")) == (
        first.status,
        first.body,
        first.headers.get("ETag"),
    )
    assert again.headers.get("Idempotent-Replayed") == "true" and "Idempotent-Replayed" not in first.headers


def _records(aws: SimpleNamespace) -> list[dict[str, Any]]:
    items = aws.dynamodb.scan(TableName=aws.table, ConsistentRead=True)["Items"]
    return [i for i in items if i["pk"]["S"].startswith("__idem#")]


def test_a_record_stored_in_the_shape_of_earlier_versions_replays_as_stored(
    api: HandlerApi, aws: SimpleNamespace
) -> None:
    # Given a record as the functions have always stored one (the answer's `status` and `body` as sent) for this
    # very request, with an answer no route of this version would render for it
    given_two_versions(api)
    beta = ("PUT", "/artifacts/app/aliases/beta", {"version": 1})
    assert api.call(*beta, headers={"Idempotency-Key": "now"}).status == 201
    (written,) = _records(aws)
    assert sorted(written) == ["body", "fingerprint", "kind", "pk", "sk", "status", "ttl"]
    sent = {**json.loads(written["body"]["S"]), "revision": 9, "reason": "answered by an earlier version"}
    old_body = json.dumps(sent, separators=(",", ":"))
    old = {
        "pk": written["pk"],
        "sk": {"S": "from-before"},
        "kind": {"S": "idempotency"},
        "fingerprint": written["fingerprint"],
        "status": {"N": "200"},
        "body": {"S": old_body},
        "ttl": written["ttl"],
    }
    aws.dynamodb.put_item(TableName=aws.table, Item=old)
    before = snapshot(aws)
    # When the request is retried with that record's key
    again = api.call(*beta, headers={"Idempotency-Key": "from-before"})
    # Then its stored status and body are the answer, with the headers the route derives from the body
    assert (again.status, again.body) == (200, sent)
    assert again.headers.get("ETag") == '"9"' and again.headers.get("Idempotent-Replayed") == "true"
    assert snapshot(aws) == before
