"""The `verify` function (its contract: arca.api.verifier): one step of the background verification of multipart
content, invoked by the verification state machine, which invokes it again with its answer until `done`."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from arca.api.verifier import handle
from arca.observability import logger, traced


@logger.inject_lambda_context
def _handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return handle(event, context)


handler = traced(_handler)
