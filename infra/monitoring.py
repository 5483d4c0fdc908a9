"""Alarms and a dashboard for one stage: the API's 5xx, each function's errors and throttles, the table's system
errors, failed rollout executions, all notifying one SNS topic whose ARN is a stack output."""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import Duration
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn
from cdk_nag import NagPackSuppression, NagSuppressions
from constructs import Construct

PERIOD = Duration.minutes(5)
# The table operations the functions call (TransactWriteItems carries every multi-item write).
TABLE_OPERATIONS = (
    dynamodb.Operation.GET_ITEM,
    dynamodb.Operation.QUERY,
    dynamodb.Operation.PUT_ITEM,
    dynamodb.Operation.UPDATE_ITEM,
    dynamodb.Operation.TRANSACT_WRITE_ITEMS,
    dynamodb.Operation.BATCH_WRITE_ITEM,
)
# A few 5xx in five minutes page; a single one is already in the logs and traces.
API_5XX_THRESHOLD = 5


class Monitoring(Construct):
    """`alarms` by id, each notifying `topic`; `dashboard` shows the same signals with traffic and latency."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        stage: apigw.Stage,
        functions: Mapping[str, lambda_.IFunction],
        table: dynamodb.ITable,
        rollouts: sfn.IStateMachine | None = None,
        verifications: sfn.IStateMachine | None = None,
        dead_letters: sqs.IQueue | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        # SSL enforced by the topic policy; subscribe the on-call address or pager to it after deploying.
        self.topic = sns.Topic(self, "AlarmTopic", display_name="Arca alarms", enforce_ssl=True)
        NagSuppressions.add_resource_suppressions(
            self.topic,
            [
                NagPackSuppression(
                    id="AwsSolutions-SNS2",
                    reason="Alarm notifications carry alarm names and states only; CloudWatch cannot publish to a "
                    "topic encrypted with the AWS-managed SNS key, and a customer key per stage is not worth it.",
                )
            ],
        )
        self.alarms: dict[str, cloudwatch.Alarm] = {}

        api_5xx = stage.metric_server_error(period=PERIOD, statistic="Sum")
        self._alarm("Api5xx", api_5xx, API_5XX_THRESHOLD, "the API answered 5xx")
        for name, function in functions.items():
            title = name.capitalize()
            self._alarm(f"{title}Errors", function.metric_errors(period=PERIOD), 1, f"{name} failed invocations")
            self._alarm(f"{title}Throttles", function.metric_throttles(period=PERIOD), 1, f"{name} was throttled")
        system_errors = table.metric_system_errors_for_operations(operations=list(TABLE_OPERATIONS), period=PERIOD)
        self._alarm("TableSystemErrors", system_errors, 1, "DynamoDB answered 500 (system errors)")
        if rollouts is not None:
            # A failed execution is a rollout left running with nobody to step it (the step kept failing).
            failed = rollouts.metric_failed(period=PERIOD, statistic="Sum")
            self._alarm("RolloutExecutionsFailed", failed, 1, "a rollout's state machine execution failed")
        if verifications is not None:
            # A failed execution is multipart content left `verifying` (its next complete request starts it again).
            stalled = verifications.metric_failed(period=PERIOD, statistic="Sum")
            self._alarm("VerifyExecutionsFailed", stalled, 1, "a verification's state machine execution failed")
        if dead_letters is not None:
            # A stream record the events function gave up on: its event is in the feed but never reached the bus.
            undelivered = dead_letters.metric_approximate_number_of_messages_visible(period=PERIOD, statistic="Max")
            self._alarm("EventsUndelivered", undelivered, 1, "stream records the events function gave up on")

        self.dashboard = cloudwatch.Dashboard(self, "Dashboard")
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="API requests and errors",
                left=[
                    stage.metric_count(period=PERIOD, statistic="Sum"),
                    stage.metric_client_error(period=PERIOD, statistic="Sum"),
                    api_5xx,
                ],
            ),
            cloudwatch.GraphWidget(
                title="API latency (p50, p99)",
                left=[stage.metric_latency(period=PERIOD, statistic=p) for p in ("p50", "p99")],
            ),
            cloudwatch.AlarmStatusWidget(title="Alarms", alarms=list(self.alarms.values())),
        )
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Function invocations",
                left=[f.metric_invocations(period=PERIOD, label=n) for n, f in functions.items()],
            ),
            cloudwatch.GraphWidget(
                title="Function errors and throttles",
                left=[f.metric_errors(period=PERIOD, label=f"{n} errors") for n, f in functions.items()],
                right=[f.metric_throttles(period=PERIOD, label=f"{n} throttles") for n, f in functions.items()],
            ),
            cloudwatch.GraphWidget(
                title="Function duration (p99)",
                left=[f.metric_duration(period=PERIOD, statistic="p99", label=n) for n, f in functions.items()],
            ),
            # One widget each: both sums name their per-operation metrics alike, which one graph cannot hold.
            cloudwatch.GraphWidget(title="Table system errors", left=[system_errors]),
            cloudwatch.GraphWidget(
                title="Table throttled requests",
                left=[table.metric_throttled_requests_for_operations(operations=list(TABLE_OPERATIONS), period=PERIOD)],
            ),
        )

    def _alarm(self, construct_id: str, metric: cloudwatch.IMetric, threshold: int, what: str) -> None:
        alarm = cloudwatch.Alarm(
            self,
            construct_id,
            metric=metric,
            threshold=threshold,
            evaluation_periods=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            # No traffic is no error.
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description=f"Arca: {what} (at least {threshold} in {PERIOD.to_minutes()} minutes)",
        )
        alarm.add_alarm_action(actions.SnsAction(self.topic))
        alarm.add_ok_action(actions.SnsAction(self.topic))
        self.alarms[construct_id] = alarm
