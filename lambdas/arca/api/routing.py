"""Routes as data, recorded from the declarations themselves, and the path reading that names need.

Artifact names contain `/`, and API Gateway's greedy `{proxy+}` can only end a path, so it cannot send
`…/aliases/x` and `…/versions` of the same name to different functions. Names never contain a reserved
word as a segment (arca.domain.names), so the first reserved segment ends the name: that is how a path
is read, why CDK can spell `{name}` as one to eight path parameters, and how `canonical_path` folds the
name into one Powertools parameter.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import quote

from aws_lambda_powertools.event_handler.router import APIGatewayRouter

from arca.domain.names import MAX_SEGMENTS, RESERVED_SEGMENTS

F = TypeVar("F", bound=Callable[..., Any])
_PARAM = re.compile(r"^\{(\w+)\}$")


@dataclass(frozen=True)
class Route:
    method: str
    path: str  # OpenAPI style; "{name}" stands for one to eight segments
    function: str
    operation: str
    summary: str = field(default="", compare=False)  # the first line of the declaration's docstring

    @property
    def segments(self) -> tuple[str, ...]:
        return tuple(self.path.strip("/").split("/"))

    @property
    def params(self) -> tuple[str, ...]:
        return tuple(m.group(1) for s in self.segments if (m := _PARAM.match(s)))

    def api_paths(self) -> list[str]:
        """API Gateway resource paths: `{name}` expanded to `{n1}`, `{n1}/{n2}`, … up to eight levels."""
        if "{name}" not in self.path:
            return [self.path]
        return [
            self.path.replace("{name}", "/".join(f"{{n{i}}}" for i in range(1, depth + 1)))
            for depth in range(1, MAX_SEGMENTS + 1)
        ]

    def fill(self, params: dict[str, str]) -> str:
        """The request path for these parameter values (names with plain slashes)."""
        return "/" + "/".join(params[m.group(1)] if (m := _PARAM.match(s)) else s for s in self.segments)


class Router(APIGatewayRouter):
    """A Powertools router for one Lambda function that also records each declaration as a Route.

    The records are the route table (arca.routes): the CDK API, the local server and direct invocation
    read them, so a route exists exactly where it is declared.
    """

    def __init__(self, function: str) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.function = function
        self.routes: list[Route] = []

    def route(self, rule: str, method: Any, *args: Any, **kwargs: Any) -> Callable[[F], F]:
        register = super().route(rule, method, *args, **kwargs)
        path = re.sub(r"<(\w+)>", r"{\1}", rule)

        def record(func: F) -> F:
            for verb in (method,) if isinstance(method, str) else method:
                summary = (func.__doc__ or "").strip().split("\n")[0]
                self.routes.append(Route(verb.upper(), path, self.function, func.__name__, summary))
            return register(func)

        return record


class NoRouteError(LookupError):
    """No route has this path (`allowed` is empty) or none has this method (`allowed` lists methods).

    `reserved` is set when the path matches no route, but would match one with this method had a reserved
    word been part of the name (`PUT /artifacts/team/latest/app/latest`): the client wrote a name with a
    reserved segment, which is bad input (400 naming the word), not a missing route.
    """

    def __init__(self, path: str, allowed: tuple[str, ...] = (), reserved: str | None = None) -> None:
        super().__init__(path)
        self.path = path
        self.allowed = allowed
        self.reserved = reserved


def split_name(path: str) -> tuple[str | None, list[str]]:
    """(name, segments with the name as `{name}`) for `/artifacts/<name>/…`; name None elsewhere.

    Empty segments stay: `a//b` is a name the grammar refuses, never silently `a/b`.
    """
    segments = path.split("/")[1:]
    if len(segments) < 2 or segments[0] != "artifacts":
        return None, segments
    rest = segments[1:]
    end = next((i for i, segment in enumerate(rest) if segment in RESERVED_SEGMENTS), len(rest))
    if end == 0:
        return None, segments
    return "/".join(rest[:end]), ["artifacts", "{name}", *rest[end:]]


def canonical_path(path: str) -> str:
    """The path with the name %2F-encoded, so that it is one Powertools path parameter."""
    name, segments = split_name(path)
    if name is None:
        return path
    return "/" + "/".join(quote(name, safe="") if s == "{name}" else s for s in segments)


def match(routes: Iterable[Route], method: str, path: str) -> tuple[Route, dict[str, str]]:
    """The route for a request path (decoded, names with plain slashes), as API Gateway would pick it.

    Raises NoRouteError, listing the methods the path has when only the method is wrong, and naming the
    reserved word when the path matches only with that word read as part of the name.
    """
    routes = tuple(routes)
    name, segments = split_name(path)
    segments = [s for s in segments if s] if name is None else segments[:2] + [s for s in segments[2:] if s]
    found, allowed = _find(routes, method, segments, name)
    if found is not None:
        return found
    # A path that exists with other methods is a 405 as read; only a path that matches nothing is re-read.
    raise NoRouteError(path, tuple(allowed), None if allowed else _reserved_in_name(routes, method, path))


def _find(
    routes: tuple[Route, ...], method: str, segments: list[str], name: str | None
) -> tuple[tuple[Route, dict[str, str]] | None, list[str]]:
    allowed: list[str] = []
    for route in routes:
        if len(route.segments) != len(segments):
            continue
        params: dict[str, str] = {}
        for pattern, actual in zip(route.segments, segments, strict=True):
            found = _PARAM.match(pattern)
            if found is None and pattern != actual:
                break
            if pattern == "{name}" and actual != "{name}":
                break
            if found is not None:
                params[found.group(1)] = name if pattern == "{name}" and name is not None else actual
        else:
            if route.method == method.upper():
                return (route, params), allowed
            allowed.append(route.method)
    return None, allowed


def _reserved_in_name(routes: tuple[Route, ...], method: str, path: str) -> str | None:
    """The reserved word that ends the name as read, if the path matches a route with this method when the
    name is read to a later reserved word instead.

    Only to a later reserved word: a path that merely ends in unknown segments (`…/events` where no such route
    is deployed) stays a 404, so clients can probe for routes.
    """
    segments = path.split("/")[1:]
    if len(segments) < 2 or segments[0] != "artifacts":
        return None
    rest = segments[1:]
    reserved = [i for i, segment in enumerate(rest) if segment in RESERVED_SEGMENTS]
    if not reserved:
        return None
    for end in reserved[1:]:
        suffix = [s for s in rest[end:] if s]
        if _find(routes, method, ["artifacts", "{name}", *suffix], "/".join(rest[:end]))[0] is not None:
            return rest[reserved[0]]
    return None
