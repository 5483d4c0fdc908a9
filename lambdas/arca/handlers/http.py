"""The entry point of a function behind the API (publish, alias, resolve): its routers, one app."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from aws_lambda_powertools.event_handler import APIGatewayRestResolver
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from arca import snapstart
from arca.api.app import build_app, invoke, resolve_http
from arca.api.functions import EAGER, SERVED, load, routes
from arca.api.routing import NoRouteError, Route, match
from arca.observability import logger, metrics

Handler = Callable[[dict[str, Any], LambdaContext], Any]


class EntryPoint:
    """The handler of one function: API Gateway events and direct invocations, with logger and metrics.

    `app` is the function's Powertools resolver (tests override its dependencies through `app.dependency_overrides`).
    It starts with the function's eager routers (arca.api.functions.EAGER) and takes in the others on the first
    request none of those serves.
    """

    __name__ = "handler"  # what Powertools' Tracer names the handler's subsegment after

    def __init__(self, function: str) -> None:
        self.function = function
        self.routes: tuple[Route, ...] = ()
        self.operations: dict[tuple[str, str], str] = {}
        self.app: APIGatewayRestResolver = build_app(self.operations)
        self._pending = list(SERVED[function])
        self._include(EAGER.get(function, SERVED[function]))
        self._handle = logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)(
            metrics.log_metrics(self._serve)
        )

    def _include(self, entries: tuple[str, ...]) -> None:
        routers = load(entries)
        for router in routers:
            self.app.include_router(router)
        self.routes += routes(self.function, routers)
        self.operations.update({(r.method, r.path): r.operation for r in self.routes})
        self._pending = [entry for entry in self._pending if entry not in entries]

    def load_all(self) -> None:
        """Take in every router of the function now (before a SnapStart snapshot, for a direct invocation)."""
        if self._pending:
            self._include(tuple(self._pending))

    def _serves(self, event: dict[str, Any]) -> bool:
        try:
            match(self.routes, str(event.get("httpMethod") or ""), unquote(str(event.get("path") or "/")))
        except NoRouteError:
            return False
        return True

    def _serve(self, event: dict[str, Any], context: LambdaContext) -> Any:
        if "operation" in event:
            self.load_all()
            return invoke(self.app, self.function, self.routes, event, context)
        if self._pending and not self._serves(event):
            self.load_all()
        return resolve_http(self.app, self.routes, event, context)

    def __call__(self, event: dict[str, Any], context: LambdaContext) -> Any:
        return self._handle(event, context)


def entry_point(function: str) -> EntryPoint:
    """The handler of `function` (a name of arca.api.functions.SERVED)."""
    handler = EntryPoint(function)
    # Under SnapStart: every router and the clients built before the snapshot, the clients made new after a restore.
    snapstart.register(prepare=handler.load_all)
    return handler
