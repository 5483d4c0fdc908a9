"""The `rollout` function (its contract: arca.api.driver): one step of a progressive rollout, invoked by the
rollout state machine.

The state machine waits `interval_seconds`, invokes this again with the output, and stops once `done` is true.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from arca.api.driver import handle
from arca.observability import logger, traced


@logger.inject_lambda_context
def _handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return handle(event, context)


handler = traced(_handler)
