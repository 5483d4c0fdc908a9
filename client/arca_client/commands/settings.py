"""`arca config`: named endpoints in the config file (no request to the API)."""

from __future__ import annotations

import argparse

from arca_client import config
from arca_client.commands.base import Commands
from arca_client.config import ConfigError
from arca_client.output import Result, table
from arca_client.sdk import Client

_SOURCES = {
    "--endpoint": "--endpoint",
    config.ENDPOINT_ENV: f"${config.ENDPOINT_ENV}",
    "config": "the config file's current endpoint",
    "default": "the default (the local server of make local)",
}


def cmd_config_set_endpoint(args: argparse.Namespace, client: Client | None) -> Result:
    settings = config.load()
    name, url = config.check_name(args.endpoint_name), config.check_url(args.url)
    settings.endpoints[name] = config.Endpoint(name, url, args.region, args.profile)
    path = config.save(settings)
    lines = [f"endpoint {name} -> {url} saved in {path}"]
    if settings.current != name:
        lines.append(f"make it the default with: arca config use {name}")
    data = {"name": name, "url": url, "region": args.region, "profile": args.profile, "file": str(path)}
    return Result(data, "\n".join(lines))


def cmd_config_use(args: argparse.Namespace, client: Client | None) -> Result:
    settings = config.load()
    name = args.endpoint_name
    if name not in settings.endpoints:
        known = ", ".join(sorted(settings.endpoints)) or "none yet"
        raise ConfigError(f"no endpoint named {name!r} (configured: {known}); add it with arca config set-endpoint")
    settings.current = name
    config.save(settings)
    url = settings.endpoints[name].url
    return Result(
        {"current": name, "url": url},
        f"arca now talks to {name} ({url}) unless --endpoint or ARCA_ENDPOINT says otherwise",
    )


def cmd_config_remove(args: argparse.Namespace, client: Client | None) -> Result:
    settings = config.load()
    name = args.endpoint_name
    if settings.endpoints.pop(name, None) is None:
        raise ConfigError(f"no endpoint named {name!r}")
    if settings.current == name:
        settings.current = None
    config.save(settings)
    return Result({"name": name, "removed": True}, f"endpoint {name} removed")


def cmd_config_list(args: argparse.Namespace, client: Client | None) -> Result:
    settings = config.load()
    target = config.resolve_endpoint(args.endpoint)
    data = {
        "file": str(config.config_path()),
        "current": settings.current,
        "endpoints": {
            n: {"url": e.url, "region": e.region, "profile": e.profile} for n, e in settings.endpoints.items()
        },
        "in_effect": {"url": target.url, "source": target.source, "name": target.name},
    }

    def report() -> str:
        rows = [
            ["*" if n == settings.current else "", n, e.url, e.region or "", e.profile or ""]
            for n, e in sorted(settings.endpoints.items())
        ]
        if rows:
            lines = [table(["", "NAME", "URL", "REGION", "PROFILE"], rows)]
        else:
            lines = [f"no endpoints configured in {config.config_path()}"]
        named = f" ({target.name})" if target.name else ""
        return "\n".join([*lines, f"in effect: {target.url}{named}, from {_SOURCES[target.source]}"])

    return Result(data, report)


def register(commands: Commands) -> None:
    settings = commands.group(
        "config",
        "named endpoints",
        f"named endpoints, kept in {config.config_path()}",
        dest="config_command",
        metavar="CONFIG_COMMAND",
    )
    p = settings.add(
        "set-endpoint",
        cmd_config_set_endpoint,
        "add or replace the endpoint NAME (with --region and --profile to sign for it)",
        offline=True,
    )
    p.add_argument("endpoint_name", metavar="NAME")
    p.add_argument("url", metavar="URL")
    p = settings.add(
        "use", cmd_config_use, "make NAME the endpoint used unless --endpoint or ARCA_ENDPOINT", offline=True
    )
    p.add_argument("endpoint_name", metavar="NAME")
    p = settings.add("remove", cmd_config_remove, "forget the endpoint NAME", offline=True)
    p.add_argument("endpoint_name", metavar="NAME")
    settings.add("list", cmd_config_list, "the configured endpoints, and which endpoint is in effect", offline=True)
