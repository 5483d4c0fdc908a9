"""The `retention` function (its contract: arca.api.sweep): the scheduled sweep that applies every artifact's
retention policy."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from arca.api.sweep import handle
from arca.observability import logger, metrics, traced


@logger.inject_lambda_context
@metrics.log_metrics
def _handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return handle(event, context)


handler = traced(_handler)
