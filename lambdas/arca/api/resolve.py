"""Resolve (resolve function): a reference as one concrete version and a download URL, the hot path of the API."""

from typing import Annotated, Any
from urllib.parse import unquote

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from pydantic import AfterValidator, AwareDatetime

from arca.api.dependencies import ReadingService
from arca.api.errors import JSON
from arca.api.params import Name, Ref, answers, in_utc
from arca.api.routing import Router
from arca.domain.entities import FileResolution, Resolution
from arca.observability import count_resolve
from arca.services.reading import Reading

router = Router()
files = Router()  # a tree's files: not on the hot path, so loaded on their first request

RoutingKey = Annotated[
    str | None, Query(min_length=1, max_length=256, description="the same key always lands on the same side")
]
At = Annotated[
    AwareDatetime | None, AfterValidator(in_utc), Query(description="ISO 8601 time: the alias as it stood then")
]


def _resolve(reading: Reading, name: str, ref: str, routing_key: str | None, at: Any) -> Resolution:
    resolution = reading.follow(name, lambda n: reading.resolve(n, ref, routing_key=routing_key, at=at))
    if resolution.alias_revision is not None:
        count_resolve(name, ref, resolution.route)
    return resolution


@router.get("/artifacts/<name>/resolve/<ref>", responses=answers(200, 400, 404, 503), tags=["reads"])
def resolve(name: Name, ref: Ref, reading: ReadingService, routing_key: RoutingKey = None, at: At = None) -> Resolution:
    """An alias, version number, LATEST or `sha256:<hex>` as one concrete version and a short-lived download URL."""
    return _resolve(reading, name, ref, routing_key, at)


@router.get("/artifacts/<name>/resolve/<ref>/content", responses=answers(302, 400, 404, 503), tags=["reads"])
def resolve_content(
    name: Name, ref: Ref, reading: ReadingService, routing_key: RoutingKey = None, at: At = None
) -> Response[Resolution]:
    """302 to the download URL (the body is the resolution)."""
    resolution = _resolve(reading, name, ref, routing_key, at)
    return Response(302, JSON, resolution, headers={"Location": resolution.download_url})


@files.get("/artifacts/<name>/resolve/<ref>/files/<path>", responses=answers(302, 400, 404, 409, 503), tags=["reads"])
def resolve_file(
    name: Name,
    ref: Ref,
    path: Annotated[str, Path(description="the file's path in the tree (any number of segments)")],
    reading: ReadingService,
    routing_key: RoutingKey = None,
    at: At = None,
) -> Response[FileResolution]:
    """302 to a download URL of one file of the tree the reference resolves to (the body is the file's resolution);
    404 naming the path when the tree holds no such file."""
    found = reading.follow(name, lambda n: reading.resolve_file(n, ref, unquote(path), routing_key=routing_key, at=at))
    if found.alias_revision is not None:
        count_resolve(name, ref, found.route)
    return Response(302, JSON, found, headers={"Location": found.download_url})
