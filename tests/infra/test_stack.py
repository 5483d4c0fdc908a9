"""The synthesized templates of a stage: storage, least privilege, the route table, and the service limits.

The table and the bucket are read from the storage stack, everything else from the service stack. Each stage is
synthesized once per test process (tests/infra/stages.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_lambda as lambda_
from aws_cdk.assertions import Match, Template

from arca.adapters import keys
from arca.api import openapi
from arca.routes import FAMILY_METHODS, FUNCTIONS, ROUTES
from infra import figures, policies
from infra.api import Api
from infra.functions import REQUIREMENTS
from infra.schema import ATTRIBUTE_DEFINITIONS, GLOBAL_SECONDARY_INDEXES, INDEXES, KEY_SCHEMA
from infra.storage import StorageParameters
from local.iam import POLICIES
from tests.infra import stages

MAX_NAME_DEPTH = 8  # a name is one to eight segments

# What each function may do, spelled out here rather than read from infra: unconditioned table actions, then
# table actions allowed only on some partitions (IAM's dynamodb:LeadingKeys), then object and bucket actions.
TABLE_ACTIONS = {
    "publish": {
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:DeleteItem",
        "dynamodb:Query",
        "dynamodb:BatchWriteItem",
        "dynamodb:ConditionCheckItem",
    },
    "alias": {"dynamodb:GetItem", "dynamodb:Query"},
    "resolve": {"dynamodb:GetItem", "dynamodb:Query", "dynamodb:BatchGetItem"},
    "rollout": {"dynamodb:GetItem", "dynamodb:Query"},
    "retention": {
        "dynamodb:GetItem",
        "dynamodb:Query",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:DeleteItem",
        "dynamodb:ConditionCheckItem",
        "dynamodb:BatchWriteItem",
    },
    "verify": set(),
}
# Actions on the table's secondary indexes (search and `sha256:` references are reads; retention's expiry looks
# up content, its sweep lists the policies).
INDEX_ACTIONS = {
    "publish": {"dynamodb:Query"},
    "alias": set(),
    "resolve": {"dynamodb:Query"},
    "rollout": set(),
    "retention": {"dynamodb:Query"},
    "verify": set(),
}
# The alias and rollout roles update LATEST and versions (outside the registry's `__` partitions) naming only the
# pins, LATEST's alias count and event order, and the attributes of their conditions.
PINS_AND_COUNT = {
    "ForAllValues:StringNotLike": {"dynamodb:LeadingKeys": ["__*"]},
    "ForAllValues:StringEquals": {
        "dynamodb:Attributes": [
            "pk",
            "sk",
            "pinned_by",
            "deleted",
            "alias_count",
            "last_event",
            "purging",
            "purged",
            "attestations",
        ]
    },
}
# An alias write under a policy checks the policy, the required tags' rows and the soak alias (changing nothing).
GUARD_CHECKS = {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["__*-policy", "__*-tags", "__*-alias"]}}
# Per function: (action, condition) of each partition-scoped table grant.
SCOPED_TABLE_ACTIONS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "publish": [],
    "alias": [
        # Its Idempotency-Key records too (`__idem#<caller>`), and the aliases' policies and promotions.
        (
            "dynamodb:PutItem",
            {
                "ForAllValues:StringLike": {
                    "dynamodb:LeadingKeys": [
                        "__*-alias",
                        "__*-history",
                        "__*-rollout",
                        "__*-events",
                        "__idem#*",
                        "__*-policy",
                        "__*-promotions",
                    ]
                }
            },
        ),
        ("dynamodb:UpdateItem", PINS_AND_COUNT),
        ("dynamodb:ConditionCheckItem", PINS_AND_COUNT),
        ("dynamodb:ConditionCheckItem", GUARD_CHECKS),
    ],
    "resolve": [],
    "rollout": [
        (
            "dynamodb:PutItem",
            {
                "ForAllValues:StringLike": {
                    "dynamodb:LeadingKeys": ["__*-alias", "__*-history", "__*-rollout", "__*-events"]
                }
            },
        ),
        ("dynamodb:UpdateItem", PINS_AND_COUNT),
        ("dynamodb:ConditionCheckItem", PINS_AND_COUNT),
    ],
    "retention": [],
    # The upload's own item: its state and the hashing's progress.
    "verify": [
        ("dynamodb:GetItem", {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["__*-uploads"]}}),
        ("dynamodb:UpdateItem", {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["__*-uploads"]}}),
    ],
}
OBJECT_ACTIONS = {
    "publish": {
        "s3:GetObject",
        "s3:GetObjectTagging",
        "s3:PutObject",
        "s3:PutObjectTagging",
        "s3:DeleteObjectTagging",
        "s3:DeleteObject",
        "s3:DeleteObjectVersion",
        "s3:ListMultipartUploadParts",
        "s3:AbortMultipartUpload",
    },
    "alias": set(),
    "resolve": {"s3:GetObject"},
    "rollout": set(),
    "retention": {"s3:DeleteObject", "s3:DeleteObjectVersion"},
    "verify": {"s3:GetObject"},
}
BUCKET_ACTIONS = {
    "publish": {"s3:ListBucket", "s3:ListBucketVersions"},
    "alias": set(),
    "resolve": set(),
    "rollout": set(),
    "retention": {"s3:ListBucket", "s3:ListBucketVersions"},
    "verify": {"s3:ListBucket"},
}
# Beyond the table and the bucket: the alias function starts rollout executions and reads their alarms once, the
# driver reads alarms.
OTHER_ACTIONS: dict[str, set[str]] = {
    "publish": {"kms:Sign", "states:StartExecution"},
    "alias": {"states:StartExecution", "cloudwatch:DescribeAlarms"},
    "resolve": {"kms:GetPublicKey"},
    "rollout": {"cloudwatch:DescribeAlarms"},
    "retention": set(),
    "verify": set(),
}
SIGNING_FUNCTIONS = ("publish", "resolve")
# The functions behind the API, the rollout driver (invoked by its state machine only) and the retention sweep
# (invoked by its schedule).
ALL_FUNCTIONS = (*FUNCTIONS, "rollout", "retention", "verify")
# Added by tracing and by the function's own log group.
PLUMBING_ACTIONS = {"xray:PutTraceSegments", "xray:PutTelemetryRecords", "logs:CreateLogStream", "logs:PutLogEvents"}
WRITE_ACTIONS = {
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:BatchWriteItem",
    "dynamodb:ConditionCheckItem",
    "s3:PutObject",
    "s3:DeleteObject",
    "s3:DeleteObjectVersion",
}


_synth = stages.synth  # once per configuration and test process, shared by every infra module


@pytest.fixture(scope="module")
def storage() -> dict[str, Any]:
    """The dev storage stack's template: the table and the bucket."""
    return _synth("dev").storage


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    """The dev service stack's template: functions, roles and the API."""
    return _synth("dev").service


