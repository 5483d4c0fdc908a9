"""Powertools Logger, Tracer and Metrics shared by the three functions (service name from the env)."""

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit

logger = Logger()
tracer = Tracer()
metrics = Metrics(namespace="Arca")


def count_request(operation: str) -> None:
    """One `Requests` data point per call, by operation (EMF: no API call is made to publish it)."""
    metrics.add_dimension(name="operation", value=operation)
    metrics.add_metric(name="Requests", unit=MetricUnit.Count, value=1)
