"""Conditions built with boto3's condition builders, rendered with generated placeholders when a request is built
(arca.adapters.dynamo.expressions) and merged with the update's own."""

from __future__ import annotations

from typing import Any

import pytest
from boto3.dynamodb.conditions import Attr

from arca.adapters.dynamo import Table, Update, Write
from arca.adapters.keys import latest_key
from arca.adapters.store.conditions import ARTIFACT_IS_LIVE, event_is_newer, receipt_not_exist_or_expired
from arca.adapters.store.feed import _stamped
from arca.domain.events import Event
from local.iam import expression_attributes

KEY = {"pk": "a", "sk": "b"}


def test_a_composed_condition_renders_with_generated_placeholders_merged_with_the_updates() -> None:
    # Given an update with its own placeholders and a condition composed of named ones
    write = Write(
        "latest",
        "Update",
        KEY,
        update=Update(set=("updated_at = :now", "#size = :size"), add=("rev :one",)),
        condition=ARTIFACT_IS_LIVE & Attr("rev").eq(7),
        names={"#size": "size"},
        values={":now": "t", ":one": 1, ":size": 3},
    )
    # When
    body = write.request("table")["Update"]
    # Then the condition's names and values are generated, and join the update's
    assert body["UpdateExpression"] == "SET updated_at = :now, #size = :size ADD rev :one"
    assert body["ConditionExpression"] == (
        "(((attribute_exists(#n0) AND attribute_not_exists(#n1)) AND attribute_not_exists(#n2)) AND #n3 = :v0)"
    )
    assert body["ExpressionAttributeNames"] == {
        "#size": "size",
        "#n0": "pk",
        "#n1": "purging",
        "#n2": "purged",
        "#n3": "rev",
    }
    assert body["ExpressionAttributeValues"] == {
        ":now": {"S": "t"},
        ":one": {"N": "1"},
        ":size": {"N": "3"},
        ":v0": {"N": "7"},
    }


def test_a_named_condition_with_a_value_renders_on_its_own() -> None:
    # When
    body = Write("receipt", "Put", KEY, item={"ttl": 9}, condition=receipt_not_exist_or_expired(5)).request("t")["Put"]
    # Then
    assert body["ConditionExpression"] == "(attribute_not_exists(#n0) OR #n1 <= :v0)"
    assert body["ExpressionAttributeNames"] == {"#n0": "pk", "#n1": "ttl"}
    assert body["ExpressionAttributeValues"] == {":v0": {"N": "5"}}


def test_each_request_numbers_its_placeholders_afresh() -> None:
    # Given one write's request already built
    write = Write("v1", "ConditionCheck", KEY, condition=Attr("deleted").eq(False))
    write.request("t")
    # When it is built again
    body = write.request("t")["ConditionCheck"]
    # Then
    assert body["ConditionExpression"] == "#n0 = :v0"


@pytest.mark.parametrize(("names", "values"), [({"#n0": "size"}, {}), ({}, {":v0": 1})], ids=["name", "value"])
def test_an_update_placeholder_that_clashes_with_the_conditions_is_refused(
    names: dict[str, str], values: dict[str, Any]
) -> None:
    # Given an update spelling a placeholder the builder generates
    update = "SET #n0 = :one" if names else "SET size = :v0"
    write = Write("x", "Update", KEY, update=update, condition=Attr("rev").eq(2), names=names, values=values)
    # When / Then
    with pytest.raises(ValueError, match="clash"):
        write.request("t")


def test_the_event_order_is_anded_onto_latests_condition_structurally() -> None:
    # Given LATEST's write in a transaction, conditioned on the artifact being live
    write = Write("artifact", "ConditionCheck", latest_key("a"), condition=ARTIFACT_IS_LIVE)
    event = Event(id="e2", name="a", type="alias.deleted", at="2026-01-01T00:00:00Z", detail={"revision": 1})
    # When the feed stamps it
    _, latest = _stamped([write], "a", [event])
    body = latest.request("t")["Update"]
    # Then the event order is one more term of the same condition, its value its own placeholder
    assert latest.condition == ARTIFACT_IS_LIVE & event_is_newer("e2")
    assert body["UpdateExpression"] == "SET last_event = :last_event"
    assert body["ConditionExpression"].endswith("AND (attribute_not_exists(#n3) OR #n4 < :v0))")
    assert body["ExpressionAttributeValues"] == {":last_event": {"S": "e2"}, ":v0": {"S": "e2"}}
    # and the IAM check reads the attributes it names through the generated names
    attributes = expression_attributes(body["ConditionExpression"], body["ExpressionAttributeNames"])
    assert attributes == {"pk", "purging", "purged", "last_event"}


def test_a_single_item_update_renders_its_condition_the_same_way() -> None:
    # Given a client that records the call
    calls: list[dict[str, Any]] = []

    class Client:
        def update_item(self, **kwargs: Any) -> dict[str, Any]:
            calls.append(kwargs)
            return {"Attributes": {}}

    # When
    Table(Client(), "t").update(KEY, "SET refs = :one", condition=Attr("refs").not_exists(), values={":one": 1})
    # Then
    assert calls[0]["ConditionExpression"] == "attribute_not_exists(#n0)"
    assert calls[0]["ExpressionAttributeNames"] == {"#n0": "refs"}
    assert calls[0]["ExpressionAttributeValues"] == {":one": {"N": "1"}}
