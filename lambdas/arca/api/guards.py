"""Routes of guarded promotion, served by the `alias` function (declared on its router): alias policies and
promotions with their approvals."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query

from arca import wiring
from arca.api.aliases import router
from arca.api.caller import Caller
from arca.api.params import AliasName, Limit, Name, NextToken, answers
from arca.domain.guards import AliasPolicy, DecisionBody, PolicyBody, Promotion, PromotionBody, PromotionList

JSON = "application/json"
PromotionId = Annotated[str, Path(pattern=r"^[0-9a-f]{24}$", description="a promotion's id")]
State = Annotated[str | None, Query(pattern=r"^(pending|applied|rejected|expired)$")]


@router.put(
    "/artifacts/<name>/aliases/<alias>/policy", responses=answers(200, 400, 403, 404, 409, 415, 503), tags=["policies"]
)
def put_policy(name: Name, alias: AliasName, body: Annotated[PolicyBody, Body()], caller: Caller) -> AliasPolicy:
    """Set the alias's policy (every rule a write of the alias must pass); once set, only its principals change it."""
    found = wiring.guards().set_policy(name, alias, body, identity=caller)
    assert found is not None
    return found


@router.get("/artifacts/<name>/aliases/<alias>/policy", responses=answers(200, 400, 404, 503), tags=["policies"])
def get_policy(name: Name, alias: AliasName) -> AliasPolicy:
    """The alias's policy (404 when it has none)."""
    return wiring.guards().policy(name, alias)


@router.delete(
    "/artifacts/<name>/aliases/<alias>/policy",
    status_code=204,
    responses=answers(204, 400, 403, 404, 409, 503),
    tags=["policies"],
)
def delete_policy(name: Name, alias: AliasName, caller: Caller) -> Response[None]:
    """Remove the alias's policy."""
    wiring.guards().set_policy(name, alias, None, identity=caller)
    return Response(204, None, None)


@router.post(
    "/artifacts/<name>/aliases/<alias>/promotions",
    status_code=201,
    responses=answers(201, 400, 403, 404, 409, 415, 503),
    tags=["promotions"],
)
def request_promotion(
    name: Name, alias: AliasName, body: Annotated[PromotionBody, Body()], caller: Caller
) -> Response[Promotion]:
    """Ask to move the alias to `version` (or start that rollout): applied at once without approvals to wait for."""
    return Response(201, JSON, wiring.promotions().request(name, alias, body, identity=caller))


@router.get("/artifacts/<name>/aliases/<alias>/promotions", responses=answers(200, 400, 404, 503), tags=["promotions"])
def list_promotions(
    name: Name, alias: AliasName, state: State = None, limit: Limit = 100, next_token: NextToken = None
) -> PromotionList:
    """The alias's promotions, newest first, optionally in one state."""
    return wiring.promotions().listing(name, alias, state=state, limit=limit, token=next_token)


@router.get(
    "/artifacts/<name>/aliases/<alias>/promotions/<promotion_id>",
    responses=answers(200, 400, 404, 503),
    tags=["promotions"],
)
def get_promotion(name: Name, alias: AliasName, promotion_id: PromotionId) -> Promotion:
    """One promotion."""
    return wiring.promotions().get(name, alias, promotion_id)


@router.post(
    "/artifacts/<name>/aliases/<alias>/promotions/<promotion_id>/approve",
    responses=answers(200, 400, 403, 404, 409, 415, 503),
    tags=["promotions"],
)
def approve_promotion(
    name: Name,
    alias: AliasName,
    promotion_id: PromotionId,
    caller: Caller,
    body: Annotated[DecisionBody | None, Body()] = None,
) -> Promotion:
    """Approve a pending promotion; the approval that reaches the count applies it in the same transaction."""
    reason = body.reason if body else None
    return wiring.promotions().approve(name, alias, promotion_id, identity=caller, reason=reason)


@router.post(
    "/artifacts/<name>/aliases/<alias>/promotions/<promotion_id>/reject",
    responses=answers(200, 400, 403, 404, 409, 415, 503),
    tags=["promotions"],
)
def reject_promotion(
    name: Name,
    alias: AliasName,
    promotion_id: PromotionId,
    caller: Caller,
    body: Annotated[DecisionBody | None, Body()] = None,
) -> Promotion:
    """Reject a pending promotion."""
    reason = body.reason if body else None
    return wiring.promotions().reject(name, alias, promotion_id, identity=caller, reason=reason)
