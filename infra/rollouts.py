"""The rollout driver: a Step Functions Standard state machine that runs a rollout's steps on its schedule.

One execution per rollout, started by the alias function (named after the rollout, so a retried start makes no
second one): Wait `interval_seconds` → invoke the `rollout` function (one step) → stop once it answers `done`,
else wait again. The function decides everything from the table, so an aborted or superseded rollout simply
ends the loop at its next step; nothing needs to stop an execution.
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra.loops import step_loop

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
        # A step is idempotent (conditioned on the rollout's step number), so any failure may be retried.
        self.state_machine = step_loop(
            self,
            function=driver,
            starter=starter,
            removal_policy=removal_policy,
            timeout=EXECUTION_TIMEOUT,
            variable=STATE_MACHINE_VARIABLE,
            retry_every=Duration.seconds(5),
            ended="Ended",
            wait=sfn.Wait(self, "Wait", time=sfn.WaitTime.seconds_path("$.interval_seconds")),
            function_pattern="Rollout",
            role="driver",
        )
