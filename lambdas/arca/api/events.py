"""An artifact's events, in commit order (resolve function)."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Query

from arca.api.dependencies import EventsService, ReadingService
from arca.api.params import Limit, Name, NextToken, answers
from arca.api.routing import Router
from arca.domain.events import ID_PATTERN, EventPage

router = Router()

After = Annotated[str | None, Query(pattern=ID_PATTERN, description="an event id: the events committed after it")]


@router.get("/artifacts/<name>/events", responses=answers(200, 400, 404, 503), tags=["reads"])
def list_events(
    name: Name,
    reading: ReadingService,
    events: EventsService,
    after: After = None,
    limit: Limit = 100,
    next_token: NextToken = None,
) -> EventPage:
    """The artifact's events, oldest first, each once: poll with `after` = the last id seen."""
    return reading.follow(name, lambda n: events.page(n, after=after, limit=limit, token=next_token))
