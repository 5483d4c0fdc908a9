"""The `retention` function: the scheduled sweep that applies every artifact's retention policy.

Invoked by a schedule (infra/retention.py) with `{"every_seconds": N}`: each invocation goes on with the
current pass while its time lasts, and starts a new pass once the last one started N seconds ago.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from arca import wiring
from arca.observability import logger, metrics, traced

# A pass starts at most this often unless the event says otherwise (a day, less an hour of schedule drift).
EVERY_SECONDS = 23 * 3600
# Seconds of the invocation kept back: no apply request is started with less time than this left.
RESERVE_SECONDS = 10.0


@logger.inject_lambda_context
@metrics.log_metrics
def _handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    every = int(event.get("every_seconds", EVERY_SECONDS)) if isinstance(event, dict) else EVERY_SECONDS
    result = wiring.retention().scheduled(
        every_seconds=every,
        time_left=lambda: context.get_remaining_time_in_millis() / 1000,
        reserve=RESERVE_SECONDS,
    )
    for metric in ("deleted", "expired"):
        metrics.add_metric(name=f"Retention{metric.capitalize()}", unit="Count", value=float(result.get(metric, 0)))
    logger.info("retention sweep", extra=result)
    return result


handler = traced(_handler)
