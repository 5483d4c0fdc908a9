"""The IAM evaluator of local mode and the tests (local/iam.py): policy evaluation, and calls mapped to requests."""

from __future__ import annotations

from typing import Any

import pytest

from local.iam import ALL_ATTRIBUTES, Names, Request, UnmappedCallError, decide, expression_attributes, requests_of

TABLE = "arn:aws:dynamodb:us-east-1:000000000000:table/t"
NAMES = Names(table="t", bucket="b", event_bus="bus")


def allow(action: Any, resource: Any = "*", **condition: Any) -> dict[str, Any]:
    statement = {"Effect": "Allow", "Action": action, "Resource": resource}
    return {**statement, "Condition": condition} if condition else statement


def request(action: str = "dynamodb:GetItem", resource: str = TABLE, **context: tuple[str, ...]) -> Request:
    return Request(action, resource, {k.replace("__", ":"): v for k, v in context.items()})


SCOPED = {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["__*-alias", "__idem#*"]}}
NOT_REGISTRY = {"ForAllValues:StringNotLike": {"dynamodb:LeadingKeys": ["__*"]}}
ATTRIBUTES = {"ForAllValues:StringEquals": {"dynamodb:Attributes": ["pk", "sk", "pinned_by"]}}


@pytest.mark.parametrize(
    ("statements", "req", "decision"),
    [
        # Actions: exact, wildcards, case-insensitive; another action is implicitly denied
        ([allow("dynamodb:GetItem", TABLE)], request(), "Allow"),
        ([allow(["dynamodb:Query", "dynamodb:Get*"], TABLE)], request(), "Allow"),
        ([allow("dynamodb:getitem", TABLE)], request(), "Allow"),
        ([allow("dynamodb:PutItem", TABLE)], request(), "ImplicitDeny"),
        ([], request(), "ImplicitDeny"),
        # Resources: a table grant does not reach its indexes; an index wildcard does
        ([allow("dynamodb:Query", TABLE)], request("dynamodb:Query", f"{TABLE}/index/gsi1"), "ImplicitDeny"),
        ([allow("dynamodb:Query", f"{TABLE}/index/*")], request("dynamodb:Query", f"{TABLE}/index/gsi1"), "Allow"),
        ([allow("dynamodb:GetItem", f"{TABLE}x")], request(), "ImplicitDeny"),
        (
            [allow("s3:GetObject", "arn:aws:s3:::b/artifacts/*")],
            request("s3:GetObject", "arn:aws:s3:::b/a"),
            "ImplicitDeny",
        ),
        (
            [allow("s3:GetObject", "arn:aws:s3:::b/artifacts/?")],
            request("s3:GetObject", "arn:aws:s3:::b/artifacts/x"),
            "Allow",
        ),
        # An explicit Deny wins over an Allow
        ([allow("dynamodb:*"), {**allow("dynamodb:GetItem"), "Effect": "Deny"}], request(), "Deny"),
        # ForAllValues:StringLike on the leading keys: every key must match one pattern
        (
            [allow("dynamodb:PutItem", TABLE, **SCOPED)],
            request("dynamodb:PutItem", dynamodb__LeadingKeys=("__a-alias",)),
            "Allow",
        ),
        (
            [allow("dynamodb:PutItem", TABLE, **SCOPED)],
            request("dynamodb:PutItem", dynamodb__LeadingKeys=("__idem#arn:x",)),
            "Allow",
        ),
        (
            [allow("dynamodb:PutItem", TABLE, **SCOPED)],
            request("dynamodb:PutItem", dynamodb__LeadingKeys=("a",)),
            "ImplicitDeny",
        ),
        (
            [allow("dynamodb:PutItem", TABLE, **SCOPED)],
            request("dynamodb:PutItem", dynamodb__LeadingKeys=("__a-alias", "b")),
            "ImplicitDeny",
        ),
        # ForAllValues:StringNotLike: no key may match
        (
            [allow("dynamodb:UpdateItem", TABLE, **NOT_REGISTRY)],
            request("dynamodb:UpdateItem", dynamodb__LeadingKeys=("app",)),
            "Allow",
        ),
        (
            [allow("dynamodb:UpdateItem", TABLE, **NOT_REGISTRY)],
            request("dynamodb:UpdateItem", dynamodb__LeadingKeys=("__names",)),
            "ImplicitDeny",
        ),
        # Conditions of one statement all hold (AND); dynamodb:Attributes must be a subset of the list
        (
            [allow("dynamodb:UpdateItem", TABLE, **NOT_REGISTRY, **ATTRIBUTES)],
            request(
                "dynamodb:UpdateItem", dynamodb__LeadingKeys=("app",), dynamodb__Attributes=("pinned_by", "pk", "sk")
            ),
            "Allow",
        ),
        (
            [allow("dynamodb:UpdateItem", TABLE, **NOT_REGISTRY, **ATTRIBUTES)],
            request("dynamodb:UpdateItem", dynamodb__LeadingKeys=("app",), dynamodb__Attributes=("pk", "sk", "sha256")),
            "ImplicitDeny",
        ),
        (
            [allow("dynamodb:UpdateItem", TABLE, **NOT_REGISTRY, **ATTRIBUTES)],
            request("dynamodb:UpdateItem", dynamodb__LeadingKeys=("__names",), dynamodb__Attributes=("pk",)),
            "ImplicitDeny",
        ),
        # A single-valued operator: a missing key fails it, unless IfExists or negated
        (
            [allow("events:PutEvents", "*", StringEquals={"events:source": ["arca"]})],
            request("events:PutEvents", "*", events__source=("arca",)),
            "Allow",
        ),
        (
            [allow("events:PutEvents", "*", StringEquals={"events:source": ["arca"]})],
            request("events:PutEvents", "*", events__source=("x",)),
            "ImplicitDeny",
        ),
        (
            [allow("events:PutEvents", "*", StringEquals={"events:source": ["arca"]})],
            request("events:PutEvents", "*"),
            "ImplicitDeny",
        ),
        (
            [allow("events:PutEvents", "*", StringEqualsIfExists={"events:source": ["arca"]})],
            request("events:PutEvents", "*"),
            "Allow",
        ),
        (
            [allow("events:PutEvents", "*", StringNotEquals={"events:source": ["x"]})],
            request("events:PutEvents", "*"),
            "Allow",
        ),
        # ForAnyValue: one value is enough, and a missing key fails it
        (
            [allow("dynamodb:Query", "*", **{"ForAnyValue:StringLike": {"dynamodb:Attributes": ["p*"]}})],
            request("dynamodb:Query", dynamodb__Attributes=("pk", "z")),
            "Allow",
        ),
        (
            [allow("dynamodb:Query", "*", **{"ForAnyValue:StringLike": {"dynamodb:Attributes": ["p*"]}})],
            request("dynamodb:Query"),
            "ImplicitDeny",
        ),
    ],
)
def test_policy_evaluation(statements: list[dict[str, Any]], req: Request, decision: str) -> None:
    assert decide(statements, req) == decision


