"""Guarded promotion, the pure part: an alias's policy, promotions, and the rules that judge an alias write.

`violations` returns every rule a write breaks (never only the first), so one refusal tells the caller all
there is to fix. Who may write is `allowed_principals` (globs over the caller's principal, arca.domain.principals);
what the alias may serve is the other rules, judged for every write that changes it: a version gaining share of
its traffic (a new primary, a secondary new to it or with a higher weight, a rollout's version) is judged by the
rules on versions, and any move by `approvals` and `require_rollout`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    field_validator,
    model_validator,
)

from arca.domain.errors import ConflictError, ValidationError
from arca.domain.moments import from_iso
from arca.domain.names import validate_alias
from arca.domain.principals import check_glob, matches
from arca.domain.tags import MAX_TAG_VALUE, TAG_KEY_PATTERN
from arca.domain.text import AlarmName, Reason

# Each required tag and attestation type is one condition of the alias transaction (TransactWriteItems holds 100).
MAX_REQUIRED = 10
MAX_PRINCIPALS = 20
MAX_APPROVALS = 5
# A pending promotion is answered as expired (and its item removed by the table's TTL) after this long.
PROMOTION_TTL_SECONDS = 7 * 24 * 3600
ATTESTATION_TYPE = r"^[a-z0-9][a-z0-9.+_/-]{0,127}$"
# Which path a write came by: the rules it must pass depend on it (see `violations`).
Via = Literal["direct", "rollout", "promotion", "promotion-rollout", "rollback", "delete", "abort"]
# The ways back: judged by `allowed_principals` alone (an abort is a rollout's way back).
WAYS_BACK = ("rollback", "delete", "abort")
ROLLOUTS = ("rollout", "promotion-rollout")
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


Glob = Annotated[StrictStr, Field(min_length=1, max_length=512), AfterValidator(check_glob)]
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
    allowed_principals: Annotated[
        list[Glob],
        Field(
            max_length=MAX_PRINCIPALS,
            description="ARN patterns of the principals who may write the alias, `*` within one `:`/`/` segment, "
            "a lone `*` anyone; an assumed role's sessions are the role (`arn:aws:sts::ACCOUNT:assumed-role/NAME`, "
            "`/*` after it means the same); must match the writer",
        ),
    ] = Field(default_factory=list)
    approvals: Annotated[StrictInt, Field(ge=0, le=MAX_APPROVALS)] = 0

    @field_validator("allowed_principals")
    @classmethod
    def _once_each(cls, value: list[str]) -> list[str]:
        return list(dict.fromkeys(value))  # two spellings of one glob, once canonical, are one glob


class PolicyFields(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)

    require_tags: dict[str, str] = Field(default_factory=dict)
    require_attestations: list[str] = Field(default_factory=list)
    require_soak: Soak | None = None
    require_rollout: bool = False
    allowed_principals: list[str] = Field(default_factory=list, description="globs; empty: anyone")
    approvals: int = 0

    @property
    def rules(self) -> list[str]:
        """The rules besides `allowed_principals` this policy holds (what an alias on LATEST cannot carry)."""
        found = {
            "require_tags": bool(self.require_tags),
            "require_attestations": bool(self.require_attestations),
            "require_soak": self.require_soak is not None,
            "require_rollout": self.require_rollout,
            "approvals": self.approvals > 0,
        }
        return [rule for rule, held in found.items() if held]


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
    alarms: Annotated[list[AlarmName], Field(max_length=100)] = Field(default_factory=list)

    @model_validator(mode="after")
    def _steps_increase(self) -> PromotionRollout:
        if any(later <= earlier for earlier, later in zip(self.steps, self.steps[1:], strict=False)):
            raise ValidationError("rollout.steps: weights must be strictly increasing", field="rollout.steps")
        return self


class PromotionBody(_Body):
    """POST …/aliases/{alias}/promotions: move the alias to `version` (or start that rollout) once approved."""

    version: Annotated[StrictInt, Field(ge=1, le=999_999)]
    reason: Reason | None = None
    rollout: PromotionRollout | None = None


class DecisionBody(_Body):
    """POST …/promotions/{id}/approve or /reject."""

    reason: Reason | None = None


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
    model_config = ConfigDict(defer_build=True)

    promotions: list[Promotion]
    next_token: str | None = None


class Violation(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)

    rule: str
    message: str


@dataclass(frozen=True)
class Candidate:
    """A version a write makes serve more of the alias (see `gaining`), with what the rules read of it."""

    version: int
    tags: dict[str, str] = field(default_factory=dict)
    attestations: tuple[str, ...] = ()
    # How long it has been the soak alias's primary without interruption; None: it is not its primary now.
    soaked_seconds: float | None = None


def principal_allowed(globs: list[str], identity: str | None) -> bool:
    """Whether the principal of `identity` matches one of `globs` (an empty list, or a lone `*`, allows anyone;
    no identity matches no other glob)."""
    return not globs or any(matches(g, identity) for g in globs)


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


Ref = int | str  # a version number, or "LATEST"


@dataclass(frozen=True)
class Serving:
    """What an alias serves: its primary, and its secondary with the secondary's weight (percent)."""

    primary: Ref | None
    secondary: Ref | None = None
    weight: int = 0

    @property
    def targets(self) -> tuple[Ref, ...]:
        return tuple(t for t in (self.primary, self.secondary) if t is not None)


