"""The one translation of an AWS service's error: throttling, whatever the service calls it, is a ThrottledError (a
503 the caller may retry, naming the service and its code); any other error stays the ClientError it was.

DynamoDB's calls are translated by the table itself (arca.adapters.dynamo), which retries throttling first and
reads conditions and cancellations; it takes an error's code from here too.
"""

from __future__ import annotations

from typing import cast

from botocore.exceptions import ClientError

from arca.domain.errors import ThrottledError

# What each service answers when it is over its request rate: S3 (SlowDown, 503), KMS (and its internal and
# dependency time-outs, which it asks to retry), CloudWatch and Step Functions (Throttling...), and AWS's generic code.
THROTTLING = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "TooManyRequestsException",
        "RequestLimitExceeded",
        "SlowDown",
        "503",
        "KMSInternalException",
        "DependencyTimeoutException",
    }
)


def aws_code(error: ClientError) -> str:
    """The error's code as the service sent it ('' when it sent none)."""
    return str(error.response.get("Error", {}).get("Code", ""))


def translated(error: ClientError, service: str) -> Exception:
    """Throttling as a ThrottledError (`raise translated(error, "S3") from error`); anything else as it was."""
    code = aws_code(error)
    if code in THROTTLING:
        return ThrottledError(f"{service} is busy; retry later", details={"aws_code": code})
    return cast(Exception, error)
