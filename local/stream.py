"""The table's stream, locally: what Lambda's event source mapping does for the `events` function on AWS.

A background thread reads DynamoDB Local's stream (the `dynamodbstreams` API on the same endpoint), keeps
the records the stack's filter lets through (event items' INSERTs, LATEST becoming a purge tombstone), and
hands them to the real `events` handler in the record shape Lambda uses. A record the handler reports in
`batchItemFailures` is sent again, from it on, up to RETRY_ATTEMPTS times (as the stack's retries), then
dropped with a log line (the stack sends it to the dead-letter queue). The handler puts each event on the
bus moto serves, whose rule copies it into an SQS queue, where a user can read what was delivered.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from local.events import invoke
from local.iam import acting_as
from local.services import DEFAULT_EVENTS_QUEUE, REGION, Services, client

log = logging.getLogger("arca.local")
Handler = Callable[[dict[str, Any], Any], Any]
Observer = Callable[[dict[str, Any]], None]
# As the stack's event source mapping (infra/events.py).
RETRY_ATTEMPTS = 5
BATCH_SIZE = 100
# The pause after an empty read: BUSY_PAUSE while records came in the last QUIET_AFTER seconds (the bench
# measures the delay it adds), then doubling up to IDLE_PAUSE, the interval at which Lambda polls a shard on AWS:
# an idle server reads its stream four times a second instead of fifty (docs/local.md).
BUSY_PAUSE = 0.02
IDLE_PAUSE = 0.25
QUIET_AFTER = 2.0
# Shards are listed again this often (and whenever one ends): a new shard is rare, a listing costs a request.
SHARDS_EVERY = 10.0


def wanted(record: dict[str, Any]) -> bool:
    """The stack's filter criteria, in Python: an event item's INSERT, or LATEST gaining `purged`."""
    change = record.get("dynamodb", {})
    new, old = change.get("NewImage", {}), change.get("OldImage", {})
    if record.get("eventName") == "INSERT":
        return bool(new.get("kind", {}).get("S") == "event")
    return (
        record.get("eventName") == "MODIFY"
        and new.get("sk", {}).get("S") == "LATEST"
        and "purged" in new
        and "purged" not in old
    )


def lambda_record(record: dict[str, Any], stream_arn: str) -> dict[str, Any]:
    """A DynamoDB Streams record as Lambda passes it (the streams API gives times as datetimes)."""
    change = dict(record["dynamodb"])
    for image in ("NewImage", "OldImage"):
        if image in change:
            change[image] = {k: _typed(v) for k, v in change[image].items()}
    created = change.get("ApproximateCreationDateTime")
    if created is not None and not isinstance(created, (int, float)):
        change["ApproximateCreationDateTime"] = created.timestamp()
    return {
        "eventID": record.get("eventID", uuid.uuid4().hex),
        "eventName": record["eventName"],
        "eventVersion": record.get("eventVersion", "1.1"),
        "eventSource": "aws:dynamodb",
        "awsRegion": record.get("awsRegion", REGION),
        "dynamodb": change,
        "eventSourceARN": stream_arn,
    }


def _typed(value: dict[str, Any]) -> dict[str, Any]:
    """An attribute value as DynamoDB Streams gives it. DynamoDB Local's stream gives an empty map as `{}` with no
    type (the table itself returns `{"M": {}}`); the items Arca writes hold no empty list or set, so an untyped empty
    value is a map."""
    if not value:
        return {"M": {}}
    if "M" in value:
        return {"M": {k: _typed(v) for k, v in value["M"].items()}}
    if "L" in value:
        return {"L": [_typed(v) for v in value["L"]]}
    return value


class Pacing:
    """How long to wait after a read: nothing after records (the next read at once), BUSY_PAUSE after an empty
    read that follows records by less than QUIET_AFTER seconds, then twice the last pause, up to IDLE_PAUSE."""

    def __init__(self, now: float) -> None:
        self.last_records = now
        self.pause = BUSY_PAUSE

    def after(self, records: bool, now: float) -> float:
        if records:
            self.last_records, self.pause = now, BUSY_PAUSE
            return 0.0
        if now - self.last_records >= QUIET_AFTER:
            self.pause = min(IDLE_PAUSE, self.pause * 2)
        return self.pause


class StreamConsumer:
    """Polls every shard of the table's stream and feeds the handler; `delivered` counts events handed over.

    `clock` and `wait` (seconds → True once stopped) are time.monotonic and the stop event's wait, or a test's.
    `observe` is shown every record read, before the filter (the rollout driver learns of rollouts this way); it
    must return quickly, and what it raises is logged and ignored.
    """

    def __init__(
        self,
        services: Services,
        handler: Handler,
        context: Any,
        *,
        clock: Callable[[], float] = time.monotonic,
        wait: Callable[[float], bool] | None = None,
        observe: Observer | None = None,
    ) -> None:
        self.services = services
        self.handler = handler
        self.context = context
        self.observe = observe
        self.delivered = 0
        self._stop = threading.Event()
        self._clock = clock
        self._wait = wait or self._stop.wait
        self._thread = threading.Thread(target=self._run, name="arca-stream", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        dynamodb = client("dynamodb", self.services.dynamodb_endpoint)
        streams = client("dynamodbstreams", self.services.dynamodb_endpoint)
        arn = dynamodb.describe_table(TableName=self.services.table_name)["Table"]["LatestStreamArn"]
        self.consume(streams, arn)

    def consume(self, streams: Any, arn: str) -> None:
        """Read the stream until stopped, pausing as `Pacing` says."""
        iterators: dict[str, str] = {}  # the open shards' next reads
        ended: set[str] = set()  # shards read to their end
        pacing = Pacing(self._clock())
        listed = float("-inf")
        while not self._stop.is_set():
            try:
                if self._clock() - listed >= SHARDS_EVERY or not iterators:
                    self._list_shards(streams, arn, iterators, ended)
                    listed = self._clock()
                closed = len(ended)
                busy = self._poll(streams, arn, iterators, ended)
                if len(ended) > closed:
                    listed = float("-inf")
            except Exception:  # the services are stopping, or a bug: keep the server up, say so
                if self._stop.is_set():
                    return
                log.exception("stream consumer: read failed; retrying")
                busy = False
            pause = pacing.after(busy, self._clock())
            if pause and self._wait(pause):
                return

    def _list_shards(self, streams: Any, arn: str, iterators: dict[str, str], ended: set[str]) -> None:
        """Start reading the shards not seen yet, from their oldest record."""
        for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
            if shard["ShardId"] not in iterators and shard["ShardId"] not in ended:
                iterators[shard["ShardId"]] = streams.get_shard_iterator(
                    StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
                )["ShardIterator"]

    def _poll(self, streams: Any, arn: str, iterators: dict[str, str], ended: set[str]) -> bool:
        """One read of every open shard; True when records came."""
        busy = False
        for shard_id, iterator in list(iterators.items()):
            page = streams.get_records(ShardIterator=iterator, Limit=BATCH_SIZE)
            if page.get("NextShardIterator"):
                iterators[shard_id] = page["NextShardIterator"]
            else:  # a closed shard, read to its end: its children are found by the next listing
                del iterators[shard_id]
                ended.add(shard_id)
            if self.observe is not None:
                for record in page.get("Records", []):
                    try:
                        self.observe(record)
                    except Exception:  # a bug in the observer must not stop the events
                        log.exception("stream consumer: the observer failed on a record")
            records = [lambda_record(r, arn) for r in page.get("Records", []) if wanted(lambda_record(r, arn))]
            if records:
                self._deliver(records)
            busy = busy or bool(page.get("Records"))
        return busy

    def _deliver(self, records: list[dict[str, Any]]) -> None:
        """Hand the batch over; send again from the first failed record, RETRY_ATTEMPTS times at most."""
        for attempt in range(RETRY_ATTEMPTS + 1):
            try:
                with acting_as("events"):  # the events function's role authorises what it calls
                    result = invoke(self.handler, {"Records": records}, self.context) or {}
                failed = {f["itemIdentifier"] for f in result.get("batchItemFailures", [])}
            except Exception:  # every record failed (Powertools raises then): Lambda retries the whole batch
                log.exception("stream consumer: the events handler failed the whole batch")
                failed = {r["dynamodb"]["SequenceNumber"] for r in records}
            done = records
            first = next((i for i, r in enumerate(records) if r["dynamodb"]["SequenceNumber"] in failed), None)
            if first is not None:
                done, records = records[:first], records[first:]
            for record in done:
                self.delivered += 1
                log.info("event %s", _summary(record))
            if first is None:
                return
            if attempt < RETRY_ATTEMPTS:
                time.sleep(0.1 * 2**attempt)
        log.warning("stream consumer: gave up on %d record(s) from %s", len(records), _summary(records[0]))


def _summary(record: dict[str, Any]) -> str:
    image = record["dynamodb"].get("NewImage", {})
    if image.get("kind", {}).get("S") == "event":
        return f"{image['type']['S']} {image['name']['S']} {image['sk']['S']}"
    return f"artifact.purged {image.get('name', {}).get('S')}"


@contextlib.contextmanager
def consuming_stream(
    services: Services, handler: Handler, context: Any, *, observe: Observer | None = None
) -> Iterator[StreamConsumer]:
    consumer = StreamConsumer(services, handler, context, observe=observe)
    consumer.start()
    try:
        yield consumer
    finally:
        consumer.stop()


def delivered_events(endpoint: str, queue: str = DEFAULT_EVENTS_QUEUE, *, wait: float = 0.0) -> list[dict[str, Any]]:
    """The events the local bus copied to its queue since the last call (each read once), as received.

    `wait`: keep reading until nothing more comes for that long after the last message."""
    sqs = client("sqs", endpoint)
    url = sqs.get_queue_url(QueueName=queue)["QueueUrl"]
    found: list[dict[str, Any]] = []
    deadline = time.monotonic() + wait
    while True:
        messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
        for message in messages:
            found.append(json.loads(message["Body"]))
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
            deadline = time.monotonic() + wait
        if not messages and time.monotonic() >= deadline:
            return found
        if not messages:
            time.sleep(0.05)
