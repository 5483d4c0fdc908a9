"""Powertools Logger and Metrics shared by the functions (service name from the env), and tracing for the writers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit, single_metric

logger = Logger()
metrics = Metrics(namespace="Arca")


def traced(handler: Callable[..., Any]) -> Callable[..., Any]:
    """The handler under Powertools' Tracer (X-Ray subsegments for each AWS call).

    Responses are never captured: they carry presigned URLs, which are bearer tokens. The Tracer loads the
    X-Ray SDK (~190 ms of cold start), so only the write functions use it; see docs/decisions.md.
    """
    from aws_lambda_powertools import Tracer

    return Tracer().capture_lambda_handler(handler, capture_response=False)


def count_request(operation: str) -> None:
    """One `Requests` data point per call, by operation (EMF: no API call is made to publish it)."""
    metrics.add_dimension(name="operation", value=operation)
    metrics.add_metric(name="Requests", unit=MetricUnit.Count, value=1)


def count_resolve(name: str, alias: str, route: str) -> None:
    """Resolves by artifact, alias and route, so a canary's real traffic share shows in CloudWatch.

    A metric of its own (single_metric): its dimensions must not leak onto the function's other metrics.
    """
    dimensions = {"artifact": name, "alias": alias, "route": route}
    with single_metric(
        name="Resolves", unit=MetricUnit.Count, value=1, namespace="Arca", default_dimensions=dimensions
    ):
        pass
