"""Direct Lambda invocation: `{"operation": ..., ...}` events, same validation, errors typed by code."""

from __future__ import annotations

from types import ModuleType, SimpleNamespace

import pytest

from arca.domain.errors import NotFoundError, PreconditionFailedError, ValidationError
from arca.handlers import alias, publish, resolve
from local import iam
from local.events import lambda_context
from tests.helpers import HandlerApi, sha256
from tests.integration.conftest import snapshot


def invoke(function: ModuleType, **event: object) -> object:
    with iam.acting_as(function.__name__.rsplit(".", 1)[-1]):  # the handler's own function's role
        return function.handler(event, lambda_context("direct"))


def test_publish_function_publishes_by_direct_invocation(api: HandlerApi) -> None:
    # Given a blob uploaded for the artifact
    digest = api.upload("team/app", b"direct bytes")
    # When
    latest = invoke(publish, operation="put_latest", name="team/app", sha256=digest, size=12)
    version = invoke(publish, operation="publish", name="team/app")
    # Then
    assert latest["sha256"] == digest  # type: ignore[index]
    assert version["version"] == 1 and version["deduplicated"] is False  # type: ignore[index]


def test_direct_invocation_validates_like_http_and_raises_by_code(api: HandlerApi) -> None:
    # When / Then: the exception's class name is the errorType Lambda reports
    with pytest.raises(ValidationError) as bad:
        invoke(publish, operation="create_upload", name="app", sha256="nope", size=1)
    assert type(bad.value).__name__ == bad.value.code == "ValidationError"
    assert bad.value.field == "sha256"
    with pytest.raises(ValidationError) as missing:
        invoke(publish, operation="publish")
    assert missing.value.field == "name"
    with pytest.raises(ValidationError) as wrong:
        invoke(publish, operation="set_alias", name="app", alias="prod", version=1)
    assert wrong.value.field == "operation"
    with pytest.raises(NotFoundError):
        invoke(publish, operation="publish", name="nothing")


def test_the_hubs_routes_are_no_operation_of_direct_invocation(api: HandlerApi) -> None:
    # When a Hugging Face route is named (its answers are the Hub's, not Arca's errors)
    with pytest.raises(ValidationError) as refused:
        invoke(resolve, operation="hf_model_info", repo="app", revision="main")
    # Then it is no operation of the function
    assert refused.value.field == "operation"
    assert "hf_model_info" not in refused.value.message


def test_alias_and_resolve_functions_by_direct_invocation(api: HandlerApi) -> None:
    # Given
    api.publish("app", b"one")
    api.publish("app", b"two")
    # When
    created = invoke(alias, operation="set_alias", name="app", alias="prod", version=1)
    stale = pytest.raises(PreconditionFailedError)
    with stale:
        invoke(alias, operation="set_alias", name="app", alias="prod", version=2, if_match="7")
    moved = invoke(alias, operation="set_alias", name="app", alias="prod", version=2, if_match="1", reason="go")
    resolved = invoke(resolve, operation="resolve", name="app", ref="prod", routing_key="k")
    history = invoke(resolve, operation="alias_history", name="app", alias="prod", limit=1)
    content = invoke(resolve, operation="resolve_content", name="app", ref="1")
    # Then
    assert created["revision"] == 1 and moved["revision"] == 2  # type: ignore[index]
    assert resolved["version"] == 2 and resolved["sha256"] == sha256(b"two")  # type: ignore[index]
    assert [h["revision"] for h in history["history"]] == [2] and history["next_token"]  # type: ignore[index]
    assert content["download_url"].startswith("http")  # type: ignore[index]


def test_a_direct_invocation_is_recorded_under_an_identity_the_caller_cannot_choose(api: HandlerApi) -> None:
    # Given an artifact with a version
    api.publish("app", b"one")
    context = lambda_context("alias")
    # When an alias is set by direct invocation, once claiming another identity and once without
    with pytest.raises(ValidationError) as forged, iam.acting_as("alias"):
        alias.handler(
            {"operation": "set_alias", "name": "app", "alias": "prod", "version": 1, "identity": "arn:aws:iam::1:root"},
            context,
        )
    with iam.acting_as("alias"):
        created = alias.handler({"operation": "set_alias", "name": "app", "alias": "prod", "version": 1}, context)
    # Then the claim is refused, writing nothing, and the history records the invoked function instead
    assert forged.value.field == "identity"
    assert created["revision"] == 1
    history = api.call("GET", "/artifacts/app/aliases/prod/history").body["history"]
    assert [h["updated_by"] for h in history] == [f"direct:{context.invoked_function_arn}"]


@pytest.mark.parametrize(
    ("function", "event", "field"),
    [
        (publish, {"operation": "purge", "name": "app/versions/1"}, "name"),
        (publish, {"operation": "delete_version", "name": "app", "version": "1/restore"}, "version"),
        (publish, {"operation": "delete_version", "name": "app", "version": ""}, "version"),
        (alias, {"operation": "set_alias", "name": "app", "alias": "prod/rollback", "version": 1}, "alias"),
        (resolve, {"operation": "resolve", "name": "app", "ref": "../app/versions/1"}, "ref"),
    ],
)
def test_direct_invocation_runs_the_operation_named_or_none(
    api: HandlerApi, aws: SimpleNamespace, function: object, event: dict[str, object], field: str
) -> None:
    # Given an artifact with a live version
    api.publish("app", b"one")
    before = snapshot(aws)
    # When parameters would spell the path of another operation
    with pytest.raises(ValidationError) as refused:
        invoke(function, **event)
    # Then it is refused naming the parameter, and nothing is written (version 1 is still live)
    assert refused.value.field == field
    assert snapshot(aws) == before
    assert api.call("GET", "/artifacts/app/versions/1").body["deleted"] is False
