"""`arca config`: named endpoints in the config file (no request to the API)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from arca_client import config
from arca_client import verify as signing
from arca_client.commands.base import Commands, UsageError, ask
from arca_client.config import ConfigError
from arca_client.output import MODE, Result, table
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

    def row(name: str | None, url: str, region: str | None = None, profile: str | None = None) -> dict[str, Any]:
        effect = target.name == name if name is not None else True
        return {
            "name": name,
            "url": url,
            "region": region,
            "profile": profile,
            "current": name is not None and name == settings.current,
            "in_effect": effect,
            "source": target.source if effect else None,
        }

    # One row per configured endpoint; the endpoint in effect is flagged, or is a row of its own (no name) when it
    # is a URL from --endpoint, $ARCA_ENDPOINT or the default.
    data = [row(n, e.url, e.region, e.profile) for n, e in sorted(settings.endpoints.items())]
    if target.name is None:
        data.append(row(None, target.url))

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


def cmd_config_trust_key(args: argparse.Namespace, client: Client) -> Result:
    """Show the fingerprint of the key the endpoint serves now and of the one pinned, and pin the one served (asked
    on a terminal, or --yes)."""
    endpoint = config.canonical_endpoint(client.endpoint)
    served = client.signing_key()
    pinned = signing.pinned_key(endpoint)
    now, before = signing.fingerprint(served), signing.fingerprint(pinned) if pinned else None
    data = {"endpoint": endpoint, "fingerprint": now, "previous": before, "file": str(signing.pins_path())}
    lines = [f"{endpoint} signs with {now}"]
    if pinned is not None and pinned.strip() == served.strip():
        return Result({**data, "pinned": True, "changed": False}, f"{lines[0]}: pinned already; nothing to do")
    lines.append(f"pinned now: {before}" if before else "no key pinned yet")
    if not args.yes:
        if not sys.stdin.isatty():
            raise UsageError(
                f"{'; '.join(lines)}. Check the fingerprint with the stage's operator, then pin it with --yes"
            )
        if not MODE.quiet:
            print("\n".join(lines), file=sys.stderr)
        if not ask(f"Trust {now} for {endpoint}?"):
            raise UsageError("not trusted; the pinned key stays")
    signing.trust(endpoint, served)
    return Result({**data, "pinned": True, "changed": True}, f"{endpoint}: pinned {now} in {signing.pins_path()}")


def register(commands: Commands) -> None:
    settings = commands.group(
        "config",
        "named endpoints",
        f"named endpoints, kept in {config.config_path()}",
        dest="config_command",
        metavar="CONFIG_COMMAND",
    )
    endpoint_name = "a configured endpoint's name (letters, digits, _ and -)"
    p = settings.add(
        "set-endpoint",
        cmd_config_set_endpoint,
        "add or replace the endpoint NAME (with --region and --profile to sign for it)",
        example="arca config set-endpoint prod https://abc123.execute-api.eu-west-1.amazonaws.com/prod "
        "--region eu-west-1",
        offline=True,
    )
    p.add_argument("endpoint_name", metavar="NAME", help=endpoint_name)
    p.add_argument("url", metavar="URL", help="the API's URL (http:// or https://)")
    p = settings.add(
        "use",
        cmd_config_use,
        "make NAME the endpoint used unless --endpoint or ARCA_ENDPOINT",
        example="arca config use prod",
        offline=True,
    )
    p.add_argument("endpoint_name", metavar="NAME", help=endpoint_name)
    p = settings.add(
        "remove", cmd_config_remove, "forget the endpoint NAME", example="arca config remove prod", offline=True
    )
    p.add_argument("endpoint_name", metavar="NAME", help=endpoint_name)
    settings.add(
        "list",
        cmd_config_list,
        "the configured endpoints, and which endpoint is in effect",
        example="arca config list",
        offline=True,
    )
    p = settings.add(
        "trust-key",
        cmd_config_trust_key,
        "show the fingerprint of the signing key ENDPOINT serves (and of the one pinned) and pin it: asked on a "
        "terminal, or --yes",
        example="arca config trust-key http://127.0.0.1:3000",
    )
    p.add_argument(
        "endpoint_arg",
        metavar="ENDPOINT",
        nargs="?",
        help="a URL or a configured endpoint's name (default: the endpoint in effect)",
    )
    p.add_argument("-y", "--yes", action="store_true", help="pin without asking (after checking the fingerprint)")
