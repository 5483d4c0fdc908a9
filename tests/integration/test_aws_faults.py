"""AWS faults: throttling (botocore Stubber) and conditional failures/cancellations (moto)."""

from __future__ import annotations

import random
import sys
from types import SimpleNamespace
from typing import Any

import boto3
import pytest
from boto3.dynamodb.conditions import Attr
from botocore.exceptions import ClientError
from botocore.stub import Stubber

from arca import wiring
from arca.adapters import keys
from arca.adapters.dynamo import (
    KEY_LIMITS,
    ConditionFailed,
    Table,
    TransactionCancelled,
    TransactionRejected,
    Update,
    Write,
)
from arca.domain.errors import ThrottledError, ValidationError
from arca.observability import logger
from tests.helpers import HandlerApi


def stubbed_table(sleeps: list[float]) -> tuple[Table, Stubber]:
    client = boto3.client("dynamodb", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y")
    return Table(client, "t", sleep=sleeps.append, rng=random.Random(7)), Stubber(client)


def test_throttled_read_is_retried_with_jitter_then_succeeds() -> None:
    # Given two throttles then an answer
    sleeps: list[float] = []
    table, stub = stubbed_table(sleeps)
    for _ in range(2):
        stub.add_client_error("get_item", "ProvisionedThroughputExceededException", http_status_code=400)
    stub.add_response("get_item", {"Item": {"pk": {"S": "a"}, "sk": {"S": "LATEST"}}})
    # When
    with stub:
        item = table.get({"pk": "a", "sk": "LATEST"})
    # Then
    assert item == {"pk": "a", "sk": "LATEST"}
    assert len(sleeps) == 2
    assert all(0 <= s <= table.base_delay * 2**n for n, s in enumerate(sleeps, 1))
    assert sleeps[0] != sleeps[1]  # jittered, not a fixed schedule


def test_throttling_that_persists_becomes_throttled_error() -> None:
    # Given more throttles than attempts
    sleeps: list[float] = []
    table, stub = stubbed_table(sleeps)
    for _ in range(table.max_attempts):
        stub.add_client_error("query", "ThrottlingException", http_status_code=400)
    # When / Then
    with stub, pytest.raises(ThrottledError) as raised:
        table.query("a")
    assert raised.value.details["aws_code"] == "ThrottlingException"
    assert len(sleeps) == table.max_attempts - 1


def test_transaction_conflict_is_retried_but_condition_failure_is_reported_by_name() -> None:
    # Given a conflict (retryable) and then a real condition failure on the second item
    sleeps: list[float] = []
    table, stub = stubbed_table(sleeps)
    stub.add_client_error(
        "transact_write_items",
        "TransactionCanceledException",
        http_status_code=400,
        response_meta={},
        modeled_fields={"CancellationReasons": [{"Code": "TransactionConflict"}, {"Code": "None"}]},
    )
    stub.add_client_error(
        "transact_write_items",
        "TransactionCanceledException",
        http_status_code=400,
        modeled_fields={
            "CancellationReasons": [
                {"Code": "None"},
                {"Code": "ConditionalCheckFailed", "Item": {"pk": {"S": "a"}, "deleted": {"BOOL": True}}},
            ]
        },
    )
    writes = [
        Write("latest", "Update", {"pk": "a", "sk": "LATEST"}, update=Update(set={"x": 1})),
        Write("version", "ConditionCheck", {"pk": "a", "sk": "000001"}, condition=Attr("pk").exists()),
    ]
    # When
    with stub, pytest.raises(TransactionCancelled) as raised:
        table.transact(writes)
    # Then
    assert len(sleeps) == 1
    assert set(raised.value.reasons) == {"version"}
    assert raised.value.failed("version").item == {"pk": "a", "deleted": True}  # type: ignore[union-attr]


def cancellation(*codes: str) -> dict[str, Any]:
    return {"CancellationReasons": [{"Code": c, **({"Message": f"{c} reason"} if c != "None" else {})} for c in codes]}


@pytest.mark.parametrize(
    "codes",
    [
        ("None", "ValidationError"),
        ("ItemCollectionSizeLimitExceeded", "None"),
        ("ConditionalCheckFailed", "ValidationError"),
    ],
)
def test_cancellation_for_a_reason_other_than_a_condition_is_rejected_not_a_conflict(codes: tuple[str, ...]) -> None:
    # Given a transaction DynamoDB cancels for a reason that is no condition of ours
    table, stub = stubbed_table([])
    stub.add_client_error(
        "transact_write_items",
        "TransactionCanceledException",
        http_status_code=400,
        modeled_fields=cancellation(*codes),
    )
    writes = [
        Write("latest", "Update", {"pk": "a", "sk": "LATEST"}, update=Update(set={"x": 1})),
        Write("version", "ConditionCheck", {"pk": "a", "sk": "000001"}, condition=Attr("pk").exists()),
    ]
    # When / Then it is reported as what it is, by item, and not retried
    with stub, pytest.raises(TransactionRejected) as raised:
        table.transact(writes)
    rejected = [c for c in codes if c not in ("None", "ConditionalCheckFailed")]
    assert [r.code for r in raised.value.reasons.values()] == rejected
    assert rejected[0] in str(raised.value)


def test_transaction_conflict_that_persists_becomes_throttled_error() -> None:
    # Given conflicts on every attempt
    sleeps: list[float] = []
    table, stub = stubbed_table(sleeps)
    for _ in range(table.max_attempts):
        stub.add_client_error(
            "transact_write_items",
            "TransactionCanceledException",
            http_status_code=400,
            modeled_fields=cancellation("TransactionConflict", "None"),
        )
    writes = [Write("latest", "Update", {"pk": "a", "sk": "LATEST"}, update=Update(set={"x": 1}))]
    # When / Then
    with stub, pytest.raises(ThrottledError) as raised:
        table.transact(writes)
    assert raised.value.details["aws_code"] == "TransactionCanceledException"


class OversizeTransactions:
    """The moto client, except that every TransactWriteItems is cancelled as an item over 400 KB would be."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    def transact_write_items(self, **kwargs: Any) -> Any:
        reasons = [{"Code": "None"}] * len(kwargs["TransactItems"])
        reasons[-1] = {"Code": "ValidationError", "Message": "Item size has exceeded the maximum allowed size"}
        error = {"Code": "TransactionCanceledException", "Message": "cancelled"}
        raise ClientError({"Error": error, "CancellationReasons": reasons}, "TransactWriteItems")


def test_alias_write_rejected_for_item_size_is_a_logged_500_not_a_conflict(
    api: HandlerApi, aws: SimpleNamespace, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a version, and a table that rejects every transaction for an item's size (its last item: the event)
    assert api.publish("app", b"one").status == 201
    monkeypatch.setattr(logger.registered_handler, "stream", sys.stdout)
    monkeypatch.setattr(wiring.services().stores.table, "client", OversizeTransactions(aws.dynamodb))
    # When
    reply = api.call("PUT", "/artifacts/app/aliases/prod", {"version": 1})
    # Then
    assert reply.status == 500, reply.body
    assert reply.error["code"] == "InternalError"
    assert "event0: ValidationError" in capsys.readouterr().out


def test_unknown_aws_errors_are_not_swallowed() -> None:
    # Given
    table, stub = stubbed_table([])
    stub.add_client_error("get_item", "ResourceNotFoundException", http_status_code=400)
    # When / Then
    with stub, pytest.raises(Exception, match="ResourceNotFoundException"):
        table.get({"pk": "a", "sk": "b"})


def test_condition_failure_under_moto_carries_the_old_item(aws: SimpleNamespace) -> None:
    # Given
    table = Table(aws.dynamodb, aws.table)
    table.transact([Write("v", "Put", {"pk": "a", "sk": "000001"}, item={"deleted": True})])
    # When / Then
    with pytest.raises(ConditionFailed) as raised:
        table.update({"pk": "a", "sk": "000001"}, Update(set={"deleted": False}), condition=Attr("deleted").eq(False))
    assert raised.value.item is not None and raised.value.item["deleted"] is True


def test_cancellation_under_moto_names_the_failed_item(aws: SimpleNamespace) -> None:
    # Given a version that exists
    table = Table(aws.dynamodb, aws.table)
    table.transact([Write("v", "Put", keys.version_key("a", 1), item={"n": 1})])
    # When a transaction tries to create it again beside a fine write
    with pytest.raises(TransactionCancelled) as raised:
        table.transact(
            [
                Write("other", "Put", {"pk": "b", "sk": "LATEST"}, item={}),
                Write("version", "Put", keys.version_key("a", 1), item={}, condition=Attr("pk").not_exists()),
            ]
        )
    # Then nothing of it was written, and the reason is under the right name
    assert set(raised.value.reasons) == {"version"}
    assert table.get({"pk": "b", "sk": "LATEST"}) is None


def test_throttling_reaches_the_caller_as_503_with_the_error_shape(
    api: HandlerApi, aws: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a registry whose DynamoDB always throttles
    table = wiring.services().stores.table
    client = boto3.client("dynamodb")
    stub = Stubber(client)
    for _ in range(table.max_attempts):
        stub.add_client_error("get_item", "ThrottlingException", http_status_code=400)
    monkeypatch.setattr(table, "client", client)
    monkeypatch.setattr(table, "_sleep", lambda _: None)
    # When
    with stub:
        reply = api.call("GET", "/artifacts/app")
    # Then
    assert reply.status == 503
    assert reply.error["code"] == "ThrottledError"
    assert reply.error["request_id"]


def test_unexpected_error_is_500_with_request_id_and_logged(
    api: HandlerApi, aws: SimpleNamespace, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a bug deep inside, and the log handler writing to this test's stdout
    monkeypatch.setattr(logger.registered_handler, "stream", sys.stdout)

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(wiring.reading(), "summary", broken)
    # When
    reply = api.call("GET", "/artifacts/app")
    # Then
    assert reply.status == 500
    assert reply.error == {
        "code": "InternalError",
        "message": "internal error",
        "request_id": reply.error["request_id"],
    }
    logged = capsys.readouterr().out
    assert "RuntimeError: boom" in logged and "Traceback" in logged


def test_unprocessed_batch_items_are_resent_after_a_jittered_pause() -> None:
    # Given a batch delete whose first two answers leave an item unprocessed
    sleeps: list[float] = []
    table, stub = stubbed_table(sleeps)
    left = {"t": [{"DeleteRequest": {"Key": {"pk": {"S": "a"}, "sk": {"S": "000002"}}}}]}
    stub.add_response("batch_write_item", {"UnprocessedItems": left})
    stub.add_response("batch_write_item", {"UnprocessedItems": left}, {"RequestItems": left})
    stub.add_response("batch_write_item", {"UnprocessedItems": {}}, {"RequestItems": left})
    # When
    with stub:
        table.batch_delete([{"pk": "a", "sk": "000001"}, {"pk": "a", "sk": "000002"}])
    # Then the leftover was re-sent twice, each after a jittered pause within the growing ceiling
    stub.assert_no_pending_responses()
    assert len(sleeps) == 2 and sleeps[0] != sleeps[1]
    assert all(0 <= s <= table.base_delay * 2**n for n, s in enumerate(sleeps, 1))


def test_keys_a_batch_read_left_unprocessed_are_read_again_and_every_answer_kept() -> None:
    # Given a batch read whose first answer holds one item and leaves the other key unprocessed
    sleeps: list[float] = []
    table, stub = stubbed_table(sleeps)
    first, second = {"pk": {"S": "a"}, "sk": {"S": "000001"}}, {"pk": {"S": "a"}, "sk": {"S": "000002"}}
    names = {"#a0": "pk", "#a1": "sk", "#a2": "tags"}
    left = {"t": {"Keys": [second], "ConsistentRead": True, "ProjectionExpression": "#a0, #a1, #a2"}}
    left["t"]["ExpressionAttributeNames"] = names
    stub.add_response("batch_get_item", {"Responses": {"t": [first]}, "UnprocessedKeys": left})
    stub.add_response("batch_get_item", {"Responses": {"t": [second]}, "UnprocessedKeys": {}}, {"RequestItems": left})
    # When
    with stub:
        found = table.batch_get([{"pk": "a", "sk": "000001"}, {"pk": "a", "sk": "000002"}], projection=["tags"])
    # Then the leftover key was read again after one jittered pause, and both answers are kept
    stub.assert_no_pending_responses()
    assert sorted(item["sk"] for item in found) == ["000001", "000002"]
    assert len(sleeps) == 1 and 0 <= sleeps[0] <= table.base_delay * 2


def test_items_left_unprocessed_every_time_become_throttled_error() -> None:
    # Given a batch delete that never gets its item processed
    sleeps: list[float] = []
    table, stub = stubbed_table(sleeps)
    left = {"t": [{"DeleteRequest": {"Key": {"pk": {"S": "a"}, "sk": {"S": "000001"}}}}]}
    for _ in range(table.max_attempts):
        stub.add_response("batch_write_item", {"UnprocessedItems": left})
    # When / Then
    with stub, pytest.raises(ThrottledError):
        table.batch_delete([{"pk": "a", "sk": "000001"}])
    assert len(sleeps) == table.max_attempts - 1


@pytest.mark.parametrize(
    ("call", "fault"),
    [
        (lambda t: t.get({"pk": "a", "sk": "x" * 1025}), "sk is 1025 bytes"),
        (lambda t: t.get({"pk": "é" * 1025, "sk": "LATEST"}), "pk is 2050 bytes"),
        (lambda t: t.query("a", start={"pk": "a", "sk": ""}), "sk is empty"),
        (lambda t: t.query("a", sk_prefix="p" * 1025), "sk is 1025 bytes"),
        (lambda t: t.query_index("gsi1", ("gsi1pk", "gsi1sk"), "h", sk_between=("a", "ü" * 513)), "gsi1sk is 1026"),
        (lambda t: t.update({"pk": "", "sk": "s"}, Update(set={"a": 1})), "pk is empty"),
        (lambda t: t.transact([Write("tag", "Put", {"pk": "a", "sk": "b"}, item={"gsi1sk": "x" * 1025})]), "gsi1sk"),
        (lambda t: t.batch_delete([{"pk": "a", "sk": "b"}, {"pk": "a", "sk": "🙂" * 257}]), "sk is 1028 bytes"),
    ],
)
def test_a_key_dynamodb_would_refuse_is_a_validation_error_before_anything_is_sent(call: Any, fault: str) -> None:
    # Given a table whose client answers nothing (the Stubber fails any call it was not told of)
    table, stub = stubbed_table([])
    # When / Then: refused as AWS would (DynamoDB Local does not check key sizes), nothing sent
    with stub, pytest.raises(ValidationError) as refused:
        call(table)
    assert fault in refused.value.message
    stub.assert_no_pending_responses()


@pytest.mark.parametrize(
    "message",
    [
        "One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes",
        "One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit "
        "of 1024 bytes",
        "The provided starting key is invalid: One or more parameter values were invalid: An AttributeValue may "
        "not contain an empty string",
    ],
)
def test_dynamodbs_own_refusal_of_a_key_is_a_validation_error(message: str) -> None:
    # Given DynamoDB refusing a key value the table let through
    table, stub = stubbed_table([])
    stub.add_client_error("query", "ValidationException", message, http_status_code=400)
    # When / Then: bad input (a 400), not a 500 that pages anyone
    with stub, pytest.raises(ValidationError) as refused:
        table.query("a")
    assert "DynamoDB refused" in refused.value.message


def test_any_other_validation_exception_is_still_a_bug() -> None:
    table, stub = stubbed_table([])
    stub.add_client_error("query", "ValidationException", "Invalid KeyConditionExpression", http_status_code=400)
    with stub, pytest.raises(ClientError):
        table.query("a")


def test_the_key_limits_cover_every_key_of_the_table_and_its_indexes() -> None:
    from infra.schema import GLOBAL_SECONDARY_INDEXES, KEY_SCHEMA

    schemas = [KEY_SCHEMA, *(index["KeySchema"] for index in GLOBAL_SECONDARY_INDEXES)]
    declared = {k["AttributeName"]: 2048 if k["KeyType"] == "HASH" else 1024 for s in schemas for k in s}
    assert declared == KEY_LIMITS
