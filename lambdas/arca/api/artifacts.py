"""Artifacts: the registry's names and one artifact's summary (resolve function); purging one (publish function)."""

from typing import Annotated, Any, Literal

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Query

from arca.api.caller import Caller
from arca.api.dependencies import PublishingService, ReadingService, RemovalService, SearchingService
from arca.api.errors import JSON
from arca.api.idempotency import IdempotencyKey, Idempotent, answer, idempotent
from arca.api.params import Limit, Name, NextToken, TagFilter, answers
from arca.api.routing import Router
from arca.api.schemas import PurgeProgress
from arca.domain.consumers import SHOWN_CONSUMERS
from arca.domain.entities import ArtifactPage, Summary
from arca.domain.errors import ValidationError
from arca.domain.models import ArtifactCreate
from arca.domain.receipts import Seal
from arca.services.retry import Budget
from arca.settings import settings

reads = Router()
writes = Router()


@reads.get("/artifacts", responses=answers(200, 400, 503), tags=["reads"])
def list_artifacts(
    reading: ReadingService,
    searching: SearchingService,
    prefix: Annotated[str, Query(max_length=256, description="names that start with this")] = "",
    delimiter: Annotated[Literal["/"] | None, Query(description="`/`: fold deeper names into `prefixes`")] = None,
    limit: Limit = 100,
    next_token: NextToken = None,
    tag: TagFilter = None,
) -> ArtifactPage:
    """Artifact names under a prefix, in name order; with `tag`, the artifacts whose own tags hold it."""
    if tag:
        if prefix or delimiter:
            raise ValidationError("tag cannot be combined with prefix or delimiter", field="tag")
        return searching.search_artifacts(tag, limit=limit, token=next_token)
    return reading.list_artifacts(prefix=prefix, delimiter=delimiter, limit=limit, token=next_token)


@reads.get("/artifacts/<name>", responses=answers(200, 400, 404, 503), tags=["reads"])
def get_artifact(name: Name, reading: ReadingService) -> Summary:
    """Summary: LATEST, the newest version number, counts."""
    return reading.summary_through(name)


@writes.put("/artifacts/<name>", responses=answers(201, 400, 409, 415, 422, 503), tags=["publishing"])
def create_artifact(
    name: Name,
    caller: Caller,
    key: Idempotent,
    publishing: PublishingService,
    body: Annotated[ArtifactCreate | None, Body()] = None,
    idempotency_key: IdempotencyKey = None,
) -> Response[Summary]:
    """Create the artifact with no version yet, with its description and tags (201); 409 naming `name` when it
    exists (a purged name can be created again: its version numbers go on)."""
    request = body or ArtifactCreate()

    def write(seal: Seal | None) -> Summary:
        return publishing.create_artifact(
            name, description=request.description, tags=request.tags, seal=seal, identity=caller
        )

    return idempotent(key, write, lambda summary: answer(summary, 201))


# The answer of the purge request that removed live consumer leases (a forced purge's) names them.
RELEASED_HEADERS = {
    "Arca-Released-Leases": {
        "description": "how many live consumer leases this request released (absent when none)",
        "schema": {"type": "integer"},
    },
    "Arca-Released-Consumers": {
        "description": "the first 20 of their consumers, sorted, comma-separated",
        "schema": {"type": "string"},
    },
}


def _purge_answers() -> dict[int, Any]:
    documented = answers(202, 204, 400, 404, 409, 503)
    for status in (202, 204):
        documented[status]["headers"] = RELEASED_HEADERS
    return documented


@writes.delete("/artifacts/<name>", status_code=204, responses=_purge_answers(), tags=["publishing"])
def purge(
    name: Name,
    removal: RemovalService,
    force: Annotated[bool, Query(description="purge even while aliases, links or live consumer leases exist")] = False,
) -> Response[PurgeProgress | None]:
    """Purge the artifact: every item and every object. Version numbers are never reused.

    204 when done, and again for a repeat after it finished (404 only for a name that never existed). 202
    when the work did not fit in one request (a batch-call budget, and 20 s kept in reserve of the
    function's time): send the same DELETE again to continue; it is idempotent. The answer that removed live
    consumer leases (a forced purge's) says so: `Arca-Released-Leases` counts them and `Arca-Released-Consumers`
    names the first 20 consumers, comma-separated.
    """
    context = writes.lambda_context
    budget = Budget(calls=settings().purge_max_calls, time_left=lambda: context.get_remaining_time_in_millis() / 1000)
    released: list[str] = []
    done = removal.purge(name, force=force, budget=budget, released=released)
    headers = released_headers(released)
    if done:
        return Response(204, None, None, headers=headers)
    return Response(202, JSON, PurgeProgress(name=name), headers=headers)


def released_headers(released: list[str]) -> dict[str, str] | None:
    """The headers naming the consumers whose leases a purge removed (None when it removed none)."""
    if not released:
        return None
    shown = sorted(set(released))
    return {
        "Arca-Released-Leases": str(len(shown)),
        "Arca-Released-Consumers": ",".join(shown[:SHOWN_CONSUMERS]),
    }
