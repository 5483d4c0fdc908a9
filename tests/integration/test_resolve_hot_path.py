"""The resolve function's hot path (arca.api.hot) answers exactly as its Powertools app does: the same status,
headers and body, and the same AWS calls, for every request it serves; every other request it leaves to the app."""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

import pytest

from arca import wiring
from arca.api import hot
from arca.api.app import resolve_http
from arca.handlers.http import EntryPoint
from arca.observability import metrics
from local.events import api_event, lambda_context
from local.iam import acting_as
from tests.helpers import HandlerApi, counted

FILES = {"a.txt": b"alpha", "dir/b.bin": b"\x00\x01"}


@pytest.fixture
def world(api: HandlerApi) -> HandlerApi:
    """`team/app` v1 (with a file name), v2; aliases prod → 1, canary 2 + 1 at 50%, head → LATEST, gone (deleted),
    the link `app` → `team/app`; `team/model` v1 a tree with alias prod; `team/empty` with no version."""
    assert api.publish("team/app", b"one", metadata={"filename": "app.tar.gz"}).status == 201
    assert api.publish("team/app", b"two").status == 201
    for alias, body in {
        "prod": {"version": 1},
        "canary": {"version": 2, "secondary_version": 1, "secondary_version_weight": 50},
        "head": {"version": "LATEST"},
        "gone": {"version": 2},
    }.items():
        reply = api.call("PUT", f"/artifacts/team/app/aliases/{alias}", body)
        assert reply.status == 201, reply.body
    assert api.call("DELETE", "/artifacts/team/app/aliases/gone").status == 204
    assert api.call("PUT", "/artifacts/app/link", {"target": "team/app"}).status == 201
    for data in FILES.values():
        api.upload("team/model", data)
    entries = [{"path": p, "sha256": hashlib.sha256(d).hexdigest(), "size": len(d)} for p, d in FILES.items()]
    assert api.call("POST", "/artifacts/team/model/versions", {"files": entries}).status == 201
    assert api.call("PUT", "/artifacts/team/model/aliases/prod", {"version": 1}).status == 201
    assert api.call("PUT", "/artifacts/team/empty").status in (200, 201)
    return api


def both(path: str, query: dict[str, list[str]] | None = None) -> tuple[Any, Any, list[Any], list[Any]]:
    """The hot path's answer (None: left to the app) and the app's, to one request, with the AWS calls and the
    request metrics of each; made within one second, so that the presigned URLs and their expiry are the same."""
    entry = EntryPoint("resolve")
    entry.load_all()
    event, function = api_event("GET", path, query=query, request_id="req-1")
    assert function == "resolve"
    for _ in range(5):
        started = int(time.time())
        metrics.clear_metrics()
        with acting_as("resolve"), counted() as hot_calls:
            mine = hot.serve(entry.hot, event)
        hot_calls += [dict(metrics.metric_set), dict(metrics.dimension_set)]
        metrics.clear_metrics()
        with acting_as("resolve"), counted() as app_calls:
            theirs = resolve_http(entry.app, entry.routes, event, lambda_context("resolve"))
        app_calls += [dict(metrics.metric_set), dict(metrics.dimension_set)]
        metrics.clear_metrics()
        if int(time.time()) == started:
            return mine, theirs, hot_calls, app_calls
    raise AssertionError("no pair of answers within one second")


SERVED = [
    ("/artifacts/team/app/resolve/prod", None),
    ("/artifacts/team/app/resolve/prod/content", None),
    ("/artifacts/team/app/resolve/canary", {"routing_key": ["user-1"]}),
    ("/artifacts/team/app/resolve/canary", {"routing_key": ["user-2"]}),
    ("/artifacts/team/app/resolve/canary", {"routing_key": ["user-3"], "other": ["ignored"]}),
    ("/artifacts/team/app/resolve/canary/content", {"routing_key": ["user-4"]}),
    ("/artifacts/team/app/resolve/head", None),
    ("/artifacts/app/resolve/prod", None),  # through the link
    ("/artifacts/app/resolve/head/content", None),
    ("/artifacts/team/model/resolve/prod", None),  # a tree: `files`
    ("/artifacts/team/app/resolve/gone", None),  # deleted: 404
    ("/artifacts/team/app/resolve/nope", None),  # no such alias: 404
    ("/artifacts/team/missing/resolve/prod", None),  # no such artifact: 404
    ("/artifacts/app/resolve/nope", None),  # through the link, no such alias: 404
    ("/artifacts/team/empty/resolve/prod", None),  # an artifact with no version: 404
    ("/artifacts/Team/App/resolve/prod", None),  # a bad name: 400 naming it
    ("/artifacts/team/app/resolve/latest", None),  # a reserved word as a name's segment or an alias: as the app
]


