"""SnapStart for the API's functions: on for retained stages (off with `-c snap_start=false`, and on dev), each
then served through the alias `live` on its published version, which the API invokes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk.assertions import Match

from tests.infra import stages

API_FUNCTIONS = ("publish", "alias", "resolve")


def _service(stage: str, **context: str) -> dict[str, Any]:
    return stages.synth(stage, **context).service


def _of(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {key: value for key, value in template["Resources"].items() if value["Type"] == kind}


def _functions(template: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    """Function name (from its description `Arca <name>`) -> (logical id, properties)."""
    return {
        f["Properties"]["Description"].removeprefix("Arca "): (key, f["Properties"])
        for key, f in _of(template, "AWS::Lambda::Function").items()
        if f["Properties"].get("Description", "").startswith("Arca ")
    }


def _integration_targets(template: dict[str, Any]) -> set[str]:
    """The logical ids each API operation's Lambda integration invokes (a function or an alias), read from the
    API's OpenAPI definition."""
    targets = set()
    for api in _of(template, "AWS::ApiGateway::RestApi").values():
        for operations in api["Properties"]["Body"]["paths"].values():
            for operation in operations.values():
                uri = json.dumps(operation["x-amazon-apigateway-integration"]["uri"])
                targets |= {key for key in template["Resources"] if f'"{key}"' in uri}
    return targets


def test_a_retained_stage_serves_the_api_functions_from_snapshots_of_published_versions() -> None:
    # Given
    template = _service("prod")
    functions = _functions(template)
    aliases = _of(template, "AWS::Lambda::Alias")
    versions = _of(template, "AWS::Lambda::Version")
    # Then each API function snapshots its published versions, the others do not
    for name, (_, props) in functions.items():
        expected = {"ApplyOn": "PublishedVersions"} if name in API_FUNCTIONS else None
        assert props.get("SnapStart") == expected, name
    # And each has the alias `live` on a version of its own
    by_function = {a["Properties"]["FunctionName"]["Ref"]: (key, a["Properties"]) for key, a in aliases.items()}
    assert set(by_function) == {functions[name][0] for name in API_FUNCTIONS}
    live = {}
    for name in API_FUNCTIONS:
        key, alias = by_function[functions[name][0]]
        assert alias["Name"] == "live"
        version = alias["FunctionVersion"]["Fn::GetAtt"][0]
        assert versions[version]["Properties"]["FunctionName"]["Ref"] == functions[name][0]
        assert versions[version]["DeletionPolicy"] == "Delete"  # one snapshot cached per function
        live[name] = key
    # And the API invokes the aliases, never the unqualified functions, and may invoke them
    assert _integration_targets(template) == set(live.values())
    permitted = {
        json.dumps(p["Properties"]["FunctionName"])
        for p in _of(template, "AWS::Lambda::Permission").values()
        if p["Properties"]["Principal"] == "apigateway.amazonaws.com"
    }
    assert all(any(f'"{key}"' in p for p in permitted) for key in live.values())


@pytest.mark.parametrize(("stage", "context"), [("dev", {}), ("prod", {"snap_start": "false"})])
def test_without_snapstart_the_api_invokes_the_functions_and_nothing_is_published(
    stage: str, context: dict[str, str]
) -> None:
    # Given dev (by default) or a retained stage with -c snap_start=false
    template = _service(stage, **context)
    functions = _functions(template)
    # Then
    assert all("SnapStart" not in props for _, props in functions.values())
    assert not _of(template, "AWS::Lambda::Alias") and not _of(template, "AWS::Lambda::Version")
    assert _integration_targets(template) == {functions[name][0] for name in API_FUNCTIONS}


def test_the_snapstart_flag_must_be_a_boolean() -> None:
    with pytest.raises(ValueError, match="snap_start"):
        stages.build("prod", context={"snap_start": "maybe"})


def test_a_retained_stage_synthesizes_without_the_snapstart_warning() -> None:
    # Given a retained stage, whose API functions publish a version for their alias `live`
    arca = stages.synth("prod").stage
    # When its warnings are read
    warnings = stages.annotations(arca.service).find_warning("*", Match.any_value())
    # Then CDK's "SnapStart needs published versions" is acknowledged, so a real warning stays visible
    assert not [w for w in warnings if "SnapStart" in str(w.entry.data)]
