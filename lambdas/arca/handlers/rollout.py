"""The `rollout` function: one step of a progressive rollout, invoked by the rollout state machine.

Input and output are the driver event (arca.domain.driver.DriverEvent), parsed here with Powertools' parser:
a malformed one raises its ValidationError, naming the fields, before anything is read or written. The state
machine waits `interval_seconds`, invokes this again with the output, and stops once `done` is true.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from arca import wiring
from arca.domain.driver import DriverEvent
from arca.observability import logger, traced


@logger.inject_lambda_context
@event_parser(model=DriverEvent)
def _handler(event: DriverEvent, context: LambdaContext) -> dict[str, Any]:
    progress = wiring.rollouts().drive(event).model_dump()
    logger.info("rollout step", extra={"event": event.model_dump(), "progress": progress})
    return progress


handler = traced(_handler)
