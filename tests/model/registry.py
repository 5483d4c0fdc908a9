"""The reference model whole: content, versions and tags (spec.py), aliases, policies and promotions
(guards.py), retention (retention.py), over one artifact's state."""

from __future__ import annotations

from tests.model.guards import GuardRules
from tests.model.retention import RetentionRules


class Registry(GuardRules, RetentionRules):
    """One artifact as the contract describes it; each operation answers the Options the contract allows."""
