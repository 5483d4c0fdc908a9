"""The background verification of multipart content: a Step Functions Standard state machine that invokes the
`verify` function until the upload's SHA-256 is checked.

One execution per verification run, started by the publish function (`POST …/uploads/{id}/complete`, for content
too large to hash within the request): invoke `verify` (it hashes for most of its 15 minutes, then saves the
SHA-256 state with the upload) → stop once it answers `done`, else invoke it again at once. The function reads the
session from the table each time, so a repeated step or a second execution does no harm: each write is conditioned
on the progress it read.
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks
from cdk_nag import NagPackSuppression, NagSuppressions, RegexAppliesTo
from constructs import Construct

# 5 TiB at 100 MB/s is about 15 hours; a session and its object last 7 days.
EXECUTION_TIMEOUT = Duration.days(7)
STATE_MACHINE_VARIABLE = "ARCA_VERIFY_STATE_MACHINE_ARN"


class UploadVerifier(Construct):
    """The state machine over `verifier`; `starter` (the publish function) may start executions of it, nothing more."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        verifier: lambda_.Function,
        starter: lambda_.Function,
        removal_policy: RemovalPolicy,
    ) -> None:
        super().__init__(scope, construct_id)
        step = tasks.LambdaInvoke(
            self,
            "Step",
            lambda_function=verifier,
            payload_response_only=True,  # the function's answer is the next step's input, as it is
            retry_on_service_exceptions=True,
        )
        # A step is safe to repeat (its writes are conditioned on the progress it read), so any failure is retried.
        step.add_retry(errors=["States.ALL"], interval=Duration.seconds(10), max_attempts=6, backoff_rate=2)
        done = sfn.Succeed(self, "Done")
        loop = sfn.Choice(self, "Verified").when(sfn.Condition.boolean_equals("$.done", True), done).otherwise(step)
        log_group = logs.LogGroup(self, "Logs", retention=logs.RetentionDays.ONE_MONTH, removal_policy=removal_policy)
        self.state_machine = sfn.StateMachine(
            self,
            "StateMachine",
            definition_body=sfn.DefinitionBody.from_chainable(step.next(loop)),
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
                    reason="CDK grants the invocation of the verify function's versions (`<arn>:*`) with the "
                    "function; log delivery and X-Ray trace segments cannot be scoped to a resource.",
                    applies_to=[
                        RegexAppliesTo(regex=r"/^Resource::<\w*Verify\w*\.Arn>:\*$/"),
                        "Resource::*",
                    ],
                )
            ],
            apply_to_children=True,
        )