def test_an_unknown_operator_or_element_fails_closed() -> None:
    with pytest.raises(ValueError, match="NumericLessThan"):
        decide([allow("dynamodb:GetItem", TABLE, NumericLessThan={"k": ["1"]})], request())
    with pytest.raises(ValueError, match="NotAction"):
        decide([{"Effect": "Allow", "NotAction": "x", "Resource": "*"}], request())


def test_expression_attributes_are_the_top_level_names_resolved() -> None:
    expression = "SET last_event = :e, #s = :s, a.b[0] = :x ADD alias_count :d REMOVE purging"
    assert expression_attributes(expression, {"#s": "size"}) == {"last_event", "size", "a", "alias_count", "purging"}
    condition = "attribute_exists(pk) AND attribute_not_exists(purged) AND (deleted = :no OR begins_with(sk, :p))"
    assert expression_attributes(condition) == {"pk", "purged", "deleted", "sk"}


def _s(value: str) -> dict[str, str]:
    return {"S": value}


def test_a_transaction_is_authorised_item_by_item_with_its_key_and_attributes() -> None:
    # Given a transaction of the four kinds of items
    items = [
        {"Put": {"TableName": "t", "Item": {"pk": _s("__a-alias"), "sk": _s("prod"), "x": _s("1")}}},
        {
            "Update": {
                "TableName": "t",
                "Key": {"pk": _s("a"), "sk": _s("000001")},
                "UpdateExpression": "ADD pinned_by :me",
                "ConditionExpression": "deleted = :no",
            }
        },
        {"Delete": {"TableName": "t", "Key": {"pk": _s("__names"), "sk": _s("a")}}},
        {
            "ConditionCheck": {
                "TableName": "t",
                "Key": {"pk": _s("a"), "sk": _s("LATEST")},
                "ConditionExpression": "attribute_exists(#p)",
                "ExpressionAttributeNames": {"#p": "pk"},
            }
        },
    ]
    # When it is mapped
    found = requests_of("dynamodb", "TransactWriteItems", {"TransactItems": items}, NAMES)
    # Then each item is its own action, on the table, with its partition and the attributes it names
    assert [
        (r.action, r.resource, r.context["dynamodb:LeadingKeys"], r.context["dynamodb:Attributes"]) for r in found
    ] == [
        ("dynamodb:PutItem", TABLE, ("__a-alias",), ("pk", "sk", "x")),
        ("dynamodb:UpdateItem", TABLE, ("a",), ("deleted", "pinned_by", "pk", "sk")),
        ("dynamodb:DeleteItem", TABLE, ("__names",), ("pk", "sk")),
        ("dynamodb:ConditionCheckItem", TABLE, ("a",), ("pk", "sk")),
    ]


