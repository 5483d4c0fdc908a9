"""The route table, derived from the routers' declarations: read by the CDK API, the local server and tests.

Importing it imports every router (and so the services' modules); a Lambda function imports only its own.
"""

from __future__ import annotations

from arca.api.openapi import ROUTERS
from arca.api.routing import NoRouteError, Route, canonical_path
from arca.api.routing import match as _match

ROUTES: tuple[Route, ...] = tuple(route for router in ROUTERS for route in router.routes)
FUNCTIONS: tuple[str, ...] = tuple(router.function for router in ROUTERS)


def match(method: str, path: str) -> tuple[Route, dict[str, str]]:
    """The route API Gateway would pick for a request path (decoded); raises NoRouteError."""
    return _match(ROUTES, method, path)


__all__ = ["FUNCTIONS", "ROUTES", "NoRouteError", "Route", "canonical_path", "match"]
