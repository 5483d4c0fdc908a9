"""The one table from Lambda function to the routers it serves, and the route families API Gateway hands over whole.

Each resource has its module in `arca.api` (`versions`, `aliases`, …) with one Powertools `Router` per function
that serves some of its routes (`reads`, `writes`, or `router` when one function serves them all). A function's
app includes exactly its routers (`include_router`), imported when the function starts: a function loads only its
own routes and the services they name. The route table (`arca.routes`) is this table, bound; the CDK API, the
local server and direct invocation read it.
"""

from __future__ import annotations

from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING

from arca.api.paths import Declared, Family, Route, bind, family_functions

if TYPE_CHECKING:
    from arca.api.routing import Router

# function -> its routers, as `<module of arca.api>.<router>`.
SERVED: dict[str, tuple[str, ...]] = {
    "publish": (
        "uploads.router",
        "latest.router",
        "versions.writes",
        "artifacts.writes",
        "tags.router",
        "links.router",
        "attestations.writes",
        "retention.router",
        "consumers.writes",
        "oci.writes",
    ),
    "alias": (
        "aliases.writes",
        "rollouts.writes",
        "policies.writes",
        "promotions.writes",
    ),
    "resolve": (
        "resolve.router",
        "resolve.files",
        "health.router",
        "openapi.router",
        "artifacts.reads",
        "search.router",
        "versions.reads",
        "aliases.reads",
        "rollouts.reads",
        "policies.reads",
        "promotions.reads",
        "events.router",
        "attestations.reads",
        "consumers.reads",
        "oci.reads",
        "hf.router",
    ),
}

# The routes a function answers itself, before its Powertools app exists (arca.api.hot): (method, path, operation),
# each declared on a router of the function too (a test holds them equal), which answers every other request. The
# resolve function's cold start then imports neither pydantic nor Powertools' event handler (decision 117); the app,
# with every router, is built on the first request the hot routes do not serve (and before a SnapStart snapshot).
HOT: dict[str, tuple[tuple[str, str, str], ...]] = {
    "resolve": (
        ("GET", "/artifacts/{name}/resolve/{ref}", "resolve"),
        ("GET", "/artifacts/{name}/resolve/{ref}/content", "resolve_content"),
    )
}

_NAME = "/artifacts/{name}"
# Route families: below each prefix one greedy resource per method (arca.api.routing.Family), so that a route added
# there costs API Gateway no resource. Below a reserved word of a name, each method must have one function.
FAMILIES: tuple[Family, ...] = (
    Family(f"{_NAME}/versions"),
    Family(f"{_NAME}/aliases"),
    # A tree's file: `…/resolve/{ref}/files/{path}`, the path of any number of segments.
    Family(f"{_NAME}/resolve", spans=(("path", 1, None),)),
    Family(f"{_NAME}/uploads"),
    Family(f"{_NAME}/retention"),
    Family(f"{_NAME}/consumers"),
    # OCI Distribution: a repository (an artifact name) is one to eight segments, read against the route's shape.
    Family("/v2", spans=(("name", 1, 8),)),
    # Hugging Face: a repo is one or two segments; a file's path has any number, and so has a revision whose `%2F`
    # was decoded on the way (`refs/pr/1`): the route only picks the function, the protocol reads the path again.
    Family("/hf", spans=(("repo", 1, 2), ("revision", 1, None), ("path", 1, None), ("filename", 1, None))),
)


def hot_routes(function: str) -> tuple[Route, ...]:
    """The routes `function` answers before its app is built (HOT), bound to their families; no router imported."""
    declared = [Declared(method, path, operation, "", False) for method, path, operation in HOT.get(function, ())]
    return bind(function, [_Declarations(declared)], FAMILIES)


class _Declarations:
    def __init__(self, declared: list[Declared]) -> None:
        self.declared = declared


def load(entries: tuple[str, ...]) -> tuple[Router, ...]:
    """The routers named (`<module>.<router>` of arca.api), imported now."""
    found = []
    for entry in entries:
        module, attribute = entry.rsplit(".", 1)
        found.append(getattr(import_module(f"arca.api.{module}"), attribute))
    return tuple(found)


def routers(function: str) -> tuple[Router, ...]:
    """The routers `function` serves, imported now."""
    return load(SERVED[function])


def routes(function: str, served: tuple[Router, ...] | None = None) -> tuple[Route, ...]:
    """The routes of one function (of `served`, some of its routers, when given; imports its routers only)."""
    return bind(function, routers(function) if served is None else served, FAMILIES)


@cache
def table() -> tuple[Route, ...]:
    """Every route of every function. Imports every router: read by the CDK API, local mode, the OpenAPI document,
    and a function's 404 and 405 answers (which name the methods another function serves)."""
    found = tuple(route for function in SERVED for route in routes(function))
    family_functions(found)  # one function per method of each family, or ValueError
    return found
