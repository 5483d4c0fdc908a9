"""The `verify` function's contract: the background verification's event in (arca.domain.verification.VerifyEvent),
the event of the next step out.

The event is parsed here, once, with Powertools' parser: a malformed one raises its ValidationError, naming the
fields, before anything is read or written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.typing import LambdaContext

from arca.api import dependencies
from arca.domain.verification import VerifyEvent
from arca.observability import logger

if TYPE_CHECKING:
    from arca.services.verification import Verification

# Seconds of the invocation kept back: the progress is saved and the answer sent before the function's timeout.
RESERVE_SECONDS = 30.0


def handle(
    event: dict[str, Any],
    context: LambdaContext,
    verification: Callable[[], Verification] = dependencies.verification,
) -> dict[str, Any]:
    """The next step's event; `verification` provides the service (the composition root's, unless a test gives
    one)."""
    parsed = parse(event=event, model=VerifyEvent)
    progress = verification().step(
        parsed, time_left=lambda: context.get_remaining_time_in_millis() / 1000, reserve=RESERVE_SECONDS
    )
    logger.info("verification step", extra={"event": parsed.model_dump(), "progress": progress.model_dump()})
    return progress.model_dump()
