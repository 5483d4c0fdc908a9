"""Routes of the `alias` function: alias writes and rollback."""

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.depends import Depends
from aws_lambda_powertools.event_handler.openapi.params import Body

from arca import wiring
from arca.api.caller import identity
from arca.api.idempotency import IdempotencyKey, idempotent
from arca.api.params import AliasName, IfMatch, IfNoneMatch, Name, answers, create_only, revision_of
from arca.api.routing import Router
from arca.domain.entities import Alias, Rollout
from arca.domain.models import AliasBody, RollbackBody, RolloutBody
from arca.domain.receipts import Receipt
from arca.observability import metrics

router = Router("alias")
Caller = Annotated[str | None, Depends(identity)]
JSON = "application/json"


def with_etag(alias: Alias, status: int = 200) -> Response[Alias]:
    return Response(status, JSON, alias, headers={"ETag": f'"{alias.revision}"'})


def etag(alias: dict[str, Any]) -> dict[str, str]:
    """The ETag of a replayed alias answer."""
    return {"ETag": f'"{alias["revision"]}"'}


@router.put(
    "/artifacts/<name>/aliases/<alias>",
    responses=answers(200, 201, 400, 404, 409, 412, 415, 422, 503),
    tags=["aliases"],
)
def set_alias(
    name: Name,
    alias: AliasName,
    body: Annotated[AliasBody, Body()],
    caller: Caller,
    if_match: IfMatch = None,
    if_none_match: IfNoneMatch = None,
    idempotency_key: IdempotencyKey = None,
) -> Response[Alias]:
    """Create (201) or move (200) an alias, optionally with a canary secondary. `ETag` is the revision."""

    def run(receipt: Receipt | None) -> Response[Alias]:
        written, created = wiring.aliases().set(
            name,
            alias,
            body,
            if_match=revision_of(if_match),
            create_only=create_only(if_none_match),
            identity=caller,
            receipt=receipt,
        )
        metrics.add_metric(name="AliasChanges", unit="Count", value=1)
        return with_etag(written, 201 if created else 200)

    return idempotent(router, idempotency_key, run, etag)


@router.delete(
    "/artifacts/<name>/aliases/<alias>", status_code=204, responses=answers(204, 400, 404, 412, 503), tags=["aliases"]
)
def delete_alias(name: Name, alias: AliasName, caller: Caller, if_match: IfMatch = None) -> Response[None]:
    """Delete an alias (kept in its history) and release its versions."""
    wiring.aliases().delete(name, alias, if_match=revision_of(if_match), identity=caller)
    metrics.add_metric(name="AliasChanges", unit="Count", value=1)
    return Response(204, None, None)


@router.post(
    "/artifacts/<name>/aliases/<alias>/rollback",
    responses=answers(200, 400, 404, 409, 415, 422, 503),
    tags=["aliases"],
)
def rollback_alias(
    name: Name,
    alias: AliasName,
    caller: Caller,
    body: Annotated[RollbackBody | None, Body()] = None,
    idempotency_key: IdempotencyKey = None,
) -> Response[Alias]:
    """A new revision with the targets of `to_revision` (default: the one before the current)."""
    request = body or RollbackBody()

    def run(receipt: Receipt | None) -> Response[Alias]:
        rolled = wiring.aliases().rollback(
            name, alias, to_revision=request.to_revision, reason=request.reason, identity=caller, receipt=receipt
        )
        metrics.add_metric(name="AliasRollbacks", unit="Count", value=1)
        return with_etag(rolled)

    return idempotent(router, idempotency_key, run, etag)


# Progressive rollouts (arca.services.rollouts); their steps are run by the rollout driver.


@router.put(
    "/artifacts/<name>/aliases/<alias>/rollout",
    status_code=201,
    responses=answers(201, 400, 404, 409, 415, 503),
    tags=["rollouts"],
)
def start_rollout(
    name: Name, alias: AliasName, body: Annotated[RolloutBody, Body()], caller: Caller
) -> Response[Rollout]:
    """Start a rollout: `version` as the alias's secondary at each weight in turn, then its primary."""
    started = wiring.rollouts().start(name, alias, body, identity=caller)
    metrics.add_metric(name="RolloutsStarted", unit="Count", value=1)
    return Response(201, JSON, started)


@router.delete(
    "/artifacts/<name>/aliases/<alias>/rollout", responses=answers(200, 400, 404, 409, 503), tags=["rollouts"]
)
def abort_rollout(name: Name, alias: AliasName, caller: Caller) -> Rollout:
    """Abort the running rollout: the alias keeps its primary and loses the secondary."""
    return wiring.rollouts().abort(name, alias, identity=caller)


# Guarded promotion's routes are this function's too: importing them declares them on this router.
from arca.api import guards as _guards  # noqa: E402, F401
