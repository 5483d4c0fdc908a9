"""The `/hf/…` routes in the resolve function: the Hub's answers (its `X-Error-Code` misses, not Arca's error shape),
the request handed to the protocol as the client sent it, and the endpoint it is told for its absolute links."""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from typing import Any

import pytest
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEvent

from arca import wiring
from arca.api.hf import endpoint
from arca.domain.errors import NotFoundError
from local.events import api_event, lambda_context


class _NoArtifacts:
    """A Reading in which no artifact exists."""

    def live_latest(self, name: str) -> None:
        raise NotFoundError(f"artifact {name!r} does not exist")

    def locate(self, name: str, ref: str, **_: Any) -> None:
        raise NotFoundError(f"artifact {name!r} has no alias {ref!r}")


@pytest.fixture
def empty() -> Iterator[None]:
    from arca.handlers import resolve

    resolve.entry.app.dependency_overrides[wiring.reading] = _NoArtifacts
    try:
        yield
    finally:
        resolve.entry.app.dependency_overrides.clear()


def _call(method: str, path: str) -> tuple[str | None, dict[str, Any]]:
    event, function = api_event(method, path)
    handler = importlib.import_module("arca.handlers.resolve").handler
    return function, handler(event, lambda_context("resolve"))


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/hf/api/models/org/model"),
        ("GET", "/hf/api/models/org/model/revision/prod"),
        ("GET", "/hf/api/models/model/tree/prod"),
        ("GET", "/hf/api/models/org/model/tree/prod/sub/dir"),
        ("GET", "/hf/org/model/resolve/prod/sub/w.bin"),
        ("HEAD", "/hf/model/resolve/prod/w.bin"),
    ],
)
def test_each_hub_route_is_the_resolve_functions_and_answers_the_hubs_miss(method: str, path: str, empty: None) -> None:
    # When a Hub route is called on a registry with no such artifact
    function, response = _call(method, path)
    # Then the resolve function answers the Hub's 404: the code the client turns into RepositoryNotFoundError
    assert function == "resolve"
    assert response["statusCode"] == 404
    headers = {
        **response.get("headers", {}),
        **{k: v[-1] for k, v in (response.get("multiValueHeaders") or {}).items()},
    }
    assert headers["X-Error-Code"] == "RepoNotFound"
    if method == "GET":
        assert isinstance(json.loads(response["body"])["error"], str)  # the Hub's shape, not Arca's {"error": {…}}
    else:
        assert not response.get("body")


def test_a_repo_outside_the_grammar_is_not_found_never_a_400(empty: None) -> None:
    # When a repo id the Hub allows but Arca's names do not (upper case) is asked for
    _, response = _call("GET", "/hf/api/models/Org/Model/revision/main")
    # Then it is the Hub's "no such repository"
    assert response["statusCode"] == 404
    assert json.loads(response["body"])["error"].startswith("no repository")


@pytest.mark.parametrize(
    ("context_path", "headers", "expected"),
    [
        (
            "/prod/hf/api/models/a/tree/main",
            {"Host": "x.execute-api.eu-west-1.amazonaws.com"},
            "https://x.execute-api.eu-west-1.amazonaws.com/prod/hf",
        ),
        (
            "/hf/api/models/a/tree/main",
            {"Host": "127.0.0.1:8000", "X-Forwarded-Proto": "http"},
            "http://127.0.0.1:8000/hf",
        ),
        ("/registry/hf/api/models/a/tree/main", {"Host": "arca.example.com"}, "https://arca.example.com/registry/hf"),
    ],
)
def test_the_endpoint_is_the_one_the_client_called(context_path: str, headers: dict[str, str], expected: str) -> None:
    # Given an event as API Gateway sends it on the stage's URL, in local mode, and on a custom domain's base path
    event = APIGatewayProxyEvent(
        {"path": "/hf/api/models/a/tree/main", "headers": headers, "requestContext": {"path": context_path}}
    )
    # Then the endpoint for the next page's absolute link is the client's own
    assert endpoint(event, "/hf/api/models/a/tree/main") == expected
