"""The two stacks of a stage: storage (the data, which outlives every deploy) and service (the code that uses it).

`Arca-<stage>-storage` holds the table and the bucket and publishes their names as SSM parameters;
`Arca-<stage>` holds the functions, the API and the outputs a client needs, and reads those parameters at
deploy time. The service stack depends on the storage stack (so `cdk deploy --all` deploys storage first)
but imports nothing from it: no CloudFormation export, no `Fn::ImportValue`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aws_cdk import CfnOutput, Environment, RemovalPolicy, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_ssm as ssm
from constructs import Construct

from arca.routes import FUNCTIONS, ROUTES
from infra.access import ApiAccess
from infra.api import Api
from infra.events import EventDelivery
from infra.functions import ASSET_DIR, SPECS, Functions, FunctionSpec
from infra.monitoring import Monitoring
from infra.retention import RetentionSchedule
from infra.rollouts import RolloutDriver
from infra.storage import Storage, StorageParameters
from infra.verification import UploadVerifier

# Stages whose data may be thrown away with the stack; every other stage keeps its table and bucket.
DISPOSABLE_STAGES = frozenset({"dev"})
# The stage names the stacks, the API stage and the SSM parameters: only what all three accept.
_STAGE = re.compile(r"[A-Za-z][A-Za-z0-9-]{0,63}")


def _flag(scope: Construct, key: str, *, default: bool) -> bool:
    """A boolean context value: `-c key=true|false` on the command line (a string there), a JSON boolean in cdk.json."""
    value = scope.node.try_get_context(key)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if str(value).lower() in ("true", "1", "yes", "on"):
        return True
    if str(value).lower() in ("false", "0", "no", "off"):
        return False
    raise ValueError(f"context {key}={value!r} must be true or false")


def storage_stack_name(stage: str) -> str:
    return f"Arca-{stage}-storage"


def service_stack_name(stage: str) -> str:
    return f"Arca-{stage}"


class StorageStack(Stack):
    """The table and the bucket of one stage, with termination protection on every stage that retains them."""

    def __init__(
        self, scope: Construct, construct_id: str, *, stage: str, parameters: StorageParameters, **kwargs: Any
    ) -> None:
        retain = stage not in DISPOSABLE_STAGES
        super().__init__(
            scope,
            construct_id,
            description=f"Arca artifact registry ({stage}): table and bucket",
            termination_protection=retain,
            suppress_template_indentation=True,
            **kwargs,
        )
        # The construct id "Storage" keeps the logical ids the resources had in the single-stack layout.
        self.storage = Storage(self, "Storage", retain=retain)
        parameters.publish(self, self.storage)
        CfnOutput(self, "TableName", value=self.storage.table.table_name)
        CfnOutput(self, "BucketName", value=self.storage.bucket.bucket_name)


class ServiceStack(Stack):
    """The functions, the REST API and their outputs; the table and the bucket come from SSM parameters.

    Destroying and redeploying this stack leaves the data untouched. Resource names are left to
    CloudFormation and published as outputs.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        stage: str,
        parameters: StorageParameters,
        specs: Iterable[FunctionSpec] = SPECS,
        code_dir: Path = ASSET_DIR,
        **kwargs: Any,
    ) -> None:
        # Without indentation: the API's OpenAPI definition is inline, and CloudFormation reads at most 1 MB of a
        # template (tests/infra keeps it well under).
        super().__init__(
            scope,
            construct_id,
            description=f"Arca artifact registry ({stage}): API and functions",
            suppress_template_indentation=True,
            **kwargs,
        )
        removal_policy = RemovalPolicy.DESTROY if stage in DISPOSABLE_STAGES else RemovalPolicy.RETAIN
        reserve = _flag(self, "reserve_concurrency", default=stage not in DISPOSABLE_STAGES)
        # SnapStart for the API's functions (docs/decisions.md): on for retained stages, `-c snap_start=false` off.
        snap_start = _flag(self, "snap_start", default=stage not in DISPOSABLE_STAGES)

        # Imported by name: IAM statements then name the table and the bucket by ARNs built in this stack, and
        # CDK cannot add a resource policy to an imported resource, so no grant reaches the storage stack.
        self.table = dynamodb.Table.from_table_attributes(
            self,
            "Table",
            table_name=ssm.StringParameter.value_for_string_parameter(self, parameters.table_name),
            table_stream_arn=ssm.StringParameter.value_for_string_parameter(self, parameters.stream_arn),
        )
        self.bucket = s3.Bucket.from_bucket_name(
            self, "Bucket", ssm.StringParameter.value_for_string_parameter(self, parameters.bucket_name)
        )
        self.functions = Functions(
            self,
            "Functions",
            table=self.table,
            bucket=self.bucket,
            removal_policy=removal_policy,
            reserve_concurrency=reserve,
            snap_start=snap_start,
            specs=specs,
            code_dir=code_dir,
            signing_key_arn=ssm.StringParameter.value_for_string_parameter(self, parameters.signing_key_arn),
        )
        missing = set(FUNCTIONS) - set(self.functions.by_name)
        if missing:
            raise ValueError(f"routes name functions the stack does not build: {sorted(missing)}")
        self.rollouts = RolloutDriver(
            self,
            "Rollouts",
            driver=self.functions.by_name["rollout"],
            starter=self.functions.by_name["alias"],
            removal_policy=removal_policy,
        )
        self.retention = RetentionSchedule(self, "Retention", function=self.functions.by_name["retention"])
        self.verification = UploadVerifier(
            self,
            "Verification",
            verifier=self.functions.by_name["verify"],
            starter=self.functions.by_name["publish"],
            removal_policy=removal_policy,
        )
        self.api = Api(
            self,
            "Api",
            stage_name=stage,
            routes=ROUTES,
            functions={name: f for name, f in self.functions.targets.items() if name in FUNCTIONS},
            removal_policy=removal_policy,
            account_logging_role=_flag(self, "apigateway_cloudwatch_role", default=False),
        )
        # Grants of the API on name prefixes, for the roles a platform team hands out (infra/access.py).
        self.access = ApiAccess(self.api.rest_api, stage)
        # `-c example_read_prefix=team-a`: an example role that reads only under that prefix (off by default).
        example = self.node.try_get_context("example_read_prefix")
        if example:
            reader = iam.Role(self, "ExampleReader", assumed_by=iam.AccountRootPrincipal())
            self.access.grant_read(reader, str(example))
            CfnOutput(self, "ExampleReaderRoleArn", value=reader.role_arn, description=f"reads names under {example}")
        self.events = EventDelivery(self, "Events", functions=self.functions, table=self.table)
        self.monitoring = Monitoring(
            self,
            "Monitoring",
            stage=self.api.rest_api.deployment_stage,
            functions={**self.functions.by_name, "events": self.events.function},
            table=self.table,
            rollouts=self.rollouts.state_machine,
            verifications=self.verification.state_machine,
            dead_letters=self.events.dead_letters,
        )

        CfnOutput(self, "ApiUrl", value=self.api.url, description="Base URL of the stage (SigV4, service execute-api)")
        CfnOutput(self, "AlarmTopicArn", value=self.monitoring.topic.topic_arn, description="Subscribe to get alarms")
        CfnOutput(
            self,
            "RolloutStateMachineArn",
            value=self.rollouts.state_machine.state_machine_arn,
            description="Runs the steps of progressive rollouts (one execution per rollout)",
        )
        for name, function in self.functions.by_name.items():
            CfnOutput(self, f"{name.capitalize()}FunctionName", value=function.function_name)
        CfnOutput(self, "EventsFunctionName", value=self.events.function.function_name)
        CfnOutput(
            self,
            "EventBusName",
            value=self.events.bus.event_bus_name,
            description="Every committed change, source `arca`, detail-type the event type",
        )


@dataclass(frozen=True)
class ArcaStage:
    storage: StorageStack
    service: ServiceStack


def add_stage(
    scope: Construct,
    stage: str,
    *,
    env: Environment | None = None,
    specs: Iterable[FunctionSpec] = SPECS,
    code_dir: Path = ASSET_DIR,
) -> ArcaStage:
    """Both stacks of `stage` in one account and region, the service stack deployed after the storage stack."""
    if not _STAGE.fullmatch(stage):
        raise ValueError(f"stage {stage!r} must be a letter then letters, digits or hyphens (at most 64)")
    parameters = StorageParameters.for_stage(stage)
    storage = StorageStack(scope, storage_stack_name(stage), stage=stage, parameters=parameters, env=env)
    service = ServiceStack(
        scope, service_stack_name(stage), stage=stage, parameters=parameters, specs=specs, code_dir=code_dir, env=env
    )
    # An ordering edge only (cdk deploy, cdk destroy): it adds nothing to either template.
    service.add_stack_dependency(storage, "reads the table and bucket names the storage stack publishes in SSM")
    return ArcaStage(storage=storage, service=service)
