"""Updates as typed actions (arca.adapters.dynamo.Update): attribute name -> plain Python value, rendered with their
own placeholders (`#u0`, `:u0`), extended by `also`, never by editing text."""

from __future__ import annotations

from typing import Any

import pytest
from boto3.dynamodb.conditions import Attr

from arca.adapters.dynamo import IfAbsent, Table, Update, Write
from local.iam import expression_attributes

KEY = {"pk": "a", "sk": "b"}


def rendered(update: Update) -> dict[str, Any]:
    """The update as a transaction's Update item sends it."""
    body: dict[str, Any] = Write("x", "Update", KEY, update=update).request("t")["Update"]
    return body


@pytest.mark.parametrize(
    ("update", "expression", "names", "values"),
    [
        (Update(set={"link": "team/app"}), "SET #u0 = :u0", ["link"], {":u0": {"S": "team/app"}}),
        (Update(remove=("link", "size")), "REMOVE #u0, #u1", ["link", "size"], {}),
        (Update(add={"refs": -1}), "ADD #u0 :u0", ["refs"], {":u0": {"N": "-1"}}),
        (Update(add={"pinned_by": {"prod"}}), "ADD #u0 :u0", ["pinned_by"], {":u0": {"SS": ["prod"]}}),
        (Update(delete={"pinned_by": {"prod"}}), "DELETE #u0 :u0", ["pinned_by"], {":u0": {"SS": ["prod"]}}),
    ],
    ids=["set", "remove", "add_number", "add_to_a_set", "delete_from_a_set"],
)
def test_each_action_renders_every_attribute_and_value_by_placeholder(
    update: Update, expression: str, names: list[str], values: dict[str, Any]
) -> None:
    # When
    body = rendered(update)
    # Then
    assert body["UpdateExpression"] == expression
    assert body["ExpressionAttributeNames"] == {f"#u{i}": n for i, n in enumerate(names)}
    assert body.get("ExpressionAttributeValues", {}) == values


def test_actions_render_in_clause_order_with_one_placeholder_per_attribute_and_per_value() -> None:
    # Given every action at once, two values equal
    update = Update(
        set={"kind": "latest", "updated_at": "t"},
        remove=("link",),
        add={"rev": 1, "purges": 1},
        delete={"pinned_by": {"prod", "staging"}},
    )
    # When
    body = rendered(update)
    # Then SET, REMOVE, ADD, DELETE, each in the order given
    assert body["UpdateExpression"] == ("SET #u0 = :u0, #u1 = :u1 REMOVE #u2 ADD #u3 :u2, #u4 :u3 DELETE #u5 :u4")
    assert body["ExpressionAttributeNames"] == {
        "#u0": "kind",
        "#u1": "updated_at",
        "#u2": "link",
        "#u3": "rev",
        "#u4": "purges",
        "#u5": "pinned_by",
    }
    values = body["ExpressionAttributeValues"]
    assert [values[f":u{i}"] for i in range(4)] == [{"S": "latest"}, {"S": "t"}, {"N": "1"}, {"N": "1"}]
    assert sorted(values[":u4"]["SS"]) == ["prod", "staging"]


def test_values_keep_their_types() -> None:
    # Given values of each type the stores write
    sets = {"deleted": False, "size": 3, "ratio": 0.5, "tags": {"env": "prod"}, "claimed": [{"key": "k"}]}
    update = Update(set={**sets, "parts": b"\x00\x01", "by": None})
    # When
    values = rendered(update)["ExpressionAttributeValues"]
    # Then
    assert values == {
        ":u0": {"BOOL": False},
        ":u1": {"N": "3"},
        ":u2": {"N": "0.5"},
        ":u3": {"M": {"env": {"S": "prod"}}},
        ":u4": {"L": [{"M": {"key": {"S": "k"}}}]},
        ":u5": {"B": b"\x00\x01"},
        ":u6": {"NULL": True},
    }


def test_if_absent_sets_a_value_only_where_the_attribute_is_absent() -> None:
    # When
    body = rendered(Update(set={"name": "n", "created_at": IfAbsent("2026-01-01T00:00:00Z")}))
    # Then the attribute is named once, on both sides of if_not_exists
    assert body["UpdateExpression"] == "SET #u0 = :u0, #u1 = if_not_exists(#u1, :u1)"
    assert body["ExpressionAttributeNames"] == {"#u0": "name", "#u1": "created_at"}
    assert body["ExpressionAttributeValues"] == {":u0": {"S": "n"}, ":u1": {"S": "2026-01-01T00:00:00Z"}}
    # and the IAM check reads the attributes written through the names
    assert expression_attributes(body["UpdateExpression"], body["ExpressionAttributeNames"]) == {"name", "created_at"}


def test_also_extends_an_update_with_more_actions_and_leaves_it_as_it_was() -> None:
    # Given
    update = Update(set={"tags": {}}, add={"tag_rev": 1})
    # When
    extended = update.also(set={"last_event": "e1"}, remove=("description",))
    # Then
    assert extended == Update(set={"tags": {}, "last_event": "e1"}, remove=("description",), add={"tag_rev": 1})
    assert rendered(extended)["UpdateExpression"] == "SET #u0 = :u0, #u1 = :u1 REMOVE #u2 ADD #u3 :u2"
    assert update == Update(set={"tags": {}}, add={"tag_rev": 1})


def test_also_refuses_an_attribute_the_update_names_already() -> None:
    with pytest.raises(ValueError, match="last_event"):
        Update(set={"last_event": "e1"}).also(set={"last_event": "e2"})
    with pytest.raises(ValueError, match="description"):
        Update(remove=("description",)).also(set={"description": "d"})


def test_an_attribute_in_two_actions_is_refused_before_anything_is_sent() -> None:
    with pytest.raises(ValueError, match="link"):
        Update(set={"link": "t"}, remove=("link",))


def test_one_string_given_as_the_names_to_remove_is_refused() -> None:
    with pytest.raises(TypeError):
        Update(remove="link")


def test_an_update_is_a_copy_of_the_mappings_it_was_given() -> None:
    # Given
    sets: dict[str, Any] = {"a": 1}
    update = Update(set=sets)
    # When the caller's mapping changes
    sets["b"] = 2
    # Then the update does not
    assert update == Update(set={"a": 1})


def test_an_empty_update_is_refused_before_anything_is_sent() -> None:
    # Given a client that would record a call
    calls: list[dict[str, Any]] = []

    class Client:
        def update_item(self, **kwargs: Any) -> dict[str, Any]:
            calls.append(kwargs)
            return {}

    # Then an empty update is falsy, and neither a transaction's item nor an UpdateItem renders it
    assert not Update() and Update(remove=("a",))
    with pytest.raises(ValueError, match="empty"):
        rendered(Update())
    with pytest.raises(ValueError, match="empty"):
        Table(Client(), "t").update(KEY, Update(), condition=Attr("pk").exists())
    assert calls == []


def test_a_write_without_an_update_renders_only_its_condition() -> None:
    body = Write("check", "ConditionCheck", KEY, condition=Attr("pk").exists()).request("t")["ConditionCheck"]
    assert "UpdateExpression" not in body
    assert body["ExpressionAttributeNames"] == {"#n0": "pk"}
    assert "ExpressionAttributeValues" not in body
