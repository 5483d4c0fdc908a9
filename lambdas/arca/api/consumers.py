"""Consumer leases, who runs which version: listing an artifact's (resolve function); taking, renewing and releasing
one (publish function)."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query
from pydantic import BeforeValidator, WithJsonSchema

from arca.api.caller import Caller
from arca.api.dependencies import ConsumersService, ReadingService
from arca.api.errors import JSON
from arca.api.params import Limit, Name, NextToken, answers
from arca.api.routing import Router
from arca.domain.consumers import CONSUMER_PATTERN, validate_consumer
from arca.domain.entities import ConsumerList, Lease
from arca.domain.models import LeaseBody

reads = Router()
writes = Router()

Consumer = Annotated[
    str,
    BeforeValidator(validate_consumer),
    WithJsonSchema({"type": "string", "pattern": CONSUMER_PATTERN}),
    Path(description="the consumer's id, e.g. `ecs:prod.payments` or `lambda:us-east-1:checkout`"),
]
VersionFilter = Annotated[int | None, Query(ge=1, le=999_999, description="only the leases on this version")]


@reads.get("/artifacts/<name>/consumers", responses=answers(200, 400, 404, 503), tags=["consumers"])
def list_consumers(
    name: Name,
    consumers: ConsumersService,
    reading: ReadingService,
    version: VersionFilter = None,
    limit: Limit = 100,
    next_token: NextToken = None,
) -> ConsumerList:
    """The artifact's live leases in consumer order (a lapsed lease is never listed); `version` filters."""
    return reading.follow(name, lambda n: consumers.leases(n, version=version, limit=limit, token=next_token))


@writes.put(
    "/artifacts/<name>/consumers/<consumer>", responses=answers(200, 400, 404, 409, 415, 503), tags=["consumers"]
)
def put_consumer(
    name: Name, consumer: Consumer, body: Annotated[LeaseBody, Body()], caller: Caller, consumers: ConsumersService
) -> Response[Lease]:
    """Take or renew `consumer`'s lease on a live version: it runs that version until `expires_at`. A renewal of
    the same version and labels is one write and announces nothing; a new lease, another version or other labels
    is announced as `consumer.updated`. Omitted `labels` keep the lease's."""
    lease = consumers.lease(
        name, consumer, body.version, ttl_seconds=body.ttl_seconds, labels=body.labels, identity=caller
    )
    return Response(200, JSON, lease)


@writes.delete(
    "/artifacts/<name>/consumers/<consumer>",
    status_code=204,
    responses=answers(204, 400, 404, 409, 503),
    tags=["consumers"],
)
def delete_consumer(name: Name, consumer: Consumer, caller: Caller, consumers: ConsumersService) -> Response[None]:
    """Release the lease (none: nothing to do); a live lease's release is announced as `consumer.released`."""
    consumers.release(name, consumer, identity=caller)
    return Response(204, None, None)
