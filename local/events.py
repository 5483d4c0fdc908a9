"""API Gateway REST proxy events and Lambda contexts, built the way the deployed API builds them.

One base event (apigw_rest_event.json) and one builder, used by the local server and by the tests, so
the handlers see the same events locally, in tests and on AWS.
"""

from __future__ import annotations

import base64
import copy
import importlib
import json
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from local.iam import acting_as

_BASE = Path(__file__).with_name("apigw_rest_event.json")
# Lambda's limit on a synchronous invocation's event and on its response, as JSON.
LAMBDA_PAYLOAD_BYTES = 6 * 1024 * 1024


@cache
def _base() -> dict[str, Any]:
    return json.loads(_BASE.read_text())  # type: ignore[no-any-return]


def api_event(
    method: str,
    path: str,
    *,
    body: bytes | str | None = None,
    headers: Mapping[str, str | Sequence[str]] | None = None,
    query: dict[str, list[str]] | None = None,
    identity: str | None = "arca:local",
    request_id: str | None = None,
) -> tuple[dict[str, Any], str | None]:
    """The proxy event for one request, and the function the API would send it to (None: no route).

    `resource` and `pathParameters` are those of the API Gateway resource the CDK API creates for
    this path (a name of depth d is d parameters {n1}…{nd}). `headers` are what the client sent, a
    header sent several times as a list (API Gateway keeps every value in multiValueHeaders); without
    them, the base event's typical client headers stand.
    """
    event = copy.deepcopy(_base())
    function, resource, path_parameters = _resource(method, path)
    multi = event["multiValueHeaders"]
    if headers is not None:
        multi = {k: [v] if isinstance(v, str) else list(v) for k, v in headers.items()}
    request_id = request_id or str(uuid.uuid4())
    event.update(
        resource=resource,
        path=path,
        httpMethod=method.upper(),
        headers={k: v[-1] for k, v in multi.items()},
        multiValueHeaders=multi,
        queryStringParameters={k: v[-1] for k, v in query.items()} if query else None,
        multiValueQueryStringParameters=dict(query) if query else None,
        pathParameters=path_parameters or None,
    )
    if isinstance(body, bytes) and body:
        try:
            event["body"] = body.decode()
        except UnicodeDecodeError:
            event["isBase64Encoded"] = True
            event["body"] = base64.b64encode(body).decode()
    elif isinstance(body, str) and body:
        event["body"] = body
    context = event["requestContext"]
    context.update(
        httpMethod=method.upper(),
        path=f"/{context['stage']}{path}",
        resourcePath=resource,
        requestId=request_id,
        requestTimeEpoch=int(time.time() * 1000),
    )
    context["identity"]["userArn"] = identity
    return event, function


def _resource(method: str, path: str) -> tuple[str | None, str, dict[str, str] | None]:
    """(function, API Gateway resource, path parameters) of a request: its route's resource, or the greedy resource
    of the route family that holds the path (None, the path, None: API Gateway has no resource for it)."""
    from arca import routes  # on first use: see local.server.routes
    from arca.api.paths import family_path_parameters, split_name

    name, segments = split_name(path)
    segments = [s for s in segments if s]
    try:
        route, params = routes.match(method, path)
    except routes.NoRouteError as missing:
        if missing.function is None:
            return None, path, None
        function = missing.function
        family = next(f for f in routes.FAMILY_METHODS if f.holds(segments))
    else:
        function, family = route.function, route.family
    if family is not None:
        paths = family.api_paths()
        parameters = family_path_parameters(family, segments, name)
    else:
        name = params.get("name")
        paths = route.api_paths()
        parameters = {k: v for k, v in params.items() if k != "name"}
        parameters.update({f"n{i}": s for i, s in enumerate(name.split("/"), 1)} if name else {})
    depth = len(name.split("/")) if name and len(paths) > 1 else 1
    # Deeper than the API's resources: API Gateway itself would refuse it; locally the handler says why.
    resource = paths[depth - 1] if depth <= len(paths) else path
    return function, resource, parameters or None


