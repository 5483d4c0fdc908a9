"""Named endpoints: the config file, `arca config …`, and which endpoint is in effect (flag > env > config)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arca_client import Client
from arca_client.cli import main
from arca_client.config import DEFAULT_ENDPOINT, Config, ConfigError, Endpoint, load, resolve_endpoint, save

PROD = "https://abc123defg.execute-api.eu-west-1.amazonaws.com/prod"


def arca(*argv: str) -> int:
    """The CLI for commands that need no API (the factory fails the test if one is made)."""

    def no_client(args: object) -> None:
        raise AssertionError("a config command made an API client")

    return main(list(argv), client_factory=no_client)


def test_set_endpoint_use_and_list(isolated_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # When
    codes = [
        arca("config", "set-endpoint", "prod", PROD + "/", "--region", "eu-west-1", "--profile", "deploy"),
        arca("config", "set-endpoint", "local", "http://127.0.0.1:3000"),
        arca("config", "use", "prod"),
    ]
    capsys.readouterr()
    listed = arca("config", "list")
    out = capsys.readouterr().out
    # Then
    assert codes == [0, 0, 0]
    assert listed == 0
    assert [line.split() for line in out.splitlines()] == [
        ["NAME", "URL", "REGION", "PROFILE"],
        ["local", "http://127.0.0.1:3000"],
        ["*", "prod", PROD, "eu-west-1", "deploy"],
        ["in", "effect:", PROD, "(prod),", "from", "the", "config", "file's", "current", "endpoint"],
    ]
    assert load(isolated_config) == Config(
        current="prod",
        endpoints={
            "prod": Endpoint("prod", PROD, "eu-west-1", "deploy"),
            "local": Endpoint("local", "http://127.0.0.1:3000"),
        },
    )


def test_the_file_is_plain_toml(isolated_config: Path) -> None:
    # When
    arca("config", "set-endpoint", "prod", PROD, "--region", "eu-west-1")
    arca("config", "use", "prod")
    # Then
    assert isolated_config.read_text().splitlines()[2:] == [
        'current = "prod"',
        "",
        "[endpoints.prod]",
        f'url = "{PROD}"',
        'region = "eu-west-1"',
    ]


def test_remove_forgets_the_endpoint_and_the_current_choice(
    isolated_config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given
    arca("config", "set-endpoint", "prod", PROD)
    arca("config", "use", "prod")
    # When
    removed = arca("config", "remove", "prod")
    again = arca("config", "remove", "prod")
    # Then
    assert (removed, again) == (0, 1)
    assert load(isolated_config) == Config()
    assert "arca: error: ConfigError: no endpoint named 'prod'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["config", "use", "nope"], "no endpoint named 'nope' (configured: none yet)"),
        (["config", "set-endpoint", "my prod", PROD], "'my prod' is not an endpoint name"),
        (["config", "set-endpoint", "prod", "abc123.example.com"], "is not an http:// or https:// URL"),
        (["--endpoint", "nope", "config", "list"], "--endpoint names the endpoint 'nope', which"),
    ],
)
def test_config_mistakes_exit_1(argv: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    # When
    code = arca(*argv)
    # Then
    assert code == 1
    err = capsys.readouterr().err
    assert err.startswith("arca: error: ConfigError: ")
    assert says in err


def test_precedence_is_flag_then_environment_then_config_then_default(isolated_config: Path) -> None:
    # Given
    save(
        Config(
            current="prod",
            endpoints={
                "prod": Endpoint("prod", PROD, "eu-west-1", "deploy"),
                "staging": Endpoint("staging", "https://s/"),
            },
        ),
        isolated_config,
    )
    env = {"ARCA_ENDPOINT": "http://env:1"}
    # When
    flag = resolve_endpoint("http://flag:1", environ=env, path=isolated_config)
    named_flag = resolve_endpoint("staging", environ=env, path=isolated_config)
    from_env = resolve_endpoint(None, environ=env, path=isolated_config)
    named_env = resolve_endpoint(None, environ={"ARCA_ENDPOINT": "staging"}, path=isolated_config)
    from_config = resolve_endpoint(None, environ={}, path=isolated_config)
    default = resolve_endpoint(None, environ={}, path=isolated_config.with_name("absent.toml"))
    # Then
    assert (flag.url, flag.source) == ("http://flag:1", "--endpoint")
    assert (named_flag.url, named_flag.source, named_flag.name) == ("https://s", "--endpoint", "staging")
    assert (from_env.url, from_env.source, from_env.region) == ("http://env:1", "ARCA_ENDPOINT", None)
    assert (named_env.url, named_env.source) == ("https://s", "ARCA_ENDPOINT")
    assert (from_config.url, from_config.source, from_config.region, from_config.profile) == (
        PROD,
        "config",
        "eu-west-1",
        "deploy",
    )
    assert (default.url, default.source) == (DEFAULT_ENDPOINT, "default")


def test_list_says_which_endpoint_is_in_effect_and_why(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given
    arca("config", "set-endpoint", "prod", PROD)
    arca("config", "use", "prod")
    monkeypatch.setenv("ARCA_ENDPOINT", "http://127.0.0.1:3999")
    capsys.readouterr()
    # When
    arca("config", "list")
    from_env = capsys.readouterr().out.splitlines()[-1]
    arca("config", "list", "--endpoint", "http://127.0.0.1:4000", "--json")
    from_flag = json.loads(capsys.readouterr().out)
    # Then
    assert from_env == "in effect: http://127.0.0.1:3999, from $ARCA_ENDPOINT"
    # one row per endpoint (a list, as every listing): prod is current, the flag's URL is in effect
    rows = [(e["name"], e["current"], e["in_effect"]) for e in from_flag]
    assert rows == [("prod", True, False), (None, False, True)]
    assert from_flag[1] == {
        "name": None,
        "url": "http://127.0.0.1:4000",
        "region": None,
        "profile": None,
        "current": False,
        "in_effect": True,
        "source": "--endpoint",
    }


def test_the_sdk_talks_to_the_current_endpoint_with_its_region_and_profile(
    isolated_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given
    save(Config(current="local", endpoints={"local": Endpoint("local", "http://127.0.0.1:3999")}), isolated_config)
    regions: list[str | None] = []
    monkeypatch.setattr("arca_client.sdk.region_for", lambda endpoint, region, session: regions.append(region) or "r")
    # When
    local = Client()
    save(Config(current="prod", endpoints={"prod": Endpoint("prod", PROD, "ap-south-1", "deploy")}), isolated_config)
    remote = Client(sign=True)
    overridden = Client(sign=True, region="us-west-2")
    # Then
    assert (local.endpoint, local.signed) == ("http://127.0.0.1:3999", False)
    assert (remote.endpoint, remote.signed, remote.target.profile) == (PROD, True, "deploy")
    assert regions == ["ap-south-1", "us-west-2"]  # the endpoint's own region, unless one is given
    assert overridden.target.profile == "deploy"


def test_an_unreadable_config_file_is_a_config_error(isolated_config: Path) -> None:
    # Given
    isolated_config.parent.mkdir(parents=True)
    isolated_config.write_text("current = [oops")
    # When / Then
    with pytest.raises(ConfigError, match=r"config\.toml"):
        load(isolated_config)
    assert resolve_endpoint("http://explicit:1", path=isolated_config).url == "http://explicit:1"
