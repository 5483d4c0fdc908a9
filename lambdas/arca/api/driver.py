"""The `rollout` function's contract: the rollout driver's event in (arca.domain.driver.DriverEvent), the event
of the next step out.

The event is parsed here, once, with Powertools' parser: a malformed one raises its ValidationError, naming the
fields, before anything is read or written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.typing import LambdaContext

from arca.api import dependencies
from arca.domain.driver import DriverEvent
from arca.observability import logger

if TYPE_CHECKING:
    from arca.services.rollouts import Rollouts


def handle(
    event: dict[str, Any], context: LambdaContext, rollouts: Callable[[], Rollouts] = dependencies.rollouts
) -> dict[str, Any]:
    """The next step's event; `rollouts` provides the service (the composition root's, unless a test gives one)."""
    parsed = parse(event=event, model=DriverEvent)
    progress = rollouts().drive(parsed).model_dump()
    logger.info("rollout step", extra={"event": parsed.model_dump(), "progress": progress})
    return progress
