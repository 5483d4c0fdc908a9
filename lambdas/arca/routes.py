"""The route table: every path of the HTTP API, the function that serves it, and the operation.

Plain data plus one matcher. The CDK API (infra/api.py) expands it into API Gateway resources, the
local server (local/server.py) uses `match` to pick the function, and each handler uses `match` to
canonicalise the path before Powertools routes it.

Artifact names contain `/`, and API Gateway's greedy `{proxy+}` can only end a path, so it cannot
send `…/aliases/x` and `…/versions` of the same name to different functions. Names never contain a
reserved word as a segment (arca.domain.names), so the first reserved segment ends the name: that
is how a path is read, and it is why CDK can spell `{name}` as one to eight path parameters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote

from arca.domain.names import MAX_SEGMENTS, RESERVED_SEGMENTS

FUNCTIONS = ("publish", "alias", "resolve")
_PARAM = re.compile(r"^\{(\w+)\}$")


@dataclass(frozen=True)
class Route:
    method: str
    path: str  # "{name}" stands for one to eight segments
    function: str
    operation: str

    @property
    def segments(self) -> tuple[str, ...]:
        return tuple(self.path.strip("/").split("/"))

    @property
    def rule(self) -> str:
        """The Powertools rule: `{x}` becomes `<x>`; the name arrives %2F-encoded (see `canonical_path`)."""
        return re.sub(r"\{(\w+)\}", r"<\1>", self.path)

    @property
    def suffix(self) -> tuple[str, ...]:
        """The segments after `{name}` (empty for the artifact itself)."""
        segments = self.segments
        return segments[segments.index("{name}") + 1 :] if "{name}" in segments else ()

    def api_paths(self) -> list[str]:
        """API Gateway resource paths: `{name}` expanded to `{n1}`, `{n1}/{n2}`, … up to eight levels."""
        if "{name}" not in self.path:
            return [self.path]
        return [
            self.path.replace("{name}", "/".join(f"{{n{i}}}" for i in range(1, depth + 1)))
            for depth in range(1, MAX_SEGMENTS + 1)
        ]


ROUTES: tuple[Route, ...] = (
    Route("GET", "/health", "resolve", "health"),
    Route("GET", "/artifacts", "resolve", "list_artifacts"),
    Route("GET", "/artifacts/{name}", "resolve", "get_artifact"),
    Route("DELETE", "/artifacts/{name}", "publish", "purge"),
    Route("POST", "/artifacts/{name}/uploads", "publish", "create_upload"),
    Route("PUT", "/artifacts/{name}/latest", "publish", "put_latest"),
    Route("POST", "/artifacts/{name}/versions", "publish", "publish"),
    Route("GET", "/artifacts/{name}/versions", "resolve", "list_versions"),
    Route("GET", "/artifacts/{name}/versions/{version}", "resolve", "get_version"),
    Route("DELETE", "/artifacts/{name}/versions/{version}", "publish", "delete_version"),
    Route("POST", "/artifacts/{name}/versions/{version}/restore", "publish", "restore_version"),
    Route("POST", "/artifacts/{name}/prune", "publish", "prune"),
    Route("GET", "/artifacts/{name}/aliases", "resolve", "list_aliases"),
    Route("PUT", "/artifacts/{name}/aliases/{alias}", "alias", "set_alias"),
    Route("GET", "/artifacts/{name}/aliases/{alias}", "resolve", "get_alias"),
    Route("DELETE", "/artifacts/{name}/aliases/{alias}", "alias", "delete_alias"),
    Route("GET", "/artifacts/{name}/aliases/{alias}/history", "resolve", "alias_history"),
    Route("POST", "/artifacts/{name}/aliases/{alias}/rollback", "alias", "rollback_alias"),
    Route("GET", "/artifacts/{name}/resolve/{ref}", "resolve", "resolve"),
    Route("GET", "/artifacts/{name}/resolve/{ref}/content", "resolve", "resolve_content"),
)


class NoRouteError(LookupError):
    """No route has this path (`allowed` is empty) or none has this method (`allowed` lists methods)."""

    def __init__(self, path: str, allowed: tuple[str, ...] = ()) -> None:
        super().__init__(path)
        self.path = path
        self.allowed = allowed


def _split(path: str) -> tuple[str | None, tuple[str, ...]]:
    """Split a path into (name, fixed segments); name is None outside /artifacts/{name}…"""
    segments = tuple(s for s in path.split("/") if s)
    if len(segments) < 2 or segments[0] != "artifacts":
        return None, segments
    rest = segments[1:]
    end = next((i for i, segment in enumerate(rest) if segment in RESERVED_SEGMENTS), len(rest))
    if end == 0:
        return None, segments
    return "/".join(rest[:end]), ("artifacts", "{name}", *rest[end:])


def match(method: str, path: str) -> tuple[Route, dict[str, str]]:
    """Find the route for a request path (decoded, names with plain slashes). Raises NoRouteError."""
    name, segments = _split(path)
    allowed: list[str] = []
    for route in ROUTES:
        if len(route.segments) != len(segments):
            continue
        params: dict[str, str] = {}
        for pattern, actual in zip(route.segments, segments, strict=True):
            found = _PARAM.match(pattern)
            if found is None and pattern != actual:
                break
            if found is not None:
                params[found.group(1)] = name if pattern == "{name}" and name is not None else actual
            if pattern == "{name}" and actual != "{name}":
                break
        else:
            if route.method == method.upper():
                return route, params
            allowed.append(route.method)
    raise NoRouteError(path, tuple(allowed))


def canonical_path(route: Route, params: dict[str, str]) -> str:
    """The path with each parameter percent-encoded, so the name's slashes fit one Powertools parameter."""
    return "/" + "/".join(quote(params[m.group(1)], safe="") if (m := _PARAM.match(s)) else s for s in route.segments)
