"""The pure rules of guarded promotion: principal globs, every violation listed, rollback exempt, soak runs."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from arca.domain.guards import (
    Candidate,
    PolicyFields,
    Serving,
    gaining,
    principal_allowed,
    refuse_latest,
    soaked_seconds,
    violations,
)

USER = "arn:aws:iam::123456789012:user/alice"


@pytest.mark.parametrize(
    ("glob", "identity", "allowed"),
    [
        ("arn:aws:iam::*:user/alice", USER, True),
        ("arn:aws:iam::123456789012:user/*", USER, True),
        ("arn:aws:iam::*", USER, False),  # `*` stays within one segment
        ("arn:aws:iam::123456789012:user/*", "arn:aws:iam::123456789012:user/team/alice", False),
        ("arn:aws:sts::*:assumed-role/deployer/*", "arn:aws:sts::1:assumed-role/deployer/ci-42", True),
        ("arn:aws:iam::123456789012:user/al.ce", USER, False),  # no regex: `.` is a dot
        ("direct:*", "direct:arn:aws:lambda:eu-west-1:1:function:f", False),  # `:` separates segments
    ],
)
def test_a_principal_glob_matches_within_segments(glob: str, identity: str, allowed: bool) -> None:
    assert principal_allowed([glob], identity) is allowed


def test_no_globs_or_a_lone_star_allow_anyone_and_no_identity_matches_any_other_glob() -> None:
    assert principal_allowed([], None)
    assert principal_allowed(["*"], None)
    assert principal_allowed(["*"], "arn:aws:sts::1:assumed-role/deployer/ci-1")
    assert not principal_allowed(["arn:aws:iam::*:user/*"], None)


def test_every_broken_rule_is_reported_and_a_rollback_only_by_principal() -> None:
    policy = PolicyFields(
        require_tags={"qa": "passed"},
        require_attestations=["sbom-spdx"],
        require_soak={"alias": "staging", "seconds": 60},
        require_rollout=True,
        allowed_principals=["nobody"],
        approvals=1,
    )
    bare = [Candidate(version=3)]
    direct = violations(policy, identity=USER, via="direct", candidates=bare, replaces=True)
    rollback = violations(policy, identity=USER, via="rollback", candidates=bare, replaces=True)
    assert [v.rule for v in direct] == [
        "allowed_principals",
        "require_tags",
        "require_attestations",
        "require_soak",
        "require_rollout",
        "approvals",
    ]
    assert [v.rule for v in rollback] == ["allowed_principals"]


def test_a_version_that_has_everything_passes_through_a_promotion_with_a_rollout() -> None:
    policy = PolicyFields(
        require_tags={"qa": "passed"},
        require_attestations=["sbom-spdx"],
        require_soak={"alias": "staging", "seconds": 60},
        require_rollout=True,
        approvals=2,
    )
    ready = [Candidate(3, {"qa": "passed"}, ("sbom-spdx",), 61.0)]
    assert violations(policy, identity=USER, via="promotion-rollout", candidates=ready, replaces=True) == []
    # a plain promotion still breaks require_rollout; a first target does not
    assert [v.rule for v in violations(policy, identity=USER, via="promotion", candidates=ready, replaces=True)] == [
        "require_rollout"
    ]
    assert violations(policy, identity=USER, via="promotion", candidates=ready, replaces=False) == []


def test_a_soak_is_the_unbroken_run_of_the_version_as_primary() -> None:
    now = datetime(2026, 1, 1, 0, 10, tzinfo=UTC)
    runs = [(2, "2026-01-01T00:09:00.000Z"), (2, "2026-01-01T00:05:00.000Z"), (1, "2026-01-01T00:01:00.000Z")]
    assert soaked_seconds(runs, 2, now) == 300.0
    assert soaked_seconds(runs, 1, now) is None  # not the primary now
    interrupted = [(2, "2026-01-01T00:09:00.000Z"), (None, "2026-01-01T00:08:00.000Z"), (2, "2026-01-01T00:00:00.000Z")]
    assert soaked_seconds(interrupted, 2, now) == 60.0


@pytest.mark.parametrize(
    ("before", "after", "gained"),
    [
        (None, Serving(1), [1]),
        (Serving(1), Serving(1), []),
        (Serving(1), Serving(2), [2]),
        (Serving(1, 2, 5), Serving(1, 2, 99), [2]),  # a secondary's weight raised
        (Serving(1, 2, 5), Serving(2), [2]),  # the secondary made the primary
        (Serving(1, 2, 5), Serving(1, 2, 1), []),  # a canary lowered or removed: the way back
        (Serving(1, 2, 5), Serving(1), []),
        (Serving(1), Serving(1, 2, 0), [2]),  # new to the alias, even at weight 0
        (Serving(1, 2, 5), Serving(2, 1, 99), [2]),  # 1, the primary before, is demoted
        (Serving(1, 2, 5), Serving(1, 3, 5), [3]),
        (Serving(1), None, []),
        (Serving(1), Serving("LATEST"), ["LATEST"]),
    ],
)
def test_a_version_gains_when_it_serves_more_of_the_alias_than_before(
    before: Serving | None, after: Serving | None, gained: list[object]
) -> None:
    assert gaining(before, after) == gained


def test_under_approvals_every_direct_move_is_refused_but_a_write_that_changes_nothing_it_serves() -> None:
    policy = PolicyFields(approvals=1)
    moved = violations(policy, identity=USER, via="direct", candidates=[], replaces=True, moves=True)
    described = violations(policy, identity=USER, via="direct", candidates=[], replaces=True, moves=False)
    assert [v.rule for v in moved] == ["approvals"] and described == []


def test_under_require_rollout_no_direct_write_lands_while_a_rollout_runs() -> None:
    policy = PolicyFields(require_rollout=True)
    running = violations(policy, identity=USER, via="direct", candidates=[], replaces=True, rollout_running=True)
    idle = violations(policy, identity=USER, via="direct", candidates=[], replaces=True, moves=False)
    aborted = violations(policy, identity=USER, via="abort", candidates=[], replaces=True, rollout_running=True)
    assert [v.rule for v in running] == ["require_rollout"] and "running" in running[0].message
    assert idle == [] and aborted == []


@pytest.mark.parametrize("via", ["direct", "rollback", "promotion", "rollout"])
def test_an_alias_under_rules_cannot_serve_latest_by_any_write(via: str) -> None:
    from arca.domain.errors import ConflictError

    with pytest.raises(ConflictError):
        refuse_latest(PolicyFields(require_tags={"qa": "ok"}), Serving(1, "LATEST", 5), via=via, alias="prod")  # type: ignore[arg-type]
    refuse_latest(PolicyFields(allowed_principals=["*"]), Serving("LATEST"), via=via, alias="prod")  # type: ignore[arg-type]
    refuse_latest(PolicyFields(approvals=1), None, via="delete", alias="prod")
