"""The `events` function (its contract: arca.api.stream): the table's stream, filtered to event items and purge
tombstones, onto the stage's EventBridge bus."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from arca.api.stream import handle
from arca.observability import logger, metrics


@logger.inject_lambda_context
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> Any:
    return handle(event, context)
