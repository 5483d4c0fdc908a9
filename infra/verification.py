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
from constructs import Construct

from infra.loops import step_loop

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
        # A step is safe to repeat (its writes are conditioned on the progress it read), so any failure is retried.
        self.state_machine = step_loop(
            self,
            function=verifier,
            starter=starter,
            removal_policy=removal_policy,
            timeout=EXECUTION_TIMEOUT,
            variable=STATE_MACHINE_VARIABLE,
            retry_every=Duration.seconds(10),
            ended="Verified",
            function_pattern="Verify",
            role="verify",
        )
