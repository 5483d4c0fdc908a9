"""The route table, derived from the function table (arca.api.functions): read by the CDK API, the local server and
tests.

Importing it imports every router (and so the services' modules); a Lambda function imports only its own.
"""

from __future__ import annotations

from arca.api.functions import FAMILIES, SERVED, table
from arca.api.paths import Family, NoRouteError, Route, family_functions
from arca.api.paths import canonical_path as _canonical_path
from arca.api.paths import match as _match

ROUTES: tuple[Route, ...] = table()
FUNCTIONS: tuple[str, ...] = tuple(SERVED)
# Each family's methods and the function each goes to (API Gateway's greedy resource, one integration a method).
FAMILY_METHODS: dict[Family, dict[str, str]] = family_functions(ROUTES)


def match(method: str, path: str) -> tuple[Route, dict[str, str]]:
    """The route API Gateway would pick for a request path (decoded); raises NoRouteError."""
    return _match(ROUTES, method, path)


def canonical_path(path: str) -> str:
    """The path as a function routes it: each parameter of several segments folded into one."""
    return _canonical_path(path, ROUTES)


__all__ = [
    "FAMILIES",
    "FAMILY_METHODS",
    "FUNCTIONS",
    "ROUTES",
    "Family",
    "NoRouteError",
    "Route",
    "canonical_path",
    "match",
]
