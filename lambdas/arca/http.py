"""From events to operations and back: one place for routing, errors and direct invocation.

An operation is `op(request) -> Reply`, written once and reached two ways:
- API Gateway proxy events, routed by a Powertools resolver built from the route table
  (the path is canonicalised first: the name's slashes are %2F-encoded to fit one parameter);
- direct invocation, `{"operation": "...", ...fields}`, which returns the same JSON body and lets a
  RegistryError propagate, so the invocation's errorType is the error code.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import unquote

import pydantic
from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.utilities.typing import LambdaContext

from arca.domain.errors import (
    ConflictError,
    NotFoundError,
    PayloadTooLargeError,
    PreconditionFailedError,
    RegistryError,
    ThrottledError,
    ValidationError,
)
from arca.observability import count_request, logger
from arca.routes import ROUTES, NoRouteError, Route, canonical_path, match

# The one table from error class to HTTP status; subclasses inherit their base's status (MRO lookup).
STATUS: dict[type[RegistryError], int] = {
    ValidationError: 400,
    NotFoundError: 404,
    ConflictError: 409,
    PreconditionFailedError: 412,
    PayloadTooLargeError: 413,
    ThrottledError: 503,
}
JSON = "application/json"
# Direct invocations carry conditional headers as plain fields.
DIRECT_HEADERS = {"if_match": "if-match", "if_none_match": "if-none-match"}

M = TypeVar("M", bound=pydantic.BaseModel)


def status_of(error: RegistryError) -> int:
    return next((STATUS[c] for c in type(error).__mro__ if c in STATUS), 500)


@dataclass
class Request:
    params: dict[str, str]
    query: Mapping[str, Any] = field(default_factory=dict)
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    identity: str | None = None
    request_id: str = ""
    direct: bool = False  # a direct invocation: the reply's body is all the caller gets

    @property
    def name(self) -> str:
        return self.params["name"]

    def parse_body(self, model: type[M]) -> M:
        """Validate the JSON body (absent = {}); a ValidationError names the first bad field."""
        body = {} if self.body is None else self.body
        if not isinstance(body, dict):
            raise ValidationError("body must be a JSON object", field="body")
        return parse(model, body)

    def parse_query(self, model: type[M]) -> M:
        return parse(model, dict(self.query))


@dataclass
class Reply:
    body: Any = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


Operation = Callable[[Request], Reply]


def parse(model: type[M], data: Mapping[str, Any]) -> M:
    try:
        return model.model_validate(data)
    except pydantic.ValidationError as invalid:
        first = invalid.errors()[0]
        loc = [str(p) for p in first["loc"]]
        message = first["msg"].removeprefix("Value error, ")
        if loc[-1:] == ["[key]"]:  # a bad key of a map: name the map, quote the key
            message = f"key {loc[-2]!r}: {message}"
            loc = loc[:-2]
        where = ".".join(loc) or "body"
        if first["type"] == "extra_forbidden":
            message = "is not a known field"
        elif first["type"] == "missing":
            message = "is required"
        raise ValidationError(f"{where}: {message}", field=where) from None


def error_body(error: RegistryError, request_id: str) -> dict[str, Any]:
    body: dict[str, Any] = {"code": error.code, "message": error.message, "request_id": request_id}
    if error.field:
        body["field"] = error.field
    body.update(error.details)
    return {"error": body}


class Function:
    """One Lambda function: the operations it serves over API Gateway and by direct invocation."""

    def __init__(self, name: str, operations: Mapping[str, Operation]) -> None:
        self.name = name
        self.routes = {r.operation: r for r in ROUTES if r.function == name}
        missing = set(self.routes) - set(operations)
        if missing:
            raise ValueError(f"function {name} lacks operations {sorted(missing)}")
        self.operations = dict(operations)
        self.app = APIGatewayRestResolver()
        for route in self.routes.values():
            self.app.route(rule=route.rule, method=route.method)(self._endpoint(route))
        self.app.exception_handler(RegistryError)(self._registry_error)
        self.app.exception_handler(Exception)(self._unexpected_error)

    def handle(self, event: dict[str, Any], context: LambdaContext) -> Any:
        if "operation" in event:
            return self.invoke(event, getattr(context, "aws_request_id", ""))
        try:
            route, params = match(event.get("httpMethod", ""), event.get("path", ""))
        except NoRouteError as missing:
            count_request("no_route")
            return _no_route(event, missing)
        return self.app.resolve({**event, "path": canonical_path(route, params)}, context)

    def invoke(self, event: Mapping[str, Any], request_id: str) -> Any:
        """Direct invocation: the same operation and validation; errors propagate with their code."""
        operation = event["operation"]
        route = self.routes.get(operation)
        count_request(operation if route is not None else "invalid_operation")
        if route is None:
            raise ValidationError(
                f"operation must be one of {sorted(self.routes)} for function {self.name}", field="operation"
            )
        param_names = [s.strip("{}") for s in route.segments if s.startswith("{")]
        params = {p: str(event[p]) for p in param_names if p in event}
        missing = [p for p in param_names if p not in params]
        if missing:
            raise ValidationError(f"{missing[0]}: is required", field=missing[0])
        rest = {k: v for k, v in event.items() if k != "operation" and k not in params}
        headers = {DIRECT_HEADERS[k]: str(rest.pop(k)) for k in list(rest) if k in DIRECT_HEADERS}
        request = Request(params, rest, rest, headers, event.get("identity"), request_id, direct=True)
        return self.operations[operation](request).body or {}

    def _endpoint(self, route: Route) -> Callable[..., Response[Any]]:
        operation = self.operations[route.operation]

        def endpoint(**params: str) -> Response[Any]:
            count_request(route.operation)
            event = self.app.current_event
            body: Any = None
            if event.body:
                try:
                    body = json.loads(event.decoded_body or "")
                except ValueError:
                    raise ValidationError("body is not valid JSON", field="body") from None
            identity = event.request_context.identity
            request = Request(
                params={k: unquote(v) for k, v in params.items()},
                query=event.query_string_parameters or {},
                body=body,
                headers={k.lower(): v for k, v in (event.headers or {}).items()},
                identity=identity.user_arn or identity.caller or identity.cognito_identity_id,
                request_id=event.request_context.request_id,
            )
            return self._reply(operation(request))

        endpoint.__name__ = route.operation
        return endpoint

    @staticmethod
    def _reply(reply: Reply) -> Response[Any]:
        body = None if reply.body is None else json.dumps(reply.body, default=str)
        headers = {"Content-Type": JSON, **reply.headers} if body is not None else reply.headers
        return Response(status_code=reply.status, body=body, headers=headers)

    def _registry_error(self, error: RegistryError) -> Response[Any]:
        status = status_of(error)
        logger.info("request refused", extra={"code": error.code, "status": status, "error_message": error.message})
        return self._reply(Reply(error_body(error, self.app.current_event.request_context.request_id), status))

    def _unexpected_error(self, error: Exception) -> Response[Any]:
        request_id = self.app.current_event.request_context.request_id
        logger.exception("unexpected error", extra={"request_id": request_id})
        body = {"error": {"code": "InternalError", "message": "internal error", "request_id": request_id}}
        return self._reply(Reply(body, 500))


def _request_id(event: Mapping[str, Any]) -> str:
    return str((event.get("requestContext") or {}).get("requestId", ""))


def _no_route(event: Mapping[str, Any], missing: NoRouteError) -> dict[str, Any]:
    """404 for an unknown path, 405 (with Allow) for a known path and another method; the spec's shape."""
    method = event.get("httpMethod")
    code, status, headers = "NotFoundError", 404, {"Content-Type": JSON}
    if missing.allowed:
        code, status = "MethodNotAllowed", 405
        headers["Allow"] = ", ".join(missing.allowed)
    message = f"no route for {method} {missing.path}"
    body = {"error": {"code": code, "message": message, "request_id": _request_id(event)}}
    return {"statusCode": status, "headers": headers, "body": json.dumps(body)}
