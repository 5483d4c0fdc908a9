"""Named endpoints, kept in $XDG_CONFIG_HOME/arca/config.toml (default ~/.config/arca/config.toml).

    current = "prod"

    [endpoints.prod]
    url = "https://abc123.execute-api.eu-west-1.amazonaws.com/prod"
    region = "eu-west-1"
    profile = "deploy"

Which endpoint a client talks to, first match wins: the explicit value (`--endpoint`, `Client(endpoint=…)`),
then $ARCA_ENDPOINT, then the config file's `current`, then the local server. Each of the first two may be
a URL or the name of a configured endpoint. A configured endpoint also brings its `region` and `profile`.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from arca_client.errors import ArcaError

DEFAULT_ENDPOINT = "http://127.0.0.1:3000"
ENDPOINT_ENV = "ARCA_ENDPOINT"
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")  # a bare TOML key, so the file stays plain


class ConfigError(ArcaError):
    """The config file cannot be read, an endpoint name or URL is malformed, or a name is not defined."""


@dataclass(frozen=True)
class Endpoint:
    name: str
    url: str
    region: str | None = None
    profile: str | None = None


@dataclass
class Config:
    current: str | None = None
    endpoints: dict[str, Endpoint] = field(default_factory=dict)


@dataclass(frozen=True)
class Target:
    """The endpoint in effect, where it came from (`source`), and the signing settings it brings."""

    url: str
    source: str
    name: str | None = None
    region: str | None = None
    profile: str | None = None


def config_path(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or Path.home()) / ".config")
    return Path(base) / "arca" / "config.toml"


def check_name(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise ConfigError(f"{name!r} is not an endpoint name (letters, digits, '_' and '-')")
    return name


def check_url(url: str) -> str:
    if not re.fullmatch(r"https?://[^\s/]+(/\S*)?", url):
        raise ConfigError(f"{url!r} is not an http:// or https:// URL")
    return url.rstrip("/")


def load(path: Path | None = None) -> Config:
    """The config file's endpoints; an absent file is an empty config. ConfigError if it cannot be read."""
    path = path or config_path()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Config()
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{path}: {error}") from None
    config = Config(current=_optional(data, "current", path))
    endpoints = data.get("endpoints", {})
    if not isinstance(endpoints, dict):
        raise ConfigError(f"{path}: [endpoints] must be a table")
    for name, values in endpoints.items():
        if not isinstance(values, dict) or not isinstance(values.get("url"), str):
            raise ConfigError(f"{path}: [endpoints.{name}] needs a url")
        config.endpoints[name] = Endpoint(
            name, values["url"], _optional(values, "region", path), _optional(values, "profile", path)
        )
    return config


def save(config: Config, path: Path | None = None) -> Path:
    """Write the whole file at once (a temporary file renamed over it), so a reader never sees half of it."""
    path = path or config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["# arca's named endpoints: `arca config set-endpoint NAME URL`, `arca config use NAME`", ""]
    if config.current is not None:
        lines += [f"current = {_toml_string(config.current)}", ""]
    for name in sorted(config.endpoints):
        endpoint = config.endpoints[name]
        lines.append(f"[endpoints.{check_name(name)}]")
        for key in ("url", "region", "profile"):
            value = getattr(endpoint, key)
            if value is not None:
                lines.append(f"{key} = {_toml_string(value)}")
        lines.append("")
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".config.", suffix=".toml")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write("\n".join(lines))
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def resolve_endpoint(
    explicit: str | None = None, *, environ: Mapping[str, str] | None = None, path: Path | None = None
) -> Target:
    """The endpoint in effect: `explicit`, then $ARCA_ENDPOINT, then the config's current, then the local server.

    The config file is read only when it is needed: a name to look up, or no explicit value and no variable.
    """
    env = os.environ if environ is None else environ
    for value, source in ((explicit, "--endpoint"), (env.get(ENDPOINT_ENV), ENDPOINT_ENV)):
        if value:
            if "://" in value:
                return Target(value.rstrip("/"), source)
            if not _NAME.fullmatch(value):  # not a name a config could hold: a URL without its scheme
                return Target(with_scheme(value), source)
            return _configured(load(path), value, source, path)
    config = load(path)
    if config.current is not None:
        return _configured(config, config.current, "config", path)
    return Target(DEFAULT_ENDPOINT, "default")


_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


def with_scheme(address: str) -> str:
    """`127.0.0.1:3300` -> `http://127.0.0.1:3300`; any other host gets https://. ConfigError if not an address."""
    try:
        host = urlsplit(f"//{address}").hostname
    except ValueError:
        host = None
    url = f"{'http' if host in _LOCAL_HOSTS else 'https'}://{address}"
    if not host or not re.fullmatch(r"https?://[^\s/]+(/\S*)?", url):
        raise ConfigError(
            f"{address!r} is neither a URL nor an endpoint name (letters, digits, '_' and '-'); "
            "give a URL such as http://127.0.0.1:3000"
        )
    return url.rstrip("/")


def canonical_endpoint(url: str) -> str:
    """One spelling per endpoint, for what is kept per endpoint (signing-key pins): scheme and host in lower case,
    this machine's names (`localhost`, `::1`) as 127.0.0.1, no default port, no trailing `/`. A stage's path
    (`/prod`) is kept: two stages of one API are two endpoints."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if host in _LOCAL_HOSTS:
        host = "127.0.0.1"
    shown = f"[{host}]" if ":" in host else host
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is not None and (scheme, port) not in (("http", 80), ("https", 443)):
        shown += f":{port}"
    return f"{scheme}://{shown}{parts.path.rstrip('/')}"


def _configured(config: Config, name: str, source: str, path: Path | None) -> Target:
    endpoint = config.endpoints.get(name)
    if endpoint is None:
        where = path or config_path()
        known = ", ".join(sorted(config.endpoints)) or "none"
        raise ConfigError(
            f"{source} names the endpoint {name!r}, which {where} does not define (defined: {known}); "
            "add it with `arca config set-endpoint NAME URL`"
        )
    return Target(endpoint.url.rstrip("/"), source, endpoint.name, endpoint.region, endpoint.profile)


def _optional(data: Mapping[str, object], key: str, path: Path) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"{path}: {key} must be a string")
    return value


def _toml_string(value: str) -> str:
    # A JSON string is a valid TOML basic string (same escapes; non-ASCII kept as UTF-8).
    return json.dumps(value, ensure_ascii=False)
