"""The local rollout driver learns of rollouts from the table's stream, whoever started them, and drives each once."""

from __future__ import annotations

import threading
from typing import Any

from boto3.dynamodb.types import TypeSerializer

from local.rollouts import LocalDriver, driver_event, started
from local.services import Services
from local.stream import StreamConsumer
from tests.helpers import PATIENCE

_serialize = TypeSerializer().serialize


def rollout_image(rollout_id: str, *, state: str = "running", step: int = 1) -> dict[str, Any]:
    item = {
        "pk": "__app-rollout",
        "sk": "prod",
        "kind": "rollout",
        "id": rollout_id,
        "name": "app",
        "alias": "prod",
        "state": state,
        "step": step,
        "steps": [10, 50],
        "interval_seconds": 0,
    }
    return {key: _serialize(value) for key, value in item.items()}


def record(name: str, new: dict[str, Any], old: dict[str, Any] | None = None) -> dict[str, Any]:
    change: dict[str, Any] = {"NewImage": new, "SequenceNumber": "1"}
    if old is not None:
        change["OldImage"] = old
    return {"eventName": name, "dynamodb": change}


def test_a_rollout_item_written_running_under_a_new_id_is_a_start() -> None:
    first = rollout_image("r1")
    # A first rollout of the alias, then the next one replacing the ended first
    assert started(record("INSERT", first)) is not None
    replaced = started(record("MODIFY", rollout_image("r2"), rollout_image("r1", state="completed", step=3)))
    assert replaced is not None and driver_event(replaced) == {
        "name": "app",
        "alias": "prod",
        "rollout_id": "r2",
        "step": 1,
        "interval_seconds": 0,
        "done": False,
    }


def test_steps_ends_and_other_items_are_not_starts() -> None:
    assert started(record("MODIFY", rollout_image("r1", step=2), rollout_image("r1"))) is None
    assert started(record("MODIFY", rollout_image("r1", state="completed"), rollout_image("r1"))) is None
    assert started(record("REMOVE", {}, rollout_image("r1"))) is None
    assert started(record("INSERT", {"kind": {"S": "event"}, "id": {"S": "r1"}, "state": {"S": "running"}})) is None


def test_a_rollout_shown_twice_is_driven_once() -> None:
    # Given a driver whose rollout function records each step it is asked for, and ends the rollout
    calls: list[dict[str, Any]] = []
    ran = threading.Event()

    def step(event: dict[str, Any], context: Any) -> dict[str, Any]:
        calls.append(event)
        ran.set()
        return {**event, "step": event["step"] + 1, "done": True}

    driver = LocalDriver(lambda: step)
    # When the stream shows the same start twice (a record read again)
    try:
        driver.observe(record("INSERT", rollout_image("r1")))
        driver.observe(record("INSERT", rollout_image("r1")))
        assert ran.wait(PATIENCE)
    finally:
        driver.stop()
    # Then one loop drove it
    assert [c["rollout_id"] for c in calls] == ["r1"]


class OneShard:
    """A stream of one shard holding `records`, read once."""

    def __init__(self, records: list[dict[str, Any]]) -> None:
        self.records = records

    def describe_stream(self, StreamArn: str) -> dict[str, Any]:
        return {"StreamDescription": {"Shards": [{"ShardId": "shard-1"}]}}

    def get_shard_iterator(self, **_: Any) -> dict[str, Any]:
        return {"ShardIterator": "0"}

    def get_records(self, ShardIterator: str, Limit: int) -> dict[str, Any]:
        found, self.records = self.records, []
        return {"Records": found, "NextShardIterator": "1"}


def test_the_stream_consumer_shows_every_record_to_its_observer_and_survives_its_failure() -> None:
    # Given a stream with a rollout item's record and an event's, and an observer that fails on the first
    rollout = record("INSERT", rollout_image("r1"))
    event = record("INSERT", {"kind": {"S": "event"}, "type": {"S": "alias.updated"}, "name": {"S": "a"}})
    event["dynamodb"]["SequenceNumber"] = "2"
    seen: list[dict[str, Any]] = []
    delivered: list[dict[str, Any]] = []

    def observe(found: dict[str, Any]) -> None:
        seen.append(found)
        if found is rollout:
            raise RuntimeError("a bug in the observer")

    def handler(batch: dict[str, Any], context: Any) -> dict[str, Any]:
        delivered.extend(batch["Records"])
        return {"batchItemFailures": []}

    rounds = iter([False, True])
    services = Services("http://127.0.0.1:1", "http://127.0.0.1:2", "table", "bucket")
    consumer = StreamConsumer(services, handler, None, wait=lambda _: next(rounds), observe=observe)
    # When it reads the stream
    consumer.consume(OneShard([rollout, event]), "arn")
    # Then the observer saw both records (before the filter), and the event still reached the events function
    assert seen == [rollout, event]
    assert [r["dynamodb"]["SequenceNumber"] for r in delivered] == ["2"]