def test_reads_name_their_index_and_partition() -> None:
    query = {
        "TableName": "t",
        "IndexName": "gsi1",
        "KeyConditionExpression": "gsi1pk = :p",
        "ExpressionAttributeValues": {":p": _s("tag#a=b")},
    }
    (on_index,) = requests_of("dynamodb", "Query", query, NAMES)
    assert on_index.resource == f"{TABLE}/index/gsi1"
    table_query = {"TableName": "t", "KeyConditionExpression": "#k = :p", "ExpressionAttributeNames": {"#k": "pk"}}
    (on_table,) = requests_of("dynamodb", "Query", {**table_query, "ExpressionAttributeValues": {":p": _s("a")}}, NAMES)
    assert on_table.resource == TABLE and on_table.context["dynamodb:LeadingKeys"] == ("a",)
    (get,) = requests_of("dynamodb", "GetItem", {"TableName": "t", "Key": {"pk": _s("a"), "sk": _s("LATEST")}}, NAMES)
    assert get.action == "dynamodb:GetItem" and ALL_ATTRIBUTES in get.context["dynamodb:Attributes"]


def test_a_batch_read_is_a_read_of_each_item_it_names() -> None:
    # Given a BatchGetItem of two versions in two partitions
    keys = [{"pk": _s("a"), "sk": _s("000001")}, {"pk": _s("b"), "sk": _s("000002")}]
    # When it is turned into what IAM authorises
    found = requests_of("dynamodb", "BatchGetItem", {"RequestItems": {"t": {"Keys": keys}}}, NAMES)
    # Then each key is a dynamodb:BatchGetItem on the table, with its own leading key and every attribute
    assert [(r.action, r.resource, r.context["dynamodb:LeadingKeys"]) for r in found] == [
        ("dynamodb:BatchGetItem", TABLE, ("a",)),
        ("dynamodb:BatchGetItem", TABLE, ("b",)),
    ]
    assert all(ALL_ATTRIBUTES in r.context["dynamodb:Attributes"] for r in found)


@pytest.mark.parametrize(
    ("service", "operation", "params", "expected"),
    [
        ("s3", "HeadObject", {"Bucket": "b", "Key": "k"}, [("s3:GetObject", "arn:aws:s3:::b/k")]),
        ("s3", "GetObject", {"Bucket": "b", "Key": "k"}, [("s3:GetObject", "arn:aws:s3:::b/k")]),
        ("s3", "PutObject", {"Bucket": "b", "Key": "k"}, [("s3:PutObject", "arn:aws:s3:::b/k")]),
        (
            "s3",
            "PutObject",
            {"Bucket": "b", "Key": "k", "Tagging": "a=b"},
            [("s3:PutObject", "arn:aws:s3:::b/k"), ("s3:PutObjectTagging", "arn:aws:s3:::b/k")],
        ),
        (
            "s3",
            "DeleteObjects",
            {"Bucket": "b", "Delete": {"Objects": [{"Key": "x"}, {"Key": "y"}]}},
            [("s3:DeleteObject", "arn:aws:s3:::b/x"), ("s3:DeleteObject", "arn:aws:s3:::b/y")],
        ),
        ("s3", "DeleteObjectTagging", {"Bucket": "b", "Key": "k"}, [("s3:DeleteObjectTagging", "arn:aws:s3:::b/k")]),
        (
            "s3",
            "CopyObject",
            {"Bucket": "b", "Key": "k", "CopySource": {"Bucket": "b", "Key": "k"}, "TaggingDirective": "REPLACE"},
            [("s3:GetObject", "arn:aws:s3:::b/k"), ("s3:PutObject", "arn:aws:s3:::b/k")],
        ),
        (
            "s3",
            "CopyObject",
            {"Bucket": "b", "Key": "t", "CopySource": "b/s"},
            [
                ("s3:GetObject", "arn:aws:s3:::b/s"),
                ("s3:PutObject", "arn:aws:s3:::b/t"),
                ("s3:GetObjectTagging", "arn:aws:s3:::b/s"),
            ],
        ),
        ("s3", "ListObjectsV2", {"Bucket": "b", "Prefix": "p/"}, [("s3:ListBucket", "arn:aws:s3:::b")]),
        (
            "eventbridge",
            "PutEvents",
            {"Entries": [{"EventBusName": "bus", "Source": "arca", "DetailType": "x"}]},
            [("events:PutEvents", "arn:aws:events:us-east-1:000000000000:event-bus/bus")],
        ),
        ("sfn", "StartExecution", {"stateMachineArn": "arn:sm"}, [("states:StartExecution", "arn:sm")]),
        (
            "cloudwatch",
            "DescribeAlarms",
            {"AlarmNames": ["a"]},
            [("cloudwatch:DescribeAlarms", "arn:aws:cloudwatch:us-east-1:000000000000:alarm:a")],
        ),
    ],
)
def test_calls_map_to_the_actions_aws_authorises(
    service: str, operation: str, params: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    assert [(r.action, r.resource) for r in requests_of(service, operation, params, NAMES)] == expected


@pytest.mark.parametrize(
    ("service", "operation"),
    [("dynamodb", "Scan"), ("s3", "UploadPartCopy"), ("sqs", "SendMessage"), ("sfn", "StopExecution")],
)
def test_a_call_without_a_mapping_is_refused(service: str, operation: str) -> None:
    with pytest.raises(UnmappedCallError, match=operation if service != "sqs" else "sqs"):
        requests_of(service, operation, {"TableName": "t", "Bucket": "b"}, NAMES)
