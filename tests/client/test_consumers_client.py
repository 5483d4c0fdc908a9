"""Consumer leases in the SDK and the CLI: `arca lease`, `arca consumers`, `arca release`."""

from __future__ import annotations

from arca_client.models import Lease, Resolution
from tests.client.test_cli_unit import FakeClient, run
from tests.client.test_sdk import Harness, h

__all__ = ["h"]  # the SDK tests' fixture

LEASE = {"consumer": "ecs:prod", "version": 3, "expires_at": "2026-01-02T00:00:00.000Z", "by": "me", "labels": {}}


def test_sdk_lease_puts_the_body_the_route_takes(h: Harness) -> None:
    h.answer((200, LEASE), (204, b""))
    lease = h.client.lease("team/app", "ecs:prod", 3, ttl_seconds=600, labels={"k": "v"})
    h.client.release("team/app", "ecs:prod")
    assert (h.sent[0].method, h.sent[0].path) == ("PUT", "/artifacts/team/app/consumers/ecs:prod")
    assert h.sent[0].json() == {"version": 3, "ttl_seconds": 600, "labels": {"k": "v"}}
    assert (h.sent[1].method, h.sent[1].path) == ("DELETE", "/artifacts/team/app/consumers/ecs:prod")
    assert (lease.consumer, lease.version, lease.expires_at) == ("ecs:prod", 3, LEASE["expires_at"])


def _resolution(version: int | str) -> Resolution:
    return Resolution(
        name="team/app", ref="prod", version=version, sha256="a" * 64, size=1, download_url="http://x", raw={}
    )


def test_cli_lease_resolves_the_ref_then_leases_that_version() -> None:
    fake = FakeClient(resolve=_resolution(3), lease=Lease(consumer="ecs:prod", version=3, expires_at="t", raw=LEASE))
    code, _ = run(["lease", "team/app@prod", "ecs:prod", "--ttl", "600", "--label", "region=eu"], fake)
    assert code == 0
    assert fake.calls[0] == ("resolve", ("team/app", "prod"), {"routing_key": "ecs:prod"})
    assert fake.calls[1] == ("lease", ("team/app", "ecs:prod", 3), {"ttl_seconds": 600, "labels": {"region": "eu"}})


def test_cli_lease_refuses_a_ref_that_resolves_to_latest() -> None:
    fake = FakeClient(resolve=_resolution("LATEST"))
    code, _ = run(["lease", "team/app", "ecs:prod"], fake)
    assert code == 1
    assert [c[0] for c in fake.calls] == ["resolve"]


def test_cli_consumers_lists_and_release_releases() -> None:
    lease = Lease(consumer="ecs:prod", version=3, expires_at="t", labels={"k": "v"}, raw=LEASE)
    fake = FakeClient(iter_consumers=iter([lease]))
    assert run(["consumers", "team/app", "--version", "3"], fake)[0] == 0
    assert fake.calls == [("iter_consumers", ("team/app",), {"version": 3})]
    code, released = run(["release", "team/app", "ecs:prod"])
    assert code == 0
    assert released.calls == [("release", ("team/app", "ecs:prod"), {})]
