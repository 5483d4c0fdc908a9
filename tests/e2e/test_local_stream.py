"""The stream consumer's pace, on a fake clock and a fake stream: few reads while idle, a short delay while busy."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from local.events import LAMBDA_PAYLOAD_BYTES, PayloadTooLargeError, invoke
from local.services import Services
from local.stream import BUSY_PAUSE, IDLE_PAUSE, QUIET_AFTER, SHARDS_EVERY, StreamConsumer


@dataclass
class FakeTime:
    """`wait` moves the clock on instead of sleeping, and says stop once `end` is reached."""

    end: float
    now: float = 0.0

    def clock(self) -> float:
        return self.now

    def wait(self, seconds: float) -> bool:
        self.now += seconds
        return self.now >= self.end


@dataclass
class FakeStreams:
    """One open shard; a record committed at time t is readable from t on."""

    time: FakeTime
    commits: list[float] = field(default_factory=list)
    reads: list[float] = field(default_factory=list)
    listings: int = 0

    def describe_stream(self, StreamArn: str) -> dict[str, Any]:
        self.listings += 1
        return {"StreamDescription": {"Shards": [{"ShardId": "shard-1"}]}}

    def get_shard_iterator(self, **_: Any) -> dict[str, Any]:
        return {"ShardIterator": "0"}

    def get_records(self, ShardIterator: str, Limit: int) -> dict[str, Any]:
        self.reads.append(self.time.now)
        start = int(ShardIterator)
        ready = [t for t in self.commits[start:] if t <= self.time.now][:Limit]
        records = [_record(start + i, committed) for i, committed in enumerate(ready)]
        return {"Records": records, "NextShardIterator": str(start + len(ready))}


def _record(sequence: int, committed: float) -> dict[str, Any]:
    image = {"kind": {"S": "event"}, "type": {"S": "version.published"}, "name": {"S": "app"}, "sk": {"S": "e"}}
    image["committed"] = {"N": str(committed)}
    return {"eventName": "INSERT", "dynamodb": {"NewImage": image, "SequenceNumber": str(sequence)}}


def consume(commits: list[float], end: float) -> tuple[FakeStreams, list[float]]:
    """Run the consumer until `end` (fake seconds); the streams it read and each record's delay to the handler."""
    time = FakeTime(end)
    streams = FakeStreams(time, commits)
    delays: list[float] = []

    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        for record in event["Records"]:
            delays.append(time.now - float(record["dynamodb"]["NewImage"]["committed"]["N"]))
        return {"batchItemFailures": []}

    services = Services("http://127.0.0.1:1", "http://127.0.0.1:2", "table", "bucket")
    StreamConsumer(services, handler, None, clock=time.clock, wait=time.wait).consume(streams, "arn")
    return streams, delays


def test_an_idle_stream_is_read_four_times_a_second_and_listed_rarely() -> None:
    # When nothing happens for a minute
    streams, _ = consume([], end=60.0)
    # Then the consumer has backed off to Lambda's pace instead of reading every 20 ms (3000 reads)
    last_half = [t for t in streams.reads if t >= 30.0]
    assert len(last_half) <= 30.0 / IDLE_PAUSE + 1
    assert len(streams.reads) <= QUIET_AFTER / BUSY_PAUSE + 60.0 / IDLE_PAUSE + 10
    assert streams.listings <= 60.0 / SHARDS_EVERY + 1


def test_a_busy_stream_is_read_at_once_and_the_first_record_after_a_quiet_spell_waits_at_most_the_idle_pause() -> None:
    # Given a quiet minute, then a record every 100 ms for 5 s
    commits = [60.0 + 0.1 * i for i in range(50)]
    # When
    _, delays = consume(commits, end=70.0)
    # Then every record was delivered: the first within the idle pause, the others within the busy pause
    assert len(delays) == 50
    assert delays[0] <= IDLE_PAUSE
    assert max(delays[1:]) <= BUSY_PAUSE + 1e-9


def test_direct_invocations_refuse_what_lambda_refuses() -> None:
    # Given a function that records its calls and answers a string of the size it is asked for
    calls: list[Any] = []

    def answer(event: Any, context: Any) -> Any:
        calls.append(event)
        return "x" * event["size"]

    # When its event is over 6 MB, then when its answer is
    with pytest.raises(PayloadTooLargeError) as event_refused:
        invoke(answer, {"size": 1, "pad": "x" * LAMBDA_PAYLOAD_BYTES}, None)
    with pytest.raises(PayloadTooLargeError) as response_refused:
        invoke(answer, {"size": LAMBDA_PAYLOAD_BYTES}, None)
    # Then the first never ran, the second ran but its answer is refused, and a small one passes
    assert event_refused.value.what == "event" and response_refused.value.what == "response"
    assert len(calls) == 1
    assert invoke(answer, {"size": 2}, None) == "xx"
