"""What a policy costs an alias write: nothing without one (the alias item says there is none), one read with one.

The alias item carries its live policy's revision (`policy_revision`), kept by the policy's writes and conditioned
on by every alias write; an item written before it carried one, or an alias not yet created, reads the policy."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

import pytest

from arca.adapters import keys
from tests.helpers import HandlerApi, hooked
from tests.integration.conftest import TABLE

NAME = "team/app"
ALIAS = f"/artifacts/{NAME}/aliases/prod"
POLICY = f"{ALIAS}/policy"


@pytest.fixture
def app(api: HandlerApi) -> HandlerApi:
    """Versions 1-3 of team/app, 2 tagged qa=passed; prod on 1."""
    for i in (1, 2, 3):
        assert api.publish(NAME, f"release {i}".encode()).status == 201
    assert api.call("PATCH", f"/artifacts/{NAME}/versions/2", {"tags": {"qa": "passed"}}).status == 200
    assert api.call("PUT", ALIAS, {"version": 1}).status == 201
    return api


@contextmanager
def calls() -> Iterator[list[tuple[str, dict[str, Any]]]]:
    """The DynamoDB and S3 calls the services make meanwhile, with their parameters."""
    seen: list[tuple[str, dict[str, Any]]] = []

    def before(event_name: str, params: dict[str, Any], **_: Any) -> None:
        seen.append((event_name.rsplit(".", 1)[-1], params))

    with hooked("before-parameter-build.*.*", before):
        yield seen


def transaction_keys(seen: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, str]]:
    (items,) = [p["TransactItems"] for op, p in seen if op == "TransactWriteItems"]
    return [(kind, (i[kind].get("Key") or i[kind]["Item"])["pk"]["S"]) for i in items for kind in i]


def mark(aws: SimpleNamespace) -> Any:
    key = {k: {"S": v} for k, v in keys.alias_key(NAME, "prod").items()}
    item = aws.dynamodb.get_item(TableName=TABLE, Key=key, ConsistentRead=True)["Item"]
    return int(item["policy_revision"]["N"]) if "policy_revision" in item else None


def test_a_move_without_a_policy_makes_the_calls_it_made_before_policies_existed(app: HandlerApi) -> None:
    with calls() as seen:
        assert app.call("PUT", ALIAS, {"version": 2}).status == 200
    # the alias (a Query of one item), the version, and the transaction: no read or check of a policy
    assert [op for op, _ in seen] == ["Query", "Query", "TransactWriteItems"]
    assert not [pk for _, pk in transaction_keys(seen) if pk.endswith("-policy")]


def test_a_move_under_a_policy_reads_it_once_and_checks_it_on_the_alias(app: HandlerApi) -> None:
    assert app.call("PUT", POLICY, {"allowed_principals": ["*"]}).status == 200
    with calls() as seen:
        assert app.call("PUT", ALIAS, {"version": 2}).status == 200
    assert [op for op, _ in seen] == ["Query", "Query", "GetItem", "TransactWriteItems"]
    assert not [pk for _, pk in transaction_keys(seen) if pk.endswith("-policy")]


def test_the_policy_writes_keep_the_alias_mark(app: HandlerApi, aws: SimpleNamespace) -> None:
    assert mark(aws) == 0
    assert app.call("PUT", POLICY, {"require_tags": {"qa": "passed"}}).status == 200
    assert mark(aws) == 1
    assert app.call("PUT", ALIAS, {"version": 2}).status == 200  # passes: the mark is carried over
    assert mark(aws) == 1
    assert app.call("PUT", POLICY, {"require_tags": {"qa": "other"}}).status == 200
    assert mark(aws) == 2
    assert app.call("DELETE", POLICY).status == 204
    assert mark(aws) == 0
    assert app.call("PUT", ALIAS, {"version": 3}).status == 200
    # history records carry no mark: it is the alias's present, not a revision's
    history = aws.dynamodb.query(
        TableName=TABLE,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": keys.history_pk(NAME)}},
    )["Items"]
    assert history and not [i for i in history if "policy_revision" in i]


def test_an_alias_item_from_before_marks_reads_the_policy_and_is_marked_by_its_next_write(
    app: HandlerApi, aws: SimpleNamespace
) -> None:
    # Given a policy, and prod's item as written before alias items carried the policy's revision
    assert app.call("PUT", POLICY, {"require_tags": {"qa": "passed"}}).status == 200
    key = {k: {"S": v} for k, v in keys.alias_key(NAME, "prod").items()}
    aws.dynamodb.update_item(TableName=TABLE, Key=key, UpdateExpression="REMOVE policy_revision")
    # When version 3 (untagged) is put, then 2
    with calls() as seen:
        refused = app.call("PUT", ALIAS, {"version": 3})
    moved = app.call("PUT", ALIAS, {"version": 2})
    # Then the policy was read and judged, and the write that passed marked the item
    assert refused.status == 403
    assert [op for op, _ in seen].count("GetItem") == 1
    assert moved.status == 200 and mark(aws) == 1


def test_an_alias_created_where_a_policy_waits_is_judged_and_marked(app: HandlerApi, aws: SimpleNamespace) -> None:
    staging = f"/artifacts/{NAME}/aliases/staging"
    assert app.call("PUT", f"{staging}/policy", {"require_tags": {"qa": "passed"}}).status == 200
    assert app.call("PUT", staging, {"version": 3}).status == 403
    assert app.call("PUT", staging, {"version": 2}).status == 201
    key = {k: {"S": v} for k, v in keys.alias_key(NAME, "staging").items()}
    item = aws.dynamodb.get_item(TableName=TABLE, Key=key, ConsistentRead=True)["Item"]
    assert item["policy_revision"] == {"N": "1"}


def test_a_rollout_step_carries_the_mark_and_a_policy_put_during_a_rollout_marks_it(
    app: HandlerApi, aws: SimpleNamespace
) -> None:
    from tests.integration.test_rollouts import step

    started = app.call("PUT", f"{ALIAS}/rollout", {"version": 2, "steps": [10, 50], "interval_seconds": 60}).body
    assert app.call("PUT", POLICY, {"allowed_principals": ["*"]}).status == 200
    first = step(started)
    assert first["done"] is False and mark(aws) == 1
    assert app.call("GET", f"{ALIAS}/rollout").body["state"] == "running"
