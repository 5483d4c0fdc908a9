"""Registry and artifact URIs of the plugin: `arca+http://…` and `arca+https://…`.

A registry URI is the API's endpoint behind `arca+` (`arca+https://abc.execute-api.eu-west-1.amazonaws.com/prod`),
with optional query parameters `region`, `profile` (how to sign, as the CLI's options) and `routing_key` (which
side of a canary this process loads). A version's download URI is that endpoint followed by the version's own
path, `…/artifacts/{name}/versions/{version}`, the address of its tree of files in the API.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qsl, quote, unquote, urlsplit, urlunsplit

from mlflow.exceptions import MlflowException
from mlflow.protos.databricks_pb2 import INVALID_PARAMETER_VALUE

SCHEMES = ("arca+http", "arca+https")
_OPTIONS = ("region", "profile", "routing_key")


@dataclass(frozen=True)
class Registry:
    """An Arca endpoint as MLflow names it."""

    endpoint: str  # http(s)://host[:port][/stage]
    region: str | None = None
    profile: str | None = None
    routing_key: str | None = None

    @property
    def uri(self) -> str:
        return "arca+" + self.endpoint

    def version_uri(self, name: str, version: int | str) -> str:
        """Where a version's files are: the download URI MLflow hands to the artifact repository."""
        return f"{self.uri}/artifacts/{quote(name, safe='/')}/versions/{version}"


def parse_registry(uri: str) -> Registry:
    """The endpoint and options of a registry URI; INVALID_PARAMETER_VALUE for another scheme or a stray option."""
    parts = urlsplit(uri)
    if parts.scheme not in SCHEMES or not parts.netloc:
        raise MlflowException(
            f"{uri!r} is not an Arca registry URI: arca+http://HOST[:PORT][/PATH] or arca+https://…",
            INVALID_PARAMETER_VALUE,
        )
    options = dict(parse_qsl(parts.query))
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise MlflowException(
            f"{uri!r}: unknown option {unknown[0]!r} (the options are {', '.join(_OPTIONS)})", INVALID_PARAMETER_VALUE
        )
    endpoint = urlunsplit((parts.scheme.removeprefix("arca+"), parts.netloc, parts.path.rstrip("/"), "", ""))
    return Registry(endpoint, options.get("region"), options.get("profile"), options.get("routing_key"))


def parse_version_uri(uri: str, registry: Registry | None = None) -> tuple[Registry, str, int]:
    """(registry, artifact name, version number) of a version's download URI.

    The endpoint's own path (a stage) ends where `registry`'s does when the URI is under it, else at the first
    `/artifacts/` (an endpoint whose path holds that segment needs its registry URI to be read).
    """
    parts = urlsplit(uri)
    path = parts.path
    base = urlsplit(registry.endpoint).path if registry is not None else None
    if registry is not None and uri.startswith(registry.uri + "/artifacts/"):
        rest = path[len(base or "") :]
    else:
        start = path.find("/artifacts/")
        base, rest = path[:start], path[start:] if start >= 0 else ""
    pieces = rest.removeprefix("/artifacts/").split("/")
    if not rest.startswith("/artifacts/") or len(pieces) < 3 or pieces[-2] != "versions" or not pieces[-1].isdigit():
        raise MlflowException(
            f"{uri!r} is not a version of Arca: …/artifacts/NAME/versions/NUMBER", INVALID_PARAMETER_VALUE
        )
    found = parse_registry(urlunsplit((parts.scheme, parts.netloc, base or "", "", "")))
    if registry is not None and found.endpoint == registry.endpoint:
        found = registry
    return found, unquote("/".join(pieces[:-2])), int(pieces[-1])
