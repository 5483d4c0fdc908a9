"""The `rollout` function: one step of a progressive rollout, invoked by the rollout state machine.

Input and output are the driver event of arca.adapters.rollouts.driver_event; the state machine waits
`interval_seconds`, invokes this again with the output, and stops once `done` is true.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from arca import wiring
from arca.observability import logger, traced


@logger.inject_lambda_context
def _handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    progress = wiring.rollouts().drive(event)
    logger.info("rollout step", extra={"event": event, "progress": progress})
    return progress


handler = traced(_handler)
