"""The entry point of a function behind the API (publish, alias, resolve): its routers, one app."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from arca import snapstart
from arca.api import hot
from arca.api.functions import hot_routes, routers, routes
from arca.observability import logger, metrics

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler import APIGatewayRestResolver

    from arca.api.paths import Route

Handler = Callable[[dict[str, Any], LambdaContext], Any]


class EntryPoint:
    """The handler of one function: API Gateway events and direct invocations, with logger and metrics.

    `app` is the function's Powertools resolver with every router of the function (tests override its dependencies
    through `app.dependency_overrides`). A function with hot routes (arca.api.functions.HOT: the resolve function's
    resolve of an alias) answers those itself (arca.api.hot), and builds the app on the first request they do not
    serve: its cold start imports neither the app nor pydantic.
    """

    __name__ = "handler"  # what Powertools' Tracer names the handler's subsegment after

    def __init__(self, function: str) -> None:
        self.function = function
        self.hot: tuple[Route, ...] = hot_routes(function)
        self.routes: tuple[Route, ...] = self.hot
        self.operations: dict[tuple[str, str], str] = {}
        self._app: APIGatewayRestResolver | None = None
        if not self.hot:
            self.load_all()
        self._handle = logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)(
            metrics.log_metrics(self._serve)
        )

    @property
    def app(self) -> APIGatewayRestResolver:
        """The function's Powertools app, with every router (built now if it was not)."""
        if self._app is None:
            self.load_all()
        assert self._app is not None
        return self._app

    def load_all(self) -> None:
        """Build the app with every router of the function now (before a SnapStart snapshot, for a direct invocation,
        for a request no hot route serves)."""
        if self._app is not None:
            return
        from arca.api.app import build_app

        served = routers(self.function)
        self.routes = routes(self.function, served)
        self.operations.update({(r.method, r.path): r.operation for r in self.routes})
        self._app = build_app(self.operations, served)

    def _serve(self, event: dict[str, Any], context: LambdaContext) -> Any:
        from_app = "operation" in event or (self._app is not None and bool(self._app.dependency_overrides))
        answer = None if from_app or not self.hot else hot.serve(self.hot, event)
        if answer is not None:
            return answer
        from arca.api.app import invoke, resolve_http

        if "operation" in event:
            return invoke(self.app, self.function, self.routes, event, context)
        return resolve_http(self.app, self.routes, event, context)

    def __call__(self, event: dict[str, Any], context: LambdaContext) -> Any:
        return self._handle(event, context)


def entry_point(function: str) -> EntryPoint:
    """The handler of `function` (a name of arca.api.functions.SERVED)."""
    handler = EntryPoint(function)
    # Under SnapStart: every router and the clients built before the snapshot, the clients made new after a restore.
    snapstart.register(prepare=handler.load_all)
    return handler