def gaining(before: Serving | None, after: Serving | None) -> list[Ref]:
    """The targets of `after` that gain a role in the alias over `before` (None: the alias is absent or deleted):
    a new primary, a secondary new to the alias (even at weight 0), the secondary with a higher weight. The
    primary that stays the primary gains nothing when a canary shrinks or goes (that is the way back), nor does a
    primary demoted to secondary."""
    if after is None:
        return []
    found: list[Ref] = []
    if after.primary is not None and (before is None or after.primary != before.primary):
        found.append(after.primary)
    secondary = after.secondary
    if secondary is None or secondary == after.primary:
        return found
    new = before is None or secondary not in before.targets
    if new or (before is not None and secondary == before.secondary and after.weight > before.weight):
        found.append(secondary)
    return found


def refuse_latest(policy: PolicyFields | None, after: Serving | None, *, via: Via, alias: str) -> None:
    """ConflictError when a policy with rules besides `allowed_principals` would guard an alias serving LATEST:
    LATEST changes with every `PUT latest`, so no rule judges what it will serve. A deletion or an abort (which
    keeps the primary) is always allowed."""
    if policy is None or not policy.rules or after is None or via in ("delete", "abort"):
        return
    if "LATEST" not in after.targets:
        return
    rules = ", ".join(policy.rules)
    if via == "rollback":
        message = (
            f"that revision of {alias!r} pointed at LATEST, which no longer holds what it served; the alias's "
            f"policy ({rules}) cannot judge LATEST"
        )
    else:
        message = (
            f"alias {alias!r} has a policy with {rules}, so it cannot point at LATEST (what LATEST serves changes "
            "with every PUT latest, unjudged); point it at a version"
        )
    raise ConflictError(message, field="to_revision" if via == "rollback" else "version")


def violations(
    policy: PolicyFields | None,
    *,
    identity: str | None,
    via: Via,
    candidates: list[Candidate],
    replaces: bool,
    moves: bool = True,
    rollout_running: bool = False,
) -> list[Violation]:
    """Every rule of `policy` that a write by `identity`, coming `via` that path, breaks. `candidates` are the
    versions it makes serve more of the alias (gaining), `moves` whether it changes what the alias serves at all,
    `replaces` whether the alias had a live primary before (a first target is not "a new version arriving through
    a rollout", since a rollout needs an alias to start from), `rollout_running` whether a rollout of the alias
    runs (read only under `require_rollout`).

    A rollback, a deletion or an abort is judged by `allowed_principals` alone: the way back is never blocked.
    Under `approvals`, only a promotion moves the alias; under `require_rollout`, a version gains share only
    through a rollout, and no direct write lands while one runs (it would end the rollout).
    """
    found = principal_violation(policy, identity, "write this alias")
    if policy is None or via in WAYS_BACK:
        return found
    numbers = ", ".join(str(c.version) for c in candidates)
    missing_tags = []
    missing_types = []
    for c in candidates:
        lacks = [f"{k}={v}" for k, v in policy.require_tags.items() if c.tags.get(k) != v]
        if lacks:
            missing_tags.append(f"version {c.version} lacks {', '.join(lacks)}")
        absent = [t for t in policy.require_attestations if t not in c.attestations]
        if absent:
            missing_types.append(f"version {c.version} has no {' or '.join(absent)} attestation")
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
                    message=f"version {c.version} {where}; {soak.seconds} s without interruption are required",
                )
            )
    if policy.require_rollout and via in ("direct", "promotion"):
        if rollout_running:
            found.append(
                Violation(
                    rule="require_rollout",
                    message="a rollout of this alias is running: only its steps move the alias until it ends "
                    "(abort it first: DELETE …/rollout)",
                )
            )
        elif replaces and candidates:
            found.append(
                Violation(rule="require_rollout", message=f"version {numbers} may gain traffic only through a rollout")
            )
    if policy.approvals > 0 and via in ("direct", "rollout") and moves:
        found.append(
            Violation(
                rule="approvals",
                message=f"this alias moves only through a promotion approved by {policy.approvals} other "
                f"principal{'' if policy.approvals == 1 else 's'} (POST …/promotions)",
            )
        )
    return found


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
    return (now - from_iso(since)).total_seconds()
