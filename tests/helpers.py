"""Test helpers shared by the integration and end-to-end suites."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote

import requests

from arca import wiring
from local import events, iam, services
from local.events import Reply

FAKE_AWS_ENV = services.FAKE_AWS_ENV


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@contextmanager
def hooked(event: str, hook: Callable[..., Any]) -> Iterator[None]:
    """`hook` on botocore's `event` (such as `before-call.*.*`) of the services' DynamoDB and S3 clients, meanwhile."""
    built = wiring.services()
    clients = (built.repository.table.client, built.blobs.client)
    for client in clients:
        client.meta.events.register(event, hook)
    try:
        yield
    finally:
        for client in clients:
            client.meta.events.unregister(event, hook)


class Acting:
    """`service` used as `function` does: each method call runs under that function's role (local/iam.py).

    For tests that drive a service directly (to interleave two functions' work); attributes are read and set
    through, so a test can still patch the service's parts.
    """

    def __init__(self, function: str, service: Any) -> None:
        object.__setattr__(self, "_function", function)
        object.__setattr__(self, "_service", service)

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._service, name)
        if not callable(found):
            return found
        return iam.acting_as(self._function)(found)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._service, name, value)


def acting(function: str, service: Any) -> Any:
    return Acting(function, service)


class HandlerApi(events.HandlerApi):
    """The in-process handler client, plus the client-side steps of uploading and publishing."""

    def upload(self, name: str, data: bytes) -> str:
        """POST …/uploads then PUT the bytes to the presigned URL with the headers it names."""
        digest = sha256(data)
        reply = self.call("POST", f"/artifacts/{name}/uploads", {"sha256": digest, "size": len(data)})
        assert reply.status in (200, 201), reply.body
        if not reply.body["exists"]:
            upload = reply.body["upload"]
            put = requests.put(upload["url"], data=data, headers=upload["headers"], timeout=30)
            assert put.status_code == 200, put.text
        return digest

    def set_latest(self, name: str, data: bytes, **extra: Any) -> Reply:
        digest = self.upload(name, data)
        return self.call("PUT", f"/artifacts/{name}/latest", {"sha256": digest, "size": len(data), **extra})

    def publish(self, name: str, data: bytes | None = None, **extra: Any) -> Reply:
        if data is None:
            return self.call("POST", f"/artifacts/{name}/versions", extra or None)
        digest = self.upload(name, data)
        return self.call("POST", f"/artifacts/{name}/versions", {"sha256": digest, "size": len(data), **extra})


def path_quote(name: str) -> str:
    return quote(name, safe="/")
