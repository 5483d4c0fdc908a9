"""Protocols that other tools already speak (OCI Distribution, …), each a pure package.

A protocol package parses its wire format into typed operations and renders typed results back, against a
backend interface of its own (a `typing.Protocol`). It imports nothing from the services, the stores or boto3:
the API layer binds a backend to Arca's services, so the protocol can be tested against a fake and against the
protocol's reference implementation with real clients.
"""
