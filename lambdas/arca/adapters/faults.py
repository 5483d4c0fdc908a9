"""The one translation of another AWS service's error: the service's throttling is a ThrottledError (a 503 the
caller may retry, naming the service and its code); any other error is raised as the ClientError it was.

DynamoDB's errors are translated by the table itself (arca.adapters.dynamo), which retries throttling first and reads
conditions and cancellations.
"""

from __future__ import annotations

from typing import Literal, NoReturn

from botocore.exceptions import ClientError

from arca.domain.errors import ThrottledError

Service = Literal["S3", "KMS", "CloudWatch", "Step Functions"]
_RATE = frozenset({"Throttling", "ThrottlingException", "TooManyRequestsException"})
# What each service answers when it is over its request rate (KMS: also its internal and dependency time-outs, which
# it asks callers to retry). Per service: a bare "503" (an answer botocore could not parse) is S3's SlowDown only.
THROTTLING: dict[Service, frozenset[str]] = {
    "S3": frozenset({"SlowDown", "503", "ThrottlingException", "RequestLimitExceeded"}),
    "KMS": frozenset({"ThrottlingException", "KMSInternalException", "DependencyTimeoutException"}),
    "CloudWatch": _RATE,
    "Step Functions": _RATE,
}


def aws_code(error: ClientError) -> str:
    """The error's code as the service sent it ('' when it sent none)."""
    return str(error.response.get("Error", {}).get("Code", ""))


def reraise(error: ClientError, service: Service) -> NoReturn:
    """Raise `error` as it is translated: a ThrottledError (caused by it) when it is `service`'s throttling, else
    `error` itself, unchanged."""
    code = aws_code(error)
    if code in THROTTLING[service]:
        raise ThrottledError(f"{service} is busy; retry later", details={"aws_code": code}) from error
    raise error