@dataclass
class LambdaContext:
    """The attributes of the Lambda context that Powertools reads."""

    function_name: str
    aws_request_id: str
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = ""
    log_group_name: str = ""
    log_stream_name: str = ""

    def get_remaining_time_in_millis(self) -> int:
        return 29_000


def lambda_context(function: str) -> LambdaContext:
    return LambdaContext(
        function_name=f"arca-{function}",
        aws_request_id=str(uuid.uuid4()),
        invoked_function_arn=f"arn:aws:lambda:us-east-1:000000000000:function:arca-{function}",
    )


class PayloadTooLargeError(Exception):
    """Lambda refused an invocation: its event (`what` = "event") or its response (`"response"`) is over 6 MB."""

    def __init__(self, what: str, size: int) -> None:
        super().__init__(f"the {what} is {size} bytes, over Lambda's payload limit of {LAMBDA_PAYLOAD_BYTES} bytes")
        self.what, self.size = what, size


def payload_size(payload: Any) -> int:
    """The size Lambda counts: the payload as (compact) JSON."""
    return len(json.dumps(payload, separators=(",", ":")).encode())


def invoke(handler: Callable[[Any, Any], Any], event: Any, context: Any) -> Any:
    """Call a function as Lambda does, refusing what Lambda refuses.

    An event over 6 MB never reaches the function (Lambda answers RequestEntityTooLargeException); a response
    over 6 MB fails the invocation after the function ran (its writes stand). Both raise PayloadTooLargeError.
    """
    size = payload_size(event)
    if size > LAMBDA_PAYLOAD_BYTES:
        raise PayloadTooLargeError("event", size)
    response = handler(event, context)
    size = payload_size(response)
    if size > LAMBDA_PAYLOAD_BYTES:
        raise PayloadTooLargeError("response", size)
    return response


def response_body(response: dict[str, Any]) -> bytes:
    """The body bytes of a proxy response (decoding base64 when the handler set isBase64Encoded)."""
    body = response.get("body") or ""
    return base64.b64decode(body) if response.get("isBase64Encoded") else body.encode()


def response_headers(response: dict[str, Any]) -> dict[str, str]:
    """A proxy response's headers: Powertools answers REST APIs in `multiValueHeaders`."""
    headers = dict(response.get("headers") or {})
    for key, values in (response.get("multiValueHeaders") or {}).items():
        headers[key] = ", ".join(values)
    return headers


@dataclass
class Reply:
    status: int
    body: Any
    headers: dict[str, str]

    @property
    def error(self) -> dict[str, Any]:
        return self.body["error"]  # type: ignore[no-any-return]


class HandlerApi:
    """Calls the real handlers in this process with the proxy events the deployed API would send, as the caller
    `identity` (the IAM identity API Gateway reports)."""

    identity: str | None = "arca:local"

    def call(
        self,
        method: str,
        path: str,
        json_body: Any = None,
        *,
        raw: bytes | str | None = None,
        headers: dict[str, str] | None = None,
        query: Mapping[str, str | list[str]] | None = None,
    ) -> Reply:
        body = raw if raw is not None else (None if json_body is None else json.dumps(json_body))
        event, function = api_event(
            method,
            path,
            body=body,
            headers={"Content-Type": "application/json", **(headers or {})},
            query={k: v if isinstance(v, list) else [v] for k, v in (query or {}).items()},
            identity=self.identity,
        )
        module = importlib.import_module(f"arca.handlers.{function or 'resolve'}")
        # As on AWS: the calls are authorised by that function's role, and Lambda's payload limits hold (an
        # oversized event or answer raises PayloadTooLargeError, so no test passes on an answer AWS refuses).
        with acting_as(function or "resolve"):
            response = invoke(module.handler, event, lambda_context(function or "resolve"))
        data = response_body(response)
        return Reply(response["statusCode"], json.loads(data) if data else None, response_headers(response))
