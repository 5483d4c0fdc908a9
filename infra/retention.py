"""The retention sweep's schedule: an EventBridge rule that invokes the `retention` function every hour.

Each invocation goes on with the current pass over every artifact that has a policy (keeping its place in the
table between invocations) and starts a new pass once the last one started `every_seconds` ago: every policy is
applied daily, however many artifacts there are, and a pass that does not fit in one invocation continues in
the next. A rule (rather than EventBridge Scheduler) needs no role of its own and deploys on LocalStack too.
"""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

SCHEDULE = Duration.hours(1)
# A pass starts at most once a day; an hour less, so that the hourly schedule's drift never skips a day.
EVERY_SECONDS = 23 * 3600


class RetentionSchedule(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, function: lambda_.IFunction) -> None:
        super().__init__(scope, construct_id)
        self.rule = events.Rule(
            self,
            "Sweep",
            description="Arca: apply every artifact's retention policy (daily passes, continued hourly)",
            schedule=events.Schedule.rate(SCHEDULE),
        )
        self.rule.add_target(
            targets.LambdaFunction(
                function,
                event=events.RuleTargetInput.from_object({"every_seconds": EVERY_SECONDS}),
                retry_attempts=2,
            )
        )
