"""Principals, pure: the sessions of one assumed role are that role, a direct invocation ignores its qualifier,
and `allowed_principals` globs are ARN patterns read as the principals they spell."""

from __future__ import annotations

import pytest
from pydantic import ValidationError as PydanticError

from arca.domain.guards import PolicyBody, principal_allowed
from arca.domain.principals import check_glob, principal

ROLE = "arn:aws:sts::123456789012:assumed-role/deployer"
FUNCTION = "direct:arn:aws:lambda:eu-west-1:123456789012:function:arca-alias"


@pytest.mark.parametrize(
    ("identity", "expected"),
    [
        (f"{ROLE}/ci-run-1", ROLE),
        (f"{ROLE}/ci-run-1-approve", ROLE),
        (
            "arn:aws-cn:sts::123456789012:assumed-role/deployer/alice@example.com",
            "arn:aws-cn:sts::123456789012:assumed-role/deployer",
        ),
        (f"{FUNCTION}:live", FUNCTION),
        (f"{FUNCTION}:7", FUNCTION),
        (FUNCTION, FUNCTION),
        ("arn:aws:iam::123456789012:user/team/alice", "arn:aws:iam::123456789012:user/team/alice"),
        ("arn:aws:sts::123456789012:federated-user/bob", "arn:aws:sts::123456789012:federated-user/bob"),
        ("us-east-1:0f1e2d3c", "us-east-1:0f1e2d3c"),
        (None, None),
    ],
)
def test_a_principal_is_the_role_of_a_session_and_the_function_without_its_qualifier(
    identity: str | None, expected: str | None
) -> None:
    assert principal(identity) == expected


@pytest.mark.parametrize(
    ("glob", "identity", "allowed"),
    [
        (f"{ROLE}/*", f"{ROLE}/ci-run-1", True),  # every session of the role: the role
        (ROLE, f"{ROLE}/anything", True),
        ("arn:aws:sts::123456789012:assumed-role/deploy*", f"{ROLE}/x", True),
        ("arn:aws:sts::*:assumed-role/*/*", f"{ROLE}/x", True),
        ("arn:aws:sts::123456789012:assumed-role/other", f"{ROLE}/x", False),
        (FUNCTION, f"{FUNCTION}:live", True),
        (f"{FUNCTION}:live", f"{FUNCTION}:3", True),  # a stored glob's qualifier means nothing either
        # a glob naming sessions, stored before globs were checked, is the role it names
        (f"{ROLE}/ci-*", f"{ROLE}/alice", True),
    ],
)
def test_globs_match_principals(glob: str, identity: str, allowed: bool) -> None:
    assert principal_allowed([glob], identity) is allowed


@pytest.mark.parametrize(
    ("glob", "stored"),
    [
        ("*", "*"),
        ("arn:aws:iam::123456789012:user/alice", "arn:aws:iam::123456789012:user/alice"),
        ("arn:aws:iam::*:user/*", "arn:aws:iam::*:user/*"),
        (f"{ROLE}/*", ROLE),
        ("arn:aws:sts::*:assumed-role/*/*", "arn:aws:sts::*:assumed-role/*"),
        (f"{FUNCTION}:live", FUNCTION),
    ],
)
def test_a_glob_is_stored_as_the_principal_it_spells(glob: str, stored: str) -> None:
    assert check_glob(glob) == stored


@pytest.mark.parametrize(
    ("glob", "why"),
    [
        (" arn:aws:iam::123456789012:user/alice", "whitespace"),
        ("arn:aws:iam::123456789012:user/alice ", "whitespace"),
        ("arn:aws:iam::123456789012:user/al\tice", "whitespace"),
        ("ARN:aws:iam::123456789012:user/alice", "lower case"),
        ("arn:AWS:iam::123456789012:user/alice", "lower case"),
        ("arn:aws:IAM::123456789012:user/alice", "lower case"),
        ("DIRECT:arn:aws:lambda:eu-west-1:1:function:f", "lower case"),
        ("arn:aws:iam::123456789012:user/alice/", "empty segment"),
        ("arn:aws:iam::123456789012:user//alice", "empty segment"),
        ("arn:aws:iam::12345678901x:user/alice", "account"),
        ("arn:aws:iam::123456789012:user/al'ice", "character"),
        ("arn:aws:iam::123456789012:", "no resource"),
        ("nobody", "ARN pattern"),
        ("arca:*", "ARN pattern"),
        ("**", "ARN pattern"),
        (f"{ROLE}/ci-*", "session"),
        (f"{ROLE}/alice", "session"),
    ],
)
def test_a_glob_no_caller_can_have_or_that_names_sessions_is_refused_saying_why(glob: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        check_glob(glob)


def test_a_policy_body_names_the_bad_glob_and_keeps_one_of_two_spellings() -> None:
    with pytest.raises(PydanticError) as refused:
        PolicyBody.model_validate({"allowed_principals": ["arn:aws:iam::1:user/a", "arn:aws:iam::1:user/a/"]})
    assert refused.value.errors()[0]["loc"] == ("allowed_principals", 1)
    body = PolicyBody.model_validate({"allowed_principals": [f"{ROLE}/*", ROLE]})
    assert body.allowed_principals == [ROLE]
