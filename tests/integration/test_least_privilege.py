"""Every AWS call a function makes is checked against its role, as synthesized (local/iam.py, local/policies.json).

The check is on in every integration and end-to-end test and in local mode (the `aws` fixture, the local server),
so any test that makes a call the role does not allow fails as it would on AWS. These tests show that it does:
a call outside the role is refused with AWS's own error, a call with no function is an error, and the grants that
real calls need (the alias role's Idempotency-Key records) are there.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from boto3.dynamodb.conditions import Attr
from botocore.exceptions import ClientError

from arca import wiring
from arca.adapters import keys
from arca.adapters.dynamo import Update, Write
from local import iam
from tests.helpers import HandlerApi


def _published(api: HandlerApi, name: str = "team/app", versions: int = 2) -> None:
    for n in range(versions):
        assert api.publish(name, f"v{n}".encode()).status == 201


def test_keyed_alias_set_and_rollback_are_allowed_by_the_alias_role(aws: SimpleNamespace, api: HandlerApi) -> None:
    # Given two versions (the SDK sends an Idempotency-Key with every write)
    _published(api)
    # When the alias is set twice and rolled back, each with a key of its own
    for number, key in ((1, "k-set-1"), (2, "k-set-2")):
        reply = api.call(
            "PUT", "/artifacts/team/app/aliases/prod", {"version": number}, headers={"Idempotency-Key": key}
        )
        assert reply.status in (200, 201), reply.body
    rolled = api.call("POST", "/artifacts/team/app/aliases/prod/rollback", headers={"Idempotency-Key": "k-back"})
    # Then each write and its key's record were allowed by the alias role, and a retry replays the answer
    assert rolled.status == 200, rolled.body
    again = api.call("POST", "/artifacts/team/app/aliases/prod/rollback", headers={"Idempotency-Key": "k-back"})
    assert again.status == 200 and again.headers.get("Idempotent-Replayed") == "true"
    assert aws.iam.denials == []


def test_a_call_outside_the_role_is_refused_with_access_denied_and_writes_nothing(
    aws: SimpleNamespace, api: HandlerApi
) -> None:
    # Given a live artifact
    _published(api, versions=1)
    services = wiring.services()
    # When the alias function's role is used to change LATEST's content (an attribute it may not name)
    write = Write("latest", "Update", keys.latest_key("team/app"), update=Update(set={"sha256": "0" * 64}))
    with iam.acting_as("alias"), pytest.raises(ClientError) as refused:
        services.stores.table.client.transact_write_items(TransactItems=[write.request(aws.table)])
    # Then DynamoDB's own error comes back, naming the request, and LATEST is unchanged
    assert refused.value.response["Error"]["Code"] == "AccessDeniedException"
    assert "dynamodb:UpdateItem" in str(refused.value) and "sha256" in str(refused.value)
    assert (
        aws.dynamodb.get_item(TableName=aws.table, Key={"pk": {"S": "team/app"}, "sk": {"S": "LATEST"}})["Item"][
            "sha256"
        ]["S"]
        != "0" * 64
    )
    assert [(function, request.action) for function, request in aws.iam.denials] == [("alias", "dynamodb:UpdateItem")]


def test_a_condition_naming_an_attribute_outside_the_grant_is_refused_through_its_generated_names(
    aws: SimpleNamespace, api: HandlerApi
) -> None:
    # Given a live artifact, and a check of LATEST whose builder condition names `sha256` as a generated `#n…`
    _published(api, versions=1)
    services = wiring.services()
    write = Write("latest", "ConditionCheck", keys.latest_key("team/app"), condition=Attr("sha256").exists())
    # When the alias function's role sends it
    with iam.acting_as("alias"), pytest.raises(ClientError) as refused:
        services.stores.table.client.transact_write_items(TransactItems=[write.request(aws.table)])
    # Then the check resolved the placeholder to the attribute, and refused it
    assert refused.value.response["Error"]["Code"] == "AccessDeniedException"
    assert "dynamodb:ConditionCheckItem" in str(refused.value) and "sha256" in str(refused.value)


def test_a_route_whose_role_lacks_a_grant_fails_as_on_aws(aws: SimpleNamespace, api: HandlerApi) -> None:
    # Given a role without the alias function's receipt grant (as it was): the check reads these statements
    checker = aws.iam
    statements = checker.policies["alias"]

    def without_receipts(statement: dict[str, Any]) -> dict[str, Any]:
        like = statement.get("Condition", {}).get("ForAllValues:StringLike")
        if not like:
            return statement
        kept = [k for k in like["dynamodb:LeadingKeys"] if not k.startswith("__idem")]
        return {**statement, "Condition": {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": kept}}}

    checker.policies["alias"] = [without_receipts(s) for s in statements]
    checker._resolved.clear()
    _published(api, versions=1)
    # When a keyed alias write is made
    reply = api.call("PUT", "/artifacts/team/app/aliases/prod", {"version": 1}, headers={"Idempotency-Key": "k"})
    # Then it fails (a 500, logged) and the denial names the record's PutItem; nothing was written
    assert reply.status == 500
    assert {request.action for _, request in checker.denials} == {"dynamodb:PutItem"}
    assert api.call("GET", "/artifacts/team/app/aliases/prod").status == 404


def test_only_the_events_function_may_put_on_the_bus(aws: SimpleNamespace, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given the events function's bus client
    monkeypatch.setenv("ARCA_EVENT_BUS_NAME", "arca-test-bus")
    client = wiring.client("events")
    entry = {"Source": "arca", "DetailType": "x", "Detail": "{}", "EventBusName": "arca-test-bus"}
    # When another function puts an event, or the events function puts one claiming another source
    for function, source in (("publish", "arca"), ("alias", "arca"), ("events", "aws.s3")):
        with iam.acting_as(function), pytest.raises(ClientError) as refused:
            client.put_events(Entries=[{**entry, "Source": source}])
        # Then EventBridge's AccessDeniedException
        assert refused.value.response["Error"]["Code"] == "AccessDeniedException", function


def test_a_call_with_no_function_set_is_an_error(aws: SimpleNamespace) -> None:
    # Given a function's client, used outside any invocation
    client = wiring.services().stores.table.client
    # When it calls, Then nothing is sent: every invocation path must say which role authorises it
    with pytest.raises(iam.UnattributedCallError):
        client.get_item(TableName=aws.table, Key={"pk": {"S": "a"}, "sk": {"S": "LATEST"}})
