"""Consumer leases in the SDK and the CLI: `arca lease`, `arca consumers`, `arca release`."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from arca_client import resolver as resolver_module
from arca_client.commands import resolving
from arca_client.errors import AccessDeniedError, TransportError, ValidationError
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
    raw = {"name": "team/app", "ref": "prod", "version": version, "sha256": "a" * 64, "size": 1}
    return Resolution.from_dict({**raw, "download_url": f"http://s3.test/{version}"})


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


# ---- arca resolve --watch, arca consume: the Resolver for scripts -------------------------------------------


class Turns:
    """Stands in for the pause between two looks of a watch: a short real pause (the answers' age passes the
    interval, so each look past the first asks Arca), then Ctrl-C after `turns` looks."""

    def __init__(self, turns: int) -> None:
        self.left = turns

    def __call__(self, seconds: float) -> None:
        self.left -= 1
        if self.left <= 0:
            raise KeyboardInterrupt
        time.sleep(0.01)


def _answers(*outcomes: int | str | Exception) -> Callable[..., Resolution]:
    pending = list(outcomes)

    def answer(*args: Any, **kwargs: Any) -> Resolution:
        outcome = pending.pop(0) if len(pending) > 1 else pending[0]
        if isinstance(outcome, Exception):
            raise outcome
        return _resolution(outcome)

    return answer


def _fake(**answers: Any) -> FakeClient:
    fake = FakeClient(**answers)
    fake.endpoint = "http://arca.test"  # the Resolver keys its kept answer by it
    return fake


def _lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


WATCH = ["--interval", "0.001"]


@pytest.fixture(autouse=True)
def _quick_retry(monkeypatch: pytest.MonkeyPatch) -> None:
    # While Arca is unreachable, the Resolver asks again every RETRY_UNREACHABLE seconds: at every look here
    monkeypatch.setattr(resolver_module, "RETRY_UNREACHABLE", 0.0)


def test_resolve_watch_prints_a_json_line_per_change_marks_stale_and_exits_0_on_ctrl_c(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given answers: 1, 1, 2, an outage, 2 again
    fake = _fake(resolve=_answers(1, 1, 2, TransportError("connection refused"), 2))
    monkeypatch.setattr(resolving, "PAUSE", Turns(6))
    # When watched for 6 looks
    code, _ = run(["resolve", "team/app@prod", "--watch", *WATCH, "--cache", str(tmp_path), "--key", "k1"], fake)
    # Then exit 0, one line per change: 1, 2, 2 stale (with the reason), 2 fresh again
    assert code == 0
    lines = _lines(capsys.readouterr().out)
    assert [(line["version"], line["stale"]) for line in lines] == [(1, False), (2, False), (2, True), (2, False)]
    assert "connection refused" in lines[2]["error"]
    assert lines[2]["fetched_at"] == lines[1]["fetched_at"]
    assert {"download_url", "sha256", "ref", "route"} <= set(lines[0])
    assert "lease" not in lines[0]  # no consumer
    # And each look past the first asked Arca once, routed by --key
    assert [c[0] for c in fake.calls] == ["resolve"] * 6
    assert all(c[2] == {"routing_key": "k1"} for c in fake.calls)


def test_resolve_watch_restarted_during_an_outage_answers_from_the_kept_answer(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a watch that saw version 1
    monkeypatch.setattr(resolving, "PAUSE", Turns(1))
    watch = ["resolve", "team/app@prod", "--watch", *WATCH, "--cache", str(tmp_path)]
    assert run(watch, _fake(resolve=_answers(1)))[0] == 0
    capsys.readouterr()
    # When it is started again while Arca is unreachable
    monkeypatch.setattr(resolving, "PAUSE", Turns(1))
    down = _fake(resolve=_answers(TransportError("connection refused")))
    code, _ = run(watch, down)
    # Then it prints the kept answer, stale
    assert code == 0
    ((line,),) = [_lines(capsys.readouterr().out)]
    assert (line["version"], line["stale"]) == (1, True)
    # And with no answer kept, the outage is the exit code (4)
    monkeypatch.setattr(resolving, "PAUSE", Turns(1))
    assert run(["resolve", "team/app@prod", "--watch", "--cache", str(tmp_path / "empty")], down)[0] == 4


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["resolve", "team/app@prod", "--watch", "--at", "yesterday"], "--at"),
        (["resolve", "team/app@prod", "--interval", "5"], "--interval goes with --watch"),
        (["resolve", "team/app@prod", "--cache", "/tmp/x"], "--cache goes with --watch"),
        (["resolve", "team/app@prod", "--watch", "--interval", "0"], "--interval"),
        (["consume", "team/app@prod"], "--consumer"),
    ],
)
def test_watch_and_consume_refuse_bad_options(
    argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, fake = run(argv, _fake())
    assert code == 1
    assert fragment in capsys.readouterr().err
    assert fake.calls == []


def test_consume_once_resolves_leases_prints_and_exits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lease = Lease(consumer="ecs:prod", version=3, expires_at="2026-01-02T00:00:00.000Z", raw=LEASE)
    fake = _fake(resolve=_answers(3), lease=lease)
    # When
    argv = ["consume", "team/app@prod", "--consumer", "ecs:prod", "--ttl", "600", "--label", "team=a", "--once"]
    code, _ = run([*argv, "--cache", str(tmp_path), "--json"], fake)
    # Then one resolve routed by the consumer, one lease of what it served, the answer printed
    assert code == 0
    assert fake.calls == [
        ("resolve", ("team/app", "prod"), {"routing_key": "ecs:prod"}),
        ("lease", ("team/app", "ecs:prod", 3), {"ttl_seconds": 600, "labels": {"team": "a"}}),
    ]
    answer = json.loads(capsys.readouterr().out)
    assert (answer["version"], answer["stale"], answer["consumer"]) == (3, False, "ecs:prod")
    assert answer["lease"] == {"version": 3, "expires_at": "2026-01-02T00:00:00.000Z"}
    # And as text
    assert run([*argv, "--cache", str(tmp_path)], _fake(resolve=_answers(3), lease=lease))[0] == 0
    assert capsys.readouterr().out.strip() == "team/app@3: leased by ecs:prod until 2026-01-02 00:00:00"


def test_consume_once_refuses_latest_and_a_refused_lease(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache = ["--cache", str(tmp_path)]
    code, fake = run(
        ["consume", "team/app", "--consumer", "ecs:prod", "--once", *cache], _fake(resolve=_answers("LATEST"))
    )
    assert code == 1
    assert "LATEST" in capsys.readouterr().err
    assert [c[0] for c in fake.calls] == ["resolve"]
    refused = _fake(resolve=_answers(3), error=None)
    refused.answers["lease"] = _raises(ValidationError("consumer is not an id", status=400))
    code, _ = run(["consume", "team/app@prod", "--consumer", "ecs:prod", "--once", *cache], refused)
    assert code == 1
    assert "consumer is not an id" in capsys.readouterr().err


def _raises(error: Exception) -> Callable[..., Any]:
    def answer(*args: Any, **kwargs: Any) -> Any:
        raise error

    return answer


def test_consume_keeps_running_renews_its_lease_and_follows_the_version(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a lease renewed at every refresh (the Resolver renews after half its TTL: here at once)
    monkeypatch.setattr(resolver_module, "RENEW_AT", 0.0)
    renewals = iter(range(10))

    def lease(name: str, consumer: str, version: int, **kwargs: Any) -> Lease:
        return Lease(consumer=consumer, version=version, expires_at=f"2026-01-02T00:00:0{next(renewals)}.000Z")

    fake = _fake(resolve=_answers(3, 3, 4), lease=lease)
    monkeypatch.setattr(resolving, "PAUSE", Turns(3))
    # When it runs 3 looks
    code, _ = run(["consume", "team/app@prod", "--consumer", "ecs:prod", *WATCH, "--cache", str(tmp_path)], fake)
    # Then each refresh renewed the lease on the version served, and each renewal is a line
    assert code == 0
    assert [c[1][2] for c in fake.calls if c[0] == "lease"] == [3, 3, 4]
    lines = _lines(capsys.readouterr().out)
    assert [(line["version"], line["lease"]["version"]) for line in lines] == [(3, 3), (3, 3), (4, 4)]
    assert len({line["lease"]["expires_at"] for line in lines}) == 3


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
