"""The `retention` function's contract: the schedule's event in, the sweep's counts out.

Invoked by a schedule (infra/retention.py) with `{"every_seconds": N}`: each invocation goes on with the current
pass while its time lasts, and starts a new pass once the last one started N seconds ago.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from arca.api import dependencies
from arca.observability import logger, metrics

if TYPE_CHECKING:
    from arca.services.retention import Retention

# A pass starts at most this often unless the event says otherwise (a day, less an hour of schedule drift).
EVERY_SECONDS = 23 * 3600
# Seconds of the invocation kept back: no apply request is started with less time than this left.
RESERVE_SECONDS = 10.0


def handle(
    event: dict[str, Any], context: LambdaContext, retention: Callable[[], Retention] = dependencies.retention
) -> dict[str, Any]:
    """What the sweep did (`deleted`, `expired`, …), also as metrics and one log line."""
    every = int(event.get("every_seconds", EVERY_SECONDS)) if isinstance(event, dict) else EVERY_SECONDS
    result = retention().scheduled(
        every_seconds=every,
        time_left=lambda: context.get_remaining_time_in_millis() / 1000,
        reserve=RESERVE_SECONDS,
    )
    for metric in ("deleted", "expired"):
        metrics.add_metric(name=f"Retention{metric.capitalize()}", unit="Count", value=float(result.get(metric, 0)))
    logger.info("retention sweep", extra=result)
    return result
