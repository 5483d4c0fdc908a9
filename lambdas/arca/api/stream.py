"""The `events` function's contract: a batch of the table's stream records in, partial batch failures out.

Each record is put on the bus on its own (one PutEvents entry). A record that fails is reported in
`batchItemFailures`, so Lambda retries the batch from it, and the records after it are sent again too: delivery
is at least once, and consumers dedupe on the event `id` (which sorts in commit order per artifact).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from arca.api import dependencies
from arca.observability import logger, metrics
from arca.services.events import Announcer


def handle(
    event: dict[str, Any], context: LambdaContext, announcer: Callable[[], Announcer] = dependencies.announcer
) -> Any:
    """`{"batchItemFailures": [{"itemIdentifier": <sequence number>}, …]}` naming the records not delivered;
    `announcer` provides the service (the composition root's, unless a test gives one).

    A processor per batch: it keeps the batch's outcomes, and local mode may run two batches at once.
    """
    deliver = announcer().deliver

    def record_handler(record: DynamoDBRecord) -> None:
        delivered = deliver(record.raw_event)
        if delivered is not None:
            logger.info("event delivered", extra={"event_id": delivered.id, "type": delivered.type})
            metrics.add_metric(name="EventsDelivered", unit="Count", value=1)

    processor = BatchProcessor(event_type=EventType.DynamoDBStreams)
    return process_partial_response(event=event, record_handler=record_handler, processor=processor, context=context)
