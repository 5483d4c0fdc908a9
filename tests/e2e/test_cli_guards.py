"""`arca alias policy`, `arca promote`, `arca approve|reject`, `arca promotions` against the local server."""

from __future__ import annotations

import os
from pathlib import Path

from tests.e2e.test_cli_behaviour import Arca, app, arca  # noqa: F401  (fixtures)


def test_policy_promote_approve_through_the_cli(arca: Arca, app: str, tmp_path: Path) -> None:  # noqa: F811
    # Given a policy of one approval and a required tag
    (tmp_path / "app-v3.zip").write_bytes(os.urandom(3000))
    assert arca("publish", app, "app-v3.zip").code == 0
    set_policy = arca("alias", "policy", "set", app, "prod", "--require-tag", "qa=passed", "--approvals", "1")
    assert set_policy.code == 0, set_policy.err
    assert "versions must be tagged qa=passed" in set_policy.out
    shown = arca("alias", "policy", "show", app, "prod", "--json")
    assert shown.json()["approvals"] == 1
    # When a direct move is tried, then an untagged version is promoted
    direct = arca("alias", "set", app, "prod", "3")
    untagged = arca("promote", app, "prod", "3")
    # Then each refusal names every violation in words
    assert direct.code != 0 and "PolicyViolation" in direct.err
    assert "- require_tags: version 3 lacks qa=passed" in direct.err
    assert "- approvals:" in direct.err
    assert "- require_tags: version 3 lacks qa=passed" in untagged.err
    # When it is tagged, promoted by alice and approved by bob
    assert arca("tag", f"{app}@3", "qa=passed").code == 0
    requested = arca("--local-user", "alice", "promote", app, "prod", "3", "--json")
    assert requested.code == 0, requested.err
    promotion = requested.json()
    assert promotion["state"] == "pending"
    own = arca("--local-user", "alice", "approve", app, "prod", promotion["id"])
    assert own.code != 0 and "requester cannot approve" in own.err
    listed = arca("promotions", app, "prod", "--state", "pending")
    assert promotion["id"] in listed.out
    approved = arca("--local-user", "bob", "approve", app, "prod", promotion["id"])
    # Then
    assert approved.code == 0, approved.err
    assert "applied" in approved.out
    assert arca("alias", "show", app, "prod", "--json").json()["version"] == 3
    assert arca("alias", "policy", "rm", app, "prod").code == 0
    assert arca("alias", "policy", "show", app, "prod").code != 0


def test_the_cli_shows_why_a_policy_is_refused(arca: Arca, app: str) -> None:  # noqa: F811
    # A policy that would lock its writer out, a glob no caller can match, rules on an alias serving LATEST
    locked = arca("--local-user", "alice", "alias", "policy", "set", app, "prod", "--allow", "arn:aws:iam::*:user/bob")
    spaced = arca("alias", "policy", "set", app, "prod", "--allow", "arn:aws:iam::*:user/bob/")
    assert arca("alias", "set", app, "edge", "LATEST").code == 0
    on_latest = arca("alias", "policy", "set", app, "edge", "--approvals", "1")
    # Then each says what is wrong and what to do, and nothing was set
    assert locked.code != 0 and "ConflictError: allowed_principals does not match you" in locked.err
    assert "lock you out" in locked.err
    assert spaced.code != 0 and "ValidationError: allowed_principals.0:" in spaced.err
    assert on_latest.code != 0 and "ConflictError: alias 'edge' points at LATEST" in on_latest.err
    assert arca("alias", "policy", "show", app, "prod").code != 0
