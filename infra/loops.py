"""A Step Functions Standard state machine that invokes one function until it answers `done` (the rollout driver
and the background verification are both one): [wait →] invoke → stop on `done`, else go round again."""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks
from cdk_nag import NagPackSuppression, NagSuppressions, RegexAppliesTo
from constructs import Construct


def step_loop(
    scope: Construct,
    *,
    function: lambda_.Function,
    starter: lambda_.Function,
    removal_policy: RemovalPolicy,
    timeout: Duration,
    variable: str,
    retry_every: Duration,
    ended: str,
    wait: sfn.Wait | None = None,
    function_pattern: str,
    role: str,
) -> sfn.StateMachine:
    """The loop over `function` (its answer is the next step's input, as it is), built in `scope` (whose construct
    ids make the logical ids); `starter` may start executions of it, nothing more, and finds its ARN in the
    environment variable `variable`. A step must be safe to repeat: any failure is retried every `retry_every`,
    doubling, six times. `ended` names the choice on `$.done`; `wait`, if given, comes before every step."""
    step = tasks.LambdaInvoke(
        scope, "Step", lambda_function=function, payload_response_only=True, retry_on_service_exceptions=True
    )
    step.add_retry(errors=["States.ALL"], interval=retry_every, max_attempts=6, backoff_rate=2)
    again: sfn.IChainable = wait if wait is not None else step
    loop = sfn.Choice(scope, ended).when(sfn.Condition.boolean_equals("$.done", True), sfn.Succeed(scope, "Done"))
    loop.otherwise(again)
    first = wait.next(step) if wait is not None else step
    log_group = logs.LogGroup(scope, "Logs", retention=logs.RetentionDays.ONE_MONTH, removal_policy=removal_policy)
    state_machine = sfn.StateMachine(
        scope,
        "StateMachine",
        definition_body=sfn.DefinitionBody.from_chainable(first.next(loop)),
        state_machine_type=sfn.StateMachineType.STANDARD,
        timeout=timeout,
        tracing_enabled=True,
        logs=sfn.LogOptions(destination=log_group, level=sfn.LogLevel.ALL, include_execution_data=True),
    )
    state_machine.grant_start_execution(starter)
    starter.add_environment(variable, state_machine.state_machine_arn)
    NagSuppressions.add_resource_suppressions(
        state_machine.role,
        [
            NagPackSuppression(
                id="AwsSolutions-IAM5",
                reason=f"CDK grants the invocation of the {role} function's versions (`<arn>:*`) with the "
                "function; log delivery and X-Ray trace segments cannot be scoped to a resource.",
                applies_to=[RegexAppliesTo(regex=rf"/^Resource::<\w*{function_pattern}\w*\.Arn>:\*$/"), "Resource::*"],
            )
        ],
        apply_to_children=True,
    )
    return state_machine
