"""Routes as data, and the path reading that names need (no web framework: the resolve function's hot path reads
requests with it before Powertools is imported; the routers that record the declarations are arca.api.routing).

Artifact names contain `/`, and API Gateway's greedy `{proxy+}` can only end a path, so it cannot send
`…/aliases/x` and `…/versions` of the same name to different functions. Names never contain a reserved
word as a segment (arca.domain.names), so the first reserved segment ends the name: that is how a path
is read, why CDK spells `{name}` as one to eight path parameters, and how `canonical_path` folds the
name into one Powertools parameter.

A route family (`Family`) is the part of the API below one prefix that API Gateway hands to one greedy
`{proxy+}` resource per method, and that the function then routes itself: every route below the prefix costs
API Gateway nothing more. Below `/artifacts/{name}/<word>` the name is read as above; elsewhere (`/v2`, `/hf`)
a family names the parameters that span several segments, and a path is read against its routes' shapes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple, Protocol
from urllib.parse import quote

from arca.domain.names import MAX_SEGMENTS, RESERVED_SEGMENTS

_PARAM = re.compile(r"^\{(\w+)\}$")
NAME = "{name}"
GREEDY = "{proxy+}"


def _expand(path: str) -> list[str]:
    """API Gateway resource paths of `path`: `{name}` as `{n1}`, `{n1}/{n2}`, … up to eight levels."""
    if NAME not in path:
        return [path]
    return [
        path.replace(NAME, "/".join(f"{{n{i}}}" for i in range(1, depth + 1))) for depth in range(1, MAX_SEGMENTS + 1)
    ]


@dataclass(frozen=True)
class Family:
    """Every path below `prefix`, served by one greedy resource (`<prefix>/{proxy+}`) and routed in the function.

    `spans` are the path parameters of the family's routes that take several segments, with their bounds (None:
    no upper bound, and then as few as the path allows); below `/artifacts/{name}/…` the name is read by its
    reserved words instead.
    """

    prefix: str
    spans: tuple[tuple[str, int, int | None], ...] = ()

    @property
    def segments(self) -> tuple[str, ...]:
        return tuple(self.prefix.strip("/").split("/"))

    def api_paths(self) -> list[str]:
        """The greedy resource at each name depth (one when the prefix holds no name)."""
        return _expand(f"{self.prefix}/{GREEDY}")

    def holds(self, segments: Iterable[str]) -> bool:
        """Whether a path (its segments, the name read as `{name}`) lies strictly below the prefix."""
        found = tuple(segments)
        return len(found) > len(self.segments) and found[: len(self.segments)] == self.segments


@dataclass(frozen=True)
class Route:
    method: str
    path: str  # OpenAPI style; "{name}" stands for one to eight segments
    function: str
    operation: str
    summary: str = field(default="", compare=False)  # the first line of the declaration's docstring
    stub: bool = field(default=False, compare=False)  # a placeholder of a later feature: 501, undocumented
    family: Family | None = field(default=None, compare=False)
    # Whether the OpenAPI document lists it: not a placeholder, nor another protocol's API (the Hub's, OCI's:
    # served with that protocol's own answers, specified elsewhere).
    documented: bool = field(default=True, compare=False)

    @property
    def segments(self) -> tuple[str, ...]:
        return tuple(self.path.strip("/").split("/"))

    @property
    def foreign(self) -> bool:
        """A route of another protocol's API (the Hugging Face Hub's, OCI Distribution's): served over HTTP with
        that protocol's answers, not Arca's, so neither documented nor an operation of direct invocation."""
        return not self.documented and not self.stub

    @property
    def params(self) -> tuple[str, ...]:
        return tuple(m.group(1) for s in self.segments if (m := _PARAM.match(s)))

    def api_paths(self) -> list[str]:
        """API Gateway resource paths that serve this route: its family's greedy resource, else the route's own
        path with `{name}` expanded to `{n1}`, `{n1}/{n2}`, … up to eight levels."""
        return self.family.api_paths() if self.family is not None else _expand(self.path)

    def fill(self, params: dict[str, str]) -> str:
        """The request path for these parameter values (names with plain slashes)."""
        return "/" + "/".join(params[m.group(1)] if (m := _PARAM.match(s)) else s for s in self.segments)

    @cached_property
    def reading(self) -> re.Pattern[str] | None:
        """The path shape of a route whose parameters span several segments (its family's `spans`), else None."""
        spans = {name: (low, high) for name, low, high in (self.family.spans if self.family else ())}
        if not spans or not any(param in spans for param in self.params):
            return None
        parts = []
        for segment in self.segments:
            found = _PARAM.match(segment)
            if found is None:
                parts.append(re.escape(segment))
            elif found.group(1) in spans:
                low, high = spans[found.group(1)]
                # An unbounded span reads as few segments as the path allows: a revision of several segments
                # (`refs/pr/1`, decoded) before a file's path leaves the path every segment after its first.
                more = f"{{{low - 1},}}?" if high is None else f"{{{low - 1},{high - 1}}}"
                parts.append(f"(?P<{found.group(1)}>[^/]+(?:/[^/]+){more})")
            else:
                parts.append(f"(?P<{found.group(1)}>[^/]+)")
        return re.compile("/" + "/".join(parts))


class Declared(NamedTuple):
    """A route as its router declares it; the function table (arca.api.functions) says which function serves it."""

    method: str
    path: str
    operation: str
    summary: str
    stub: bool
    documented: bool = True


class Declaring(Protocol):
    """A router that records its declarations (arca.api.routing.Router)."""

    @property
    def declared(self) -> list[Declared]: ...


def bind(function: str, routers: Iterable[Declaring], families: Iterable[Family]) -> tuple[Route, ...]:
    """The routes of `function`'s routers, each with the family it lies in."""
    families = tuple(families)
    routes = []
    for router in routers:
        for d in router.declared:
            family = next((f for f in families if f.holds(d.path.strip("/").split("/"))), None)
            routes.append(Route(d.method, d.path, function, d.operation, d.summary, d.stub, family, d.documented))
    return tuple(routes)


def family_functions(routes: Iterable[Route]) -> dict[Family, dict[str, str]]:
    """Each family's methods and the one function each goes to (API Gateway has one integration per method of
    a resource); ValueError when two functions would serve one method of a family."""
    found: dict[Family, dict[str, str]] = {}
    for route in routes:
        if route.family is None:
            continue
        methods = found.setdefault(route.family, {})
        if methods.setdefault(route.method, route.function) != route.function:
            raise ValueError(
                f"{route.method} below {route.family.prefix} would go to both {methods[route.method]} and "
                f"{route.function}: one family method is one function"
            )
    return found


class NoRouteError(LookupError):
    """No route has this path (`allowed` is empty) or none has this method (`allowed` lists methods).

    `reserved` is set when the path matches no route, but would match one with this method had a reserved
    word been part of the name (`PUT /artifacts/team/latest/app/latest`): the client wrote a name with a
    reserved segment, which is bad input (400 naming the word), not a missing route.

    `function` is set when the path lies in a route family that has this method: API Gateway hands the request
    to that function anyway (the family's greedy resource), and the function answers.
    """

    def __init__(
        self, path: str, allowed: tuple[str, ...] = (), reserved: str | None = None, function: str | None = None
    ) -> None:
        super().__init__(path)
        self.path = path
        self.allowed = allowed
        self.reserved = reserved
        self.function = function


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
    return "/".join(rest[:end]), ["artifacts", NAME, *rest[end:]]


def _spanning(routes: Iterable[Route]) -> list[Route]:
    """The routes read by shape, the most literal first (`/hf/api/models/…` before `/hf/{repo}/…`), then the one of
    more parameters (`…/tree/{revision}/{path}` before `…/tree/{revision}`, whose revision could take the path)."""
    found = [r for r in routes if r.reading is not None]
    return sorted(found, key=lambda r: (-sum(1 for s in r.segments if not _PARAM.match(s)), -len(r.segments)))


def _read(route: Route, path: str) -> dict[str, str] | None:
    assert route.reading is not None
    found = route.reading.fullmatch(path.rstrip("/") or "/")
    return None if found is None else found.groupdict()


def canonical_path(path: str, routes: Iterable[Route] = ()) -> str:
    """The path with each parameter of several segments %2F-encoded, so that it is one Powertools parameter: the
    name of `/artifacts/<name>/…`, and the spanning parameters of the family route (of `routes`) it matches."""
    name, segments = split_name(path)
    if name is not None:
        # A route of several segments below the name (a tree's file path) is read against the path with the name
        # folded as `{name}`.
        for route in _spanning(routes):
            params = _read(route, "/" + "/".join(segments))
            if params is not None:
                return route.fill({**{k: quote(v, safe="") for k, v in params.items()}, "name": quote(name, safe="")})
        return "/" + "/".join(quote(name, safe="") if s == NAME else s for s in segments)
    for route in _spanning(routes):
        params = _read(route, path)
        if params is not None:
            return route.fill({k: quote(v, safe="") for k, v in params.items()})
    return path


def match(routes: Iterable[Route], method: str, path: str) -> tuple[Route, dict[str, str]]:
    """The route for a request path (decoded, names with plain slashes), as API Gateway would pick it.

    Raises NoRouteError, listing the methods the path has when only the method is wrong, naming the
    reserved word when the path matches only with that word read as part of the name, and naming the function
    a route family hands the request to anyway.
    """
    routes = tuple(routes)
    name, segments = split_name(path)
    segments = [s for s in segments if s] if name is None else segments[:2] + [s for s in segments[2:] if s]
    found, allowed = _find(routes, method, segments, name)
    if found is None and name is None:
        found, more = _find_spanning(routes, method, path)
        allowed += more
    elif found is None and name is not None:
        found, more = _find_spanning(routes, method, "/" + "/".join(segments))
        allowed += more
        if found is not None:
            found = (found[0], {**found[1], "name": name})
    if found is not None:
        return found
    family = next((r for r in routes if r.family and r.method == method.upper() and r.family.holds(segments)), None)
    # A path that exists with other methods is a 405 as read; only a path that matches nothing is re-read.
    raise NoRouteError(
        path,
        tuple(allowed),
        None if allowed else _reserved_in_name(routes, method, path),
        family.function if family is not None else None,
    )


def _find(
    routes: tuple[Route, ...], method: str, segments: list[str], name: str | None
) -> tuple[tuple[Route, dict[str, str]] | None, list[str]]:
    allowed: list[str] = []
    for route in routes:
        if route.reading is not None or len(route.segments) != len(segments):
            continue
        params: dict[str, str] = {}
        for pattern, actual in zip(route.segments, segments, strict=True):
            found = _PARAM.match(pattern)
            if found is None and pattern != actual:
                break
            if pattern == NAME and actual != NAME:
                break
            if found is not None:
                params[found.group(1)] = name if pattern == NAME and name is not None else actual
        else:
            if route.method == method.upper():
                return (route, params), allowed
            allowed.append(route.method)
    return None, allowed


def _find_spanning(
    routes: tuple[Route, ...], method: str, path: str
) -> tuple[tuple[Route, dict[str, str]] | None, list[str]]:
    allowed: list[str] = []
    for route in _spanning(routes):
        params = _read(route, path)
        if params is None:
            continue
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
        if _find(routes, method, ["artifacts", NAME, *suffix], "/".join(rest[:end]))[0] is not None:
            return rest[reserved[0]]
    return None


def family_path_parameters(family: Family, segments: list[str], name: str | None) -> dict[str, str]:
    """The path parameters API Gateway sends from a family's greedy resource: the name's levels and `proxy`."""
    params = {f"n{i}": s for i, s in enumerate((name or "").split("/"), 1)} if name else {}
    params["proxy"] = "/".join(segments[len(family.segments) :])
    return params
