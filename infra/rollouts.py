"""The rollout driver: a Step Functions Standard state machine that runs a rollout's steps on its schedule.

One execution per rollout, started by the alias function (named after the rollout, so a retried start makes no
second one): Wait `interval_seconds` → invoke the `rollout` function (one step) → stop once it answers `done`,
else wait again. The function decides everything from the table, so an aborted or superseded rollout simply
ends the loop at its next step; nothing needs to stop an execution.
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks
from cdk_nag import NagPackSuppression, NagSuppressions, RegexAppliesTo
from constructs import Construct

# A rollout has at most 20 steps of at most one day, and one last step: 21 days; an execution never outlives it
# by much.
EXECUTION_TIMEOUT = Duration.days(22)
STATE_MACHINE_VARIABLE = "ARCA_ROLLOUT_STATE_MACHINE_ARN"


class RolloutDriver(Construct):
    """The state machine over `driver`; `starter` (the alias function) may start executions of it, nothing more."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        driver: lambda_.Function,
        starter: lambda_.Function,
        removal_policy: RemovalPolicy,
    ) -> None:
        super().__init__(scope, construct_id)
        wait = sfn.Wait(self, "Wait", time=sfn.WaitTime.seconds_path("$.interval_seconds"))
        step = tasks.LambdaInvoke(
            self,
            "Step",
            lambda_function=driver,
            payload_response_only=True,  # the function's answer is the next state's input, as it is
            retry_on_service_exceptions=True,
        )
        # A step is idempotent (conditioned on the rollout's step number), so any failure may be retried.
        step.add_retry(errors=["States.ALL"], interval=Duration.seconds(5), max_attempts=6, backoff_rate=2)
        done = sfn.Succeed(self, "Done")
        loop = sfn.Choice(self, "Ended").when(sfn.Condition.boolean_equals("$.done", True), done).otherwise(wait)
        log_group = logs.LogGroup(self, "Logs", retention=logs.RetentionDays.ONE_MONTH, removal_policy=removal_policy)
        self.state_machine = sfn.StateMachine(
            self,
            "StateMachine",
            definition_body=sfn.DefinitionBody.from_chainable(wait.next(step).next(loop)),
            state_machine_type=sfn.StateMachineType.STANDARD,
            timeout=EXECUTION_TIMEOUT,
            tracing_enabled=True,
            logs=sfn.LogOptions(destination=log_group, level=sfn.LogLevel.ALL, include_execution_data=True),
        )
        self.state_machine.grant_start_execution(starter)
        starter.add_environment(STATE_MACHINE_VARIABLE, self.state_machine.state_machine_arn)
        NagSuppressions.add_resource_suppressions(
            self.state_machine.role,
            [
                NagPackSuppression(
                    id="AwsSolutions-IAM5",
                    reason="CDK grants the invocation of the driver function's versions (`<arn>:*`) with the "
                    "function; log delivery and X-Ray trace segments cannot be scoped to a resource.",
                    applies_to=[
                        RegexAppliesTo(regex=r"/^Resource::<\w*Rollout\w*\.Arn>:\*$/"),
                        "Resource::*",
                    ],
                )
            ],
            apply_to_children=True,
        )
