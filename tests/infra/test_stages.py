"""The two stacks of a stage: the data in one, the code in the other, and nothing that ties their updates together."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import aws_cdk as cdk
import pytest

from infra import functions
from infra.functions import SPECS, FunctionSpec
from infra.stack import add_stage, service_stack_name, storage_stack_name
from infra.storage import StorageParameters
from tests.infra import stages

DATA_TYPES = {"AWS::DynamoDB::Table", "AWS::S3::Bucket", "AWS::S3::BucketPolicy", "AWS::KMS::Key"}
# Cross-stack mechanisms that would make the storage stack's update depend on its consumers.
CROSS_STACK_FUNCTIONS = ("Fn::ImportValue", "Fn::GetStackOutput")


_synth = stages.synth


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, bytes]:
    """The dev storage and service templates as `cdk synth` writes them."""
    return stages.template_files(tmp_path_factory.mktemp("baseline"))


def _types(template: dict[str, Any]) -> set[str]:
    return {resource["Type"] for resource in template["Resources"].values()}


def test_a_stage_is_a_storage_stack_then_a_service_stack() -> None:
    # Given the prod stage
    # When it is built
    arca = _synth("prod").stage
    # Then its two stacks are named after the stage, share one environment, and the service deploys after storage
    assert (arca.storage.stack_name, arca.service.stack_name) == ("Arca-prod-storage", "Arca-prod")
    assert (storage_stack_name("prod"), service_stack_name("prod")) == ("Arca-prod-storage", "Arca-prod")
    assert arca.storage.environment == arca.service.environment == "aws://123456789012/eu-west-1"
    assert arca.service.dependencies == [arca.storage]
    assert arca.storage.dependencies == []


@pytest.mark.parametrize(("stage", "protected"), [("prod", True), ("staging", True), ("dev", False)])
def test_only_retained_stages_protect_the_storage_stack_from_termination(stage: str, protected: bool) -> None:
    # Given the stacks of a stage
    # When they are built
    arca = _synth(stage).stage
    # Then the storage stack of a retained stage cannot be deleted by accident, and the service stack always can
    assert arca.storage.termination_protection is protected
    assert arca.service.termination_protection is False


@pytest.mark.parametrize("stage", ["dev", "prod"])
def test_the_storage_stack_holds_the_data_and_the_service_stack_none(stage: str) -> None:
    # Given both templates of the stage
    synthesized = _synth(stage)
    # When their resource types are read
    storage, service = _types(synthesized.storage), _types(synthesized.service)
    # Then the table, the bucket and its policy are in storage with the parameters naming them, and nowhere else
    assert storage - {"AWS::SSM::Parameter", "AWS::CDK::Metadata"} == DATA_TYPES
    assert not service & (DATA_TYPES | {"AWS::SSM::Parameter"})
    assert {"AWS::Lambda::Function", "AWS::ApiGateway::RestApi"} <= service


@pytest.mark.parametrize("stage", ["dev", "prod"])
def test_no_cloudformation_export_ties_the_storage_stack_to_the_service_stack(stage: str) -> None:
    # Given both templates of the stage
    synthesized = _synth(stage)
    # When their outputs and the service's intrinsic functions are read
    outputs = [*synthesized.storage.get("Outputs", {}).values(), *synthesized.service.get("Outputs", {}).values()]
    service = json.dumps(synthesized.service)
    # Then nothing is exported or imported, so no update of the storage stack can be refused for a consumer
    assert all("Export" not in output for output in outputs)
    assert not [function for function in CROSS_STACK_FUNCTIONS if function in service]


@pytest.mark.parametrize("stage", ["dev", "prod"])
def test_the_service_reads_the_names_the_storage_stack_publishes(stage: str) -> None:
    # Given both templates of the stage and its parameter names
    synthesized = _synth(stage)
    names = StorageParameters.for_stage(stage)
    table_id = next(k for k, v in synthesized.storage["Resources"].items() if v["Type"] == "AWS::DynamoDB::Table")
    bucket_id = next(k for k, v in synthesized.storage["Resources"].items() if v["Type"] == "AWS::S3::Bucket")
    key_id = next(k for k, v in synthesized.storage["Resources"].items() if v["Type"] == "AWS::KMS::Key")
    # When the storage stack's SSM parameters and the service stack's SSM-typed template parameters are read
    published = {
        parameter["Properties"]["Name"]: parameter["Properties"]["Value"]
        for parameter in synthesized.storage["Resources"].values()
        if parameter["Type"] == "AWS::SSM::Parameter"
    }
    read = {
        parameter["Default"]
        for parameter in synthesized.service["Parameters"].values()
        if parameter["Type"] == "AWS::SSM::Parameter::Value<String>"
    }
    # Then storage writes the table's and the bucket's names, the stream's and the signing key's ARNs, and service
    # reads exactly those
    assert published == {
        names.table_name: {"Ref": table_id},
        names.bucket_name: {"Ref": bucket_id},
        names.stream_arn: {"Fn::GetAtt": [table_id, "StreamArn"]},
        names.signing_key_arn: {"Fn::GetAtt": [key_id, "Arn"]},
    }
    assert set(published) <= read
    assert all(name.startswith(f"/arca/{stage}/") for name in published)


def test_a_stage_name_that_cannot_name_a_stack_is_refused() -> None:
    # Given a stage name with a character a stack name cannot hold
    app = cdk.App()
    # When a stage is added under it
    # Then it is refused before anything is synthesized
    with pytest.raises(ValueError, match="stage 'my_stage'"):
        add_stage(app, "my_stage")


def _extra_function() -> tuple[FunctionSpec, ...]:
    return (
        *SPECS,
        FunctionSpec(name="audit", handler="arca.handlers.resolve.handler", table_actions=("dynamodb:Query",)),
    )


def _more_table_actions() -> tuple[FunctionSpec, ...]:
    first, *rest = SPECS
    return (dataclasses.replace(first, table_actions=(*first.table_actions, "dynamodb:DescribeTable")), *rest)


@pytest.mark.parametrize(
    "change",
    ["memory size", "environment variable", "function code", "another function", "more IAM actions", "layer"],
)
def test_changing_the_functions_changes_the_service_template_only(
    change: str,
    baseline: tuple[bytes, bytes],
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given the dev templates as `cdk synth` writes them
    storage_before, service_before = baseline
    options: dict[str, Any] = {}
    # When one thing about the functions changes and the stage is synthesized again
    if change == "memory size":
        monkeypatch.setattr(functions, "MEMORY_MB", functions.MEMORY_MB * 2)
    elif change == "environment variable":
        monkeypatch.setattr(functions, "URL_TTL_SECONDS", functions.URL_TTL_SECONDS + 60)
    elif change == "function code":
        code = tmp_path_factory.mktemp("code")
        (code / "handler.py").write_text("def handler(event, context):\n    return {}\n")
        options["code_dir"] = code
    elif change == "another function":
        options["specs"] = _extra_function()
    elif change == "more IAM actions":
        options["specs"] = _more_table_actions()
    else:
        options["context"] = {
            "powertools_layer_arn": "arn:aws:lambda:eu-west-1:017000801446:layer:AWSLambdaPowertoolsPythonV3:1"
        }
    storage_after, service_after = stages.template_files(tmp_path_factory.mktemp("changed"), **options)
    # Then the service template changed, and the storage template is the same, byte for byte
    assert service_after != service_before
    assert storage_after == storage_before


def test_a_configuration_is_synthesized_once_per_process(request: pytest.FixtureRequest) -> None:
    # Given the dev stage as one test synthesized it
    first = stages.synth("dev")
    # When another asks for it, and for another configuration
    again, other = stages.synth("dev"), stages.synth("dev", apigateway_cloudwatch_role="true")
    # Then the first is shared, the other is its own, and this test (as every infra test) is in the xdist group
    # that keeps them on one worker
    assert again is first and other is not first
    assert request.node.get_closest_marker("xdist_group").args == ("infra",)


def test_the_templates_stay_far_below_what_cloudformation_reads(baseline: tuple[bytes, bytes]) -> None:
    # Given the dev templates as `cdk synth` writes them (the service one carries the API's OpenAPI definition
    # inline, which grows with every route)
    # Then each is under half of the 1,000,000 bytes CloudFormation reads of a template (from S3)
    sizes = [len(template) for template in baseline]
    assert max(sizes) < 500_000, sizes