@pytest.mark.parametrize(("path", "query"), SERVED)
def test_the_hot_path_answers_as_the_app_with_the_same_calls(
    world: HandlerApi, path: str, query: dict[str, list[str]] | None
) -> None:
    # When the hot path and the app each answer the same resolve of an alias
    mine, theirs, hot_calls, app_calls = both(path, query)
    # Then the hot path answered it, with the app's status, headers and body, made the same AWS calls and counted
    # the request as the app does
    assert mine is not None
    assert mine == theirs
    assert json.loads(mine["body"]) == json.loads(theirs["body"])
    assert hot_calls == app_calls


LEFT = [
    ("/artifacts/team/app/resolve/1", None),  # a version number
    ("/artifacts/team/app/resolve/LATEST", None),
    ("/artifacts/team/app/resolve/sha256:" + "0" * 64, None),
    ("/artifacts/team/app/resolve/prod", {"at": ["2020-01-01T00:00:00Z"]}),
    ("/artifacts/team/app/resolve/prod", {"routing_key": [""]}),  # refused by the app's validation
    ("/artifacts/team/app/resolve/prod", {"routing_key": ["k" * 257]}),
    ("/artifacts/team/app/resolve/prod", {"routing_key": ["a", "b"]}),
    ("/artifacts/team/app/resolve/a%20b", None),
    ("/artifacts/team/app/resolve/" + "y" * 200, None),  # longer than an alias: the app's pattern refuses it
    ("/artifacts/team/app/resolve/-x", None),  # nor a reference of any form
    ("/artifacts/team/app/resolve/0123", None),  # digits: a version number, read by the app
    ("/artifacts/team/model/resolve/prod/files/a.txt", None),
    ("/artifacts/team/app", None),
    ("/health", None),
]


@pytest.mark.parametrize(("path", "query"), LEFT)
def test_what_the_hot_path_does_not_serve_exactly_it_leaves_to_the_app_before_any_call(
    world: HandlerApi, path: str, query: dict[str, list[str]] | None
) -> None:
    # When the hot path is given a request it cannot answer exactly as the app
    mine, _, hot_calls, _ = both(path, query)
    # Then it leaves it to the app, having made no AWS call and counted nothing
    assert mine is None
    assert hot_calls == [{}, {}]


def test_the_handler_answers_a_resolve_of_an_alias_without_building_its_app(world: HandlerApi) -> None:
    # Given a resolve function as a cold start builds it
    entry = EntryPoint("resolve")
    # When it answers a resolve of an alias
    event, _ = api_event("GET", "/artifacts/team/app/resolve/prod")
    with acting_as("resolve"):
        answer = entry(event, lambda_context("resolve"))
    # Then it answered without its Powertools app
    assert answer["statusCode"] == 200 and json.loads(answer["body"])["version"] == 1
    assert entry._app is None
    # And a request of another route builds the app with every router, and is answered
    event, _ = api_event("GET", "/artifacts/team/app/versions/1")
    with acting_as("resolve"):
        answer = entry(event, lambda_context("resolve"))
    assert answer["statusCode"] == 200 and entry._app is not None
    assert {r.operation for r in entry.routes} >= {"resolve", "get_version", "health"}


def test_a_test_that_overrides_the_reading_service_is_answered_by_the_app(world: HandlerApi) -> None:
    # Given a resolve function whose app's Reading service a test overrides
    class Reading:
        def follow(self, name: str, read: Any) -> Any:
            raise LookupError("the fake is asked")

    entry = EntryPoint("resolve")
    entry.app.dependency_overrides[wiring.reading] = Reading
    # When a resolve of an alias arrives
    event, _ = api_event("GET", "/artifacts/team/app/resolve/prod")
    with acting_as("resolve"):
        answer = entry(event, lambda_context("resolve"))
    # Then the app answered it, with the override (its unexpected error: a 500)
    assert answer["statusCode"] == 500
