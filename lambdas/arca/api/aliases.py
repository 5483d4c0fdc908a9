"""Routes of the `alias` function: alias writes and rollback."""

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body

from arca import wiring
from arca.api.caller import Caller
from arca.api.idempotency import IdempotencyKey, Idempotent, answer, idempotent
from arca.api.params import AliasName, IfMatch, IfNoneMatch, Name, answers, create_only, revision_of
from arca.api.routing import Router
from arca.domain.entities import Alias, Rollout
from arca.domain.models import AliasBody, RollbackBody, RolloutBody
from arca.domain.receipts import Answer, Seal
from arca.observability import metrics
from arca.services.aliases import Placed

router = Router("alias")
JSON = "application/json"


def etag(alias: dict[str, Any]) -> dict[str, str]:
    """The ETag of an alias answer (the body as sent), live or replayed."""
    return {"ETag": f'"{alias["revision"]}"'}


def _placed(placed: Placed) -> Answer:
    return answer(placed.alias, 201 if placed.created else 200)


@router.put(
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
    if_match: IfMatch = None,
    if_none_match: IfNoneMatch = None,
    idempotency_key: IdempotencyKey = None,
) -> Response[Alias]:
    """Create (201) or move (200) an alias, optionally with a canary secondary. `ETag` is the revision."""

    def write(seal: Seal | None) -> Placed:
        placed = wiring.aliases().set(
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


@router.delete(
    "/artifacts/<name>/aliases/<alias>",
    status_code=204,
    responses=answers(204, 400, 403, 404, 412, 503),
    tags=["aliases"],
)
def delete_alias(name: Name, alias: AliasName, caller: Caller, if_match: IfMatch = None) -> Response[None]:
    """Delete an alias (kept in its history) and release its versions."""
    wiring.aliases().delete(name, alias, if_match=revision_of(if_match), identity=caller)
    metrics.add_metric(name="AliasChanges", unit="Count", value=1)
    return Response(204, None, None)


@router.post(
    "/artifacts/<name>/aliases/<alias>/rollback",
    responses=answers(200, 400, 403, 404, 409, 415, 422, 503),
    tags=["aliases"],
)
def rollback_alias(
    name: Name,
    alias: AliasName,
    caller: Caller,
    key: Idempotent,
    body: Annotated[RollbackBody | None, Body()] = None,
    idempotency_key: IdempotencyKey = None,
) -> Response[Alias]:
    """A new revision with the targets of `to_revision` (default: the one before the current)."""
    request = body or RollbackBody()

    def write(seal: Seal | None) -> Alias:
        rolled = wiring.aliases().rollback(
            name, alias, to_revision=request.to_revision, reason=request.reason, identity=caller, seal=seal
        )
        metrics.add_metric(name="AliasRollbacks", unit="Count", value=1)
        return rolled

    return idempotent(key, write, answer, etag)


# Progressive rollouts (arca.services.rollouts); their steps are run by the rollout driver.


@router.put(
    "/artifacts/<name>/aliases/<alias>/rollout",
    status_code=201,
    responses=answers(201, 400, 403, 404, 409, 415, 503),
    tags=["rollouts"],
)
def start_rollout(
    name: Name, alias: AliasName, body: Annotated[RolloutBody, Body()], caller: Caller
) -> Response[Rollout]:
    """Start a rollout: `version` as the alias's secondary at each weight in turn, then its primary. An alarm that
    does not exist is named in a `Warning` header (it counts as firing: the rollout rolls back at its first step)."""
    rollouts = wiring.rollouts()
    started = rollouts.start(name, alias, body, identity=caller)
    metrics.add_metric(name="RolloutsStarted", unit="Count", value=1)
    missing = rollouts.missing_alarms(body.alarms)
    warnings = ", ".join(
        f'199 arca "alarm {alarm} does not exist: the rollout rolls back at its first step unless it is created"'
        for alarm in missing
    )
    return Response(201, JSON, started, headers={"Warning": warnings} if warnings else None)


@router.delete(
    "/artifacts/<name>/aliases/<alias>/rollout", responses=answers(200, 400, 403, 404, 409, 503), tags=["rollouts"]
)
def abort_rollout(name: Name, alias: AliasName, caller: Caller) -> Rollout:
    """Abort the running rollout: the alias keeps its primary and loses the secondary (by the alias's
    `allowed_principals` only)."""
    return wiring.rollouts().abort(name, alias, identity=caller)


# Guarded promotion's routes are this function's too: importing them declares them on this router.
from arca.api import guards as _guards  # noqa: E402, F401
