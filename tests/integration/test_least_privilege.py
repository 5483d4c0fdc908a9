"""Every AWS call a function makes is one its role allows: the stack's specs against the calls themselves.

The stack's roles (infra/functions.py) are asserted exactly by the infra tests; moto enforces none of them, so a
read that changes its DynamoDB operation (a GetItem becoming a Query) or a transaction that gains an item in a
new partition would pass every other test and fail only on AWS. Here each request of a realistic session is
attributed to the function that serves its route, each of its calls is turned into the IAM actions it needs
(a transaction item by item, with its partition key), and each must be granted by that function's spec.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from fnmatch import fnmatchcase
from typing import Any

import pytest

from arca.handlers import rollout as driver
from arca.routes import match
from infra.functions import SPECS, FunctionSpec
from local.events import lambda_context
from tests.helpers import HandlerApi, hooked

SPEC = {spec.name: spec for spec in SPECS}
# The S3 calls the functions make, as the IAM actions that authorise them (a HEAD is a GetObject).
S3_ACTIONS = {
    "HeadObject": "s3:GetObject",
    "GetObject": "s3:GetObject",
    "GetObjectTagging": "s3:GetObjectTagging",
    "DeleteObjectTagging": "s3:DeleteObjectTagging",
    "PutObjectTagging": "s3:PutObjectTagging",
    "PutObject": "s3:PutObject",
    "DeleteObject": "s3:DeleteObject",
    "DeleteObjects": "s3:DeleteObject",
    "ListObjectsV2": "s3:ListBucket",
}
# A copy reads its source and writes its target (with the tags it sets).
S3_COPY_ACTIONS = ["s3:GetObject", "s3:PutObject", "s3:PutObjectTagging"]
TRANSACTION_ACTIONS = {
    "Put": "dynamodb:PutItem",
    "Update": "dynamodb:UpdateItem",
    "Delete": "dynamodb:DeleteItem",
    "ConditionCheck": "dynamodb:ConditionCheckItem",
}


def needs(operation: str, params: dict[str, Any]) -> list[tuple[str, str | None]]:
    """The IAM actions a DynamoDB or S3 call needs, each with the partition key it touches (when scoped)."""
    service, operation = operation.split(".")
    if service == "s3" and operation == "CopyObject":
        return [(action, None) for action in S3_COPY_ACTIONS]
    if service == "s3":
        return [(S3_ACTIONS.get(operation, f"s3:unmapped {operation}"), None)]
    if operation == "TransactWriteItems":
        found = []
        for entry in params["TransactItems"]:
            ((kind, body),) = entry.items()
            found.append((TRANSACTION_ACTIONS[kind], _pk(body.get("Key") or body["Item"])))
        return found
    if "IndexName" in params:
        return [(f"index:dynamodb:{operation}", None)]
    key = params.get("Key") or params.get("Item")
    return [(f"dynamodb:{operation}", _pk(key) if key else None)]


def _pk(key: dict[str, Any]) -> str:
    value = key["pk"]
    return str(value["S"] if isinstance(value, dict) else value)


def allowed(spec: FunctionSpec, action: str, pk: str | None) -> bool:
    if action.startswith("index:"):
        return action.removeprefix("index:") in spec.index_actions
    if action.startswith("s3:"):
        return action in spec.object_actions or action in spec.bucket_actions
    if action in spec.table_actions:
        return True
    for scoped in spec.scoped_table_actions:
        if action in scoped.actions and pk is not None:
            hit = any(fnmatchcase(pk, pattern) for pattern in scoped.partitions)
            if hit == (scoped.operator == "ForAllValues:StringLike"):
                return True
    return False


class Recorder:
    """The calls of the services' clients, attributed to the function that is running."""

    def __init__(self) -> None:
        self.function = "resolve"
        self.calls: list[tuple[str, str, dict[str, Any]]] = []

    def __call__(self, event_name: str, params: dict[str, Any], **_: Any) -> None:
        self.calls.append((self.function, ".".join(event_name.split(".")[-2:]), params))

    @contextmanager
    def acting_as(self, function: str) -> Iterator[None]:
        self.function = function
        try:
            yield
        finally:
            self.function = "resolve"


