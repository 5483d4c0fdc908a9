"""Consumer leases end to end on DynamoDB Local: the CLI and the SDK's Resolver through the local server, and leases
racing a soft delete of their version."""

from __future__ import annotations

from pathlib import Path

import pytest

from arca.domain.errors import ConflictError
from arca.wiring import build
from arca_client import Client
from arca_client.resolver import Resolver
from tests.e2e.conftest import ArcaHttp
from tests.e2e.test_cli import Cli, cli, publish
from tests.e2e.test_races import race
from tests.helpers import acting

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]
__all__ = ["cli"]  # the CLI tests' fixture


def test_cli_leases_lists_and_releases(cli: Cli, unique: str, tmp_path: Path) -> None:
    # Given an artifact with two versions, prod on the first
    name = f"{unique}/payments"
    publish(cli, tmp_path, name, b"one", "--alias", "prod")
    publish(cli, tmp_path, name, b"two")
    # When a consumer leases what prod serves
    leased = cli("lease", f"{name}@prod", "ecs:prod.payments", "--ttl", "600", "--label", "region=eu-west-1")
    # Then the lease names version 1, and the listing shows it (filtered by version too)
    assert leased.code == 0, leased.err
    assert f"{name}@1: leased by ecs:prod.payments until" in leased.out
    listed = cli("consumers", name, "--json").json()
    assert [(c["consumer"], c["version"], c["labels"]) for c in listed] == [
        ("ecs:prod.payments", 1, {"region": "eu-west-1"})
    ]
    assert cli("consumers", name, "--version", "2", "--json").json() == []
    assert "ecs:prod.payments" in cli("consumers", name).out
    # And the leased version cannot be soft-deleted while the lease is live (exit 3: conflict, naming the consumer)
    refused = cli("delete", name, "1")
    assert refused.code == 3, (refused.out, refused.err)
    assert "ecs:prod.payments" in refused.err
    # When it is released
    assert cli("release", name, "ecs:prod.payments").code == 0
    # Then no lease is left
    assert cli("consumers", name, "--json").json() == []


def test_the_resolver_takes_its_consumers_lease_on_the_version_it_serves(
    arca_url: str, cli: Cli, unique: str, tmp_path: Path
) -> None:
    name = f"{unique}/checkout"
    publish(cli, tmp_path, name, b"one", "--alias", "prod")
    client = Client(arca_url, sign=False)
    with Resolver(
        client, name, "prod", consumer="lambda:us-east-1:checkout", background=False, cache_dir=tmp_path / "cache"
    ) as resolver:
        assert resolver.resolve().version == 1
    (lease,) = list(client.iter_consumers(name))
    assert (lease.consumer, lease.version) == ("lambda:us-east-1:checkout", 1)


@pytest.mark.parametrize("round_", range(3))
def test_leases_racing_a_soft_delete_never_leave_a_deleted_version_leased(
    arca: ArcaHttp, unique: str, round_: int
) -> None:
    # Given a version
    name = f"{unique}/race{round_}"
    assert arca.set_latest(name, b"one").status_code == 200
    assert arca.post(f"/artifacts/{name}/versions").status_code == 201

    # When 5 consumers lease it while one soft-deletes it
    def work(t: int) -> str:
        try:
            if t == 0:
                acting("publish", build().removal).delete_version(name, 1)
                return "deleted"
            acting("publish", build().consumers).lease(name, f"ecs:c{t}", 1, ttl_seconds=600, labels=None)
        except ConflictError as refused:
            return type(refused).__name__
        return "leased"

    outcomes = race(work, threads=6)
    # Then either the delete won (and every lease was refused) or it was refused (naming leases that exist)
    live = {c["consumer"] for c in arca.get(f"/artifacts/{name}/consumers").json()["consumers"]}
    deleted = arca.get(f"/artifacts/{name}/versions/1").json()["deleted"]
    assert live == {f"ecs:c{t}" for t in range(1, 6) if outcomes[t] == "leased"}, outcomes
    assert not (deleted and live), (outcomes, live)
    assert deleted == (outcomes[0] == "deleted"), outcomes


def test_cli_consume_once_resolves_and_leases_through_the_resolver(cli: Cli, unique: str, tmp_path: Path) -> None:
    # Given prod on version 1
    name = f"{unique}/worker"
    publish(cli, tmp_path, name, b"one", "--alias", "prod")
    cache = str(tmp_path / "cache")
    # When a consumer resolves it once
    ran = cli("consume", f"{name}@prod", "--consumer", "ecs:prod.worker", "--ttl", "600", "--cache", cache, "--once")
    answer = cli("consume", f"{name}@prod", "--consumer", "ecs:prod.worker", "--cache", cache, "--once", "--json")
    # Then it printed the version and the lease, which Arca lists
    assert ran.code == 0, ran.err
    assert ran.out.startswith(f"{name}@1: leased by ecs:prod.worker until ")
    assert (answer.json()["version"], answer.json()["stale"], answer.json()["lease"]["version"]) == (1, False, 1)
    listed = cli("consumers", name, "--json").json()
    assert [(c["consumer"], c["version"]) for c in listed] == [("ecs:prod.worker", 1)]


def test_the_cli_names_the_consumers_still_on_each_version_and_what_a_forced_purge_released(
    cli: Cli, unique: str, tmp_path: Path
) -> None:
    # Given prod on version 1 (then 2, so that a rollback goes back to 1), two consumers on 1 and one on 2
    name = f"{unique}/orders"
    publish(cli, tmp_path, name, b"one", "--alias", "prod")
    publish(cli, tmp_path, name, b"two")
    assert cli("alias", "set", name, "prod", "2").code == 0
    for consumer, version in (("ecs:prod.b", 1), ("ecs:prod.a", 1), ("lambda:edge", 2)):
        assert cli("lease", f"{name}@{version}", consumer).code == 0
    # When the rollback is planned and the two versions compared
    plan = cli("alias", "rollback", name, "prod", "--dry-run")
    diff = cli("diff", f"{name}@1", "@2")
    # Then both name the consumers on each version
    assert plan.code == 0, plan.err
    assert f"{name}: 1 consumer still on v2 (lambda:edge)" in plan.out
    assert f"{name}: 2 consumers still on v1 (ecs:prod.a, ecs:prod.b)" in plan.out
    assert diff.code == 0, diff.err
    assert diff.out.splitlines()[-2:] == [
        f"{name}: 2 consumers still on v1 (ecs:prod.a, ecs:prod.b)",
        f"{name}: 1 consumer still on v2 (lambda:edge)",
    ]
    # When version 1 is rolled out again, and its status read
    assert cli("alias", "rollback", name, "prod", "--yes").code == 0
    assert cli("rollout", "start", name, "prod", "2", "--steps", "10", "--interval", "3600").code == 0
    status = cli("rollout", "status", name, "prod")
    # Then the status names the consumers on the version rolled out from and on the one rolled out
    assert status.code == 0, status.err
    assert status.out.splitlines()[1:] == [
        f"{name}: 2 consumers still on v1 (ecs:prod.a, ecs:prod.b)",
        f"{name}: 1 consumer still on v2 (lambda:edge)",
    ]
    assert [c["count"] for c in cli("rollout", "status", name, "prod", "--json").json()["consumers"]] == [2, 1]
    # When the artifact is purged with force
    purged = cli("purge", name, "--yes", "--force")
    # Then the CLI says which leases the purge released
    assert purged.code == 0, purged.err
    assert purged.out == (
        f"{name}: purged\n{name}: released the leases of 3 consumers (ecs:prod.a, ecs:prod.b, lambda:edge)\n"
    )
