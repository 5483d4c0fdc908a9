"""The contract rules that today's code does not keep yet, by name: the one place to flip when a fix merges.

While a rule is listed here, the state machine also accepts the answer the unfixed code gives for it (and
follows it), and the regression tests of that rule are expected to fail (`xfail(strict=True)`): once the fix
merges they pass, the strict xfail reports it, and the rule's line is removed here, which makes the state
machine strict about it again.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

PENDING: dict[str, str] = {
    "judge-every-change": "a policy judges every change of what an alias serves (a version gaining primary, "
    "a secondary's weight raised), and under approvals only an approved promotion moves the alias",
    "latest-alias": "an alias on LATEST takes no rule but allowed_principals, and a guarded alias is never "
    "pointed at LATEST, by a rollback neither (409)",
    "no-lock-out": "a policy whose allowed_principals would not match the caller is a 409; a lone * means anyone",
    "one-principal": "approvals compare principals: the sessions of one assumed role are that role, and nobody "
    "approves their own request",
    "keep-tags-empty": "keep_tags takes empty values (k:)",
    "expired-no-tags": "an expired version carries no tags, a tag write on it is a 409, and no search answers it",
    "deleted-alias-window": "a deleted alias's rollback window still protects its versions",
    "approved-by": "a promotion.approved event's by is the approver",
}


def pending(rule: str) -> bool:
    """Whether `rule` is still pending. ARCA_MODEL_STRICT holds the code to the rules it names (comma-separated,
    or `all`): a run then shows what the unfixed code breaks, and those rules' regression tests fail."""
    if rule not in PENDING and rule not in FIXED:
        raise KeyError(f"no such rule: {rule}")
    strict = os.environ.get("ARCA_MODEL_STRICT", "")
    return rule in PENDING and strict != "all" and rule not in strict.split(",")


# Rules whose fixes have merged (moved here from PENDING), so that a test naming one still resolves.
FIXED: set[str] = set()


def until_fixed(rule: str) -> Any:
    """The mark of a regression test of `rule`: a strict xfail while the rule is pending, nothing once fixed."""
    if pending(rule):
        return pytest.mark.xfail(strict=True, reason=f"pending fix: {PENDING[rule]}")
    return pytest.mark.usefixtures()
