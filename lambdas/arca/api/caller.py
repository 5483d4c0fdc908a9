"""Who is calling: the identity API Gateway verified (SigV4), injected into routes that record it."""

from typing import Annotated, cast

from aws_lambda_powertools.event_handler.depends import Depends
from aws_lambda_powertools.event_handler.request import Request
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEvent


def identity(request: Request) -> str | None:
    """The caller's IAM ARN (or Cognito identity) as API Gateway's request context reports it."""
    caller = cast(APIGatewayProxyEvent, request.resolved_event).request_context.identity
    found: str | None = caller.user_arn or caller.caller or caller.cognito_identity_id
    return found


Caller = Annotated[str | None, Depends(identity)]
