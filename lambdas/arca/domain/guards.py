"""Guarded promotion, the pure part: an alias's policy, promotions, and the rules that judge an alias write.

`violations` returns every rule a write breaks (never only the first), so one refusal tells the caller all
there is to fix. Who may write is `allowed_principals` (globs over the caller's identity, `*` within one
segment of it); what may arrive is the other rules, judged only for a write that brings a new version in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, field_validator, model_validator

from arca.domain.errors import ValidationError
from arca.domain.names import validate_alias
from arca.domain.tags import MAX_TAG_VALUE, TAG_KEY_PATTERN

# Each required tag and attestation type is one condition of the alias transaction (TransactWriteItems holds 100).
MAX_REQUIRED = 10
MAX_PRINCIPALS = 20
MAX_APPROVALS = 5
# A pending promotion is answered as expired (and its item removed by the table's TTL) after this long.
PROMOTION_TTL_SECONDS = 7 * 24 * 3600
ATTESTATION_TYPE = r"^[a-z0-9][a-z0-9.-]{0,63}$"
# Which path a write came by: the rules it must pass depend on it (see `violations`).
Via = Literal["direct", "rollout", "promotion", "promotion-rollout", "rollback", "delete"]
PromotionState = Literal["pending", "applied", "rejected", "expired"]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)


class Soak(_Body):
    alias: StrictStr
    seconds: Annotated[StrictInt, Field(ge=1, le=365 * 86_400)]

    @field_validator("alias")
    @classmethod
    def _is_an_alias(cls, value: str) -> str:
        return validate_alias(value, field="require_soak.alias")


Glob = Annotated[StrictStr, Field(min_length=1, max_length=512)]
AttestationType = Annotated[StrictStr, Field(pattern=ATTESTATION_TYPE)]
TagValue = Annotated[StrictStr, Field(max_length=MAX_TAG_VALUE)]


class PolicyBody(_Body):
    """PUT …/aliases/{alias}/policy: every rule a write of the alias must pass (all optional)."""

    require_tags: Annotated[
        dict[Annotated[str, Field(pattern=TAG_KEY_PATTERN)], TagValue], Field(max_length=MAX_REQUIRED)
    ] = Field(default_factory=dict)
    require_attestations: Annotated[list[AttestationType], Field(max_length=MAX_REQUIRED)] = Field(default_factory=list)
    require_soak: Soak | None = None
    require_rollout: StrictBool = False
    allowed_principals: Annotated[list[Glob], Field(max_length=MAX_PRINCIPALS)] = Field(default_factory=list)
    approvals: Annotated[StrictInt, Field(ge=0, le=MAX_APPROVALS)] = 0


class PolicyFields(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)

    require_tags: dict[str, str] = Field(default_factory=dict)
    require_attestations: list[str] = Field(default_factory=list)
    require_soak: Soak | None = None
    require_rollout: bool = False
    allowed_principals: list[str] = Field(default_factory=list, description="globs; empty: anyone")
    approvals: int = 0


class AliasPolicy(PolicyFields):
    """An alias's policy as stored: its rules, and who set it when (`revision` counts its changes)."""

    name: str
    alias: str
    revision: int
    updated_at: str
    updated_by: str | None = None


class Approval(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)

    by: str
    at: str


class PromotionRollout(_Body):
    steps: Annotated[list[Annotated[StrictInt, Field(ge=1, le=99)]], Field(min_length=1, max_length=20)]
    interval_seconds: Annotated[StrictInt, Field(ge=1, le=86_400)]
    alarms: Annotated[list[Annotated[StrictStr, Field(min_length=1, max_length=255)]], Field(max_length=100)] = Field(
        default_factory=list
    )

    @model_validator(mode="after")
    def _steps_increase(self) -> PromotionRollout:
        if any(later <= earlier for earlier, later in zip(self.steps, self.steps[1:], strict=False)):
            raise ValidationError("rollout.steps: weights must be strictly increasing", field="rollout.steps")
        return self


class PromotionBody(_Body):
    """POST …/aliases/{alias}/promotions: move the alias to `version` (or start that rollout) once approved."""

    version: Annotated[StrictInt, Field(ge=1, le=999_999)]
    reason: Annotated[StrictStr, Field(max_length=512)] | None = None
    rollout: PromotionRollout | None = None


class DecisionBody(_Body):
    """POST …/promotions/{id}/approve or /reject."""

    reason: Annotated[StrictStr, Field(max_length=512)] | None = None


