"""Events reach the bus from the table's stream, locally as on AWS: DynamoDB Local's stream, the real `events`
handler, moto's EventBridge (whose rule copies each event into an SQS queue)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import boto3

from arca.adapters.bus import Bus
from arca.api.stream import handle
from arca.services.events import Announcer
from local.events import lambda_context
from local.services import DEFAULT_EVENT_BUS
from local.stream import delivered_events, lambda_record, wanted
from tests.e2e.conftest import ArcaHttp
from tests.helpers import PATIENCE, path_quote, wait_for


def feed(arca: ArcaHttp, name: str) -> list[dict[str, Any]]:
    reply = arca.get(f"/artifacts/{path_quote(name)}/events", params={"limit": 1000})
    assert reply.status_code == 200, reply.text
    found: list[dict[str, Any]] = reply.json()["events"]
    return found


def announced(name: str, until: Callable[[list[dict[str, Any]]], bool]) -> list[dict[str, Any]]:
    """The events of `name` that reached the local bus (read from the queue its rule fills), read until `until`
    holds of them (PATIENCE at most: the stream consumer delivers them when the machine lets it)."""
    found: list[dict[str, Any]] = []

    def enough() -> bool:
        delivered = delivered_events(os.environ["AWS_ENDPOINT_URL_EVENTBRIDGE"])
        found.extend(m for m in delivered if m["detail"]["name"] == name)
        return until(found)

    wait_for(enough, timeout=PATIENCE, what=f"the events of {name} on the bus", interval=0.1)
    return found


def at_least(count: int) -> Callable[[list[dict[str, Any]]], bool]:
    return lambda found: len(found) >= count


def publish(arca: ArcaHttp, name: str, data: bytes) -> None:
    arca.published(path_quote(name), data)


def test_every_event_of_the_feed_reaches_the_bus_and_a_purge_is_announced(arca: ArcaHttp, unique: str) -> None:
    # Given an artifact created with no version (its event's detail an empty map of tags), then two versions, an
    # alias, a version deleted and restored, and a description
    name = f"{unique}/bus"
    assert arca.put(f"/artifacts/{path_quote(name)}", json={}).status_code == 201
    publish(arca, name, b"one")
    publish(arca, name, b"two")
    assert arca.put(f"/artifacts/{path_quote(name)}/aliases/prod", json={"version": 2}).status_code == 201
    assert arca.request("DELETE", f"/artifacts/{path_quote(name)}/versions/1").status_code == 200
    assert arca.post(f"/artifacts/{path_quote(name)}/versions/1/restore").status_code == 200
    # (a description alone: its detail holds an empty map of tags, which DynamoDB Local's stream spells `{}`)
    assert arca.request("PATCH", f"/artifacts/{path_quote(name)}", json={"description": "the bus"}).status_code == 200
    written = feed(arca, name)
    # When its events are read from the bus, and it is then purged
    messages = announced(name, at_least(len(written)))
    assert arca.request("DELETE", f"/artifacts/{path_quote(name)}", params={"force": "true"}).status_code == 204
    purged = announced(name, lambda found: any(m["detail-type"] == "artifact.purged" for m in found))
    # Then each event of the feed was put once, as EventBridge shows it: source arca, detail-type the type
    assert sorted(m["detail"]["id"] for m in messages) == [e["id"] for e in written]
    assert {(m["source"], m["detail-type"]) for m in messages} == {("arca", e["type"]) for e in written}
    assert {m["detail"]["id"]: m["detail"] for m in messages} == {e["id"]: e for e in written}
    # And the purge, which leaves no feed, was announced from its tombstone
    assert [(m["detail-type"], m["detail"]["detail"]["newest_version"]) for m in purged] == [("artifact.purged", 2)]


class FailingBus:
    """moto's EventBridge, except that the entry of one event id is refused as PutEvents reports it."""

    def __init__(self, refused: str) -> None:
        self.client = boto3.client("events")
        self.refused = refused

    def put_events(self, Entries: list[dict[str, Any]]) -> dict[str, Any]:
        if self.refused in Entries[0]["Detail"]:
            failed = {"ErrorCode": "InternalFailure", "ErrorMessage": "try again"}
            return {"FailedEntryCount": 1, "Entries": [failed]}
        response: dict[str, Any] = self.client.put_events(Entries=Entries)
        return response


def stream_records(name: str) -> list[dict[str, Any]]:
    """The records of the table's stream (DynamoDB Local) that the stack's filter lets through, for `name`."""
    endpoint = os.environ["AWS_ENDPOINT_URL_DYNAMODB"]
    dynamodb = boto3.client("dynamodb", endpoint_url=endpoint)
    streams = boto3.client("dynamodbstreams", endpoint_url=endpoint)
    arn = dynamodb.describe_table(TableName=os.environ["ARCA_TABLE_NAME"])["Table"]["LatestStreamArn"]
    records = []
    for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
        iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON")
        position = iterator["ShardIterator"]
        while position:
            page = streams.get_records(ShardIterator=position, Limit=1000)
            records += [lambda_record(r, arn) for r in page["Records"]]
            position = page.get("NextShardIterator") if page["Records"] else None
    return [r for r in records if wanted(r) and r["dynamodb"]["NewImage"]["name"]["S"] == name]


def test_a_refused_entry_is_the_one_batch_item_failure(arca: ArcaHttp, unique: str) -> None:
    # Given the stream records of three publishes (six events), and a bus that refuses the third event
    name = f"{unique}/partial"
    for data in (b"a", b"b", b"c"):
        publish(arca, name, data)
    records = stream_records(name)
    assert len(records) == 6
    refused = records[2]
    event_id = refused["dynamodb"]["NewImage"]["sk"]["S"]
    announcer = Announcer(Bus(FailingBus(event_id), DEFAULT_EVENT_BUS))
    announced(name, at_least(len(records)))  # what the local consumer delivers by itself
    # When the handler gets the batch
    result = handle({"Records": records}, lambda_context("events"), lambda: announcer)
    # Then exactly that record is reported failed, and the others were put on the bus
    assert result == {"batchItemFailures": [{"itemIdentifier": refused["dynamodb"]["SequenceNumber"]}]}
    ids = sorted(m["detail"]["id"] for m in announced(name, at_least(len(records) - 1)))
    assert ids == sorted(r["dynamodb"]["NewImage"]["sk"]["S"] for r in records if r is not refused)
