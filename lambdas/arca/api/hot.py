"""The resolve function's hot path: a resolve of an alias answered before, and without, its Powertools app.

A cold start of the resolve function imports neither pydantic nor Powertools' event handler (decision 117): the
routes of `arca.api.functions.HOT` are matched here against the route table's own path reading (arca.api.paths),
their parameters checked with the domain's grammar, the alias resolved by `Resolving` (the same reads and errors as
`Reading.resolve`), and the answer built as the app builds it: the same status, headers, body and error shape.

Whatever this path cannot answer exactly as the app does, it leaves to the app (`serve` returns None) before any
read: a reference that is not an alias (a version number, LATEST, `sha256:`), `at=`, a parameter the app would
refuse by its own validation, a path with escapes, a body. Falling back is always correct, only slower.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from arca import wiring
from arca.api.errors import JSON, error_body, status_of
from arca.api.paths import NoRouteError, Route, match
from arca.domain.errors import RegistryError
from arca.domain.names import validate_name
from arca.domain.versions import LATEST
from arca.observability import count_request, count_resolve, logger
from arca.services.resolving import Resolving

# The alias form of `arca.api.params.Ref` (numbers, LATEST and content references go to the app).
_ALIAS_REF = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")
# `arca.api.resolve.RoutingKey`'s bounds.
_KEY_LENGTH = range(1, 257)
# The query parameters the hot routes read; any other is ignored, as the app ignores it.
_READ = ("routing_key", "at")


def serve(
    routes: tuple[Route, ...], event: Mapping[str, Any], resolving: Callable[[], Resolving] = wiring.resolving
) -> dict[str, Any] | None:
    """The answer of a request a hot route serves (as API Gateway's proxy integration takes it), or None to leave
    the request to the app."""
    path = str(event.get("path") or "/")
    if event.get("body") or "%" in path or event.get("httpMethod") != "GET":
        return None
    try:
        route, params = match(routes, "GET", path)
    except NoRouteError:
        return None
    query = _query(event)
    ref = params["ref"]
    if query is None or not _ALIAS_REF.fullmatch(ref) or ref == LATEST or ref.isdigit():
        return None
    request_id = str((event.get("requestContext") or {}).get("requestId") or "")
    try:
        name = validate_name(params["name"])
        # Counted as the app's middleware counts it: once its parameters are read (a bad name is not counted).
        count_request(route.operation)
        answer = resolving().resolve_alias(name, ref, routing_key=query.get("routing_key"))
    except RegistryError as error:
        logger.info("request refused", extra={"code": error.code, "status": status_of(error), "reason": error.message})
        return _response(status_of(error), json.dumps(error_body(error, request_id)))
    count_resolve(name, ref, answer["route"])
    if route.operation == "resolve_content":
        return _response(302, json.dumps(answer), Location=answer["download_url"])
    return _response(200, json.dumps(answer))


def _query(event: Mapping[str, Any]) -> dict[str, str] | None:
    """The query parameters the hot routes read, when the hot path reads them as the app does: one `routing_key`
    within its bounds, no `at` (a time is parsed by the app's models). None otherwise."""
    single = {k: str(v).split(",") for k, v in (event.get("queryStringParameters") or {}).items() if k in _READ}
    multi = {k: list(v) for k, v in (event.get("multiValueQueryStringParameters") or {}).items() if k in _READ}
    values = {**single, **multi}
    if "at" in values:
        return None
    if "routing_key" not in values:
        return {}
    found = values["routing_key"]
    if len(found) != 1 or len(found[0]) not in _KEY_LENGTH:
        return None
    return {"routing_key": found[0]}


def _response(status: int, body: str, **headers: str) -> dict[str, Any]:
    """A REST proxy answer as Powertools builds it: multi-value headers, the JSON content type first."""
    return {
        "statusCode": status,
        "body": body,
        "isBase64Encoded": False,
        "multiValueHeaders": {"Content-Type": [JSON], **{k: [v] for k, v in headers.items()}},
    }
