"""The `rollout` function's contract: the rollout driver's event in (arca.domain.driver.DriverEvent), the event
of the next step out.

The event is parsed here, once, with Powertools' parser: a malformed one raises its ValidationError, naming the
fields, before anything is read or written.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from arca import wiring
from arca.domain.driver import DriverEvent
from arca.observability import logger


@event_parser(model=DriverEvent)
def handle(event: DriverEvent, context: LambdaContext) -> dict[str, Any]:
    progress = wiring.rollouts().drive(event).model_dump()
    logger.info("rollout step", extra={"event": event.model_dump(), "progress": progress})
    return progress
