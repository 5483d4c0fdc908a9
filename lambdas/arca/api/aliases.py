"""Aliases: listing and reading them and their history (resolve function); setting, deleting and rolling them back
(alias function)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body

from arca.api.caller import Caller
from arca.api.dependencies import AliasesService, ReadingService
from arca.api.errors import JSON
from arca.api.idempotency import IdempotencyKey, Idempotent, answer, idempotent
from arca.api.params import AliasName, IfMatch, IfNoneMatch, Limit, Name, NextToken, answers, create_only, revision_of
from arca.api.routing import Router
from arca.domain.entities import Alias, AliasList, HistoryPage
from arca.domain.models import AliasBody, RollbackBody
from arca.domain.receipts import Answer, Seal
from arca.observability import metrics

if TYPE_CHECKING:
    from arca.services.aliases import Placed

reads = Router()
writes = Router()


def etag(alias: dict[str, Any]) -> dict[str, str]:
    """The ETag of an alias answer (the body as sent), live or replayed."""
    return {"ETag": f'"{alias["revision"]}"'}


@reads.get("/artifacts/<name>/aliases", responses=answers(200, 400, 404, 503), tags=["reads"])
def list_aliases(name: Name, reading: ReadingService, limit: Limit = 100, next_token: NextToken = None) -> AliasList:
    """The artifact's aliases, in name order."""
    return reading.follow(name, lambda n: reading.list_aliases(n, limit=limit, token=next_token))


@reads.get("/artifacts/<name>/aliases/<alias>", responses=answers(200, 400, 404, 503), tags=["reads"])
def get_alias(name: Name, alias: AliasName, reading: ReadingService) -> Response[Alias]:
    """One alias; `ETag` is its revision."""
    found = reading.follow(name, lambda n: reading.live_alias(n, alias).entity())
    return Response(200, JSON, found, headers={"ETag": f'"{found.revision}"'})


@reads.get("/artifacts/<name>/aliases/<alias>/history", responses=answers(200, 400, 404, 503), tags=["reads"])
def alias_history(
    name: Name, alias: AliasName, reading: ReadingService, limit: Limit = 100, next_token: NextToken = None
) -> HistoryPage:
    """The alias's revisions, newest first."""
    return reading.follow(name, lambda n: reading.history(n, alias, limit=limit, token=next_token))


def _placed(placed: Placed) -> Answer:
    return answer(placed.alias, 201 if placed.created else 200)


@writes.put(
    "/artifacts/<name>/aliases/<alias>",
    responses=answers(200, 201, 400, 403, 404, 409, 412, 415, 422, 503),
    tags=["aliases"],
)
def set_alias(
    name: Name,
    alias: AliasName,
    body: Annotated[AliasBody, Body()],
    caller: Caller,
    key: Idempotent,
    aliases: AliasesService,
    if_match: IfMatch = None,
    if_none_match: IfNoneMatch = None,
    idempotency_key: IdempotencyKey = None,
) -> Response[Alias]:
    """Create (201) or move (200) an alias, optionally with a canary secondary. `ETag` is the revision."""

    def write(seal: Seal | None) -> Placed:
        placed = aliases.set(
            name,
            alias,
            body,
            if_match=revision_of(if_match),
            create_only=create_only(if_none_match),
            identity=caller,
            seal=seal,
        )
        metrics.add_metric(name="AliasChanges", unit="Count", value=1)
        return placed

    return idempotent(key, write, _placed, etag)


@writes.delete(
    "/artifacts/<name>/aliases/<alias>",
    status_code=204,
    responses=answers(204, 400, 403, 404, 412, 503),
    tags=["aliases"],
)
def delete_alias(
    name: Name, alias: AliasName, caller: Caller, aliases: AliasesService, if_match: IfMatch = None
) -> Response[None]:
    """Delete an alias (kept in its history) and release its versions."""
    aliases.delete(name, alias, if_match=revision_of(if_match), identity=caller)
    metrics.add_metric(name="AliasChanges", unit="Count", value=1)
    return Response(204, None, None)


@writes.post(
    "/artifacts/<name>/aliases/<alias>/rollback",
    responses=answers(200, 400, 403, 404, 409, 415, 422, 503),
    tags=["aliases"],
)
def rollback_alias(
    name: Name,
    alias: AliasName,
    caller: Caller,
    key: Idempotent,
    aliases: AliasesService,
    body: Annotated[RollbackBody | None, Body()] = None,
    idempotency_key: IdempotencyKey = None,
) -> Response[Alias]:
    """A new revision with the targets of `to_revision` (default: the one before the current)."""
    request = body or RollbackBody()

    def write(seal: Seal | None) -> Alias:
        rolled = aliases.rollback(
            name, alias, to_revision=request.to_revision, reason=request.reason, identity=caller, seal=seal
        )
        metrics.add_metric(name="AliasRollbacks", unit="Count", value=1)
        return rolled

    return idempotent(key, write, answer, etag)
