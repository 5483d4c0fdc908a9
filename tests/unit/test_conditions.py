"""Conditions built with boto3's condition builders, rendered with generated placeholders when a request is built
(arca.adapters.dynamo.expressions) and merged with the update's own, which are of another shape."""

from __future__ import annotations

from typing import Any

from boto3.dynamodb.conditions import Attr

from arca.adapters.dynamo import Table, Update, Write
from arca.adapters.keys import latest_key
from arca.adapters.store.conditions import ARTIFACT_IS_LIVE, event_is_newer, receipt_not_exist_or_expired
from arca.adapters.store.feed import _stamped
from arca.domain.events import Event
from local.iam import expression_attributes

KEY = {"pk": "a", "sk": "b"}


def test_a_composed_condition_renders_with_generated_placeholders_merged_with_the_updates() -> None:
    # Given an update rendering its own placeholders and a condition composed of named ones
    write = Write(
        "latest",
        "Update",
        KEY,
        update=Update(set={"updated_at": "t", "size": 3}, add={"rev": 1}),
        condition=ARTIFACT_IS_LIVE & Attr("rev").eq(7),
    )
    # When
    body = write.request("table")["Update"]
    # Then the condition's names and values are generated, and join the update's
    assert body["UpdateExpression"] == "SET #u0 = :u0, #u1 = :u1 ADD #u2 :u2"
    assert body["ConditionExpression"] == (
        "(((attribute_exists(#n0) AND attribute_not_exists(#n1)) AND attribute_not_exists(#n2)) AND #n3 = :v0)"
    )
    assert body["ExpressionAttributeNames"] == {
        "#u0": "updated_at",
        "#u1": "size",
        "#u2": "rev",
        "#n0": "pk",
        "#n1": "purging",
        "#n2": "purged",
        "#n3": "rev",
    }
    assert body["ExpressionAttributeValues"] == {
        ":u0": {"S": "t"},
        ":u1": {"N": "3"},
        ":u2": {"N": "1"},
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


def test_an_update_and_a_condition_on_the_same_attribute_never_share_a_placeholder() -> None:
    # Given an update and its condition naming the same attribute, with values of both
    write = Write("x", "Update", KEY, update=Update(set={"rev": 8}), condition=Attr("rev").eq(7))
    # When
    body = write.request("t")["Update"]
    # Then each keeps its own placeholders: the update's `#u`/`:u`, the builder's `#n`/`:v`
    assert body["UpdateExpression"] == "SET #u0 = :u0"
    assert body["ConditionExpression"] == "#n0 = :v0"
    assert body["ExpressionAttributeNames"] == {"#u0": "rev", "#n0": "rev"}
    assert body["ExpressionAttributeValues"] == {":u0": {"N": "8"}, ":v0": {"N": "7"}}


def test_the_event_order_is_anded_onto_latests_condition_structurally() -> None:
    # Given LATEST's write in a transaction, conditioned on the artifact being live
    write = Write("artifact", "ConditionCheck", latest_key("a"), condition=ARTIFACT_IS_LIVE)
    event = Event(id="e2", name="a", type="alias.deleted", at="2026-01-01T00:00:00Z", detail={"revision": 1})
    # When the feed stamps it
    _, latest = _stamped([write], "a", [event])
    body = latest.request("t")["Update"]
    # Then the event order is one more term of the same condition, its value its own placeholder
    assert latest.condition == ARTIFACT_IS_LIVE & event_is_newer("e2")
    assert latest.update == Update(set={"last_event": "e2"})
    assert body["UpdateExpression"] == "SET #u0 = :u0"
    assert body["ConditionExpression"].endswith("AND (attribute_not_exists(#n3) OR #n4 < :v0))")
    assert body["ExpressionAttributeValues"] == {":u0": {"S": "e2"}, ":v0": {"S": "e2"}}
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
    Table(Client(), "t").update(KEY, Update(set={"refs": 1}), condition=Attr("refs").not_exists())
    # Then
    assert calls[0]["UpdateExpression"] == "SET #u0 = :u0"
    assert calls[0]["ConditionExpression"] == "attribute_not_exists(#n0)"
    assert calls[0]["ExpressionAttributeNames"] == {"#u0": "refs", "#n0": "refs"}
    assert calls[0]["ExpressionAttributeValues"] == {":u0": {"N": "1"}}
