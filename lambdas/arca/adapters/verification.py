"""The driver of background verifications: a Step Functions state machine on AWS (infra/verification.py), the local
server's thread locally (which starts its own loop from the complete answer)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from arca.adapters.faults import aws_code, reraise
from arca.domain.verification import VerifyEvent


class StepFunctionsVerification:
    """Starts an execution of the verification state machine, named `run`: a start of the same run while it goes on
    is no second execution (StartExecution is idempotent for one name and input), and one of a run that ended is
    refused (ExecutionAlreadyExists: its progress is saved, and a new run, from there, has another name)."""

    def __init__(self, client: Callable[[], Any], state_machine_arn: str) -> None:
        self._factory = client
        self.state_machine_arn = state_machine_arn

    def start(self, event: VerifyEvent, *, run: str) -> None:
        try:
            self._factory().start_execution(
                stateMachineArn=self.state_machine_arn, name=run, input=event.model_dump_json()
            )
        except ClientError as error:
            if aws_code(error) == "ExecutionAlreadyExists":
                return
            reraise(error, "Step Functions")


class ExternalVerification:
    """No managed driver (local mode and the tests): whoever serves the API drives the steps."""

    def start(self, event: VerifyEvent, *, run: str) -> None:
        return None
