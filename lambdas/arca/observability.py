"""Powertools Logger and Metrics shared by the functions (service name from the env), and tracing for the writers."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit, single_metric
from aws_lambda_powertools.metrics.provider.cloudwatch_emf.cloudwatch import AmazonCloudWatchEMFProvider

# Powertools keeps one metric set per process. On Lambda one request runs at a time; local mode serves every
# function on threads of one process, so a flush (its check, its serialization, its clearing) and a request's
# dimension with its metric are each made whole under this lock, or one thread's flush empties the set between
# another's check and its serialization (Powertools then raises "Must contain at least one metric").
_METRIC_SET = threading.Lock()


class _Provider(AmazonCloudWatchEMFProvider):
    """Powertools' EMF provider, its flush made whole under the process's lock."""

    def flush_metrics(self, raise_on_empty_metrics: bool = False) -> None:
        with _METRIC_SET:
            super().flush_metrics(raise_on_empty_metrics=raise_on_empty_metrics)


logger = Logger()
metrics = Metrics(namespace="Arca")
metrics.provider = _Provider(
    namespace="Arca",
    metric_set=metrics.metric_set,
    dimension_set=metrics.dimension_set,
    metadata_set=metrics.metadata_set,
    default_dimensions=metrics.default_dimensions,
)


def traced(handler: Callable[..., Any]) -> Callable[..., Any]:
    """The handler under Powertools' Tracer (X-Ray subsegments for each AWS call).

    Responses are never captured: they carry presigned URLs, which are bearer tokens. The Tracer loads the
    X-Ray SDK (~190 ms of cold start), so only the write functions use it; see docs/decisions.md.
    """
    from aws_lambda_powertools import Tracer

    return Tracer().capture_lambda_handler(handler, capture_response=False)


def count_request(operation: str) -> None:
    """One `Requests` data point per call, by operation (EMF: no API call is made to publish it)."""
    with _METRIC_SET:
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
