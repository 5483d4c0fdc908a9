"""Retention: the policy, what is protected, and the one decision preview and apply both make. Pure, no I/O.

`decide` is the only place that says keep, delete or expire: the preview shows its answers and apply acts on
them, so the two cannot disagree. Whatever the policy, a version is never deleted or expired while it is a
protected root: an alias's target (primary or secondary), a running rollout's version, a version in an
alias's last `rollback_window` revisions, or a version holding LATEST's content.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, field_validator

from arca.domain.moments import to_iso
from arca.domain.tags import parse_filter

MAX_KEEP_TAGS = 20
DEFAULT_ROLLBACK_WINDOW = 5
DEFAULT_EXPIRE_AFTER_DAYS = 30

Action = Literal["keep", "delete", "expire"]


class RetentionBody(BaseModel):
    """`PUT …/retention`: validated field by field (a 400 names the field, nothing is written)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)

    keep_last: Annotated[StrictInt, Field(ge=1, le=10_000, description="the newest live versions kept")]
    keep_days: (
        Annotated[StrictInt, Field(ge=0, le=36_500, description="versions younger than this are kept")] | None
    ) = None
    keep_tags: Annotated[
        list[Annotated[StrictStr, Field(max_length=400)]],
        Field(max_length=MAX_KEEP_TAGS, description="`k:v` tags that keep a version"),
    ] = Field(default_factory=list)
    rollback_window: Annotated[
        StrictInt, Field(ge=0, le=100, description="each alias's last revisions whose versions are kept")
    ] = DEFAULT_ROLLBACK_WINDOW
    expire_after_days: Annotated[
        StrictInt, Field(ge=0, le=3_650, description="days after a soft delete that a version expires")
    ] = DEFAULT_EXPIRE_AFTER_DAYS

    @field_validator("keep_tags")
    @classmethod
    def _tags(cls, tags: list[str]) -> list[str]:
        for index, tag in enumerate(tags):
            parse_filter(tag, f"keep_tags.{index}")  # `k:` keeps versions tagged k with an empty value
        return tags


class RetentionPolicy(RetentionBody):
    """A stored policy: the body as written, and when and by whom."""

    model_config = ConfigDict(extra="ignore", strict=False, frozen=True, defer_build=True)

    name: str
    updated_at: str
    updated_by: str | None = None

    def tag_pairs(self) -> list[tuple[str, str, str]]:
        """(key, value, the tag as written) of `keep_tags`."""
        return [(*parse_filter(tag), tag) for tag in self.keep_tags]


class Planned(BaseModel):
    """One row of a preview: what retention does to a version now, and every reason it is kept."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    version: int
    action: Action
    reasons: list[str]
    deleted: bool = Field(False, description="soft-deleted already (it can only be kept or expired)")


class Preview(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)

    name: str
    versions: list[Planned]
    next_token: str | None = None


class Applied(BaseModel):
    """What one apply request did; `next_token` is set while versions remain: send it again until null."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    name: str
    deleted: list[int]
    expired: list[int]
    next_token: str | None = None


@dataclass(frozen=True)
class Facts:
    """What the decision needs of one version."""

    version: int
    sha256: str
    created_at: str
    deleted: bool
    deleted_at: str | None
    tags: Mapping[str, str]
    aliases: tuple[str, ...] = ()  # the aliases that pin it (`pinned_by`): the deletion's condition checks these
    expired: bool = False


@dataclass
class Roots:
    """The protected roots, read once per request: reasons by version number, and LATEST's content."""

    reasons: dict[int, list[str]] = field(default_factory=dict)
    latest_sha256: str | None = None

    def protect(self, version: int | None, reason: str) -> None:
        if version is None:
            return
        found = self.reasons.setdefault(version, [])
        if reason not in found:
            found.append(reason)


def roots_of(
    *,
    aliases: Iterable[tuple[str, int | None, int | None]],
    rollouts: Iterable[tuple[str, int | None]],
    history: Iterable[tuple[str, Iterable[int | None]]],
    latest_sha256: str | None,
) -> Roots:
    """Roots from (alias, primary, secondary), (alias, running rollout's version) and (alias, versions of its
    last revisions). Reasons are listed aliases first, then rollouts, then history."""
    roots = Roots(latest_sha256=latest_sha256)
    for alias, primary, secondary in aliases:
        roots.protect(primary, f"alias:{alias}")
        roots.protect(secondary, f"alias:{alias}:secondary")
    for alias, version in rollouts:
        roots.protect(version, f"rollout:{alias}")
    for alias, versions in history:
        for version in versions:
            roots.protect(version, f"history:{alias}")
    return roots


def decide(facts: Facts, *, live_rank: int | None, policy: RetentionPolicy, roots: Roots, now: datetime) -> Planned:
    """The one decision. `live_rank` is the version's place among live versions, newest first (1-based; None for
    a soft-deleted one).

    A live version is kept for each reason that holds (roots, `newest:<keep_last>`, `age:<keep_days>`,
    `tag:k:v`, `latest`) and soft-deleted when none does. A soft-deleted version is expired once
    `expire_after_days` have passed since its deletion, unless a root protects it (a rollback must be able to
    restore it); otherwise it is kept.
    """
    protected = list(roots.reasons.get(facts.version, ()))
    for alias in facts.aliases:  # pinned since the roots were read: still an alias's target
        if f"alias:{alias}" not in protected and f"alias:{alias}:secondary" not in protected:
            protected.insert(0, f"alias:{alias}")
    if facts.deleted:
        reasons = protected + (["latest"] if facts.sha256 == roots.latest_sha256 else [])
        expired_before = to_iso(now - timedelta(days=policy.expire_after_days))
        due = facts.deleted_at is not None and facts.deleted_at <= expired_before
        action: Action = "expire" if due and not reasons else "keep"
        return Planned(version=facts.version, action=action, reasons=reasons, deleted=True)
    reasons = [r for r in protected if not r.startswith("history:")]
    if live_rank is not None and live_rank <= policy.keep_last:
        reasons.append(f"newest:{policy.keep_last}")
    if policy.keep_days is not None and facts.created_at > to_iso(now - timedelta(days=policy.keep_days)):
        reasons.append(f"age:{policy.keep_days}")
    reasons += [f"tag:{written}" for key, value, written in policy.tag_pairs() if facts.tags.get(key) == value]
    reasons += [r for r in protected if r.startswith("history:")]
    if facts.sha256 == roots.latest_sha256:
        reasons.append("latest")
    return Planned(version=facts.version, action="keep" if reasons else "delete", reasons=reasons)
