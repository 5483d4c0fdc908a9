"""Versions: listing and reading them (resolve function); publishing, deleting, restoring and pruning them (publish
function)."""

from typing import Annotated, Literal

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Query
from pydantic import AfterValidator, AwareDatetime

from arca.api.caller import Caller
from arca.api.dependencies import PublishingService, ReadingService, RemovalService, SearchingService
from arca.api.idempotency import IdempotencyKey, Idempotent, answer, idempotent
from arca.api.params import (
    Limit,
    Name,
    NextToken,
    Sha256Filter,
    TagFilter,
    VersionNumber,
    VersionOrLatest,
    answers,
    in_utc,
)
from arca.api.routing import Router
from arca.domain.entities import FilePage, Latest, PruneResult, Published, Version, VersionPage
from arca.domain.models import PruneBody
from arca.domain.publishing import PublishBody
from arca.domain.receipts import Answer, Seal
from arca.observability import metrics

reads = Router()
writes = Router()

Since = Annotated[
    AwareDatetime | None, AfterValidator(in_utc), Query(description="ISO 8601 time: versions created after it")
]
Until = Annotated[
    AwareDatetime | None, AfterValidator(in_utc), Query(description="ISO 8601 time: versions created before it")
]


@reads.get("/artifacts/<name>/versions", responses=answers(200, 400, 404, 503), tags=["reads"])
def list_versions(
    name: Name,
    reading: ReadingService,
    searching: SearchingService,
    limit: Limit = 100,
    next_token: NextToken = None,
    order: Annotated[Literal["asc", "desc"], Query(description="by version number")] = "desc",
    include_deleted: Annotated[bool, Query(description="list soft-deleted versions too")] = False,
    tag: TagFilter = None,
    sha256: Sha256Filter = None,
    created_after: Since = None,
    created_before: Until = None,
) -> VersionPage:
    """Versions, newest first by default; the filters combine with AND."""
    return reading.follow(
        name,
        lambda n: searching.list_versions(
            n,
            limit=limit,
            token=next_token,
            order=order,
            include_deleted=include_deleted,
            tags=tag,
            sha256=sha256,
            created_after=created_after,
            created_before=created_before,
        ),
    )


@reads.get("/artifacts/<name>/versions/<version>", responses=answers(200, 400, 404, 503), tags=["reads"])
def get_version(name: Name, version: VersionOrLatest, reading: ReadingService) -> Version | Latest:
    """One version, or LATEST. A version of multipart content carries `part_size`, `part_count` and `parts`."""
    return reading.follow(name, lambda n: reading.with_parts(reading.version_or_latest(n, version)))


@reads.get("/artifacts/<name>/versions/<version>/files", responses=answers(200, 400, 404, 409, 503), tags=["reads"])
def list_files(
    name: Name,
    version: VersionOrLatest,
    reading: ReadingService,
    prefix: Annotated[str, Query(max_length=1024, description="only paths that start with it")] = "",
    limit: Limit = 1000,
    next_token: NextToken = None,
) -> FilePage:
    """A tree version's files in path order (the byte order of their UTF-8); 409 for a version that is one blob."""
    return reading.follow(
        name,
        lambda n: reading.tree_files(n, version, prefix=prefix, limit=limit, token=next_token),
    )


@writes.post(
    "/artifacts/<name>/versions", responses=answers(200, 201, 400, 404, 409, 413, 415, 422, 503), tags=["publishing"]
)
def publish(
    name: Name,
    caller: Caller,
    key: Idempotent,
    publishing: PublishingService,
    body: Annotated[PublishBody | None, Body()] = None,
    idempotency_key: IdempotencyKey = None,
) -> Response[Published]:
    """Publish: an empty body snapshots LATEST; content (a blob, or a tree: `files` or `tree`) sets LATEST and
    publishes it in one step.

    201 for a new version; 200 with `deduplicated: true` when the newest version already has that content.
    """
    request = body or PublishBody()

    def write(seal: Seal | None) -> Published:
        content = request.tree_content() or request.content()
        published = publishing.publish(name, content, force=request.force, seal=seal, identity=caller)
        if not published.deduplicated:
            metrics.add_metric(name="VersionsPublished", unit="Count", value=1)
        return published

    return idempotent(key, write, _published)


def _published(published: Published) -> Answer:
    return answer(published, 200 if published.deduplicated else 201)


@writes.delete("/artifacts/<name>/versions/<version>", responses=answers(200, 400, 404, 409, 503), tags=["publishing"])
def delete_version(name: Name, version: VersionNumber, caller: Caller, removal: RemovalService) -> Version:
    """Soft-delete a version (idempotent); 409 while an alias points at it."""
    return removal.delete_version(name, version, identity=caller)


@writes.post(
    "/artifacts/<name>/versions/<version>/restore", responses=answers(200, 400, 404, 409, 503), tags=["publishing"]
)
def restore_version(name: Name, version: VersionNumber, caller: Caller, removal: RemovalService) -> Version:
    """Undo a soft delete (idempotent)."""
    return removal.restore_version(name, version, identity=caller)


@writes.post("/artifacts/<name>/prune", responses=answers(200, 400, 404, 409, 415, 422, 503), tags=["publishing"])
def prune(
    name: Name,
    body: Annotated[PruneBody, Body()],
    caller: Caller,
    key: Idempotent,
    removal: RemovalService,
    idempotency_key: IdempotencyKey = None,
) -> Response[PruneResult]:
    """Soft-delete old versions, never the newest `keep_last` and never one an alias points at; page by page."""

    def write(seal: Seal | None) -> PruneResult:
        return removal.prune(
            name,
            keep_last=body.keep_last,
            older_than_days=body.older_than_days,
            dry_run=body.dry_run,
            token=body.next_token,
            seal=seal,
            identity=caller,
        )

    return idempotent(key, write, answer)
