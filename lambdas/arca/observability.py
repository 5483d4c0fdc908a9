"""Powertools Logger, Tracer and Metrics shared by the three functions (service name from the env)."""

from aws_lambda_powertools import Logger, Metrics, Tracer

logger = Logger()
tracer = Tracer()
metrics = Metrics(namespace="Arca")
