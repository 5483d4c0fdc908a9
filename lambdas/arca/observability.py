"""Powertools Logger, Tracer and Metrics shared by the three functions (service name from the env)."""

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit, single_metric

logger = Logger()
tracer = Tracer()
metrics = Metrics(namespace="Arca")


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
