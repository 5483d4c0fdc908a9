"""The state machines: the whole registry (`ArcaMachine`), and its guarded promotion alone (`GuardMachine`,
the steps on content, versions, tags, aliases, policies and promotions), so that a short run reaches
approvals as often as a long one of the whole would."""

from __future__ import annotations

from tests.model.guard_steps import GuardSteps
from tests.model.retention_steps import RetentionSteps
from tests.model.steps import World

__all__ = ["ArcaMachine", "GuardMachine", "World"]


class ArcaMachine(GuardSteps, RetentionSteps):
    """Every step."""


class GuardMachine(GuardSteps):
    """Content, versions, tags, aliases, policies, promotions."""
