"""The Lambda functions (the three behind the API, and the rollout driver), built by one helper that owns every
default they share."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsii
from aws_cdk import Annotations, ArnFormat, BundlingOptions, DockerImage, Duration, ILocalBundling, RemovalPolicy, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_ssm as ssm
from cdk_nag import NagPackSuppression, NagSuppressions, RegexAppliesTo
from constructs import Construct

from arca.adapters.store.aliases import ALIAS_ITEM_ATTRIBUTES
from infra import asset
from infra.schema import INDEXES

ASSET_DIR = Path(__file__).resolve().parent.parent / "lambdas"
RUNTIME = lambda_.Runtime.PYTHON_3_12
ARCHITECTURE = lambda_.Architecture.X86_64
REQUIREMENTS = Path(__file__).resolve().parent.parent / "requirements.txt"
# The public Powertools layer is found through the public SSM parameter Powertools publishes per release,
# /aws/service/powertools/python/<arch>/<python>/<version>, resolved by CloudFormation at deploy time: the
# layer then carries exactly the version requirements.txt pins, with no layer number to keep in step.
# `-c powertools_layer_arn=<arn>` overrides it (for a region or release whose parameter is missing).
POWERTOOLS_PARAMETER_PREFIX = "/aws/service/powertools/python"
MEMORY_MB = 512
# API Gateway gives up on an integration after 29 s; work past that would answer nobody.
TIMEOUT = Duration.seconds(29)
URL_TTL_SECONDS = 900
COLON = ArnFormat.COLON_RESOURCE_NAME


@dataclass(frozen=True)
class PartitionScoped:
    """Table actions allowed only on items whose partition key `operator` one of `partitions` (IAM's
    `dynamodb:LeadingKeys`, checked item by item, inside transactions too). IAM has no condition on the sort key.
    With `attributes`, the request may name no other top-level attribute (IAM's `dynamodb:Attributes`: the key,
    and every attribute of its update and condition expressions)."""

    actions: tuple[str, ...]
    partitions: tuple[str, ...]
    operator: str = "ForAllValues:StringLike"
    attributes: tuple[str, ...] = ()

    def conditions(self) -> dict[str, dict[str, list[str]]]:
        found = {self.operator: {"dynamodb:LeadingKeys": list(self.partitions)}}
        if self.attributes:
            found["ForAllValues:StringEquals"] = {"dynamodb:Attributes": list(self.attributes)}
        return found


@dataclass(frozen=True)
class FunctionSpec:
    """What differs between the functions: the entry point, the IAM actions on the table and the bucket, and how
    many concurrent executions a retained stage reserves for it (its share of the stage's capacity)."""

    name: str
    handler: str
    table_actions: tuple[str, ...]
    scoped_table_actions: tuple[PartitionScoped, ...] = ()
    object_actions: tuple[str, ...] = ()
    bucket_actions: tuple[str, ...] = ()
    index_actions: tuple[str, ...] = ()
    reserved_concurrency: int | None = None
    # CloudWatch actions on the account's alarms in the stack's Region (the rollout driver reads them; the alias
    # function, when a rollout starts).
    alarm_actions: tuple[str, ...] = ()
    # Actions on the stage's signing key alone (the key's ARN; the function then gets ARCA_SIGNING_KEY_ARN).
    key_actions: tuple[str, ...] = ()
    # Served behind the API: a candidate for SnapStart (`Functions(snap_start=True)`), invoked through an alias.
    api: bool = False
    # A function behind no API may run longer than API Gateway waits (TIMEOUT).
    timeout_seconds: int | None = None
    # Memory (and with it CPU: a full vCPU at 1,769 MB) where the work is computation, not waiting (MEMORY_MB).
    memory_mb: int | None = None


# Blobs live under this prefix (the functions' keys module: artifacts/<name>/_blobs/<sha256>); roles reach no
# other object of the bucket.
OBJECT_PREFIX = "artifacts/"

# The items an alias write creates or replaces: the alias, its history record, its rollout and its events.
ALIAS_PARTITIONS = ("__*-alias", "__*-history", "__*-rollout", "__*-events")
# Guarded promotion: the alias function puts policies and promotions, and checks in an alias write that what a
# policy's verdict read still holds (the policy, the required tags' rows, the soak alias).
GUARD_PARTITIONS = ("__*-policy", "__*-promotions")
GUARD_CHECKED = ("__*-policy", "__*-tags", "__*-alias")
# The Idempotency-Key records of the alias routes (keys.receipt_key), written in the alias's own transaction.
RECEIPT_PARTITIONS = ("__idem#*",)


def alias_writes(*, receipts: bool) -> tuple[PartitionScoped, ...]:
    """The writes of an alias transaction, for the alias function (`receipts`: it takes Idempotency-Keys) and the
    rollout driver."""
    return (
        PartitionScoped(
            actions=("dynamodb:PutItem",),
            partitions=ALIAS_PARTITIONS + ((*RECEIPT_PARTITIONS, *GUARD_PARTITIONS) if receipts else ()),
        ),
        # Pins on the target versions and LATEST's count and check are in the artifact's own partition, whose key
        # is any artifact name: what can be excluded is every registry partition (`__…`: aliases, history, the
        # name index and folder rows), never LATEST or another version of the artifact. So the attributes they
        # may name are limited too: the pins and LATEST's count, never content, tags or deletion marks.
        PartitionScoped(
            actions=("dynamodb:UpdateItem", "dynamodb:ConditionCheckItem"),
            partitions=("__*",),
            operator="ForAllValues:StringNotLike",
            attributes=ALIAS_ITEM_ATTRIBUTES,
        ),
        *((PartitionScoped(actions=("dynamodb:ConditionCheckItem",), partitions=GUARD_CHECKED),) if receipts else ()),
    )


# Least privilege per function; resolve can write nothing. TransactWriteItems has no IAM action of its
# own: it is authorised item by item by PutItem / UpdateItem / DeleteItem / ConditionCheckItem.
SPECS = (
    FunctionSpec(
        name="publish",
        handler="arca.handlers.publish.handler",
        api=True,
        table_actions=(
            "dynamodb:GetItem",
            "dynamodb:PutItem",
            "dynamodb:UpdateItem",
            "dynamodb:DeleteItem",
            "dynamodb:Query",
            "dynamodb:BatchWriteItem",
            # The tag transactions check that LATEST is live.
            "dynamodb:ConditionCheckItem",
        ),
        # PutObject and PutObjectTagging sign the upload URLs (an upload is tagged until published); GetObject
        # covers HeadObject and hashing, DeleteObjectTagging clears the upload tag on publish, GetObjectTagging
        # reads it on an older blob, which publish may rewrite in place (CopyObject: GetObject, PutObject and
        # PutObjectTagging); DeleteObject serves purge, DeleteObjectVersion a collection (retention's routes, or
        # an upload finishing an abandoned one), which deletes the exact versions it claimed. Multipart uploads:
        # PutObject also covers CreateMultipartUpload, the presigned UploadPart and CompleteMultipartUpload;
        # ListMultipartUploadParts tells which parts S3 has, AbortMultipartUpload frees them.
        object_actions=(
            "s3:GetObject",
            "s3:GetObjectTagging",
            "s3:PutObject",
            "s3:PutObjectTagging",
            "s3:DeleteObjectTagging",
            "s3:DeleteObject",
            "s3:DeleteObjectVersion",
            "s3:ListMultipartUploadParts",
            "s3:AbortMultipartUpload",
        ),
        # Without ListBucket, HeadObject on a missing key is a 403 instead of a 404; ListBucketVersions names the
        # object versions a collection claims.
        bucket_actions=("s3:ListBucket", "s3:ListBucketVersions"),
        # Publishing signs each version's manifest; no other function can sign.
        key_actions=("kms:Sign",),
        # Retention's expiry looks up, in the content index, versions published before blob counts existed.
        index_actions=("dynamodb:Query",),
        reserved_concurrency=20,
    ),
    FunctionSpec(
        name="alias",
        handler="arca.handlers.alias.handler",
        api=True,
        table_actions=("dynamodb:GetItem", "dynamodb:Query"),
        scoped_table_actions=alias_writes(receipts=True),
        # A rollout's start reads its alarms once, to warn of one that does not exist.
        alarm_actions=("cloudwatch:DescribeAlarms",),
        reserved_concurrency=10,
    ),
    FunctionSpec(
        name="resolve",
        handler="arca.handlers.resolve.handler",
        api=True,
        # BatchGetItem: a page of tag search hits reads its versions' tags and state in one call.
        table_actions=("dynamodb:GetItem", "dynamodb:Query", "dynamodb:BatchGetItem"),
        # Search and `sha256:` references read the table's secondary indexes.
        index_actions=("dynamodb:Query",),
        # A presigned GET carries the signer's permissions: resolve may read objects and nothing more.
        object_actions=("s3:GetObject",),
        # GET /signing-key shows the public half of the stage's key.
        key_actions=("kms:GetPublicKey",),
        reserved_concurrency=100,
    ),
    # The rollout driver: one step of a rollout per invocation, by the rollout state machine (infra/rollouts.py).
    # It writes what the alias function writes for a rollout, and reads alarms.
    FunctionSpec(
        name="rollout",
        handler="arca.handlers.rollout.handler",
        # Point reads of an alias or a version are a Query of one item (so that a link shows itself).
        table_actions=("dynamodb:GetItem", "dynamodb:Query"),
        scoped_table_actions=alias_writes(receipts=False),
        alarm_actions=("cloudwatch:DescribeAlarms",),
        reserved_concurrency=5,
    ),
    # The retention sweep (infra/retention.py runs it on a schedule): what an apply does (soft deletes and
    # expiries in transactions, attestation items removed in batches, the sweep's own progress item), the
    # sparse index of policies and the content index, and deleting objects. It never reads or writes content.
    FunctionSpec(
        name="retention",
        handler="arca.handlers.retention.handler",
        table_actions=(
            "dynamodb:GetItem",
            "dynamodb:Query",
            "dynamodb:PutItem",
            "dynamodb:UpdateItem",
            "dynamodb:DeleteItem",
            "dynamodb:ConditionCheckItem",
            "dynamodb:BatchWriteItem",
        ),
        index_actions=("dynamodb:Query",),
        # DeleteObject: expired attestations; DeleteObjectVersion: the exact versions a collection claimed;
        # ListBucket: the listing of a version's attestations; ListBucketVersions: the versions a claim records.
        object_actions=("s3:DeleteObject", "s3:DeleteObjectVersion"),
        bucket_actions=("s3:ListBucket", "s3:ListBucketVersions"),
        reserved_concurrency=1,
        timeout_seconds=300,
    ),
    # The background verification of multipart content (infra/verification.py runs it in a loop): it reads the
    # assembled object by ranges and hashes it, and records the progress on the upload's own item. Nothing else.
    FunctionSpec(
        name="verify",
        handler="arca.handlers.verify.handler",
        table_actions=(),
        scoped_table_actions=(
            PartitionScoped(actions=("dynamodb:GetItem", "dynamodb:UpdateItem"), partitions=("__*-uploads",)),
        ),
        object_actions=("s3:GetObject",),
        # Without ListBucket, a GetObject of a missing key is a 403 instead of a 404 (an object collected meanwhile).
        bucket_actions=("s3:ListBucket",),
        reserved_concurrency=5,
        # Hashing is sequential: one full vCPU (1,769 MB) hashes as fast as SHA-256 goes on one core.
        memory_mb=1769,
        timeout_seconds=900,
    ),
)


def powertools_version() -> str:
    """The aws-lambda-powertools version that requirements.txt pins (the tests run against it)."""
    found = re.search(r"^aws-lambda-powertools(?:\[[^\]]*\])?==([0-9.]+)\s*$", REQUIREMENTS.read_text(), re.M)
    if found is None:
        raise ValueError(f"{REQUIREMENTS} must pin aws-lambda-powertools with ==")
    return found.group(1)


@jsii.implements(ILocalBundling)
class _Compiled:
    """The code asset's local bundling (no Docker): the package with bytecode for the runtime (infra/asset.py)."""

    def __init__(self, source: Path, python: str | None) -> None:
        self.source = source
        self.python = python

    def try_bundle(self, output_dir: str, options: Any) -> bool:
        asset.build(self.source, Path(output_dir), self.python)
        return True


def code(scope: Construct, code_dir: Path) -> lambda_.Code:
    """The functions' code: `code_dir`'s packages, compiled by the runtime's Python (found by infra/asset.py); without
    one, source only, and a warning says the cold start then compiles Arca's modules."""
    python = asset.runtime_python(RUNTIME.name.removeprefix("python"))
    if python is None:
        Annotations.of(scope).add_warning_v2(
            "arca:asset-without-bytecode",
            f"no {RUNTIME.name} interpreter found (set PYTHON312): the functions' asset ships source only, and each "
            "cold start compiles Arca's modules",
        )
    bundling = BundlingOptions(
        image=DockerImage.from_registry("arca-local-bundling"), local=_Compiled(code_dir, python)
    )
    return lambda_.Code.from_asset(str(code_dir), exclude=["**/__pycache__", "**/*.pyc"], bundling=bundling)


def powertools_layer_parameter() -> str:
    arch = "arm64" if ARCHITECTURE == lambda_.Architecture.ARM_64 else "x86_64"
    return f"{POWERTOOLS_PARAMETER_PREFIX}/{arch}/{RUNTIME.name}/{powertools_version()}"


class Functions(Construct):
    """`publish`, `alias` and `resolve`, each with its own role, log group and the shared defaults.

    `by_name` maps the function names of arca.routes.FUNCTIONS to the functions. Every grant is a policy on the
    function's own role, never a resource policy on the table or the bucket, so the functions can change
    without touching the stack that owns the data. `reserve_concurrency` gives each function its spec's
    reserved concurrency. `specs` and `code_dir` default to Arca's own.

    `snap_start` turns on Lambda SnapStart for the API's functions (`FunctionSpec.api`): each then publishes a
    version on every change of its code or configuration, and `targets` maps its name to the alias `live` on
    that version, which is what the API must invoke (a snapshot exists only for a published version). Without
    SnapStart, `targets` holds the functions themselves.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        table: dynamodb.ITable,
        bucket: s3.IBucket,
        removal_policy: RemovalPolicy,
        reserve_concurrency: bool = False,
        snap_start: bool = False,
        specs: Iterable[FunctionSpec] = SPECS,
        code_dir: Path = ASSET_DIR,
        signing_key_arn: str | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        self._signing_key_arn = signing_key_arn
        self._reserve_concurrency = reserve_concurrency
        self._table = table
        self._bucket = bucket
        self._removal_policy = removal_policy
        self._snap_start = snap_start
        layer_arn = self.node.try_get_context("powertools_layer_arn") or ssm.StringParameter.value_for_string_parameter(
            self, powertools_layer_parameter()
        )
        self._layer = lambda_.LayerVersion.from_layer_version_arn(self, "PowertoolsLayer", layer_arn)
        # Arca's package and its bytecode: Powertools and pydantic come from the layer, boto3 from the runtime.
        self._code = code(self, code_dir)
        self.by_name: dict[str, lambda_.Function] = {}
        self.targets: dict[str, lambda_.IFunction] = {}
        for spec in specs:
            function = self.by_name[spec.name] = self._function(spec)
            self.targets[spec.name] = self._live_alias(function) if snap_start and spec.api else function

    @staticmethod
    def _live_alias(function: lambda_.Function) -> lambda_.Alias:
        """The alias `live` on the function's current version (a new version on every change of its code or
        configuration; the one it replaces is deleted, so one snapshot per function is cached and charged)."""
        return lambda_.Alias(function, "Live", alias_name="live", version=function.current_version)

    def add(self, spec: FunctionSpec) -> lambda_.Function:
        """A function that serves no route (the stream consumer), with the same defaults and a role of its own."""
        return self._function(spec)

    def _function(self, spec: FunctionSpec) -> lambda_.Function:
        title = spec.name.capitalize()
        log_group = logs.LogGroup(
            self,
            f"{title}Logs",
            retention=logs.RetentionDays.ONE_MONTH,
            removal_policy=self._removal_policy,
        )
        # A bare role: no AWSLambdaBasicExecutionRole, whose logs:* on every log group is more than needed.
        role = iam.Role(
            self,
            f"{title}Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description=f"Arca {spec.name} function",
        )
        if spec.table_actions:
            role.add_to_policy(iam.PolicyStatement(actions=list(spec.table_actions), resources=[self._table.table_arn]))
        if spec.index_actions:
            role.add_to_policy(
                iam.PolicyStatement(
                    actions=list(spec.index_actions),
                    resources=[f"{self._table.table_arn}/index/{index}" for index in INDEXES],
                )
            )
        for scoped in spec.scoped_table_actions:
            role.add_to_policy(
                iam.PolicyStatement(
                    actions=list(scoped.actions),
                    resources=[self._table.table_arn],
                    conditions=scoped.conditions(),
                )
            )
        if spec.object_actions:
            role.add_to_policy(
                iam.PolicyStatement(
                    actions=list(spec.object_actions), resources=[self._bucket.arn_for_objects(f"{OBJECT_PREFIX}*")]
                )
            )
        if spec.bucket_actions:
            role.add_to_policy(
                iam.PolicyStatement(actions=list(spec.bucket_actions), resources=[self._bucket.bucket_arn])
            )
        signing = bool(spec.key_actions and self._signing_key_arn)
        if signing:
            role.add_to_policy(iam.PolicyStatement(actions=list(spec.key_actions), resources=[self._signing_key_arn]))
        if spec.alarm_actions:
            stack = Stack.of(self)
            alarms = stack.format_arn(service="cloudwatch", resource="alarm", resource_name="*", arn_format=COLON)
            role.add_to_policy(iam.PolicyStatement(actions=list(spec.alarm_actions), resources=[alarms]))
        log_group.grant_write(role)

        function = lambda_.Function(
            self,
            title,
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            handler=spec.handler,
            code=self._code,
            layers=[self._layer],
            memory_size=spec.memory_mb or MEMORY_MB,
            timeout=Duration.seconds(spec.timeout_seconds) if spec.timeout_seconds else TIMEOUT,
            # A stage's own ceiling: its functions never run more at once than reserved, whatever other
            # stages or applications of the account do, and never starve them either.
            reserved_concurrent_executions=spec.reserved_concurrency if self._reserve_concurrency else None,
            tracing=lambda_.Tracing.ACTIVE,
            snap_start=lambda_.SnapStartConf.ON_PUBLISHED_VERSIONS if self._snap_start and spec.api else None,
            current_version_options=lambda_.VersionOptions(removal_policy=RemovalPolicy.DESTROY),
            log_group=log_group,
            role=role,
            description=f"Arca {spec.name}",
            environment={
                "POWERTOOLS_SERVICE_NAME": f"arca-{spec.name}",
                "POWERTOOLS_METRICS_NAMESPACE": "Arca",
                "POWERTOOLS_LOG_LEVEL": "INFO",
                # Names read by arca.settings.
                "ARCA_TABLE_NAME": self._table.table_name,
                "ARCA_BUCKET_NAME": self._bucket.bucket_name,
                "ARCA_DOWNLOAD_URL_TTL": str(URL_TTL_SECONDS),
                "ARCA_UPLOAD_URL_TTL": str(URL_TTL_SECONDS),
                **({"ARCA_SIGNING_KEY_ARN": str(self._signing_key_arn)} if signing else {}),
            },
        )
        if self._snap_start and spec.api:
            # CDK warns that SnapStart needs published versions: the alias `live` publishes one on every change.
            Annotations.of(function).acknowledge_warning(
                "@aws-cdk/aws-lambda:snapStartRequirePublish", "the alias `live` is on the function's current version"
            )
        # Suppressions are NagPackSuppression objects: in a plain dict, cdk-nag drops `applies_to` and the
        # suppression then covers every finding of the rule.
        NagSuppressions.add_resource_suppressions(
            role,
            [
                NagPackSuppression(
                    id="AwsSolutions-IAM5",
                    reason="Object keys are content hashes chosen at run time, so object actions are granted on "
                    "the objects under the blobs' prefix; X-Ray trace segments cannot be scoped to a resource; "
                    "rollouts name their alarms at run time, so alarms are read in the stack's account and Region.",
                    # The bucket is imported by the name the storage stack publishes in SSM.
                    applies_to=[
                        RegexAppliesTo(
                            regex=r"/^Resource::arn:(<AWS::Partition>|aws[\w-]*):s3:::"
                            r"<SsmParameterValue\w*bucketname\w*>\/artifacts\/\*$/"
                        ),
                        "Resource::*",
                        RegexAppliesTo(
                            regex=r"/^Resource::arn:(<AWS::Partition>|aws[\w-]*):cloudwatch:(<AWS::Region>|[\w-]+):"
                            r"(<AWS::AccountId>|\d{12}):alarm:\*$/"
                        ),
                    ],
                )
            ],
            apply_to_children=True,
        )
        NagSuppressions.add_resource_suppressions(
            function,
            [
                NagPackSuppression(
                    id="AwsSolutions-L1",
                    reason=f"{RUNTIME.name} matches the public Powertools layer of {powertools_layer_parameter()}.",
                )
            ],
        )
        return function
