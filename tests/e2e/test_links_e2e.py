"""Links end to end on DynamoDB Local: the CLI through the local server, and links racing purges."""

from __future__ import annotations

from pathlib import Path

import pytest

from arca.domain.errors import ConflictError, NotFoundError
from arca.wiring import build
from tests.e2e.conftest import ArcaHttp
from tests.e2e.test_cli import Cli, cli, publish
from tests.e2e.test_races import race
from tests.helpers import acting

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]
__all__ = ["cli"]  # the CLI tests' fixture


def test_cli_links_a_name_reads_through_it_and_unlinks_it(cli: Cli, unique: str, tmp_path: Path) -> None:
    # Given a published artifact
    target, link = f"{unique}/team/app", f"{unique}/app"
    publish(cli, tmp_path, target, b"shared bytes", "--alias", "prod")
    # When a second name is linked to it
    linked = cli("link", link, target)
    # Then reads through the link answer for the target and say so
    assert linked.code == 0, linked.err
    assert linked.out == f"{link} -> {target}\n"
    resolved = cli("resolve", f"{link}@prod", "--json").json()
    assert (resolved["name"], resolved["via"], resolved["version"]) == (target, link, 1)
    assert f"{link} -> {target}" in cli("ls", f"{unique}/").out
    assert cli("show", link, "--json").json()["link"] == target
    # and a write under it is refused naming the target (exit 3: conflict)
    refused = cli("alias", "set", link, "beta", "1")
    assert refused.code != 0
    assert target in refused.err
    # When it is unlinked
    assert cli("unlink", link).code == 0
    # Then the name reads as nothing, and the target is whole
    assert cli("show", link).code != 0
    assert cli("resolve", f"{target}@prod", "--json").json()["version"] == 1


def test_links_racing_a_purge_leave_no_link_to_a_purged_target(arca: ArcaHttp, unique: str) -> None:
    # Given an artifact with one version
    target = f"{unique}/shared"
    assert arca.set_latest(target, b"one").status_code == 200
    assert arca.post(f"/artifacts/{target}/versions").status_code == 201

    # When 7 writers link names to it while one purges it (plain: refused if a link got in first)
    def work(t: int) -> str:
        try:
            if t == 0:
                acting("publish", build().removal).purge(target, force=False)
                return "purged"
            acting("publish", build().links).link(f"{unique}/l{t}", target)
        except (ConflictError, NotFoundError) as refused:
            return type(refused).__name__
        return "linked"

    outcomes = race(work)
    # Then either the purge won and no link exists, or it was refused and every link made works
    links = [f"{unique}/l{t}" for t in range(1, 8)]
    made = [name for name, outcome in zip(links, outcomes[1:], strict=True) if outcome == "linked"]
    listed = arca.get("/artifacts", params={"prefix": f"{unique}/"}).json()["artifacts"]
    if outcomes[0] == "purged":
        assert not made
        assert [e["name"] for e in listed] == []
    else:
        assert made
        for name in made:
            assert arca.get(f"/artifacts/{name}/versions/1").json()["via"] == name
        assert sorted(e["name"] for e in listed if e.get("link")) == sorted(made)
    # and a forced purge then removes every link with the target
    if outcomes[0] != "purged":
        assert acting("publish", build().removal).purge(target, force=True)
        assert arca.get("/artifacts", params={"prefix": f"{unique}/"}).json()["artifacts"] == []
        assert all(arca.get(f"/artifacts/{name}").status_code == 404 for name in made)
