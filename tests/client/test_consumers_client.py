"""Consumer leases in the SDK and the CLI: `arca lease`, `arca consumers`, `arca release`."""

from __future__ import annotations

import json
from typing import Any

import pytest

from arca_client.errors import AccessDeniedError
from arca_client.models import AliasRevision, Lease, Purged, Resolution, Rollout, VersionConsumers
from tests.client.test_cli_unit import FakeClient, alias, run, version
from tests.client.test_rollouts_client import rollout
from tests.client.test_sdk import Harness, h

__all__ = ["h"]  # the SDK tests' fixture

ROLLOUT = rollout()
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


# ---- the consumers still on each version: rollout status, rollback plan, diff, forced purge ----------------------


def _on(version: int, *consumers: str, count: int | None = None) -> VersionConsumers:
    return VersionConsumers(
        version=version, count=len(consumers) if count is None else count, consumers=list(consumers)
    )


def test_sdk_reads_the_consumers_on_a_version_from_the_listing(h: Harness) -> None:
    leases = [{**LEASE, "consumer": c} for c in ("ecs:b", "ecs:a")]
    h.answer((200, {"consumers": leases[:1], "next_token": "t"}), (200, {"consumers": leases[1:]}))
    found = h.client.version_consumers("team/app", 3, shown=1)
    assert (found.version, found.count, found.consumers, found.more) == (3, 2, ["ecs:a"], 1)
    assert all(s.path == "/artifacts/team/app/consumers" and "version=3" in s.url for s in h.sent)


def test_sdk_rollout_status_reads_the_consumers_on_each_version(h: Harness) -> None:
    on = [{"version": 3, "count": 2, "consumers": ["a", "b"]}, {"version": 4, "count": 0, "consumers": []}]
    h.answer((200, {**ROLLOUT, "consumers": on}))
    found = h.client.get_rollout("app", "prod")
    assert found.consumers == [_on(3, "a", "b"), _on(4)]


def test_sdk_forced_purge_counts_and_names_the_leases_it_released_across_its_requests(h: Harness) -> None:
    h.answer(
        (202, {"name": "app", "status": "purging"}, {"Arca-Released-Leases": "2", "Arca-Released-Consumers": "a,b"}),
        (204, b""),
    )
    purged = h.client.purge("app", force=True)
    assert (purged.released_count, purged.released_consumers) == (2, ["a", "b"])
    assert len(h.sent) == 2


def test_sdk_purge_that_released_nothing_says_so(h: Harness) -> None:
    h.answer((204, b""))
    assert h.client.purge("app") == Purged("app")


def test_cli_rollout_status_names_the_consumers_still_on_each_version(capsys: pytest.CaptureFixture[str]) -> None:
    status = Rollout.from_dict({**ROLLOUT, "consumers": [{"version": 3, "count": 3, "consumers": ["a", "b", "c"]}]})
    code, _ = run(["rollout", "status", "app", "prod"], FakeClient(get_rollout=status))
    assert code == 0
    assert capsys.readouterr().out.splitlines()[1:] == ["app: 3 consumers still on v3 (a, b, c)"]


def test_cli_rollout_status_names_twenty_and_counts_the_rest(capsys: pytest.CaptureFixture[str]) -> None:
    named = [f"c{i:02d}" for i in range(20)]
    status = Rollout.from_dict(
        {
            **ROLLOUT,
            "consumers": [
                {"version": 3, "count": 25, "consumers": named},
                {"version": 4, "count": 1, "consumers": ["x"]},
            ],
        }
    )
    assert run(["rollout", "status", "app", "prod"], FakeClient(get_rollout=status))[0] == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == f"app: 25 consumers still on v3 ({', '.join(named)} and 5 more)"
    assert lines[2] == "app: 1 consumer still on v4 (x)"


def test_cli_rollback_plan_names_the_consumers_on_the_version_left_and_on_the_target(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given prod on version 4 (revision 3), revision 2 on version 3; two consumers on 4, one on 3
    history = [AliasRevision.from_dict({"revision": r, "version": r + 1, "action": "set"}) for r in (3, 2, 1)]
    on = {4: _on(4, "ecs:a", "ecs:b"), 3: _on(3, "ecs:old")}
    fake = FakeClient(
        get_alias=alias(number=4, revision=3),
        iter_alias_history=lambda *a: iter(history),
        version_consumers=lambda name, version, **_: on[version],
    )
    # When
    code, fake = run(["alias", "rollback", "app", "prod", "--dry-run"], fake)
    # Then the plan names them, the version left first, and nothing is rolled back
    assert code == 0
    assert [c[1] for c in fake.calls if c[0] == "version_consumers"] == [("app", 4), ("app", 3)]
    assert capsys.readouterr().out.splitlines()[-2:] == [
        "app: 2 consumers still on v4 (ecs:a, ecs:b)",
        "app: 1 consumer still on v3 (ecs:old)",
    ]
    assert not [c for c in fake.calls if c[0] == "rollback_alias"]
    fake = FakeClient(
        get_alias=alias(number=4, revision=3),
        iter_alias_history=lambda *a: iter(history),
        version_consumers=lambda name, version, **_: on[version],
    )
    assert run(["alias", "rollback", "app", "prod", "--dry-run", "--json"], fake)[0] == 0
    assert json.loads(capsys.readouterr().out)["consumers"] == [
        {"version": 4, "count": 2, "consumers": ["ecs:a", "ecs:b"]},
        {"version": 3, "count": 1, "consumers": ["ecs:old"]},
    ]


def test_cli_rollback_plan_without_the_right_to_list_consumers_leaves_them_out(
    capsys: pytest.CaptureFixture[str],
) -> None:
    history = [AliasRevision.from_dict({"revision": r, "version": r + 1, "action": "set"}) for r in (3, 2, 1)]

    def denied(*_: Any, **__: Any) -> VersionConsumers:
        raise AccessDeniedError("no", code="AccessDenied", status=403)

    fake = FakeClient(
        get_alias=alias(number=4, revision=3), iter_alias_history=lambda *a: iter(history), version_consumers=denied
    )
    assert run(["alias", "rollback", "app", "prod", "--dry-run"], fake)[0] == 0
    assert "consumer" not in capsys.readouterr().out


def test_cli_diff_names_the_consumers_on_each_side(capsys: pytest.CaptureFixture[str]) -> None:
    versions = {"1": version(1, size=1), "2": version(2, size=2)}
    on = {1: _on(1, "ecs:a"), 2: _on(2)}
    fake = FakeClient(get_version=lambda name, ref, **_: versions[ref], version_consumers=lambda name, v, **_: on[v])
    code, _ = run(["diff", "app@1", "@2"], fake)
    assert code == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "app: 1 consumer still on v1 (ecs:a)"
    assert "still on v2" not in out
    assert run(["diff", "app@1", "@2", "--json"], fake)[0] == 0
    assert json.loads(capsys.readouterr().out)["consumers"] == [
        {"name": "app", "version": 1, "count": 1, "consumers": ["ecs:a"]},
        {"name": "app", "version": 2, "count": 0, "consumers": []},
    ]


def test_cli_forced_purge_says_which_leases_it_released(capsys: pytest.CaptureFixture[str]) -> None:
    fake = FakeClient(purge=Purged("app", released_count=2, released_consumers=["ecs:a", "ecs:b"]))
    code, _ = run(["purge", "app", "--yes", "--force"], fake)
    assert code == 0
    assert capsys.readouterr().out == "app: purged\napp: released the leases of 2 consumers (ecs:a, ecs:b)\n"
