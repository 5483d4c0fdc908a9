"""The functions' apps as the function table builds them: services given by Depends, placeholders in the right
function, the resolve function's routers loaded on first use."""

from __future__ import annotations

import importlib
import json
from typing import Any

import pytest

from arca import wiring
from arca.domain.errors import NotFoundError
from local.events import api_event, lambda_context


def _call(method: str, path: str) -> tuple[str | None, dict[str, Any]]:
    event, function = api_event(method, path)
    handler = importlib.import_module(f"arca.handlers.{function or 'resolve'}").handler
    return function, handler(event, lambda_context(function or "resolve"))


def test_a_route_is_given_its_service_and_a_test_can_give_it_another() -> None:
    # Given the resolve function, its provider of the Reading service overridden by the resolver's own mechanism
    from arca.handlers import resolve

    class Reading:
        def summary_through(self, name: str) -> None:
            raise NotFoundError(f"the fake reading of {name!r}")

    resolve.entry.app.dependency_overrides[wiring.reading] = Reading
    try:
        # When a route that reads is called
        function, response = _call("GET", "/artifacts/team/app")
    finally:
        resolve.entry.app.dependency_overrides.clear()
    # Then it was given the fake, not the composition root's service
    assert function == "resolve"
    assert response["statusCode"] == 404
    assert json.loads(response["body"])["error"]["message"] == "the fake reading of 'team/app'"


@pytest.mark.parametrize(
    ("method", "path", "function", "status", "code"),
    [
        ("GET", "/v2", "resolve", 200, None),
        ("GET", "/v2/", "resolve", 200, None),
        ("GET", "/v2/_catalog", "resolve", 405, "UNSUPPORTED"),
        ("HEAD", "/v2/a/b/c/blobs/sha256:00", "resolve", 400, None),
        ("GET", "/v2/team/app/manifests/bad:tag:x", "resolve", 400, "DIGEST_INVALID"),
        ("DELETE", "/v2/team/app/blobs/sha256:" + "0" * 64, "publish", 405, "UNSUPPORTED"),
        ("PUT", "/v2/team/app/manifests/LATEST", "publish", 400, "TAG_INVALID"),
        ("POST", "/v2/Team/blobs/uploads/", "publish", 400, "NAME_INVALID"),
    ],
)
def test_the_oci_family_answers_in_its_function_in_ocis_shape(
    method: str, path: str, function: str, status: int, code: str | None
) -> None:
    from arca import wiring
    from arca.handlers import publish, resolve

    # Given functions whose OCI service is never reached (each request is refused, or needs no backend)
    apps = [resolve.entry.app, publish.entry.app]
    for app in apps:
        app.dependency_overrides[wiring.oci] = object
    try:
        # When a request of the /v2/ family arrives as API Gateway sends it
        served_by, response = _call(method, path)
    finally:
        for app in apps:
            app.dependency_overrides.clear()
    # Then its family's function answers, with the registry's version header and OCI's error shape
    assert served_by == function
    assert response["statusCode"] == status
    headers = response.get("multiValueHeaders") or {}
    assert headers.get("Docker-Distribution-API-Version") == ["registry/2.0"]
    if code is not None:
        assert json.loads(response["body"])["errors"][0]["code"] == code


def test_the_resolve_function_starts_with_its_hot_route_and_takes_in_the_others_when_asked() -> None:
    from arca.handlers.http import EntryPoint

    # Given a resolve function as a cold start builds it
    entry = EntryPoint("resolve")
    assert {r.operation for r in entry.routes} == {"resolve", "resolve_content"}
    # When a request its hot route does not serve arrives
    event, _ = api_event("GET", "/health")
    response = entry(event, lambda_context("resolve"))
    # Then it has taken in every router of the function, and answered
    assert response["statusCode"] == 200
    assert {r.operation for r in entry.routes} >= {"health", "get_version", "list_events", "oci_get_manifest"}


def test_the_hot_routes_are_the_routes_the_resolve_router_declares() -> None:
    from arca.api.functions import hot_routes, load, routes

    # Given the routes the resolve function answers before its app exists, and those its resolve router declares
    hot = hot_routes("resolve")
    declared = routes("resolve", load(("resolve.router",)))
    # Then they are the same routes, in the same families
    assert hot == declared
    assert [r.family for r in hot] == [r.family for r in declared]


# A first request's one Query, answered before botocore sends it: an alias item on version 1 (the item as stored).
_ALIAS_ITEM = {
    "pk": {"S": "team/app#aliases"},
    "sk": {"S": "prod"},
    "name": {"S": "team/app"},
    "alias": {"S": "prod"},
    "version": {"N": "1"},
    "revision": {"N": "3"},
    "primary": {"M": {"sha256": {"S": "0" * 64}, "size": {"N": "5"}, "content_type": {"S": "text/plain"}}},
}


