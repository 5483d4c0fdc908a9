"""Events on the bus: the table's stream, filtered to event items and purge tombstones, feeds the `events`
function, which puts each on the stage's EventBridge bus (source `arca`, detail-type the event type)."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_sqs as sqs
from cdk_nag import NagPackSuppression, NagSuppressions
from constructs import Construct

from arca.adapters.bus import SOURCE
from infra.functions import Functions, FunctionSpec

# No table, bucket or object actions: the stream read and PutEvents on the bus are granted below.
EVENTS_SPEC = FunctionSpec(
    name="events", handler="arca.handlers.events.handler", table_actions=(), reserved_concurrency=5
)
# A batch that keeps failing is retried this often (halved each time, to isolate the bad record), and a record
# older than a day is given up: either way it goes to the dead-letter queue, whose alarm pages.
RETRY_ATTEMPTS = 5
MAX_RECORD_AGE = Duration.hours(24)
BATCH_SIZE = 100


def stream_filters() -> list[dict[str, object]]:
    """Invoke the function only for what it announces: an event item's INSERT, and LATEST becoming a tombstone."""
    return [
        lambda_.FilterCriteria.filter(
            {
                "eventName": lambda_.FilterRule.is_equal("INSERT"),
                "dynamodb": {"NewImage": {"kind": {"S": lambda_.FilterRule.is_equal("event")}}},
            }
        ),
        lambda_.FilterCriteria.filter(
            {
                "eventName": lambda_.FilterRule.is_equal("MODIFY"),
                "dynamodb": {
                    "NewImage": {
                        "sk": {"S": lambda_.FilterRule.is_equal("LATEST")},
                        "purged": {"S": lambda_.FilterRule.exists()},
                    },
                    "OldImage": {"purged": {"S": lambda_.FilterRule.not_exists()}},
                },
            }
        ),
    ]


class EventDelivery(Construct):
    """`bus`, the `function` that feeds it from the stream, and the `dead_letters` of records it gave up on."""

    def __init__(self, scope: Construct, construct_id: str, *, functions: Functions, table: dynamodb.ITable) -> None:
        super().__init__(scope, construct_id)
        self.bus = events.EventBus(self, "Bus", description="Arca: every committed change of the registry")
        self.dead_letters = sqs.Queue(
            self,
            "DeadLetters",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=Duration.days(14),
        )
        NagSuppressions.add_resource_suppressions(
            self.dead_letters,
            [NagPackSuppression(id="AwsSolutions-SQS3", reason="This queue is itself the dead-letter destination.")],
        )
        self.function = functions.add(EVENTS_SPEC)
        self.function.add_environment("ARCA_EVENT_BUS_NAME", self.bus.event_bus_name)
        # The one grant of PutEvents on the bus in the stage, and only for Arca's own source: no other role of the
        # stack may announce on it, nor may this one put events that claim another source.
        self.function.add_to_role_policy(
            iam.PolicyStatement(
                actions=["events:PutEvents"],
                resources=[self.bus.event_bus_arn],
                conditions={"StringEquals": {"events:source": [SOURCE]}},
            )
        )
        self.function.add_event_source(
            sources.DynamoEventSource(
                table,
                starting_position=lambda_.StartingPosition.TRIM_HORIZON,
                batch_size=BATCH_SIZE,
                retry_attempts=RETRY_ATTEMPTS,
                bisect_batch_on_error=True,
                max_record_age=MAX_RECORD_AGE,
                report_batch_item_failures=True,
                on_failure=sources.SqsDlq(self.dead_letters),
                filters=stream_filters(),
            )
        )
        if self.function.role is not None:
            NagSuppressions.add_resource_suppressions(
                self.function.role,
                [
                    NagPackSuppression(
                        id="AwsSolutions-IAM5",
                        reason="dynamodb:ListStreams has no resource to scope it to; the stream reads name the "
                        "table's stream.",
                        applies_to=["Resource::*"],
                    )
                ],
                apply_to_children=True,
            )
