"""The SDK's Resolver over a fake client: freshness, background refresh, outages, the kept answer, leases."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from arca_client.errors import NotFoundError, ServerError, TransportError
from arca_client.models import Lease, Resolution
from arca_client.resolver import RETRY_UNREACHABLE, Resolver


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


class FakeClient:
    """Answers resolves with `version` (or raises `failure`), and records every call."""

    endpoint = "http://arca.test"

    def __init__(self) -> None:
        self.version = 3
        self.failure: Exception | None = None
        self.resolves = 0
        self.leases: list[tuple[str, str, int, int | None]] = []
        self.lease_failure: Exception | None = None

    def resolve(self, name: str, ref: Any = "LATEST", *, routing_key: str | None = None, at: Any = None) -> Resolution:
        self.resolves += 1
        if self.failure is not None:
            raise self.failure
        raw = {
            "name": name,
            "ref": ref,
            "version": self.version,
            "sha256": "ab" * 32,
            "size": 1,
            "download_url": f"http://s3.test/{self.version}",
        }
        return Resolution.from_dict(raw)

    def lease(
        self,
        name: str,
        consumer: str,
        version: int,
        *,
        ttl_seconds: int | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> Lease:
        self.leases.append((name, consumer, version, ttl_seconds))
        if self.lease_failure is not None:
            raise self.lease_failure
        return Lease.from_dict({"consumer": consumer, "version": version, "expires_at": "2030-01-01T00:00:00.000Z"})


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def fake() -> FakeClient:
    return FakeClient()


def resolver(fake: FakeClient, clock: Clock, tmp_path: Path, **options: Any) -> Resolver:
    return Resolver(fake, "payments/api", "prod", cache_dir=tmp_path, background=False, clock=clock, **options)


def test_a_fresh_answer_is_served_from_memory_without_a_request(fake: FakeClient, clock: Clock, tmp_path: Path) -> None:
    # Given a resolver that answered once
    r = resolver(fake, clock, tmp_path)
    assert r.resolve().version == 3
    # When it is asked again within fresh_for
    fake.version = 4
    clock.now += 29
    answer = r.resolve()
    # Then no request was made and the answer is the kept one
    assert fake.resolves == 1
    assert answer.version == 3 and not answer.stale


def test_an_answer_past_fresh_for_is_refreshed_and_never_older_than_max_stale(
    fake: FakeClient, clock: Clock, tmp_path: Path
) -> None:
    r = resolver(fake, clock, tmp_path, fresh_for=30, max_stale=60)
    r.resolve()
    fake.version = 4
    # Past fresh_for (no background thread here: the refresh runs inline) the new version is picked up
    clock.now += 31
    assert r.resolve().version in (3, 4)
    assert r.resolve().version == 4
    # Past max_stale a resolve always asks first
    fake.version = 5
    clock.now += 61
    assert r.resolve().version == 5


def test_an_outage_serves_the_last_good_answer_flagged_stale_and_logged(
    fake: FakeClient, clock: Clock, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Given a resolver with an answer, and then Arca goes away
    r = resolver(fake, clock, tmp_path, fresh_for=1, max_stale=2)
    r.resolve()
    fake.failure = TransportError("connection refused", code="ConnectionError")
    clock.now += 10
    # When it resolves
    with caplog.at_level(logging.WARNING, logger="arca.resolver"):
        answer = r.resolve()
    # Then it serves the last good answer, says it is stale, and logs why
    assert answer.version == 3 and answer.stale and "connection refused" in (answer.error or "")
    assert "unreachable" in caplog.text
    # And while Arca is away it is not asked on every resolve
    asked = fake.resolves
    clock.now += RETRY_UNREACHABLE / 2
    assert r.resolve().stale
    assert fake.resolves == asked
    # Until it answers again
    fake.failure = None
    fake.version = 4
    clock.now += RETRY_UNREACHABLE
    answer = r.resolve()
    assert answer.version == 4 and not answer.stale


def test_a_5xx_is_an_outage_but_a_404_is_an_answer(fake: FakeClient, clock: Clock, tmp_path: Path) -> None:
    r = resolver(fake, clock, tmp_path, fresh_for=1, max_stale=2)
    r.resolve()
    clock.now += 10
    fake.failure = ServerError("bad gateway", status=502)
    assert r.resolve().stale
    clock.now += RETRY_UNREACHABLE + 1
    fake.failure = NotFoundError("no alias prod", status=404)
    with pytest.raises(NotFoundError):
        r.resolve()


def test_a_restart_during_an_outage_resolves_from_the_answer_kept_on_disk(
    fake: FakeClient, clock: Clock, tmp_path: Path
) -> None:
    # Given one process that resolved and kept its answer
    resolver(fake, clock, tmp_path).resolve()
    # When a new process starts while Arca is down
    fake.failure = TransportError("connection refused", code="ConnectionError")
    again = resolver(fake, clock, tmp_path)
    # Then it still resolves, and says the answer is stale
    answer = again.resolve()
    assert answer.version == 3 and answer.stale


def test_with_nothing_kept_an_outage_is_raised(fake: FakeClient, clock: Clock, tmp_path: Path) -> None:
    fake.failure = TransportError("connection refused", code="ConnectionError")
    with pytest.raises(TransportError):
        resolver(fake, clock, tmp_path).resolve()


def test_the_lease_is_taken_when_the_version_changes_and_renewed_only_when_due(
    fake: FakeClient, clock: Clock, tmp_path: Path
) -> None:
    r = resolver(fake, clock, tmp_path, consumer="ecs:prod.payments", fresh_for=10, max_stale=20, lease_ttl=3600)
    r.resolve()
    assert fake.leases == [("payments/api", "ecs:prod.payments", 3, 3600)]
    # Refreshes on the same version renew nothing until half the lease has passed (±10%)
    for _ in range(10):
        clock.now += 25
        r.resolve()
    assert len(fake.leases) == 1
    clock.now += 3600 * 0.6
    r.resolve()
    assert len(fake.leases) == 2
    # A new version is leased at once
    fake.version = 4
    clock.now += 25
    r.resolve()
    assert fake.leases[-1][2] == 4


def test_the_lease_held_and_why_the_last_attempt_failed_are_shown(
    fake: FakeClient, clock: Clock, tmp_path: Path
) -> None:
    # Given a lease Arca refuses
    fake.lease_failure = ServerError("boom", status=500)
    r = resolver(fake, clock, tmp_path, consumer="ecs:prod.payments", fresh_for=10, max_stale=20, lease_ttl=3600)
    # Then the answer is served, no lease is held, and the failure is kept
    assert r.resolve().version == 3
    assert r.lease is None
    assert isinstance(r.lease_error, ServerError)
    # When the next refresh leases
    fake.lease_failure = None
    clock.now += 25
    r.resolve()
    # Then the lease is Arca's answer, and the failure is gone
    assert r.lease is not None and (r.lease.consumer, r.lease.version) == ("ecs:prod.payments", 3)
    assert r.lease_error is None


def test_the_background_thread_refreshes_before_the_answer_goes_stale(fake: FakeClient, tmp_path: Path) -> None:
    # Given a resolver with its thread and a short freshness
    with Resolver(fake, "payments/api", "prod", cache_dir=tmp_path, fresh_for=0.05, max_stale=60) as r:
        r.resolve()
        fake.version = 4
        # Then the thread picks up the new version without a caller waiting for it
        import time

        deadline = time.monotonic() + 30
        while r.resolve().version != 4 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert r.resolve().version == 4


def test_bounds_are_checked(fake: FakeClient, clock: Clock, tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        resolver(fake, clock, tmp_path, fresh_for=60, max_stale=30)
    with pytest.raises(ValueError):
        resolver(fake, clock, tmp_path, max_stale=10 * 86_400)