def _resources(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {key: value for key, value in template["Resources"].items() if value["Type"] == kind}


def _only(template: dict[str, Any], kind: str) -> tuple[str, dict[str, Any]]:
    (found,) = _resources(template, kind).items()
    return found


def _functions_by_name(template: dict[str, Any]) -> dict[str, str]:
    """Function name (publish, alias, resolve) -> logical id, read from POWERTOOLS_SERVICE_NAME."""
    names = {}
    for logical_id, function in _resources(template, "AWS::Lambda::Function").items():
        service = function["Properties"]["Environment"]["Variables"]["POWERTOOLS_SERVICE_NAME"]
        names[service.removeprefix("arca-")] = logical_id
    return names


def _ssm_parameter(template: dict[str, Any], name: str) -> str:
    """The logical id of the template parameter resolved from the SSM parameter `name` at deploy time."""
    found: list[str] = [
        key
        for key, parameter in template["Parameters"].items()
        if parameter["Type"] == "AWS::SSM::Parameter::Value<String>" and parameter["Default"] == name
    ]
    assert len(found) == 1, f"{len(found)} parameters read {name}"
    return found[0]


def _storage_refs(template: dict[str, Any]) -> tuple[str, str]:
    """The logical ids of the parameters the dev service stack reads the table and the bucket names from."""
    names = StorageParameters.for_stage("dev")
    return _ssm_parameter(template, names.table_name), _ssm_parameter(template, names.bucket_name)


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _grants(template: dict[str, Any], function_id: str) -> Iterator[tuple[str, str]]:
    """(action, resource as JSON) for every Allow of the function's role, over all its policies."""
    for action, resource, _ in _conditional_grants(template, function_id):
        yield action, resource


def _conditional_grants(template: dict[str, Any], function_id: str) -> Iterator[tuple[str, str, str]]:
    """(action, resource as JSON, condition as JSON or "") for every Allow of the function's role."""
    role_id = template["Resources"][function_id]["Properties"]["Role"]["Fn::GetAtt"][0]
    role = template["Resources"][role_id]["Properties"]
    assert "ManagedPolicyArns" not in role
    documents = [policy["PolicyDocument"] for policy in role.get("Policies", [])]
    documents += [
        policy["Properties"]["PolicyDocument"]
        for policy in _resources(template, "AWS::IAM::Policy").values()
        if {"Ref": role_id} in policy["Properties"]["Roles"]
    ]
    for document in documents:
        for statement in document["Statement"]:
            assert statement["Effect"] == "Allow"
            condition = json.dumps(statement["Condition"], sort_keys=True) if "Condition" in statement else ""
            for action in _as_list(statement["Action"]):
                for resource in _as_list(statement["Resource"]):
                    yield action, json.dumps(resource, sort_keys=True), condition


def _arn(parts: list[Any]) -> str:
    """An ARN joined from `parts` as CloudFormation spells it, in the JSON form `_grants` yields."""
    return json.dumps({"Fn::Join": ["", parts]}, sort_keys=True)


def _body(template: dict[str, Any]) -> dict[str, Any]:
    """The OpenAPI document the REST API is defined by (its Body)."""
    _, api = _only(template, "AWS::ApiGateway::RestApi")
    return dict(api["Properties"]["Body"])


def _methods(template: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """(HTTP method, path) -> operation of the API's definition."""
    return {
        (method.upper(), path): operation
        for path, item in _body(template)["paths"].items()
        for method, operation in item.items()
    }


def _integration_target(operation: dict[str, Any]) -> str:
    """The logical id of the function a proxy integration invokes."""
    parts = operation["x-amazon-apigateway-integration"]["uri"]["Fn::Join"][1]
    targets: list[str] = [part["Fn::GetAtt"][0] for part in parts if isinstance(part, dict) and "Fn::GetAtt" in part]
    (target,) = targets
    return target


def test_table_keys_are_the_shared_schema(storage: dict[str, Any]) -> None:
    # Given the dev storage template
    # When the table is read
    _, table = _only(storage, "AWS::DynamoDB::Table")
    # Then its keys are exactly those local copies of the table are created with
    assert table["Properties"]["KeySchema"] == KEY_SCHEMA
    assert table["Properties"]["AttributeDefinitions"] == ATTRIBUTE_DEFINITIONS


def test_table_has_the_search_and_time_indexes_of_the_shared_schema(storage: dict[str, Any]) -> None:
    # Given the dev storage template
    # When the table's global secondary indexes are read
    properties = _only(storage, "AWS::DynamoDB::Table")[1]["Properties"]
    indexes = {i["IndexName"]: i for i in properties["GlobalSecondaryIndexes"]}
    # Then they are the search index (digest, tags) and the time index, keyed on string attributes, projecting
    # every attribute, exactly as local copies of the table are created
    assert set(indexes) == {"gsi1", "gsi2"}
    for name, (hash_key, range_key) in (("gsi1", ("gsi1pk", "gsi1sk")), ("gsi2", ("gsi2pk", "gsi2sk"))):
        assert indexes[name]["KeySchema"] == [
            {"AttributeName": hash_key, "KeyType": "HASH"},
            {"AttributeName": range_key, "KeyType": "RANGE"},
        ]
        assert indexes[name]["Projection"] == {"ProjectionType": "ALL"}
    assert list(indexes.values()) == GLOBAL_SECONDARY_INDEXES
    defined = {d["AttributeName"]: d["AttributeType"] for d in properties["AttributeDefinitions"]}
    assert {defined[a] for a in ("gsi1pk", "gsi1sk", "gsi2pk", "gsi2sk")} == {"S"}


def test_the_functions_index_names_are_the_schemas() -> None:
    # The functions' keys module and the stack's schema are separate code (neither imports the other)
    assert keys.INDEX_KEYS == INDEXES


def test_table_is_on_demand_encrypted_and_point_in_time_recoverable(storage: dict[str, Any]) -> None:
    # Given the dev storage template
    # When the table is read
    properties = _only(storage, "AWS::DynamoDB::Table")[1]["Properties"]
    # Then it bills per request, keeps PITR, and encrypts with the AWS-managed KMS key
    assert properties["BillingMode"] == "PAY_PER_REQUEST"
    assert properties["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert properties["TimeToLiveSpecification"] == {"AttributeName": "ttl", "Enabled": True}
    assert properties["SSESpecification"] == {"SSEEnabled": True}
    assert "TableName" not in properties


@pytest.mark.parametrize(
    ("stage", "policy", "protected"),
    [("prod", "Retain", True), ("staging", "Retain", True), ("dev", "Delete", False)],
)
def test_only_the_dev_stage_lets_the_stack_delete_its_data(stage: str, policy: str, protected: bool) -> None:
    # Given the storage stack of a stage
    # When its template is synthesized
    template = _synth(stage).storage
    # Then the table and the bucket outlive the stack, the table deletion-protected, except on dev
    for kind in ("AWS::DynamoDB::Table", "AWS::S3::Bucket"):
        resource = _only(template, kind)[1]
        assert (resource["DeletionPolicy"], resource["UpdateReplacePolicy"]) == (policy, policy)
    table = _only(template, "AWS::DynamoDB::Table")[1]["Properties"]
    assert table.get("DeletionProtectionEnabled", False) is protected


def test_bucket_is_private_encrypted_and_aborts_stale_multipart_uploads(storage: dict[str, Any]) -> None:
    # Given the dev storage template
    # When the bucket is read
    properties = _only(storage, "AWS::S3::Bucket")[1]["Properties"]
    # Then no public access, S3-managed encryption, no versioning, and a 7-day multipart cleanup rule
    assert properties["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True,
        "BlockPublicPolicy": True,
        "IgnorePublicAcls": True,
        "RestrictPublicBuckets": True,
    }
    assert properties["BucketEncryption"]["ServerSideEncryptionConfiguration"] == [
        {"ServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}
    ]
    assert "VersioningConfiguration" not in properties
    assert "BucketName" not in properties
    assert {"AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 7}, "Status": "Enabled"}.items() <= (
        properties["LifecycleConfiguration"]["Rules"][0].items()
    )


def test_bucket_policy_refuses_requests_without_tls(storage: dict[str, Any]) -> None:
    # Given the dev storage template
    bucket_id, _ = _only(storage, "AWS::S3::Bucket")
    # When the bucket policy is read
    policy = _only(storage, "AWS::S3::BucketPolicy")[1]["Properties"]
    # Then it denies every action on the bucket and its objects over plain HTTP, and grants nothing: the
    # functions' permissions are on their own roles
    assert policy["Bucket"] == {"Ref": bucket_id}
    (statement,) = policy["PolicyDocument"]["Statement"]
    assert statement["Effect"] == "Deny"
    assert statement["Action"] == "s3:*"
    assert statement["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


@pytest.mark.parametrize("name", ALL_FUNCTIONS)
def test_function_runs_its_handler_with_the_shared_defaults(template: dict[str, Any], name: str) -> None:
    # Given the dev service template and the parameters holding the table and bucket names
    table_name, bucket_name = _storage_refs(template)
    # When the function is read
    properties = template["Resources"][_functions_by_name(template)[name]]["Properties"]
    # Then it runs the handler on Python 3.12 with the Powertools layer, traced, and configured by env vars
    assert properties["Handler"] == f"arca.handlers.{name}.handler"
    assert properties["Runtime"] == "python3.12"
    assert properties["Architectures"] == ["x86_64"]
    # API Gateway waits 29 s; the retention sweep, behind no API, runs for up to five minutes an invocation, and the
    # verification of multipart content for 15 minutes on a full vCPU (hashing is sequential computation)
    expected = {"retention": (512, 300), "verify": (1769, 900)}.get(name, (512, 29))
    assert (properties["MemorySize"], properties["Timeout"]) == expected
    assert properties["TracingConfig"] == {"Mode": "Active"}
    assert "FunctionName" not in properties
    assert properties["Environment"]["Variables"] == {
        "POWERTOOLS_SERVICE_NAME": f"arca-{name}",
        "POWERTOOLS_METRICS_NAMESPACE": "Arca",
        "POWERTOOLS_LOG_LEVEL": "INFO",
        "ARCA_TABLE_NAME": {"Ref": table_name},
        "ARCA_BUCKET_NAME": {"Ref": bucket_name},
        "ARCA_DOWNLOAD_URL_TTL": "900",
        "ARCA_UPLOAD_URL_TTL": "900",
        **({"ARCA_ROLLOUT_STATE_MACHINE_ARN": {"Ref": _state_machine(template)}} if name == "alias" else {}),
        **({"ARCA_VERIFY_STATE_MACHINE_ARN": {"Ref": _state_machine(template, VERIFY)}} if name == "publish" else {}),
        **({"ARCA_SIGNING_KEY_ARN": {"Ref": _signing_key_ref(template)}} if name in SIGNING_FUNCTIONS else {}),
    }


def _signing_key_ref(template: dict[str, Any]) -> str:
    return _ssm_parameter(template, StorageParameters.for_stage("dev").signing_key_arn)


def test_only_publish_signs_and_only_resolve_reads_the_public_key(template: dict[str, Any]) -> None:
    # Given the dev service template
    functions = _functions_by_name(template)
    # When the KMS grants of every function's role are read
    found = {
        name: {(action, resource) for action, resource in _grants(template, function_id) if action.startswith("kms:")}
        for name, function_id in functions.items()
    }
    # Then publish may sign and resolve may read the public key, on the stage's signing key alone; nobody else
    key = json.dumps({"Ref": _signing_key_ref(template)}, sort_keys=True)
    assert found["publish"] == {("kms:Sign", key)}
    assert found["resolve"] == {("kms:GetPublicKey", key)}
    assert all(not grants for name, grants in found.items() if name not in SIGNING_FUNCTIONS)


@pytest.mark.parametrize(("stage", "policy"), [("prod", "Retain"), ("dev", "Delete")])
def test_the_signing_key_is_an_asymmetric_p256_key_kept_with_the_data(stage: str, policy: str) -> None:
    # Given the storage stack of a stage
    template = _synth(stage).storage
    # When its KMS key is read
    key_id, key = _only(template, "AWS::KMS::Key")
    # Then it signs and verifies with ECC NIST P-256, goes only with the table and the bucket, and its ARN is
    # published for the service stack
    assert key["Properties"]["KeySpec"] == "ECC_NIST_P256"
    assert key["Properties"]["KeyUsage"] == "SIGN_VERIFY"
    assert (key["DeletionPolicy"], key["UpdateReplacePolicy"]) == (policy, policy)
    parameters = [p["Properties"] for p in _resources(template, "AWS::SSM::Parameter").values()]
    assert {
        "Type": "String",
        "Name": f"/arca/{stage}/storage/signing-key-arn",
        "Value": {"Fn::GetAtt": [key_id, "Arn"]},
    } in [{k: p[k] for k in ("Type", "Name", "Value")} for p in parameters]


def test_powertools_layer_is_the_public_one_of_the_pinned_version(template: dict[str, Any]) -> None:
    # Given the version requirements.txt pins
    version = re.search(r"aws-lambda-powertools\[tracer\]==([0-9.]+)", REQUIREMENTS.read_text()).group(1)  # type: ignore[union-attr]
    # When the functions' layers are read
    layers = {json.dumps(f["Properties"]["Layers"]) for f in _resources(template, "AWS::Lambda::Function").values()}
    # Then all share one layer, resolved at deploy time from Powertools' public SSM parameter of that version
    (only,) = layers
    (ref,) = json.loads(only)
    parameter = template["Parameters"][ref["Ref"]]
    assert parameter["Type"] == "AWS::SSM::Parameter::Value<String>"
    assert parameter["Default"] == f"/aws/service/powertools/python/x86_64/python3.12/{version}"


def test_each_function_logs_to_its_own_group_kept_one_month(template: dict[str, Any]) -> None:
    # Given the dev service template
    log_groups = _resources(template, "AWS::Logs::LogGroup")
    # When each function's logging configuration is read
    targets = [
        function["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
        for function in _resources(template, "AWS::Lambda::Function").values()
    ]
    # Then every function has a distinct log group with a 30-day retention
    assert len(set(targets)) == len(ALL_FUNCTIONS) + 1  # and the events function
    assert all(log_groups[target]["Properties"]["RetentionInDays"] == 30 for target in targets)


@pytest.mark.parametrize("name", ALL_FUNCTIONS)
def test_function_role_grants_exactly_its_table_and_bucket_actions(template: dict[str, Any], name: str) -> None:
    # Given the dev service template and the ARNs of the table, the bucket and its blobs, built from the names
    # the storage stack publishes (dev is environment-agnostic: partition, region and account are pseudo params)
    table_name, bucket_name = _storage_refs(template)
    partition, region, account = ({"Ref": f"AWS::{pseudo}"} for pseudo in ("Partition", "Region", "AccountId"))
    table_arn = _arn(["arn:", partition, ":dynamodb:", region, ":", account, ":table/", {"Ref": table_name}])
    bucket_arn = _arn(["arn:", partition, ":s3:::", {"Ref": bucket_name}])
    blobs_arn = _arn(["arn:", partition, ":s3:::", {"Ref": bucket_name}, "/artifacts/*"])
    # When the grants of the function's role are collected, with their conditions
    grants = set(_conditional_grants(template, _functions_by_name(template)[name]))
    # Then it has exactly the spec's actions, each on the right resource under the right condition, plus tracing
    # and its own logs; object actions reach only the blobs' prefix
    scoped = SCOPED_TABLE_ACTIONS[name]
    expected_data = (
        {(action, table_arn, "") for action in TABLE_ACTIONS[name]}
        | {(action, table_arn, json.dumps(condition, sort_keys=True)) for action, condition in scoped}
        | {(action, blobs_arn, "") for action in OBJECT_ACTIONS[name]}
        | {(action, bucket_arn, "") for action in BUCKET_ACTIONS[name]}
        | {
            (
                action,
                _arn(
                    [
                        "arn:",
                        partition,
                        ":dynamodb:",
                        region,
                        ":",
                        account,
                        ":table/",
                        {"Ref": table_name},
                        f"/index/{index}",
                    ]
                ),
                "",
            )
            for action in INDEX_ACTIONS[name]
            for index in ("gsi1", "gsi2")
        }
    )
    data_grants = {grant for grant in grants if grant[0].split(":")[0] in {"dynamodb", "s3"}}
    assert data_grants == expected_data
    others = {action for action, _, _ in grants} - {action for action, _, _ in data_grants}
    assert others == PLUMBING_ACTIONS | OTHER_ACTIONS[name]
    assert all(condition == "" for action, _, condition in grants if action in PLUMBING_ACTIONS)


def test_alias_role_writes_only_alias_and_history_items_and_never_registry_rows(template: dict[str, Any]) -> None:
    # Given the alias function's grants
    grants = list(_conditional_grants(template, _functions_by_name(template)["alias"]))
    # When the table writes are read with their conditions
    writes = {action: json.loads(condition) if condition else None for action, _, condition in grants}
    guarded = [json.loads(c) for a, _, c in grants if a == "dynamodb:ConditionCheckItem" and "-policy" in c]
    # Then no write is unconditioned: Puts only on `__<name>-alias` / `-history` / `-events` partitions, and the
    # pins and the LATEST check only outside the registry's `__` partitions (IAM has no sort-key condition)
    for action in ("dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:ConditionCheckItem"):
        assert writes[action] is not None, action
    assert writes["dynamodb:PutItem"]["ForAllValues:StringLike"]["dynamodb:LeadingKeys"] == [
        "__*-alias",
        "__*-history",
        "__*-rollout",
        "__*-events",
        "__idem#*",
        "__*-policy",
        "__*-promotions",
    ]
    assert guarded == [GUARD_CHECKS]
    assert "dynamodb:DeleteItem" not in writes and "dynamodb:BatchWriteItem" not in writes


def test_resolve_role_can_write_nothing(template: dict[str, Any]) -> None:
    # Given the dev service template
    # When the grants of the resolve function's role are collected
    actions = {action for action, _ in _grants(template, _functions_by_name(template)["resolve"])}
    # Then none of them writes, and none is a wildcard
    assert not actions & WRITE_ACTIONS
    assert not any("*" in action for action in actions)


def test_every_method_requires_iam_authorisation(template: dict[str, Any]) -> None:
    # Given the dev service template: no method is a CloudFormation resource, the API's definition holds them
    assert not _resources(template, "AWS::ApiGateway::Method")
    body = _body(template)
    # When every operation of the definition is read
    operations = _methods(template).values()
    # Then each one names the one security scheme, which is SigV4 (IAM authorisation)
    assert operations
    assert all(operation["security"] == [{"sigv4": []}] for operation in operations)
    assert body["components"]["securitySchemes"] == {
        "sigv4": {"type": "apiKey", "name": "Authorization", "in": "header", "x-amazon-apigateway-authtype": "awsSigv4"}
    }


def _gateway_resource(paths: list[str], request: str) -> str | None:
    """The resource API Gateway matches a request path to, among the definition's paths: at each level a literal
    segment before a path parameter, and a greedy `{proxy+}` takes the rest of the path."""
    found = ""
    rest = request.strip("/").split("/")
    children: dict[str, set[str]] = {}
    for path in paths:
        parts = path.strip("/").split("/")
        for end in range(1, len(parts) + 1):
            children.setdefault("/".join(parts[: end - 1]), set()).add(parts[end - 1])
    while rest:
        below = children.get(found.strip("/"), set())
        segment, rest = rest[0], rest[1:]
        literal = segment if segment in below else None
        param = next((c for c in below if c.startswith("{") and not c.endswith("+}")), None)
        greedy = next((c for c in below if c.endswith("+}")), None)
        step = literal or param or greedy
        if step is None:
            return None
        found = f"{found}/{step}"
        if step == greedy:
            return found
    return found or "/"


def _sample(path: str, name: str) -> str:
    """A request path of a route: its name, and a value for each other parameter."""
    for param, value in (("{name}", name), ("{repo}", "org/model"), ("{filename}", "sub/w.bin"), ("{path}", "a/b")):
        path = path.replace(param, value)
    return re.sub(r"\{\w+\}", "x1", path)


def test_api_gateway_sends_every_route_at_every_name_depth_to_its_function(template: dict[str, Any]) -> None:
    # Given the dev template's API definition and the route table
    functions = {logical_id: name for name, logical_id in _functions_by_name(template).items()}
    methods = _methods(template)
    paths = list(_body(template)["paths"])
    names = ["/".join(f"s{i}" for i in range(1, depth + 1)) for depth in range(1, MAX_NAME_DEPTH + 1)]
    for route in ROUTES:
        for name in names if "{name}" in route.path else names[:1]:
            # When API Gateway matches a request of the route (a name of each depth) to a resource and a method
            resource = _gateway_resource(paths, _sample(route.path, name))
            # Then there is one, a Lambda proxy to the route's function, its path parameters declared
            assert resource is not None and (route.method, resource) in methods, (route.method, route.path, name)
            operation = methods[(route.method, resource)]
            integration = operation["x-amazon-apigateway-integration"]
            assert (integration["type"], integration["httpMethod"]) == ("aws_proxy", "POST")
            assert functions[_integration_target(operation)] == route.function, (route.method, route.path)
            params = {p["name"] for p in operation["parameters"] if p["in"] == "path" and p["required"]}
            assert params == set(re.findall(r"\{(\w+)\+?\}", resource))
    operation_ids = [operation["operationId"] for operation in methods.values()]
    assert len(set(operation_ids)) == len(operation_ids)


def test_the_api_definition_spells_each_name_depth_only_up_to_a_family(template: dict[str, Any]) -> None:
    # Given the API's definition, its paths read back with a name of one to eight segments as `{name}`
    folded = {(method, re.sub(r"\{n1\}(/\{n\d\})*", "{name}", path)) for method, path in _methods(template)}
    # When it is compared with the route table: the routes outside families, each family's greedy methods
    outside = {(r.method, r.path) for r in ROUTES if r.family is None}
    greedy = {(m, f"{f.prefix}/{{proxy+}}") for f, methods in FAMILY_METHODS.items() for m in methods}
    # Then those are exactly its operations, and the served document has every route but the placeholders and
    # OCI's (which OCI's specification defines)
    assert folded == outside | greedy
    served = {(method.upper(), path) for path, item in openapi.document()["paths"].items() for method in item}
    assert served == {(route.method, route.path) for route in ROUTES if route.documented}


def test_each_function_grants_api_gateway_one_invoke_permission(template: dict[str, Any]) -> None:
    # Given the dev service template
    rest_api_id, _ = _only(template, "AWS::ApiGateway::RestApi")
    # When the Lambda permissions are read
    permissions = [p["Properties"] for p in _resources(template, "AWS::Lambda::Permission").values()]
    permissions = [p for p in permissions if p["Principal"] != "events.amazonaws.com"]  # the retention schedule's
    # Then there is one per function that serves routes, for API Gateway, limited to this API
    by_name = _functions_by_name(template)
    assert sorted(p["FunctionName"]["Fn::GetAtt"][0] for p in permissions) == sorted(by_name[n] for n in FUNCTIONS)
    for permission in permissions:
        assert permission["Principal"] == "apigateway.amazonaws.com"
        assert {"Ref": rest_api_id} in permission["SourceArn"]["Fn::Join"][1]


def test_stage_is_named_after_the_stage_and_logs_traces_and_throttles(template: dict[str, Any]) -> None:
    # Given the dev service template
    log_groups = _resources(template, "AWS::Logs::LogGroup")
    # When the API stage is read
    stage = _only(template, "AWS::ApiGateway::Stage")[1]["Properties"]
    # Then it is "dev", traced, with JSON access logs to a log group, metrics, and throttling
    assert stage["StageName"] == "dev"
    assert stage["TracingEnabled"] is True
    destination = stage["AccessLogSetting"]["DestinationArn"]["Fn::Join"][1]
    assert any(isinstance(part, dict) and part.get("Ref") in log_groups for part in destination)
    assert json.loads(stage["AccessLogSetting"]["Format"])["requestId"] == "$context.requestId"
    (settings,) = stage["MethodSettings"]
    assert settings["MetricsEnabled"] is True
    assert settings["ThrottlingRateLimit"] > 0
    assert settings["ThrottlingBurstLimit"] >= settings["ThrottlingRateLimit"]


def test_errors_raised_by_api_gateway_use_the_spec_error_shape(template: dict[str, Any]) -> None:
    # Given the dev service template
    # When the gateway responses of the API's definition are read (none is a resource of its own, which a body
    # update could drop)
    assert not _resources(template, "AWS::ApiGateway::GatewayResponse")
    responses = {
        response_type: response["responseTemplates"]["application/json"]
        for response_type, response in _body(template)["x-amazon-apigateway-gateway-responses"].items()
    }
    # Then 4xx and 5xx that API Gateway answers itself render {"error": {code, message, request_id}}, and a body
    # too large for it OCI's shape as well (SIZE_INVALID naming the proxy), for OCI's clients under /v2/
    assert set(responses) == {"DEFAULT_4XX", "DEFAULT_5XX", "REQUEST_TOO_LARGE"}
    too_large = json.loads(
        responses["REQUEST_TOO_LARGE"]
        .replace("$context.error.responseType", "REQUEST_TOO_LARGE")
        .replace("$context.error.messageString", '"Request Too Large"')
        .replace("$context.requestId", "id")
    )
    assert too_large["error"] == {"code": "REQUEST_TOO_LARGE", "message": "Request Too Large", "request_id": "id"}
    [oci] = too_large["errors"]
    assert oci["code"] == "SIZE_INVALID" and "push through `arca proxy`" in oci["message"]
    for body in responses.values():
        assert body.startswith('{"error": {')
        assert '"code": "$context.error.responseType"' in body
        assert '"message": $context.error.messageString' in body
        assert '"request_id": "$context.requestId"' in body


def test_oci_blob_bodies_reach_the_functions_as_bytes(template: dict[str, Any]) -> None:
    # Given the dev service template, when its API's binary media types are read
    binary = _body(template)["x-amazon-apigateway-binary-media-types"]
    # Then the type oras-py and skopeo send blobs as is binary (base64 in the event), and JSON is not
    assert "application/octet-stream" in binary
    assert not any(t in binary for t in ("*/*", "application/json"))


def test_outputs_name_everything_a_client_needs(storage: dict[str, Any], template: dict[str, Any]) -> None:
    # Given the dev storage and service templates
    # When their outputs are read
    # Then the storage stack publishes the table and the bucket, the service stack the API URL and the functions
    assert {"TableName", "BucketName"} <= set(storage["Outputs"])
    assert {"ApiUrl", "PublishFunctionName", "AliasFunctionName", "ResolveFunctionName"} <= set(template["Outputs"])
    assert {"RolloutFunctionName", "RolloutStateMachineArn"} <= set(template["Outputs"])


def test_template_stays_within_cloudformation_limits(template: dict[str, Any]) -> None:
    # Given the dev service template
    # When its size and outputs are counted
    size = len(json.dumps(template, separators=(",", ":")))
    # Then it stays under CloudFormation's 1 MB (S3-uploaded) template, and its outputs under 200
    assert size <= 500_000
    assert len(template.get("Outputs", {})) <= 200


def test_api_gateway_keeps_room_for_forty_more_routes(template: dict[str, Any]) -> None:
    # Given the dev service template (placeholders of later features, if any, counted as routes)
    # When API Gateway's resources for its definition are counted against the route table
    found = figures.measure(ROUTES, template, template)
    report = (
        f"{found.resources} resources of {figures.CAP}: {found.free} free, {found.routes_free} routes' worth at "
        f"{found.per_route:.2f} resources a route"
    )
    print(report)
    # Then the API stays under the bound (AWS's default quota is 300), with room for 40 routes like the table's
    assert found.resources <= figures.CAP, report
    assert found.routes_free >= figures.MIN_ROUTES_FREE, report
    assert found.resources == len(figures.api_resources(_body(template)))


def test_the_figures_the_docs_quote_are_the_templates() -> None:
    # Given the figures block of docs/infra.md, and the service templates of dev and of a retained stage
    committed = figures.block(figures.DOC.read_text())
    # When the figures are measured now
    current = figures.render(figures.measure(ROUTES, _synth("dev").service, _synth("prod").service))
    # Then the committed block is what they say
    assert committed == current, "docs/infra.md's figures are stale: run `make docs` and commit it"


def test_routes_cost_no_cloudformation_resources_and_every_prod_stack_stays_at_250() -> None:
    # Given both stacks of stage prod
    synthesized = _synth("prod")
    # When their resources are counted
    counts = {
        name: len(t["Resources"]) for name, t in (("storage", synthesized.storage), ("service", synthesized.service))
    }
    # Then each holds at most 250 of CloudFormation's 500, and the API is three resources (the API, its deployment
    # and stage) and one invoke permission per function, whatever the number of routes
    assert max(counts.values()) <= 250, counts
    api_types = {"AWS::ApiGateway::RestApi", "AWS::ApiGateway::Deployment", "AWS::ApiGateway::Stage"}
    service = synthesized.service["Resources"].values()
    assert sorted(r["Type"] for r in service if r["Type"].startswith("AWS::ApiGateway::")) == sorted(api_types)
    assert len([r for r in service if r["Type"] == "AWS::Lambda::Permission"]) == len(FUNCTIONS) + 1  # + schedule


@pytest.mark.parametrize("stage", ["dev", "prod"])
def test_cdk_nag_reports_no_unsuppressed_findings(stage: str) -> None:
    # Given both stacks of the stage with the AWS Solutions checks attached
    arca = _synth(stage).stage
    for stack in (arca.storage, arca.service):
        # When their annotations are read
        annotations = stages.annotations(stack)
        # Then no AwsSolutions rule reports an error or a warning
        assert annotations.find_error("*", Match.string_like_regexp("AwsSolutions-.*")) == []
        assert annotations.find_warning("*", Match.string_like_regexp("AwsSolutions-.*")) == []


def test_wildcard_suppressions_name_the_findings_they_cover() -> None:
    # Given both dev templates
    templates = (_synth("dev").storage, _synth("dev").service)
    # When the cdk-nag suppressions of the IAM wildcard and managed-policy rules are collected
    suppressions = [
        rule
        for template in templates
        for resource in template["Resources"].values()
        for rule in resource.get("Metadata", {}).get("cdk_nag", {}).get("rules_to_suppress", [])
        if rule["id"] in {"AwsSolutions-IAM4", "AwsSolutions-IAM5"}
    ]
    # Then each one lists what it covers, so a new wildcard is still reported
    assert suppressions
    assert all(rule.get("applies_to") for rule in suppressions)


# The rollout driver.


ROLLOUTS, VERIFY = "Rollouts", "Verification"  # the constructs of the two state machines


def _state_machine(template: dict[str, Any], construct: str = ROLLOUTS) -> str:
    (logical_id,) = [
        key for key in _resources(template, "AWS::StepFunctions::StateMachine") if key.startswith(construct)
    ]
    return logical_id


def _definition(template: dict[str, Any], construct: str = ROLLOUTS) -> dict[str, Any]:
    """The state machine's definition, with the function ARNs it references as `{"Ref": <logical id>}`."""
    machine = template["Resources"][_state_machine(template, construct)]["Properties"]
    parts = machine["DefinitionString"]["Fn::Join"][1]
    text = "".join(part if isinstance(part, str) else json.dumps(part["Fn::GetAtt"][0]).strip('"') for part in parts)
    return dict(json.loads(text))


def test_rollout_state_machine_waits_invokes_the_driver_and_loops_until_done(template: dict[str, Any]) -> None:
    # Given the dev service template
    machine = template["Resources"][_state_machine(template)]["Properties"]
    # When its definition is read
    definition = _definition(template)
    states = definition["States"]
    # Then it is a Standard machine: Wait(interval) -> the rollout function -> stop once done, else wait again
    assert machine["StateMachineType"] == "STANDARD"
    assert definition["StartAt"] == "Wait" and states["Wait"]["SecondsPath"] == "$.interval_seconds"
    assert states["Wait"]["Next"] == "Step" and states["Step"]["Next"] == "Ended"
    assert states["Step"]["Resource"] == _functions_by_name(template)["rollout"]
    assert any(retry["ErrorEquals"] == ["States.ALL"] for retry in states["Step"]["Retry"])
    choice = states["Ended"]
    assert choice["Choices"] == [{"Variable": "$.done", "BooleanEquals": True, "Next": "Done"}]
    assert choice["Default"] == "Wait" and states["Done"]["Type"] == "Succeed"
    assert definition["TimeoutSeconds"] == 22 * 86_400


def test_rollout_state_machine_logs_every_event_and_is_traced(template: dict[str, Any]) -> None:
    # Given the dev service template
    machine = template["Resources"][_state_machine(template)]["Properties"]
    # When its logging and tracing are read
    logging = machine["LoggingConfiguration"]
    # Then every event goes to a log group of its own, and executions are traced
    assert logging["Level"] == "ALL"
    assert machine["TracingConfiguration"] == {"Enabled": True}
    group = logging["Destinations"][0]["CloudWatchLogsLogGroup"]["LogGroupArn"]["Fn::GetAtt"][0]
    assert template["Resources"][group]["Type"] == "AWS::Logs::LogGroup"


def test_rollout_state_machine_role_may_invoke_only_the_driver(template: dict[str, Any]) -> None:
    # Given the state machine's role
    machine = template["Resources"][_state_machine(template)]["Properties"]
    role_id = machine["RoleArn"]["Fn::GetAtt"][0]
    documents = [
        policy["Properties"]["PolicyDocument"]
        for policy in _resources(template, "AWS::IAM::Policy").values()
        if {"Ref": role_id} in policy["Properties"]["Roles"]
    ]
    # When its Lambda grants are read
    invokes = [
        statement
        for document in documents
        for statement in document["Statement"]
        if "lambda:InvokeFunction" in _as_list(statement["Action"])
    ]
    # Then it invokes the rollout function (and its versions) and nothing else
    driver = _functions_by_name(template)["rollout"]
    (statement,) = invokes
    assert _as_list(statement["Action"]) == ["lambda:InvokeFunction"]
    assert all(driver in json.dumps(resource) for resource in _as_list(statement["Resource"]))
    actions = {
        a for document in documents for statement in document["Statement"] for a in _as_list(statement["Action"])
    }
    assert not {a for a in actions if a.split(":")[0] in {"dynamodb", "s3", "states", "cloudwatch"}}


def test_alias_function_may_start_only_the_rollout_state_machine(template: dict[str, Any]) -> None:
    # Given the alias function's grants
    grants = set(_grants(template, _functions_by_name(template)["alias"]))
    # When the Step Functions grants are read
    starts = {(action, resource) for action, resource in grants if action.startswith("states:")}
    # Then it may start executions of that one machine, and not stop or read them
    assert starts == {("states:StartExecution", json.dumps({"Ref": _state_machine(template)}))}


def test_verification_state_machine_invokes_the_verify_function_until_done(template: dict[str, Any]) -> None:
    # Given the dev service template
    machine = template["Resources"][_state_machine(template, VERIFY)]["Properties"]
    # When its definition is read
    definition = _definition(template, VERIFY)
    states = definition["States"]
    # Then it is a Standard machine: the verify function -> stop once done, else at once again; failures retried
    assert machine["StateMachineType"] == "STANDARD"
    assert definition["StartAt"] == "Step" and states["Step"]["Next"] == "Verified"
    assert states["Step"]["Resource"] == _functions_by_name(template)["verify"]
    assert any(retry["ErrorEquals"] == ["States.ALL"] for retry in states["Step"]["Retry"])
    choice = states["Verified"]
    assert choice["Choices"] == [{"Variable": "$.done", "BooleanEquals": True, "Next": "Done"}]
    assert choice["Default"] == "Step" and states["Done"]["Type"] == "Succeed"
    assert definition["TimeoutSeconds"] == 7 * 86_400
    assert machine["LoggingConfiguration"]["Level"] == "ALL" and machine["TracingConfiguration"] == {"Enabled": True}


def test_verification_state_machine_role_may_invoke_only_the_verify_function(template: dict[str, Any]) -> None:
    # Given the verification state machine's role
    machine = template["Resources"][_state_machine(template, VERIFY)]["Properties"]
    role_id = machine["RoleArn"]["Fn::GetAtt"][0]
    statements = [
        statement
        for policy in _resources(template, "AWS::IAM::Policy").values()
        if {"Ref": role_id} in policy["Properties"]["Roles"]
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
    ]
    # When its grants are read
    invokes = [s for s in statements if "lambda:InvokeFunction" in _as_list(s["Action"])]
    actions = {a for statement in statements for a in _as_list(statement["Action"])}
    # Then it invokes the verify function (and its versions), and touches no data
    (statement,) = invokes
    verifier = _functions_by_name(template)["verify"]
    assert all(verifier in json.dumps(resource) for resource in _as_list(statement["Resource"]))
    assert not {a for a in actions if a.split(":")[0] in {"dynamodb", "s3", "states", "cloudwatch"}}


def test_publish_function_may_start_only_the_verification_state_machine(template: dict[str, Any]) -> None:
    # Given the publish function's grants
    grants = set(_grants(template, _functions_by_name(template)["publish"]))
    # When the Step Functions grants are read
    starts = {(action, resource) for action, resource in grants if action.startswith("states:")}
    # Then it may start executions of that one machine (content too large to hash within a request), nothing more
    assert starts == {("states:StartExecution", json.dumps({"Ref": _state_machine(template, VERIFY)}))}


@pytest.mark.parametrize("function", ["rollout", "alias"])
def test_rollout_driver_and_alias_function_read_alarms_and_nothing_else_of_cloudwatch(
    template: dict[str, Any], function: str
) -> None:
    # Given the driver's grants (it reads alarms before each step) or the alias function's (once, at a start)
    grants = set(_grants(template, _functions_by_name(template)[function]))
    partition, account = ({"Ref": f"AWS::{pseudo}"} for pseudo in ("Partition", "AccountId"))
    region = {"Ref": "AWS::Region"}
    # When its CloudWatch grants are read
    cloudwatch = {grant for grant in grants if grant[0].startswith("cloudwatch:")}
    # Then it may describe the alarms of its account and Region, and nothing more
    alarms = _arn(["arn:", partition, ":cloudwatch:", region, ":", account, ":alarm:*"])
    assert cloudwatch == {("cloudwatch:DescribeAlarms", alarms)}


def test_the_committed_policies_of_local_mode_are_the_templates(template: dict[str, Any]) -> None:
    # Given the roles local mode and the tests check every AWS call against (local/policies.json)
    committed = POLICIES.read_text()
    # When they are rendered again from the template synthesized now
    current = policies.document(template)
    # Then they are the same: a grant changed in infra/ must be regenerated, or local mode checks stale roles
    assert committed == current, "local/policies.json is stale: run `make policies` and commit it"


def test_the_committed_policies_cover_every_function_of_the_stack(template: dict[str, Any]) -> None:
    found = json.loads(POLICIES.read_text())["functions"]
    assert set(found) == {*ALL_FUNCTIONS, "events"}
    assert set(found) == set(_functions_by_name(template))


# The API's definition.


def _deployment_id(routes: tuple[Any, ...]) -> str:
    """The logical id of the deployment of an API built from `routes` alone, in a stack of its own."""
    stack = cdk.Stack(cdk.App())
    functions = {
        name: lambda_.Function.from_function_arn(stack, name, f"arn:aws:lambda:eu-west-1:123456789012:function:{name}")
        for name in FUNCTIONS
    }
    Api(stack, "Api", stage_name="dev", routes=routes, functions=functions, removal_policy=cdk.RemovalPolicy.DESTROY)
    (deployment,) = Template.from_stack(stack).find_resources("AWS::ApiGateway::Deployment")
    return str(deployment)


def test_a_changed_route_table_deploys_a_new_deployment_to_the_stage() -> None:
    # Given the API built from the route table, and from the route table less one route
    # When their deployments are compared
    # Then the changed definition has a deployment of its own (a stage keeps serving its deployment otherwise),
    # and an unchanged one keeps its deployment
    whole = _deployment_id(ROUTES)
    assert _deployment_id(ROUTES) == whole
    assert _deployment_id(ROUTES[1:]) != whole
