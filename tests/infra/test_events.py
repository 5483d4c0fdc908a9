"""The events function, its bus, stream mapping, dead-letter queue and least-privilege role."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.infra.test_stack import _as_list, _conditional_grants, _functions_by_name, _only, _resources, _synth


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return _synth("dev").service


def test_the_stage_has_a_bus_whose_name_is_an_output(template: dict[str, Any]) -> None:
    # Given / When
    bus_id, _ = _only(template, "AWS::Events::EventBus")
    # Then
    assert template["Outputs"]["EventBusName"]["Value"] == {"Ref": bus_id}


def test_the_events_function_reads_the_stream_with_bounded_retries_into_an_encrypted_dead_letter_queue(
    template: dict[str, Any],
) -> None:
    # Given the events function and its one event source mapping
    function_id = _functions_by_name(template)["events"]
    _, mapping = _only(template, "AWS::Lambda::EventSourceMapping")
    properties = mapping["Properties"]
    queue_id, queue = _only(template, "AWS::SQS::Queue")
    # Then it consumes the table's stream (read from the storage stack's parameter), reports partial failures,
    # retries a bounded number of times halving the batch, and sends what it gives up on to the queue
    assert properties["FunctionName"] == {"Ref": function_id}
    assert "Ref" in properties["EventSourceArn"]
    assert properties["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert properties["MaximumRetryAttempts"] == 5
    assert properties["BisectBatchOnFunctionError"] is True
    assert properties["MaximumRecordAgeInSeconds"] == 24 * 3600
    assert properties["DestinationConfig"]["OnFailure"]["Destination"] == {"Fn::GetAtt": [queue_id, "Arn"]}
    assert queue["Properties"]["SqsManagedSseEnabled"] is True
    # And the handler is the events module, told the bus by name
    function = template["Resources"][function_id]["Properties"]
    assert function["Handler"] == "arca.handlers.events.handler"
    assert "ARCA_EVENT_BUS_NAME" in function["Environment"]["Variables"]


def test_the_stream_filter_lets_through_only_event_inserts_and_purge_tombstones(template: dict[str, Any]) -> None:
    # Given the mapping's filter patterns
    _, mapping = _only(template, "AWS::Lambda::EventSourceMapping")
    patterns = [json.loads(f["Pattern"]) for f in mapping["Properties"]["FilterCriteria"]["Filters"]]
    # Then
    assert patterns == [
        {"eventName": ["INSERT"], "dynamodb": {"NewImage": {"kind": {"S": ["event"]}}}},
        {
            "eventName": ["MODIFY"],
            "dynamodb": {
                "NewImage": {"sk": {"S": ["LATEST"]}, "purged": {"S": [{"exists": True}]}},
                "OldImage": {"purged": {"S": [{"exists": False}]}},
            },
        },
    ]


def test_the_events_role_may_only_read_the_stream_put_on_its_bus_and_send_dead_letters(
    template: dict[str, Any],
) -> None:
    # Given the events function's grants
    grants = {action for action, _, _ in _conditional_grants(template, _functions_by_name(template)["events"])}
    bus_id, _ = _only(template, "AWS::Events::EventBus")
    put = [
        (resource, json.loads(condition))
        for action, resource, condition in _conditional_grants(template, _functions_by_name(template)["events"])
        if action == "events:PutEvents"
    ]
    # Then it reads the stream and puts on this stack's bus, and touches no item, object or other bus
    data = {a for a in grants if a.split(":")[0] in {"dynamodb", "s3", "events"}}
    assert data == {
        "dynamodb:DescribeStream",
        "dynamodb:GetRecords",
        "dynamodb:GetShardIterator",
        "dynamodb:ListStreams",
        "events:PutEvents",
    }
    # on this bus only, and only as Arca's own source
    assert put == [
        (json.dumps({"Fn::GetAtt": [bus_id, "Arn"]}, sort_keys=True), {"StringEquals": {"events:source": ["arca"]}})
    ]
    assert {a for a in grants if a.startswith("sqs:")} <= {
        "sqs:SendMessage",
        "sqs:GetQueueAttributes",
        "sqs:GetQueueUrl",
    }
    # no rule on its bus: consumers add theirs (the one rule of the stack is the retention schedule's, on the default
    # bus, with no pattern)
    rules = _resources(template, "AWS::Events::Rule").values()
    assert [r["Properties"].get("ScheduleExpression") for r in rules] == ["rate(1 hour)"]
    assert not any("EventPattern" in r["Properties"] or "EventBusName" in r["Properties"] for r in rules)


def test_no_role_of_the_stage_but_the_events_functions_may_put_events(template: dict[str, Any]) -> None:
    # Given every IAM policy of the service stack, whoever it is attached to
    holders = {
        role["Ref"]
        for policy in _resources(template, "AWS::IAM::Policy").values()
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
        if any(a in ("events:PutEvents", "events:*", "*") for a in _as_list(statement["Action"]))
        for role in policy["Properties"]["Roles"]
    }
    inline = [
        logical_id
        for logical_id, role in _resources(template, "AWS::IAM::Role").items()
        for policy in role["Properties"].get("Policies", [])
        for statement in policy["PolicyDocument"]["Statement"]
        if "events:PutEvents" in _as_list(statement["Action"])
    ]
    # Then the one role that may put on the bus is the events function's
    events_role = template["Resources"][_functions_by_name(template)["events"]]["Properties"]["Role"]["Fn::GetAtt"][0]
    assert holders == {events_role}
    assert inline == []
