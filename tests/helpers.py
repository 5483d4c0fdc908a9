"""Test helpers shared by the integration and end-to-end suites."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar
from urllib.parse import quote

from arca import wiring
from local import events, iam, services
from local.events import Reply
from tests.door import Door, sha256

__all__ = [
    "FAKE_AWS_ENV",
    "HTTP_TIMEOUT",
    "PATIENCE",
    "Acting",
    "HandlerApi",
    "acting",
    "hooked",
    "path_quote",
    "sha256",
    "wait_for",
]

FAKE_AWS_ENV = services.FAKE_AWS_ENV
# How long a test waits, at most, for the work of another process or thread (a subprocess's output, a server's
# banner, a rollout's steps, a thread a test paused): generous, because the suite runs on loaded 2-core machines
# (CI, several runs at once), and a test that passes waits only as long as the work takes. Seconds;
# ARCA_TEST_PATIENCE overrides it.
PATIENCE = float(os.environ.get("ARCA_TEST_PATIENCE", "300"))
# One HTTP request of a test to a local server (requests' connect and read timeouts), on the same grounds.
HTTP_TIMEOUT = PATIENCE / 5
T = TypeVar("T")


@contextmanager
def counted(event: str = "before-call.*.*") -> Iterator[list[str]]:
    """The calls the services' DynamoDB and S3 clients make meanwhile (those of `event`), by operation name."""
    calls: list[str] = []

    def before(event_name: str, **_: Any) -> None:
        calls.append(event_name.rsplit(".", 1)[-1])

    with hooked(event, before):
        yield calls


@contextmanager
def hooked(event: str, hook: Callable[..., Any]) -> Iterator[None]:
    """`hook` on botocore's `event` (such as `before-call.*.*`) of the services' DynamoDB and S3 clients, meanwhile."""
    built = wiring.services()
    clients = (built.stores.table.client, built.blobs.client)
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


class HandlerApi(events.HandlerApi, Door[Reply]):
    """The door (tests/door.py) over the in-process transport: the real handlers, as API Gateway invokes them."""

    def send(self, method: str, path: str, body: Any = None) -> Reply:
        return self.call(method, path, body)

    def status_of(self, answer: Reply) -> int:
        return answer.status

    def json_of(self, answer: Reply) -> Any:
        return answer.body


def path_quote(name: str) -> str:
    return quote(name, safe="/")


def wait_for(
    condition: Callable[[], T | None],
    *,
    timeout: float,
    what: str,
    interval: float = 0.1,
    clock: Callable[[], float] = time.monotonic,
    pause: Callable[[float], Any] = time.sleep,
) -> T:
    """Poll `condition` until it answers something truthy, and return that; fail naming `what` after `timeout`
    seconds of `clock`. The one way the tests wait on another process or thread: never a fixed sleep."""
    deadline = clock() + timeout
    while True:
        found = condition()
        if found:
            return found
        if clock() >= deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        pause(interval)
