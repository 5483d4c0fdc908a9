"""`arca retention` end to end: the command and the SDK against the local server (DynamoDB Local)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_cli import Cli, cli, publish

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]
__all__ = ["cli"]  # the fixture, used by name below


def test_retention_from_the_command_line(cli: Cli, unique: str, tmp_path: Path) -> None:
    # Given four versions, prod on 1 and 2 tagged keep:yes
    name = f"{unique}/svc"
    for index in range(1, 5):
        assert publish(cli, tmp_path, name, f"release {index} of {unique}".encode()) == index
    assert cli("alias", "set", name, "prod", "1").code == 0
    assert cli("tag", f"{name}@2", "keep=yes").code == 0
    # When a policy is set and shown
    assert (
        cli("retention", "set", name, "--keep-last", "1", "--keep-tag", "keep:yes", "--rollback-window", "0").code == 0
    )
    shown = cli("retention", "show", name, "--json").json()
    assert (shown["keep_last"], shown["keep_tags"], shown["expire_after_days"]) == (1, ["keep:yes"], 30)
    # Then the preview says why each version stays, as a table and as JSON
    table = cli("retention", "preview", name).out
    assert table.splitlines()[0].split() == ["VERSION", "ACTION", "REASONS"]
    assert "alias:prod" in table and "tag:keep:yes" in table and "newest:1" in table
    rows = {r["version"]: r for r in cli("retention", "preview", name, "--json").json()}
    assert [rows[v]["action"] for v in (4, 3, 2, 1)] == ["keep", "delete", "keep", "keep"]
    # And apply deletes what the preview said; delete removes the policy
    applied = cli("retention", "apply", name, "--json").json()
    assert applied == {"deleted": [3], "expired": []}
    assert cli("retention", "delete", name).code == 0
    missing = cli("retention", "show", name)
    assert missing.code != 0
