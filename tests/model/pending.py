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

PENDING: dict[str, str] = {}


def pending(rule: str) -> bool:
    """Whether `rule` is still pending. ARCA_MODEL_STRICT holds the code to the rules it names (comma-separated,
    or `all`): a run then shows what the unfixed code breaks, and those rules' regression tests fail."""
    if rule not in PENDING and rule not in FIXED:
        raise KeyError(f"no such rule: {rule}")
    strict = os.environ.get("ARCA_MODEL_STRICT", "")
    return rule in PENDING and strict != "all" and rule not in strict.split(",")


# Rules whose fixes have merged (moved here from PENDING), so that a test naming one still resolves.
FIXED: set[str] = {
    "judge-every-change",
    "latest-alias",
    "no-lock-out",
    "one-principal",
    "keep-tags-empty",
    "expired-no-tags",
    "deleted-alias-window",
    "approved-by",
}


def until_fixed(rule: str) -> Any:
    """The mark of a regression test of `rule`: a strict xfail while the rule is pending, nothing once fixed."""
    if pending(rule):
        return pytest.mark.xfail(strict=True, reason=f"pending fix: {PENDING[rule]}")
    return lambda test: test