def test_a_cold_start_of_the_resolve_function_and_its_first_resolve_import_no_pydantic_nor_event_handler() -> None:
    import subprocess
    import sys
    from pathlib import Path

    import arca
    from arca.adapters import keys

    item = {**_ALIAS_ITEM, "pk": {"S": keys.alias_key("team/app", "prod")["pk"]}}
    event, _ = api_event("GET", "/artifacts/team/app/resolve/prod", query={"routing_key": ["user-42"]})
    # Given a fresh interpreter that imports the resolve function, builds its services as a cold start does, and
    # answers its first request, a resolve of an alias (its one Query answered in the process)
    code = (
        "import json, os, sys, types; import arca.handlers.resolve as r; from arca import wiring\n"
        "def query(**_):\n"
        "    return types.SimpleNamespace(status_code=200, headers={}), {'Items': [json.loads(os.environ['ITEM'])],"
        " 'Count': 1, 'ScannedCount': 1}\n"
        "wiring.CLIENT_HANDLERS.append(('before-call.dynamodb.Query', query)); wiring.services()\n"
        "context = types.SimpleNamespace(function_name='arca-resolve', memory_limit_in_mb=512, aws_request_id='1',"
        " invoked_function_arn='arn:aws:lambda:us-east-1:000000000000:function:arca-resolve')\n"
        "answer = r.handler(json.loads(os.environ['EVENT']), context)\n"
        "print(json.dumps({'status': answer['statusCode'], 'body': json.loads(answer['body']),\n"
        "    'pydantic': sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'pydantic_core')),\n"
        "    'event_handler': sorted(m for m in sys.modules if m.startswith('aws_lambda_powertools.event_handler')),\n"
        "    'arca': sorted(m for m in sys.modules if m.startswith('arca.'))}))"
    )
    package = str(Path(arca.__file__).parent.parent)
    env = {
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "ARCA_TABLE_NAME": "t",
        "ARCA_BUCKET_NAME": "b",
        "PYTHONPATH": package,
        "ITEM": json.dumps(item),
        "EVENT": json.dumps(event),
    }
    # When it has answered
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    started = json.loads(out.strip().splitlines()[-1])
    assert started["status"] == 200 and started["body"]["version"] == 1 and started["body"]["alias_revision"] == 3
    # Then neither pydantic nor Powertools' event handler was imported (decision 117)
    assert started["pydantic"] == []
    assert started["event_handler"] == []
    # Nor any model of Arca's, the read side's stores and service, or the event models
    assert not {m for m in started["arca"] if m.startswith(("arca.domain.entities", "arca.domain.events"))}
    assert not {"arca.services.reading", "arca.adapters.store.records", "arca.domain.aggregates", "arca.api.app"} & set(
        started["arca"]
    )


def test_a_cold_start_of_the_resolve_function_builds_no_model_and_imports_no_event_model() -> None:
    import subprocess
    import sys
    from pathlib import Path

    import arca

    # Given a fresh interpreter that imports the resolve function and builds its services, as a cold start does
    code = (
        "import json, sys, pydantic; import arca.handlers.resolve; from arca import wiring; wiring.services()\n"
        "seen, todo = set(), [pydantic.BaseModel]\n"
        "while todo:\n"
        "    for sub in todo.pop().__subclasses__():\n"
        "        if sub not in seen: seen.add(sub); todo.append(sub)\n"
        "print(json.dumps({'built': sorted(f'{m.__module__}.{m.__qualname__}' for m in seen\n"
        "    if m.__module__.startswith('arca.') and m.__pydantic_complete__),\n"
        "    'events': 'arca.domain.events' in sys.modules}))"
    )
    package = str(Path(arca.__file__).parent.parent)
    env = {"AWS_DEFAULT_REGION": "us-east-1", "ARCA_TABLE_NAME": "t", "ARCA_BUCKET_NAME": "b", "PYTHONPATH": package}
    # When it has started
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    started = json.loads(out)
    # Then no model of Arca's has built its validator (each defers it to its first use)
    assert started["built"] == []
    # And the event models (what writes announce, and the feed's answers) are not imported: resolve announces nothing
    assert started["events"] is False


def test_a_new_app_starts_with_no_routing_context_of_the_app_its_routers_were_in() -> None:
    # Given the resolve function's routers in an app caught in the middle of a request (its context holds the
    # request's route, as the OpenAPI document's app does when a request builds it)
    from arca.api.app import build_app
    from arca.api.functions import routers

    served = routers("resolve")
    before = build_app({}, served)
    before.append_context(_route="the other request's", _request="the other request's")
    # When a new app takes the same routers in
    after = build_app({}, served)
    # Then it starts with no routing context of its own
    assert after.context == {}
