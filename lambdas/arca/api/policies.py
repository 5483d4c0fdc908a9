"""Alias policies, the rules every write of an alias must pass: reading one (resolve function); setting and removing
one (alias function)."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body

from arca.api.caller import Caller
from arca.api.dependencies import GuardsService
from arca.api.params import AliasName, Name, answers
from arca.api.routing import Router
from arca.domain.guards import AliasPolicy, PolicyBody

reads = Router()
writes = Router()


@reads.get("/artifacts/<name>/aliases/<alias>/policy", responses=answers(200, 400, 404, 503), tags=["policies"])
def get_policy(name: Name, alias: AliasName, guards: GuardsService) -> AliasPolicy:
    """The alias's policy (404 when it has none)."""
    return guards.policy(name, alias)


@writes.put(
    "/artifacts/<name>/aliases/<alias>/policy", responses=answers(200, 400, 403, 404, 409, 415, 503), tags=["policies"]
)
def put_policy(
    name: Name, alias: AliasName, body: Annotated[PolicyBody, Body()], caller: Caller, guards: GuardsService
) -> AliasPolicy:
    """Set the alias's policy (every rule a write of the alias must pass); once set, only its principals change it."""
    found = guards.set_policy(name, alias, body, identity=caller)
    assert found is not None
    return found


@writes.delete(
    "/artifacts/<name>/aliases/<alias>/policy",
    status_code=204,
    responses=answers(204, 400, 403, 404, 409, 503),
    tags=["policies"],
)
def delete_policy(name: Name, alias: AliasName, caller: Caller, guards: GuardsService) -> Response[None]:
    """Remove the alias's policy."""
    guards.set_policy(name, alias, None, identity=caller)
    return Response(204, None, None)