@pytest.fixture
def recorded(api: HandlerApi, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[HandlerApi, Recorder]]:
    recorder = Recorder()
    original = HandlerApi.call

    def call(self: HandlerApi, method: str, path: str, *args: Any, **kwargs: Any) -> Any:
        route, _ = match(method, path.split("?")[0])
        with recorder.acting_as(route.function):
            return original(self, method, path, *args, **kwargs)

    monkeypatch.setattr(HandlerApi, "call", call)
    with hooked("provide-client-params.*.*", recorder):
        yield api, recorder


def session(api: HandlerApi, recorder: Recorder) -> None:
    """A day of a team's use: every write route and the reads that follow links, tags and rollouts."""
    for data in (b"one", b"two", b"three"):
        assert api.publish("team/app", data).status == 201
    api.set_latest("team/app", b"four")
    api.publish("team/app")
    assert api.call("PATCH", "/artifacts/team/app/versions/1", {"tags": {"env": "prod"}}).status == 200
    assert api.call("PATCH", "/artifacts/team/app", {"tags": {"tier": "1"}, "description": "d"}).status == 200
    assert api.call("PUT", "/artifacts/app/link", {"target": "team/app"}).status == 201
    assert api.call("PUT", "/artifacts/team/app/aliases/prod", {"version": 1}).status == 201
    assert api.call("PUT", "/artifacts/team/app/aliases/prod", {"version": 2}).status == 200
    assert api.call("POST", "/artifacts/team/app/aliases/prod/rollback").status == 200
    body = {"version": 3, "steps": [10, 50], "interval_seconds": 60}
    started = api.call("PUT", "/artifacts/team/app/aliases/prod/rollout", body).body
    with recorder.acting_as("rollout"):
        state = driver.handler({**started, "rollout_id": started["id"], "done": False}, lambda_context("rollout"))
    assert state["step"] == 2
    for path in (
        "/artifacts/app",
        "/artifacts/app/versions",
        "/artifacts/app/versions/1",
        "/artifacts/app/aliases/prod",
        "/artifacts/app/aliases/prod/history",
        "/artifacts/app/aliases/prod/rollout",
        "/artifacts/app/resolve/prod",
        "/artifacts/app/events",
        "/artifacts/team/app/versions?tag=env:prod",
        "/versions?tag=env:prod",
        "/artifacts?tag=tier:1",
    ):
        assert (
            api.call(
                "GET", path.split("?")[0], query=dict([path.split("?")[1].split("=", 1)]) if "?" in path else None
            ).status
            == 200
        ), path
    assert api.call("DELETE", "/artifacts/team/app/aliases/prod/rollout").status == 200
    assert api.call("DELETE", "/artifacts/team/app/versions/4").status == 200
    assert api.call("POST", "/artifacts/team/app/versions/4/restore").status == 200
    assert api.call("POST", "/artifacts/team/app/prune", {"keep_last": 1}).status == 200
    assert api.call("DELETE", "/artifacts/team/app/aliases/prod").status == 204
    assert api.call("DELETE", "/artifacts/team/app", query={"force": "true"}).status == 204


def test_every_call_of_every_function_is_granted_by_its_role(recorded: tuple[HandlerApi, Recorder]) -> None:
    # Given a session that makes every kind of write and read, through a link too
    api, recorder = recorded
    # When it runs
    session(api, recorder)
    # Then each function called only what its role allows, on the partitions it allows
    denied = sorted(
        {
            (function, action, pk)
            for function, operation, params in recorder.calls
            for action, pk in needs(operation, params)
            if not allowed(SPEC[function], action, pk)
        },
        key=str,
    )
    assert denied == []
    assert {function for function, _, _ in recorder.calls} == {"publish", "alias", "resolve", "rollout"}
