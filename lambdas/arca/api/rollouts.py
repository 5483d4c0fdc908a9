"""Progressive rollouts: an alias's rollout and its state (resolve function); starting and aborting one (alias
function). Their steps are run by the rollout driver (arca.api.driver)."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body

from arca.api.caller import Caller
from arca.api.dependencies import ReadingService, RolloutsService
from arca.api.errors import JSON
from arca.api.params import AliasName, Name, answers
from arca.api.routing import Router
from arca.domain.entities import Rollout
from arca.domain.models import RolloutBody
from arca.observability import metrics

reads = Router()
writes = Router()


@reads.get("/artifacts/<name>/aliases/<alias>/rollout", responses=answers(200, 400, 404, 503), tags=["rollouts"])
def get_rollout(name: Name, alias: AliasName, reading: ReadingService, rollouts: RolloutsService) -> Rollout:
    """The alias's latest rollout and its state."""
    return reading.follow(name, lambda n: rollouts.status(n, alias))


@writes.put(
    "/artifacts/<name>/aliases/<alias>/rollout",
    status_code=201,
    responses=answers(201, 400, 403, 404, 409, 415, 503),
    tags=["rollouts"],
)
def start_rollout(
    name: Name, alias: AliasName, body: Annotated[RolloutBody, Body()], caller: Caller, rollouts: RolloutsService
) -> Response[Rollout]:
    """Start a rollout: `version` as the alias's secondary at each weight in turn, then its primary. An alarm that
    does not exist is named in a `Warning` header (it counts as firing: the rollout rolls back at its first step)."""
    started = rollouts.start(name, alias, body, identity=caller)
    metrics.add_metric(name="RolloutsStarted", unit="Count", value=1)
    warnings = ", ".join(
        f'199 arca "alarm {alarm} does not exist: the rollout rolls back at its first step unless it is created"'
        for alarm in rollouts.missing_alarms(body.alarms)
    )
    return Response(201, JSON, started, headers={"Warning": warnings} if warnings else None)


@writes.delete(
    "/artifacts/<name>/aliases/<alias>/rollout", responses=answers(200, 400, 403, 404, 409, 503), tags=["rollouts"]
)
def abort_rollout(name: Name, alias: AliasName, caller: Caller, rollouts: RolloutsService) -> Rollout:
    """Abort the running rollout: the alias keeps its primary and loses the secondary (by the alias's
    `allowed_principals` only)."""
    return rollouts.abort(name, alias, identity=caller)
