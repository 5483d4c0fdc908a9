"""Guarded promotion: an alias's policy, and promotions with their approvals (a mixin of `Client`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar
from urllib.parse import quote

from arca_client.calls.http import HttpCalls
from arca_client.decoding import Decoded


@dataclass(frozen=True)
class Approval:
    SCHEMA: ClassVar[tuple[str, ...]] = ("Approval",)
    by: str
    at: str


@dataclass(frozen=True)
class AliasPolicy(Decoded):
    """Every rule a write of the alias must pass. Empty `allowed_principals`: anyone may write it."""

    SCHEMA: ClassVar[tuple[str, ...]] = ("AliasPolicy",)
    name: str
    alias: str
    revision: int
    require_tags: dict[str, str] = field(default_factory=dict)
    require_attestations: list[str] = field(default_factory=list)
    require_soak: dict[str, Any] | None = None
    require_rollout: bool = False
    allowed_principals: list[str] = field(default_factory=list)
    approvals: int = 0
    updated_at: str | None = None
    updated_by: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class Promotion(Decoded):
    """A request to move an alias (`state` pending, applied, rejected or expired) and its approvals."""

    SCHEMA: ClassVar[tuple[str, ...]] = ("Promotion",)
    id: str
    name: str
    alias: str
    state: str
    version: int
    requested_by: str | None = None
    requested_at: str | None = None
    expires_at: str | None = None
    approvals: list[Approval] = field(default_factory=list)
    required_approvals: int = 0
    reason: str | None = None
    rollout: dict[str, Any] | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


def _path(name: str, alias: str, *suffix: str) -> str:
    return "/" + "/".join(("artifacts", quote(name, safe="/"), "aliases", alias, *suffix))


class GuardCalls(HttpCalls):
    """An alias's policy, and promotions with their approvals."""

    def set_policy(
        self,
        name: str,
        alias: str,
        *,
        require_tags: dict[str, str] | None = None,
        require_attestations: list[str] | None = None,
        require_soak: tuple[str, int] | None = None,
        require_rollout: bool = False,
        allowed_principals: list[str] | None = None,
        approvals: int = 0,
    ) -> AliasPolicy:
        """Set the alias's policy (replacing any). AccessDeniedError (PolicyViolation) when its current
        `allowed_principals` do not include the caller; ConflictError when the new ones would not (it would lock
        the caller out), or when the alias serves LATEST and the policy has rules besides `allowed_principals`;
        ValidationError naming `allowed_principals.N` for a glob that is not an ARN pattern (or a lone `*`)."""
        body: dict[str, Any] = {"require_rollout": require_rollout, "approvals": approvals}
        if require_tags:
            body["require_tags"] = dict(require_tags)
        if require_attestations:
            body["require_attestations"] = list(require_attestations)
        if require_soak is not None:
            body["require_soak"] = {"alias": require_soak[0], "seconds": require_soak[1]}
        if allowed_principals:
            body["allowed_principals"] = list(allowed_principals)
        data, _ = self._call("PUT", _path(name, alias, "policy"), body=body, idempotent=True)
        return AliasPolicy.from_dict(data)

    def get_policy(self, name: str, alias: str) -> AliasPolicy:
        """The alias's policy (NotFoundError when it has none)."""
        return AliasPolicy.from_dict(self._get(_path(name, alias, "policy")))

    def delete_policy(self, name: str, alias: str) -> None:
        self._call("DELETE", _path(name, alias, "policy"), idempotent=True)

    def request_promotion(
        self,
        name: str,
        alias: str,
        version: int,
        *,
        reason: str | None = None,
        steps: list[int] | None = None,
        interval_seconds: int | None = None,
        alarms: list[str] | None = None,
    ) -> Promotion:
        """Ask to move the alias to `version` (with `steps`: start that rollout). Pending while the policy asks for
        approvals, applied at once otherwise; AccessDeniedError (PolicyViolation, `details["violations"]`) when the
        policy refuses the version. Not retried after a lost answer (a second request would be a second one)."""
        body: dict[str, Any] = {"version": version}
        if reason is not None:
            body["reason"] = reason
        if steps:
            body["rollout"] = {"steps": list(steps), "interval_seconds": interval_seconds or 60, "alarms": alarms or []}
        data, _ = self._call("POST", _path(name, alias, "promotions"), body=body, idempotent=False)
        return Promotion.from_dict(data)

    def promotions(self, name: str, alias: str, *, state: str | None = None) -> Iterator[Promotion]:
        """The alias's promotions, newest first (every page, lazily)."""
        return self._pages(_path(name, alias, "promotions"), "promotions", Promotion.from_dict, {"state": state})

    def get_promotion(self, name: str, alias: str, promotion_id: str) -> Promotion:
        return Promotion.from_dict(self._get(_path(name, alias, "promotions", promotion_id)))

    def approve_promotion(self, name: str, alias: str, promotion_id: str, *, reason: str | None = None) -> Promotion:
        """Approve; the approval that reaches the policy's count applies the promotion (state `applied`).
        AccessDeniedError (PolicyViolation) for the requester under any session or qualifier (one principal), or
        a principal that approved already."""
        body = {"reason": reason} if reason is not None else {}
        data, _ = self._call(
            "POST", _path(name, alias, "promotions", promotion_id, "approve"), body=body, idempotent=False
        )
        return Promotion.from_dict(data)

    def reject_promotion(self, name: str, alias: str, promotion_id: str, *, reason: str | None = None) -> Promotion:
        body = {"reason": reason} if reason is not None else {}
        data, _ = self._call(
            "POST", _path(name, alias, "promotions", promotion_id, "reject"), body=body, idempotent=False
        )
        return Promotion.from_dict(data)