class Promotion(BaseModel):
    """A request to move an alias, and its approvals. `state` is computed: a pending one past `expires_at` is
    `expired`."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    id: str
    name: str
    alias: str
    state: PromotionState
    version: int
    reason: str | None = None
    rollout: PromotionRollout | None = None
    requested_by: str | None = None
    requested_at: str
    expires_at: str
    approvals: list[Approval] = Field(default_factory=list)
    required_approvals: int = 0
    decided_by: str | None = None
    decided_at: str | None = None
    decision_reason: str | None = None
    alias_revision: int | None = Field(None, description="the alias revision the promotion wrote (applied)")


class PromotionList(BaseModel):
    promotions: list[Promotion]
    next_token: str | None = None


class Violation(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)

    rule: str
    message: str


@dataclass(frozen=True)
class Candidate:
    """A version a write brings into the alias, with what the rules read of it."""

    version: int
    tags: dict[str, str] = field(default_factory=dict)
    attestations: tuple[str, ...] = ()
    # How long it has been the soak alias's primary without interruption; None: it is not its primary now.
    soaked_seconds: float | None = None


def _glob(pattern: str) -> re.Pattern[str]:
    """`*` is any run of characters within one segment (segments are separated by `:` and `/`)."""
    return re.compile("[^:/]*".join(re.escape(part) for part in pattern.split("*")))


def principal_allowed(globs: list[str], identity: str | None) -> bool:
    """Whether `identity` matches one of `globs` (an empty list allows anyone; no identity matches no glob)."""
    if not globs:
        return True
    return identity is not None and any(_glob(g).fullmatch(identity) for g in globs)


def principal_violation(policy: PolicyFields | None, identity: str | None, action: str) -> list[Violation]:
    if policy is None or principal_allowed(policy.allowed_principals, identity):
        return []
    who = identity or "an anonymous caller"
    return [
        Violation(
            rule="allowed_principals",
            message=f"{who} may not {action}: only {', '.join(policy.allowed_principals)} may",
        )
    ]


def violations(
    policy: PolicyFields | None, *, identity: str | None, via: Via, candidates: list[Candidate], replaces: bool
) -> list[Violation]:
    """Every rule of `policy` that a write by `identity`, coming `via` that path and bringing `candidates` in,
    breaks. `replaces`: the alias had a live primary before (a first target is not "a new version arriving
    through a rollout", since a rollout needs an alias to start from).

    A rollback or a deletion is judged by `allowed_principals` alone: the way back is never blocked.
    """
    found = principal_violation(policy, identity, "write this alias")
    if policy is None or via in ("rollback", "delete") or not candidates:
        return found
    numbers = ", ".join(_label(c) for c in candidates)
    missing_tags = []
    missing_types = []
    for c in candidates:
        lacks = [f"{k}={v}" for k, v in policy.require_tags.items() if c.tags.get(k) != v]
        if lacks:
            missing_tags.append(f"version {_label(c)} lacks {', '.join(lacks)}")
        absent = [t for t in policy.require_attestations if t not in c.attestations]
        if absent:
            missing_types.append(f"version {_label(c)} has no {' or '.join(absent)} attestation")
    if missing_tags:
        found.append(Violation(rule="require_tags", message="; ".join(missing_tags)))
    if missing_types:
        found.append(Violation(rule="require_attestations", message="; ".join(missing_types)))
    soak = policy.require_soak
    if soak is not None:
        short = [c for c in candidates if c.soaked_seconds is None or c.soaked_seconds < soak.seconds]
        for c in short:
            where = (
                f"is not the primary of {soak.alias!r}"
                if c.soaked_seconds is None
                else f"has been the primary of {soak.alias!r} for {int(c.soaked_seconds)} s"
            )
            found.append(
                Violation(
                    rule="require_soak",
                    message=f"version {_label(c)} {where}; {soak.seconds} s without interruption are required",
                )
            )
    if policy.require_rollout and replaces and via in ("direct", "promotion"):
        found.append(Violation(rule="require_rollout", message=f"version {numbers} may arrive only through a rollout"))
    if policy.approvals > 0 and via in ("direct", "rollout"):
        found.append(
            Violation(
                rule="approvals",
                message=f"this alias moves only through a promotion approved by {policy.approvals} other "
                f"identit{'y' if policy.approvals == 1 else 'ies'} (POST …/promotions)",
            )
        )
    return found


def _label(candidate: Candidate) -> str:
    return str(candidate.version) if candidate.version else "LATEST"


def soaked_seconds(runs: list[tuple[int | None, str]], version: int, now: datetime) -> float | None:
    """How long `version` has been the primary, from an alias's revisions newest first as (primary, updated_at),
    read until the run of `version` is interrupted (or as far as they go). None when it is not the primary now."""
    since: str | None = None
    for primary, updated_at in runs:
        if primary != version:
            break
        since = updated_at
    if since is None:
        return None
    return (now - datetime.fromisoformat(since.replace("Z", "+00:00"))).total_seconds()
