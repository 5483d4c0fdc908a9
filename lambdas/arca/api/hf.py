"""The Hugging Face Hub's read side under `/hf/` (resolve function), so `huggingface_hub` downloads Arca's versions:
a repo is an artifact name of one or two segments, a file's path has any number.

Each route hands the request, as the client sent it, to the protocol (`arca.protocols.hf.serve`) over Arca's reads
(`arca.services.hf`): the answers are the Hub's (its JSON, its `X-Error-Code` misses), not Arca's error shape, so
the client raises its own errors. The routes are left out of the OpenAPI document: they are the Hub's API, not
Arca's (the README shows how `huggingface_hub` uses them).
"""

from __future__ import annotations

from typing import Any, cast
from urllib.parse import quote, unquote

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.request import Request
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEvent

from arca.api.caller import identity
from arca.api.dependencies import ReadingService
from arca.api.routing import Router

router = Router()

PREFIX = "/hf"


def serve(request: Request, reading: Any) -> Response[str]:
    """The protocol's answer to this request: its path below `/hf` as sent (percent-encoded), the endpoint as the
    client knows it (for the absolute `Link` of a listing's next page), the caller's identity as the routing key."""
    from arca.protocols.hf import Request as HubRequest
    from arca.protocols.hf import serve as hub_serve
    from arca.services.hf import HubReads

    event = cast(APIGatewayProxyEvent, request.resolved_event)
    path = unquote(event.path)
    hub = HubRequest(
        method=event.http_method.upper(),
        path=quote(path.removeprefix(PREFIX), safe="/"),
        base_url=endpoint(event, path),
        query=dict(event.query_string_parameters or {}),
        routing_key=identity(request),
    )
    answer = hub_serve(hub, HubReads(reading))
    headers = {k: v for k, v in answer.headers.items() if k.lower() != "content-type"}
    return Response(answer.status, answer.headers.get("Content-Type"), answer.body.decode(), headers=headers)


def endpoint(event: APIGatewayProxyEvent, path: str) -> str:
    """`<scheme>://<host><base path>/hf` as the client called it: the stage (or a custom domain's base path) is
    what the request context's path holds before the API's own path."""
    host = event.headers.get("Host") or event.headers.get("host") or event.request_context.domain_name or "localhost"
    scheme = event.headers.get("X-Forwarded-Proto") or event.headers.get("x-forwarded-proto") or "https"
    called = unquote(event.request_context.path or path)
    base = called[: len(called) - len(path)] if called.endswith(path) else ""
    return f"{scheme}://{host}{base}{PREFIX}"


@router.route("/hf/api/models/<repo>", "GET", foreign=True)
def hf_model(repo: str, request: Request, reading: ReadingService) -> Response[str]:
    """A model's info at `main`."""
    return serve(request, reading)


@router.route("/hf/api/models/<repo>/revision/<revision>", "GET", foreign=True)
def hf_model_info(repo: str, revision: str, request: Request, reading: ReadingService) -> Response[str]:
    """A model's info at a revision (`sha`, `siblings`)."""
    return serve(request, reading)


@router.route("/hf/api/models/<repo>/tree/<revision>/<path>", "GET", foreign=True)
def hf_tree(repo: str, revision: str, path: str, request: Request, reading: ReadingService) -> Response[str]:
    """The files under a path at a revision."""
    return serve(request, reading)


@router.route("/hf/api/models/<repo>/tree/<revision>", "GET", foreign=True)
def hf_tree_root(repo: str, revision: str, request: Request, reading: ReadingService) -> Response[str]:
    """The files at a revision (`?recursive=true`: every file)."""
    return serve(request, reading)


@router.route("/hf/<repo>/resolve/<revision>/<filename>", "GET", foreign=True)
def hf_get_file(repo: str, revision: str, filename: str, request: Request, reading: ReadingService) -> Response[str]:
    """A redirect to one file."""
    return serve(request, reading)


@router.route("/hf/<repo>/resolve/<revision>/<filename>", "HEAD", foreign=True)
def hf_head_file(repo: str, revision: str, filename: str, request: Request, reading: ReadingService) -> Response[str]:
    """A file's headers (commit, ETag, size) and the redirect to it."""
    return serve(request, reading)
