"""The SDK's Resolver through a real outage: the local server it talks to stops under it, and comes back.

The API front (the HTTP server with the real handlers) is stopped and started again on the same port; DynamoDB
Local and S3 keep running, as they would while API Gateway or the network is what fails.
"""

from __future__ import annotations

import contextlib
import io
import logging
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arca_client import Client
from arca_client.errors import TransportError
from arca_client.resolver import Resolved, Resolver
from arca_client.transport import RetryPolicy
from local.server import ArcaServer, serving
from tests.helpers import wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

CONSUMER = "lambda:eu-west-1:checkout"
FRESH_FOR, MAX_STALE = 0.2, 0.5
WAIT = 20.0  # at most, for the background thread to notice (it asks every FRESH_FOR seconds)


class StoppableServer(ArcaServer):
    """The local server, whose stop also cuts the connections it kept alive (as a process that exits would):
    `serving` stops accepting, but a kept-alive connection's thread would go on answering."""

    def __init__(self, port: int) -> None:
        super().__init__(port)
        self.connections: set[socket.socket] = set()

    def process_request(self, request: Any, client_address: Any) -> None:
        self.connections.add(request)
        super().process_request(request, client_address)

    def cut(self) -> None:
        for connection in list(self.connections):
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)


@contextlib.contextmanager
def api_front(port: int = 0) -> Iterator[ArcaServer]:
    """An HTTP server with the real handlers over the package's running services, until exit."""
    server = StoppableServer(port)
    try:
        with serving(server):
            yield server
    finally:
        server.cut()


def quick_client(url: str) -> Client:
    """A client that does not retry, so a refused connection is an answer at once."""
    return Client(url, sign=False, retry=RetryPolicy(max_attempts=1), timeout=(1.0, 5.0))


def resolver(url: str, name: str, cache: Path, *, background: bool) -> Resolver:
    return Resolver(
        quick_client(url),
        name,
        "prod",
        consumer=CONSUMER,
        fresh_for=FRESH_FOR,
        max_stale=MAX_STALE,
        lease_ttl=600,
        cache_dir=cache,
        background=background,
    )


def test_the_resolver_serves_the_last_good_answer_through_an_outage_and_a_restart(
    arca_url: str, unique: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="arca.resolver")
    cache = tmp_path / "cache"
    admin = Client(arca_url, sign=False)
    name = f"{unique}/checkout"
    admin.publish(name, io.BytesIO(b"one"))
    admin.publish(name, io.BytesIO(b"two"))
    admin.set_alias(name, "prod", 1)

    front = contextlib.ExitStack()
    server = front.enter_context(api_front())
    url, port = server.url, server.port
    with resolver(url, name, cache, background=True) as running:
        # Given a Resolver that resolved prod (version 1) while Arca answered, and took its consumer's lease
        first = running.resolve()
        assert (first.version, first.stale) == (1, False)
        assert [(c.consumer, c.version) for c in admin.iter_consumers(name)] == [(CONSUMER, 1)]

        # When the server stops under it
        front.close()
        stopped_at = time.time()
        with pytest.raises(TransportError):
            quick_client(url).resolve(name, "prod")

        # Then it keeps serving version 1, flagged stale, and says so in a warning
        def stale() -> Resolved | None:
            answer = running.resolve()
            return answer if answer.stale else None

        served = wait_for(stale, timeout=WAIT, what="the answer turning stale")
        assert served.version == 1
        assert served.error and served.error.startswith("ConnectionError")  # refused, or aborted mid-request
        # (the last answer fetched before the stop: the background refresh may have fetched one after `first`)
        assert first.fetched_at <= served.fetched_at <= stopped_at
        warned = [r.getMessage() for r in caplog.records if r.name == "arca.resolver"]
        assert any("arca unreachable" in m and f"{name}@prod = version 1" in m for m in warned), warned

        # And a new Resolver (a process restarted during the outage) resolves from the answer kept on disk
        with resolver(url, name, cache, background=False) as restarted:
            kept = restarted.resolve()
            assert (kept.version, kept.stale, kept.fetched_at) == (1, True, served.fetched_at)
            assert kept.error and "refused" in kept.error
        # (one with no answer kept has nothing to serve: the outage is raised)
        with resolver(url, name, tmp_path / "empty", background=False) as cold, pytest.raises(TransportError):
            cold.resolve()

        # When the server is back on the same port, and prod moved meanwhile
        admin.set_alias(name, "prod", 2)
        with api_front(port):
            # Then the running Resolver goes fresh again on its own, on the new version, and moves its lease
            def fresh() -> Resolved | None:
                answer = running.resolve()
                return answer if not answer.stale and answer.version == 2 else None

            back = wait_for(fresh, timeout=WAIT, what="the answer going fresh on version 2")
            assert back.error is None and back.fetched_at > first.fetched_at
            leases = wait_for(
                lambda: [(c.consumer, c.version) for c in admin.iter_consumers(name) if c.version == 2],
                timeout=WAIT,
                what="the lease moving to version 2",
            )
            assert leases == [(CONSUMER, 2)]
            # And a restarted Resolver asks Arca (its disk answer is only kept for outages): fresh, version 2
            with resolver(url, name, cache, background=False) as restarted:
                again = restarted.resolve()
                assert (again.version, again.stale) == (2, False)
