"""Lambda entry points: `arca.handlers.<function>.handler` for publish, alias and resolve."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from arca.api import OPERATIONS
from arca.http import Function
from arca.observability import logger, metrics, tracer


def entry_point(name: str) -> Callable[[dict[str, Any], LambdaContext], Any]:
    """The handler of one function, with the Powertools logger, tracer and metrics around it."""
    function = Function(name, OPERATIONS)

    @logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
    @tracer.capture_lambda_handler
    @metrics.log_metrics
    def handler(event: dict[str, Any], context: LambdaContext) -> Any:
        return function.handle(event, context)

    return handler
