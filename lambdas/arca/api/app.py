"""One Powertools resolver per function: validation on, one error shape, and direct invocation.

- Errors: the one table from error class to status and the error body (arca.api.errors), and handlers
  for the registry's errors, request validation, unknown routes and the unexpected.
- Direct invocation, `{"operation": "...", ...fields}`, becomes the proxy event of that operation's route
  and goes through the same resolver, so validation and behaviour are the HTTP API's; an error is raised
  as the registry's exception of that code, so the invocation's errorType is the code. Its path parameters
  are validated before the path is built, and the path must lead back to the operation named. Its identity (an
  alias revision's `updated_by`) is `direct:<function ARN>`, which the event cannot set.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import unquote

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestUnsupportedContentType, RequestValidationError
from aws_lambda_powertools.utilities.typing import LambdaContext

from arca.api.errors import JSON, error_body, status_of
from arca.api.paths import NoRouteError, Route, canonical_path, match
from arca.api.routing import Router
from arca.domain.errors import (
    InternalError,
    MethodNotAllowed,
    NotFoundError,
    RegistryError,
    UnsupportedMediaTypeError,
    ValidationError,
    error_class,
)
from arca.domain.names import reserved_word, validate_name
from arca.observability import count_request, logger

# Direct invocations carry these headers as plain fields.
DIRECT_HEADERS = {"if_match": "If-Match", "if_none_match": "If-None-Match", "idempotency_key": "Idempotency-Key"}
_WITHOUT_BODY = frozenset({"GET", "DELETE", "HEAD"})


def validation_error(errors: list[Any]) -> ValidationError:
    """The first of pydantic's errors as the registry's ValidationError, naming the field as the client wrote it."""
    first = errors[0]
    source, *loc = [str(p) for p in first["loc"]]  # source: "body", "query", "path" or "header"
    if source == "header":  # Powertools lowercases header names; name it as clients write it
        loc = ["-".join(part.capitalize() for part in loc[0].split("-"))]
    kind = first["type"]
    message = str(first["msg"]).removeprefix("Value error, ")
    if kind == "json_invalid":
        return ValidationError("body is not valid JSON", field="body")
    if loc[-1:] == ["[key]"]:  # a bad key of a map: name the map, quote the key
        message = f"key {loc[-2]!r}: {message}"
        loc = loc[:-2]
    where = ".".join(loc) or "body"
    if where == "body" and kind in ("model_attributes_type", "model_type", "dict_type"):
        return ValidationError("body must be a JSON object", field="body")
    if kind == "extra_forbidden":
        message = "is not a known field"
    elif kind == "missing":
        message = "is required"
    return ValidationError(f"{where}: {message}", field=where)


def _no_route_error(method: str, path: str) -> tuple[RegistryError, tuple[str, ...]]:
    """Why no route serves a request, with the methods the path has: the reserved word the name holds (400), the
    method (405, with the path's methods), or the path (404)."""
    from arca.api.functions import table  # every function's routes, read only on this error path

    try:
        match(table(), method, path)
        allowed: tuple[str, ...] = ()
    except NoRouteError as missing:
        if missing.reserved is not None:
            return reserved_word(missing.reserved), ()
        allowed = missing.allowed
    if not allowed:
        return NotFoundError(f"no route for {method} {path}"), ()
    return MethodNotAllowed(f"{method} is not allowed on {path}"), allowed


def _resolver(routers: Iterable[Router]) -> APIGatewayRestResolver:
    # json.dumps' own separators, as the error bodies and every earlier answer of the API.
    app = APIGatewayRestResolver(enable_validation=True, serializer=json.dumps)
    for router in routers:
        app.include_router(router)
    # `include_router` copies the routing context of the app a router was last included in (the OpenAPI document's
    # app, built during a request, keeps that request's): a new app starts with none, or its first request would
    # be read as that one (`app.request` is cached in the context).
    app.context.clear()
    return app


def build_app(operations: Mapping[tuple[str, str], str], routers: Iterable[Router] = ()) -> APIGatewayRestResolver:
    """The resolver of one function: its routers, request counting (by `operations`, (method, path) -> operation,
    read at each request: routers may join the app later), and the error handlers."""
    app = _resolver(routers)

    def request_id() -> str:
        return str(app.current_event.request_context.request_id or "")

    def reply(error: RegistryError) -> Response[Any]:
        return Response(status_of(error), JSON, json.dumps(error_body(error, request_id())))

    def count_requests(app: APIGatewayRestResolver, next_middleware: NextMiddleware) -> Response[Any]:
        route = app.request.route.replace("<", "{").replace(">", "}")
        count_request(operations.get((app.request.method, route), "unknown"))
        return next_middleware(app)

    app.use([count_requests])

    def refused(error: RegistryError) -> Response[Any]:
        logger.info("request refused", extra={"code": error.code, "status": status_of(error), "reason": error.message})
        return reply(error)

    def invalid(error: RequestValidationError) -> Response[Any]:
        return refused(validation_error(list(error.errors())))

    def not_json(error: RequestUnsupportedContentType) -> Response[Any]:
        return refused(UnsupportedMediaTypeError("send the body as application/json", field="Content-Type"))

    def undecodable(error: UnicodeDecodeError) -> Response[Any]:
        """Bytes that are not UTF-8: the only text Powertools decodes from the client is the JSON body."""
        return refused(ValidationError("body is not valid JSON (not UTF-8)", field="body"))

    def too_deep(error: RecursionError) -> Response[Any]:
        """JSON nested deeper than the parser's recursion limit is bad input; any other RecursionError is a bug."""
        try:
            json.loads(app.current_event.body or "null")
        except RecursionError:
            return refused(ValidationError("body is nested too deeply", field="body"))
        except ValueError:
            pass
        return unexpected(error)

    def no_route(_: Exception) -> Response[Any]:
        """404, or 405 with `Allow` when the path exists with other methods (API Gateway never sends those). Under
        `/v2/`, OCI's dispatcher answers (in OCI's shape: NAME_UNKNOWN, UNSUPPORTED)."""
        error, allowed = _no_route_error(app.current_event.http_method, unquote(app.current_event.path))
        if isinstance(error, ValidationError):  # a reserved word in the name: bad input
            return refused(error)
        response = reply(error)
        if allowed:
            response.headers["Allow"] = ", ".join(sorted(set(allowed)))
        return response

    def unexpected(error: Exception) -> Response[Any]:
        logger.exception("unexpected error", extra={"request_id": request_id()})
        return reply(InternalError("internal error"))

    app.exception_handler(RegistryError)(refused)
    app.exception_handler(RequestValidationError)(invalid)
    app.exception_handler(UnicodeDecodeError)(undecodable)
    app.exception_handler(RecursionError)(too_deep)
    app.exception_handler(RequestUnsupportedContentType)(not_json)
    app.not_found(_or_oci(app, no_route))
    app.exception_handler(Exception)(unexpected)

    return app


def resolve_http(
    app: APIGatewayRestResolver, routes: Iterable[Route], event: dict[str, Any], context: LambdaContext
) -> dict[str, Any]:
    """An API Gateway proxy event: the name (and any parameter of `routes` that spans several segments) folded into
    one parameter, then Powertools routes it once.

    Bodies are JSON only. Powertools would also parse forms and multipart bodies (and fail on a multipart
    type without a boundary), so any other declared type is handed on as one it refuses: a 415.
    """
    event = {**event, "path": canonical_path(str(event.get("path") or "/"), routes)}
    headers = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
    declared = str(headers.get("content-type") or "").strip().lower()
    if event.get("body") and declared and not declared.startswith(JSON) and not _is_oci(str(event["path"])):
        headers["content-type"] = "application/vnd.arca.not-json"
        event.update(headers=headers, multiValueHeaders={k: [v] for k, v in headers.items()})
    return app.resolve(event, context)


def _or_oci(app: APIGatewayRestResolver, no_route: Callable[[Exception], Response[Any]]) -> Callable[..., Any]:
    """The not-found handler: under `/v2/`, the OCI dispatcher answers a path no route declares (`/v2/_catalog`, a
    name it refuses) in OCI's shape; elsewhere `no_route`."""

    def answer(error: Exception) -> Response[Any]:
        if not _is_oci(unquote(app.current_event.path)):
            return no_route(error)
        from arca.api import dependencies
        from arca.api.oci import serve

        provider = app.dependency_overrides.get(dependencies.oci, dependencies.oci)  # as a route's Depends
        return serve(app.current_event, provider())

    return answer


def _is_oci(path: str) -> bool:
    """A path of OCI's family: its routes read bodies of any type themselves (blobs, manifests)."""
    return path == "/v2" or path.startswith("/v2/")


def invoke(
    app: APIGatewayRestResolver,
    function: str,
    routes: tuple[Route, ...],
    event: Mapping[str, Any],
    context: LambdaContext,
) -> Any:
    """Direct invocation: the same route, validation and answer; an error is raised as its registry class."""
    route = _direct_route(function, routes, event)
    response = resolve_http(app, routes, _proxy_event(routes, route, event, context), context)
    payload = json.loads(response["body"]) if response.get("body") else {}
    if response["statusCode"] >= 400:
        error = dict(payload["error"])
        code, message, field = error.pop("code"), error.pop("message"), error.pop("field", None)
        error.pop("request_id", None)
        raise error_class(code)(message, field=field, details=error)
    return payload


def _direct_route(function: str, routes: tuple[Route, ...], event: Mapping[str, Any]) -> Route:
    """The route a direct invocation names, once the event has its path parameters and no identity of its own."""
    named = {r.operation: r for r in routes if not r.foreign}  # another protocol's answers are not Arca's errors
    route = named.get(str(event["operation"]))
    if route is None:
        count_request("invalid_operation")
        raise ValidationError(f"operation must be one of {sorted(named)} for function {function}", field="operation")
    if "identity" in event:
        raise ValidationError(
            "identity: cannot be chosen by the caller; a direct invocation is recorded as direct:<function ARN>",
            field="identity",
        )
    missing = [p for p in route.params if p not in event]
    if missing:
        raise ValidationError(f"{missing[0]}: is required", field=missing[0])
    return route


def _proxy_event(
    routes: tuple[Route, ...], route: Route, event: Mapping[str, Any], context: LambdaContext
) -> dict[str, Any]:
    """The API Gateway proxy event of a direct invocation: path parameters, the direct headers, and the other fields
    as the query (methods without a body) or as the JSON body."""
    params = {p: str(event[p]) for p in route.params}
    path = _path_of(routes, route, params)
    fields = {k: v for k, v in event.items() if k not in ("operation", *params)}
    headers = {DIRECT_HEADERS[k]: str(fields.pop(k)) for k in list(fields) if k in DIRECT_HEADERS}
    query = {k: _text(v) for k, v in fields.items()} if route.method in _WITHOUT_BODY else {}
    body = json.dumps(fields) if fields and route.method not in _WITHOUT_BODY else None
    request_id = str(getattr(context, "aws_request_id", "") or "")
    return {
        "resource": route.path,
        "path": path,
        "httpMethod": route.method,
        "headers": {"Content-Type": JSON, **headers},
        "multiValueHeaders": {"Content-Type": [JSON], **{k: [v] for k, v in headers.items()}},
        "queryStringParameters": query or None,
        "multiValueQueryStringParameters": {k: [v] for k, v in query.items()} or None,
        "pathParameters": None,
        "body": body,
        "isBase64Encoded": False,
        # Lambda tells a function nothing about who invoked it; what it can vouch for is that the call came
        # through Lambda's own API (callers need lambda:InvokeFunction), so that is what history records.
        "requestContext": {"requestId": request_id, "identity": {"userArn": direct_identity(context)}},
    }


def _path_of(routes: tuple[Route, ...], route: Route, params: dict[str, str]) -> str:
    """The request path of `route` for these parameters, validated first, so that the operation run is the one
    named: a value that would read as more of the path (`{"operation": "purge", "name": "x/versions/1"}`) is a
    400 naming its parameter, never another route."""
    for param, value in params.items():
        if param == "name":
            validate_name(value)
        elif not value or "/" in value or value in (".", ".."):
            raise ValidationError(f"{param}: must be one path segment", field=param)
    path = route.fill(params)
    try:
        found, read = match(routes, route.method, path)
    except NoRouteError:
        found, read = None, {}
    if found != route or read != params:
        wrong = next((p for p in route.params if read.get(p) != params[p]), "operation")
        raise ValidationError(f"{wrong}: does not make a path of operation {route.operation}", field=wrong)
    return path


def direct_identity(context: LambdaContext) -> str:
    """`direct:<invoked function ARN>`: set from the invocation's context, never from the event."""
    return f"direct:{getattr(context, 'invoked_function_arn', '') or 'unknown'}"


def _text(value: Any) -> str:
    """A query-string value as a client would write it (JSON booleans as true/false)."""
    return json.dumps(value) if isinstance(value, bool) else str(value)
