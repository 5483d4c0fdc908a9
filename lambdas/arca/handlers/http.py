"""The entry point of a function behind the API (publish, alias, resolve): one router, one app."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from arca import snapstart
from arca.api.app import build_app, invoke, resolve_http
from arca.api.routing import Router
from arca.observability import logger, metrics

Handler = Callable[[dict[str, Any], LambdaContext], Any]


def entry_point(router: Router) -> Handler:
    """The handler of one function: API Gateway events and direct invocations, with logger and metrics."""
    app = build_app(router)
    snapstart.register()  # under SnapStart: clients built before the snapshot, made new after a restore

    @logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
    @metrics.log_metrics
    def handler(event: dict[str, Any], context: LambdaContext) -> Any:
        if "operation" in event:
            return invoke(app, router, event, context)
        return resolve_http(app, event, context)

    return handler
