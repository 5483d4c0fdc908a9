"""Guarded promotion: an alias's promotions (resolve function); requesting, approving and rejecting one (alias
function)."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query

from arca.api.caller import Caller
from arca.api.dependencies import PromotionsService
from arca.api.errors import JSON
from arca.api.params import AliasName, Limit, Name, NextToken, answers
from arca.api.routing import Router
from arca.domain.guards import DecisionBody, Promotion, PromotionBody, PromotionList

reads = Router()
writes = Router()

PromotionId = Annotated[str, Path(pattern=r"^[0-9a-f]{24}$", description="a promotion's id")]
State = Annotated[str | None, Query(pattern=r"^(pending|applied|rejected|expired)$")]


@reads.get("/artifacts/<name>/aliases/<alias>/promotions", responses=answers(200, 400, 404, 503), tags=["promotions"])
def list_promotions(
    name: Name,
    alias: AliasName,
    promotions: PromotionsService,
    state: State = None,
    limit: Limit = 100,
    next_token: NextToken = None,
) -> PromotionList:
    """The alias's promotions, newest first, optionally in one state."""
    return promotions.listing(name, alias, state=state, limit=limit, token=next_token)


@reads.get(
    "/artifacts/<name>/aliases/<alias>/promotions/<promotion_id>",
    responses=answers(200, 400, 404, 503),
    tags=["promotions"],
)
def get_promotion(name: Name, alias: AliasName, promotion_id: PromotionId, promotions: PromotionsService) -> Promotion:
    """One promotion."""
    return promotions.get(name, alias, promotion_id)


@writes.post(
    "/artifacts/<name>/aliases/<alias>/promotions",
    status_code=201,
    responses=answers(201, 400, 403, 404, 409, 415, 503),
    tags=["promotions"],
)
def request_promotion(
    name: Name, alias: AliasName, body: Annotated[PromotionBody, Body()], caller: Caller, promotions: PromotionsService
) -> Response[Promotion]:
    """Ask to move the alias to `version` (or start that rollout): applied at once without approvals to wait for."""
    return Response(201, JSON, promotions.request(name, alias, body, identity=caller))


@writes.post(
    "/artifacts/<name>/aliases/<alias>/promotions/<promotion_id>/approve",
    responses=answers(200, 400, 403, 404, 409, 415, 503),
    tags=["promotions"],
)
def approve_promotion(
    name: Name,
    alias: AliasName,
    promotion_id: PromotionId,
    caller: Caller,
    promotions: PromotionsService,
    body: Annotated[DecisionBody | None, Body()] = None,
) -> Promotion:
    """Approve a pending promotion; the approval that reaches the count applies it in the same transaction."""
    reason = body.reason if body else None
    return promotions.approve(name, alias, promotion_id, identity=caller, reason=reason)


@writes.post(
    "/artifacts/<name>/aliases/<alias>/promotions/<promotion_id>/reject",
    responses=answers(200, 400, 403, 404, 409, 415, 503),
    tags=["promotions"],
)
def reject_promotion(
    name: Name,
    alias: AliasName,
    promotion_id: PromotionId,
    caller: Caller,
    promotions: PromotionsService,
    body: Annotated[DecisionBody | None, Body()] = None,
) -> Promotion:
    """Reject a pending promotion."""
    reason = body.reason if body else None
    return promotions.reject(name, alias, promotion_id, identity=caller, reason=reason)
