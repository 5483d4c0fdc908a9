"""Promotions: a request to move an alias (or start a rollout on it), approved by other identities.

The approval that reaches the policy's count applies the promotion in the same transaction as the alias write
(or the rollout's start): the promotion's item is put under the `seq` it was read at, so two approvals racing
for the last place cannot both apply it, and an approval never lands on a promotion rejected meanwhile. A
promotion whose target no longer passes the policy when it would apply is refused (403, nothing written) and
stays pending.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING

from arca.adapters.store.change import Change
from arca.adapters.store.guards import compact
from arca.domain.aggregates import AliasRecord
from arca.domain.errors import ConflictError, NotFoundError
from arca.domain.events import Change as Announced
from arca.domain.events import (
    PromotionApplied,
    PromotionApproved,
    PromotionRejected,
    PromotionRequested,
)
from arca.domain.guards import (
    PROMOTION_TTL_SECONDS,
    Approval,
    Promotion,
    PromotionBody,
    PromotionList,
    Via,
    Violation,
)
from arca.domain.models import RolloutBody
from arca.domain.moments import from_iso, to_iso
from arca.domain.principals import principal
from arca.services.guards import refuse

if TYPE_CHECKING:
    from arca.services.aliases import AliasWriter
    from arca.services.rollouts import RolloutStarter


def new_promotion_id() -> str:
    """24 hex digits: the time in microseconds, then randomness, so ids sort by request time."""
    return f"{time.time_ns() // 1000:014x}{secrets.token_hex(5)}"


class Promotions:
    def __init__(
        self,
        writer: AliasWriter,
        starter: RolloutStarter,
        *,
        new_id: Callable[[], str] = new_promotion_id,
    ) -> None:
        self.writer = writer
        self.guards = writer.guards
        self.store = writer.guards.store
        self.reading = writer.reading
        self.retry = writer.policy
        self.starter = starter
        self.new_id = new_id

    def request(self, name: str, alias: str, body: PromotionBody, *, identity: str | None) -> Promotion:
        """201: pending while approvals are required, applied at once otherwise. 403 with every violation when
        the target does not pass the policy now (nothing written); 404 / 409 as an alias write."""
        promotion_id = self.new_id()

        def attempt() -> Promotion:
            self.reading.live_latest(name)
            policy = self.guards.allowed(name, alias, identity, "request promotions of this alias")
            moment = self.retry.clock()
            promotion = Promotion(
                id=promotion_id,
                name=name,
                alias=alias,
                state="pending",
                version=body.version,
                reason=body.reason,
                rollout=body.rollout,
                requested_by=identity,
                requested_at=to_iso(moment),
                expires_at=to_iso(moment + timedelta(seconds=PROMOTION_TTL_SECONDS)),
                required_approvals=policy.approvals if policy else 0,
            )
            # The requester asked, whoever writes the alias (a rollout writes it as `rollout:<id>`).
            requested = Announced(self._detail(promotion), body.version, alias=alias, by=identity)
            if promotion.required_approvals == 0:
                return self._apply(promotion, 0, [requested], by=identity)
            # Judged now too: a request the policy would refuse whatever the approvals is refused at once.
            old = self.writer.alias(name, alias)
            self.writer.judge(self._target(promotion, old), old, identity=identity, via=self._via(promotion))
            self._put(promotion, 0, requested, by=identity, now=promotion.requested_at)
            return promotion

        return self.retry.compare_and_set(attempt)

    def get(self, name: str, alias: str, promotion_id: str) -> Promotion:
        return self._read(name, alias, promotion_id)[0]

    def listing(self, name: str, alias: str, *, state: str | None, limit: int, token: str | None) -> PromotionList:
        self.reading.live_latest(name)
        found, next_token = self.store.promotions_page(
            name, alias, state=state, limit=limit, token=token, now=self.retry.now()
        )
        return PromotionList(promotions=found, next_token=next_token)

    def approve(
        self, name: str, alias: str, promotion_id: str, *, identity: str | None, reason: str | None
    ) -> Promotion:
        """Add `identity`'s approval; the one that reaches the count applies the promotion. 403 for the requester,
        a second approval by one principal, a principal the policy does not allow, or a target that no longer
        passes the policy; 409 when the promotion is not pending. Callers are compared as principals
        (arca.domain.principals): two sessions of one role are one approver, and the requester."""

        def attempt() -> Promotion:
            seen, seq = self._pending(name, alias, promotion_id)
            policy = self.guards.allowed(name, alias, identity, "approve promotions of this alias")
            found: list[Violation] = []
            who = principal(identity)
            if who is None:
                found.append(Violation(rule="approvals", message="an anonymous caller cannot approve a promotion"))
            elif who == principal(seen.requested_by):
                found.append(
                    Violation(
                        rule="approvals",
                        message=f"the requester cannot approve their own promotion ({identity} is the principal "
                        f"{who}, who requested it)",
                    )
                )
            elif any(principal(a.by) == who for a in seen.approvals):
                found.append(Violation(rule="approvals", message=f"{who} has approved this promotion already"))
            refuse(found)
            now = self.retry.now()
            approvals = [*seen.approvals, Approval(by=identity or "", at=now)]
            required = policy.approvals if policy else 0
            promotion = seen.model_copy(update={"approvals": approvals, "required_approvals": required})
            detail = PromotionApproved(id=seen.id, by=identity, approvals=len(approvals), reason=reason)
            approved = Announced(
                detail, seen.version, alias=alias, by=identity
            )  # the alias is written as the requester
            if len(approvals) >= required:
                return self._apply(promotion, seq, [approved], by=identity)
            self._put(promotion, seq, approved, by=identity, now=now)
            return promotion

        return self.retry.compare_and_set(attempt)

    def reject(
        self, name: str, alias: str, promotion_id: str, *, identity: str | None, reason: str | None
    ) -> Promotion:
        """End a pending promotion as rejected (409 when it is not pending; 403 for a principal not allowed)."""

        def attempt() -> Promotion:
            seen, seq = self._pending(name, alias, promotion_id)
            self.guards.allowed(name, alias, identity, "reject promotions of this alias")
            now = self.retry.now()
            promotion = seen.model_copy(
                update={"state": "rejected", "decided_by": identity, "decided_at": now, "decision_reason": reason}
            )
            rejected = Announced(PromotionRejected(id=seen.id, by=identity, reason=reason), seen.version, alias=alias)
            self._put(promotion, seq, rejected, by=identity, now=now)
            return promotion

        return self.retry.compare_and_set(attempt)

    def _read(self, name: str, alias: str, promotion_id: str) -> tuple[Promotion, int]:
        self.reading.live_latest(name)
        found = self.store.promotion(name, alias, promotion_id, now=self.retry.now())
        if found is None:
            raise NotFoundError(
                f"promotion_id {promotion_id} names no promotion of alias {alias!r}", field="promotion_id"
            )
        return found

    def _pending(self, name: str, alias: str, promotion_id: str) -> tuple[Promotion, int]:
        promotion, seq = self._read(name, alias, promotion_id)
        if promotion.state != "pending":
            raise ConflictError(f"promotion {promotion_id} is {promotion.state}, not pending", field="promotion_id")
        return promotion, seq

    def _put(self, promotion: Promotion, seq: int, announced: Announced, *, by: str | None, now: str) -> None:
        """A promotion change alone (requested, an approval short of the count, rejected), under the `seq` read
        and while the artifact is live."""
        change = Change(promotion.name, by=by, now=now)
        self.store.stage_promotion(change, promotion, seen=seq, ttl=self._ttl(promotion))
        self.store.require_live(change)
        change.announce(announced)
        self.store.commit(change)

    def _apply(self, promotion: Promotion, seq: int, changes: list[Announced], *, by: str | None) -> Promotion:
        """The alias write (or the rollout's start) and the promotion as applied, in one change; the alias
        revision is the requester's, its reason names the approvers."""
        name, alias = promotion.name, promotion.alias
        approvers = ", ".join(a.by for a in promotion.approvals)
        why = f"promotion {promotion.id}" + (f" approved by {approvers}" if approvers else "")
        if promotion.reason:
            why += f": {promotion.reason}"
        old = self.writer.alias(name, alias)
        now = self.retry.now()
        if promotion.rollout is not None:
            if old is None or old.deleted:
                raise NotFoundError(f"artifact {name!r} has no alias {alias!r}")
            body = RolloutBody(
                version=promotion.version,
                steps=promotion.rollout.steps,
                interval_seconds=promotion.rollout.interval_seconds,
                alarms=promotion.rollout.alarms,
                reason=why,
            )
            change, rollout = self.starter.stage(
                name,
                alias,
                body,
                identity=promotion.requested_by,
                via="promotion-rollout",
                rollout_id=self.starter.new_id(),
            )
            revision = rollout.alias_revision
            self._stage_applied(change, promotion, seq, revision, changes, now, by)
            self.starter.launch(rollout)
        else:
            new = self.writer.compose(
                name, alias, self._spec(promotion, old), old, reason=why, identity=promotion.requested_by
            )
            guard = self.writer.judge(new, old, identity=by, via="promotion")
            change, _ = self.writer.stage(new, old, action="set", guard=guard)
            revision = new.revision
            self._stage_applied(change, promotion, seq, revision, changes, now, by)
        self.writer.commit(change)
        return self._applied_entity(promotion, revision, now, by)

    def _stage_applied(
        self,
        change: Change,
        promotion: Promotion,
        seq: int,
        revision: int,
        changes: list[Announced],
        now: str,
        by: str | None,
    ) -> None:
        """The promotion as applied, and its events (after the alias's and the rollout's), in the alias's change."""
        applied = self._applied_entity(promotion, revision, now, by)
        self.store.stage_promotion(change, applied, seen=seq, ttl=self._ttl(promotion))
        detail = PromotionApplied(id=promotion.id, revision=revision, approved_by=[a.by for a in promotion.approvals])
        change.announce(*changes, Announced(detail, promotion.version, alias=promotion.alias, by=by))

    @staticmethod
    def _applied_entity(promotion: Promotion, revision: int, now: str, by: str | None) -> Promotion:
        return promotion.model_copy(
            update={"state": "applied", "decided_at": now, "decided_by": by, "alias_revision": revision}
        )

    def _target(self, promotion: Promotion, old: AliasRecord | None) -> AliasRecord:
        """The alias as the promotion would leave it (its first rollout step, for a rollout)."""
        return self.writer.compose(
            promotion.name, promotion.alias, self._spec(promotion, old), old, reason=None, identity=None
        )

    @staticmethod
    def _spec(promotion: Promotion, old: AliasRecord | None) -> dict[str, object]:
        live = old is not None and not old.deleted
        if promotion.rollout is not None and live and old is not None:
            return {
                "version": old.version,
                "secondary_version": promotion.version,
                "secondary_version_weight": promotion.rollout.steps[0],
                "description": old.description,
            }
        return {"version": promotion.version, "description": old.description if live and old else None}

    @staticmethod
    def _via(promotion: Promotion) -> Via:
        return "promotion-rollout" if promotion.rollout is not None else "promotion"

    @staticmethod
    def _ttl(promotion: Promotion) -> int:
        return int(from_iso(promotion.expires_at).timestamp())

    @staticmethod
    def _detail(promotion: Promotion) -> PromotionRequested:
        return PromotionRequested(
            id=promotion.id,
            required_approvals=promotion.required_approvals,
            reason=promotion.reason,
            rollout=None if promotion.rollout is None else compact(promotion.rollout.model_dump()),
        )
