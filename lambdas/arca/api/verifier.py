"""The `verify` function's contract: the background verification's event in (arca.domain.verification.VerifyEvent),
the event of the next step out.

The event is parsed here, once, with Powertools' parser: a malformed one raises its ValidationError, naming the
fields, before anything is read or written.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from arca import wiring
from arca.domain.verification import VerifyEvent
from arca.observability import logger

# Seconds of the invocation kept back: the progress is saved and the answer sent before the function's timeout.
RESERVE_SECONDS = 30.0


@event_parser(model=VerifyEvent)
def handle(event: VerifyEvent, context: LambdaContext) -> dict[str, Any]:
    progress = wiring.verification().step(
        event, time_left=lambda: context.get_remaining_time_in_millis() / 1000, reserve=RESERVE_SECONDS
    )
    logger.info("verification step", extra={"event": event.model_dump(), "progress": progress.model_dump()})
    return progress.model_dump()
