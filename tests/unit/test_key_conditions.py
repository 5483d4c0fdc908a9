"""Queries' key conditions: built with boto3's `Key` and rendered by ConditionExpressionBuilder
(arca.adapters.dynamo.key_condition, key_expressions), the same way by `Table.query` and `Table.query_index`."""

from __future__ import annotations

from typing import Any

import pytest
from boto3.dynamodb.conditions import Key

from arca.adapters.dynamo import Table, key_condition, key_expressions
from local.iam import Names, requests_of

NAMES = Names(table="t", bucket="b", event_bus="bus")


class Client:
    """A client that records each Query and answers an empty page."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def query(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(kwargs)
        return {"Items": []}


def test_a_partition_alone_is_one_equality() -> None:
    # When
    rendered = key_expressions(key_condition(("pk", "team/app"), "sk"))
    # Then
    assert rendered == {
        "KeyConditionExpression": "#n0 = :v0",
        "ExpressionAttributeNames": {"#n0": "pk"},
        "ExpressionAttributeValues": {":v0": {"S": "team/app"}},
    }


@pytest.mark.parametrize(
    ("bounds", "expression", "values"),
    [
        ({"between": ("000001", "000049")}, "(#n0 = :v0 AND #n1 BETWEEN :v1 AND :v2)", ["p", "000001", "000049"]),
        ({"prefix": "expired#"}, "(#n0 = :v0 AND begins_with(#n1, :v1))", ["p", "expired#"]),
        ({"at_least": "000007"}, "(#n0 = :v0 AND #n1 >= :v1)", ["p", "000007"]),
        ({"prefix": ""}, "#n0 = :v0", ["p"]),  # an empty prefix bounds nothing
    ],
    ids=["between", "begins_with", "at_least", "empty_prefix"],
)
def test_each_sort_key_bound_renders_with_generated_placeholders(
    bounds: dict[str, Any], expression: str, values: list[str]
) -> None:
    # When
    rendered = key_expressions(key_condition(("pk", "p"), "sk", **bounds))
    # Then
    assert rendered["KeyConditionExpression"] == expression
    assert rendered["ExpressionAttributeNames"] == {f"#n{i}": a for i, a in enumerate(("pk", "sk")[: len(values)])}
    assert rendered["ExpressionAttributeValues"] == {f":v{i}": {"S": v} for i, v in enumerate(values)}


def test_between_wins_over_the_other_bounds_as_the_query_reads_them() -> None:
    assert key_condition(("pk", "p"), "sk", between=("a", "b"), prefix="x", at_least="y") == Key("pk").eq("p") & Key(
        "sk"
    ).between("a", "b")


def test_a_projections_own_names_join_the_conditions() -> None:
    rendered = key_expressions(key_condition(("pk", "p"), "sk"), {"#state": "state"})
    assert rendered["ExpressionAttributeNames"] == {"#n0": "pk", "#state": "state"}


def test_a_table_query_sends_the_rendered_condition_and_iam_reads_its_partition() -> None:
    # Given
    client = Client()
    # When
    Table(client, "t").query("team/app", sk_from="000003", limit=1, projection="sk, #state", names={"#state": "state"})
    # Then
    (call,) = client.calls
    assert call["KeyConditionExpression"] == "(#n0 = :v0 AND #n1 >= :v1)"
    assert call["ExpressionAttributeNames"] == {"#n0": "pk", "#n1": "sk", "#state": "state"}
    assert call["ExpressionAttributeValues"] == {":v0": {"S": "team/app"}, ":v1": {"S": "000003"}}
    # and the IAM check finds the partition read (dynamodb:LeadingKeys) and the attributes named
    (request,) = requests_of("dynamodb", "Query", call, NAMES)
    assert request.context["dynamodb:LeadingKeys"] == ("team/app",)
    assert request.context["dynamodb:Attributes"] == ("pk", "sk", "state")


def test_an_index_query_renders_its_own_key_attributes_the_same_way() -> None:
    # Given
    client = Client()
    # When
    Table(client, "t").query_index("gsi1", ("gsi1pk", "gsi1sk"), "sha256#ab", sk_prefix="team/")
    # Then
    (call,) = client.calls
    assert call["IndexName"] == "gsi1"
    assert call["KeyConditionExpression"] == "(#n0 = :v0 AND begins_with(#n1, :v1))"
    assert call["ExpressionAttributeNames"] == {"#n0": "gsi1pk", "#n1": "gsi1sk"}
    assert call["ExpressionAttributeValues"] == {":v0": {"S": "sha256#ab"}, ":v1": {"S": "team/"}}
