"""The model's aliases, alias policies and promotions, as the contract states them (its fourth stage included).

What a policy judges: every change of what an alias serves. A version *gaining primary*, a version *arriving*
as secondary, and the secondary's *weight raised* are judged for certain; a change that only shrinks what the
secondary serves, a demoted primary, or a write that changes nothing are open readings (judged or not, both
allowed). Under `approvals` only an approved promotion moves the alias; rollbacks and deletes answer to
`allowed_principals` alone. An alias on LATEST takes no rule but `allowed_principals`, and a guarded alias is
never pointed at LATEST (409). A policy that would not let its writer in is a 409. Nobody approves their own
request, nor twice, whatever the spelling of their principal.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tests.model.spec import (
    Option,
    Options,
    Policy,
    Promotion,
    Revision,
    State,
    Target,
    _eq,
    allowed,
    if_pending,
    pending,
    principal,
    refused,
    violation,
)

PRINCIPALS = "allowed_principals"


class GuardRules(State):
    # Alias writes.

    def set_alias(
        self, alias: str, primary: Target, secondary: Target | None, weight: int | None, identity: str
    ) -> Options:
        if secondary is not None and secondary == primary:
            return [refused(400, "secondary_version must differ from version")]
        if not self.exists:
            return [refused(404, "no such artifact")]
        old = self.live_alias(alias)
        new = Revision(primary, secondary, weight if secondary is not None else None, by=identity)
        conflicts = self._conflicts(new.targets())
        success = [] if conflicts else [self._placed(alias, new, status=201 if old is None else 200)]
        policy = self.policies.get(alias)
        if policy is None:
            return conflicts or success
        principals = self._principals(policy, identity)
        if policy.has_rules() and "LATEST" in new.targets():
            refusals = [*conflicts, refused(409, "a guarded alias is never pointed at LATEST")]
            refusals += [violation(principals)] if principals else []
            old_ways = [violation(principals, {"require_tags", "approvals"}, pending_rule="latest-alias")]
            if not principals:
                old_ways += [replace(o, pending="latest-alias") for o in success]
            return refusals + if_pending("latest-alias", old_ways)
        must, may = self._judge(policy, old, new, via="direct")
        must |= principals
        if must:
            refusals = [*conflicts, violation(must, may)]
            old_must = principals | self._judge_arriving(policy, old, new)
            if old_must != must:
                old_ways = [violation(old_must, pending_rule="judge-every-change")] if old_must else []
                if not old_must:
                    old_ways += [replace(o, pending="judge-every-change") for o in success]
                refusals += if_pending("judge-every-change", old_ways)
            return refusals
        if may:
            return [*conflicts, *success, violation((), may, why="an open reading of what the policy judges")]
        return conflicts or success

    def delete_alias(self, alias: str, identity: str) -> Options:
        if not self.exists or self.live_alias(alias) is None:
            return [refused(404, "no such alias")]
        policy = self.policies.get(alias)
        if policy is not None and not allowed(policy.allowed, identity):
            return [violation({PRINCIPALS})]

        def effect(_: Any) -> None:
            self.aliases[alias].append(Revision(deleted=True, by=identity))

        return [Option(204, effect=effect)]

    def rollback(self, alias: str, to_revision: int | None, identity: str) -> Options:
        history = self.aliases.get(alias)
        if not self.exists or not history:
            return [refused(404, "no such alias")]
        current = len(history)
        choices: list[int] = []
        policy = self.policies.get(alias)
        # A caller the policy does not allow may be told so before or after what is wrong with the revision.
        options: Options = [violation({PRINCIPALS})] if policy and not allowed(policy.allowed, identity) else []
        if to_revision is None:
            earlier = [r for r in range(current - 1, 0, -1) if not history[r - 1].deleted]
            if current == 1 or not earlier:
                return [refused(409, "no earlier revision"), *options]
            choices.append(earlier[0])
            if history[current - 2].deleted:  # "the revision before the current one" is a deletion: open
                options.append(refused(409, "the revision before is the deletion"))
        elif history[to_revision - 1].deleted:
            deletion = [refused(409, "that revision is the deletion"), refused(400, "that revision is the deletion")]
            return deletion + options
        else:
            choices.append(to_revision)
        for chosen in choices:
            options += self._rollback_to(alias, history[chosen - 1], identity)
        return options

    def _rollback_to(self, alias: str, revision: Revision, identity: str) -> Options:
        new = Revision(revision.primary, revision.secondary, revision.weight, by=identity)
        conflicts = self._conflicts(new.targets())
        success = [] if conflicts else [self._placed(alias, new, status=200)]
        policy = self.policies.get(alias)
        if policy is None:
            return conflicts or success
        principals = self._principals(policy, identity)
        refusals = [*conflicts, *([violation(principals)] if principals else [])]
        if policy.has_rules() and "LATEST" in new.targets():
            refusals.append(refused(409, "LATEST no longer holds what that revision served"))
            if not principals:
                refusals += if_pending("latest-alias", [replace(o, pending="latest-alias") for o in success])
            return refusals
        return refusals or success

    def _placed(self, alias: str, new: Revision, *, status: int) -> Option:
        revision = len(self.aliases.get(alias, [])) + 1

        def effect(_: Any) -> None:
            self.aliases.setdefault(alias, []).append(new)

        def check(body: Any) -> None:
            _eq(body["version"], new.primary, "version")
            _eq(body["secondary_version"], new.secondary, "secondary_version")
            _eq(body["secondary_version_weight"], new.weight, "secondary_version_weight")
            _eq(body["revision"], revision, "revision")
            _eq(body["updated_by"], new.by, "updated_by")

        return Option(status, effect=effect, check=check)

    def _conflicts(self, targets: set[Target]) -> Options:
        """A target that does not exist, or is deleted (expired: deleted for good): nothing is written."""
        found: Options = []
        for target in sorted(t for t in targets if isinstance(t, int)):
            version = self.versions.get(target)
            if version is None:
                found += [refused(409, f"no version {target}"), refused(404, f"no version {target}")]
            elif version.deleted or version.expired:
                found.append(refused(409, f"version {target} is deleted"))
        return found

    @staticmethod
    def _principals(policy: Policy, identity: str) -> set[str]:
        return set() if allowed(policy.allowed, identity) else {PRINCIPALS}

    def _judge(self, policy: Policy, old: Revision | None, new: Revision, *, via: str) -> tuple[set[str], set[str]]:
        """The rules a change breaks for certain, and those an open reading may add (allowed_principals aside)."""
        judged, open_ = self._judged(old, new)
        must: set[str] = set()
        may: set[str] = set()
        tags = policy.require_tags
        if tags and any(not self.tagged(t, tags) for t in judged):
            must.add("require_tags")
        if tags and any(not self.tagged(t, tags) for t in open_):
            may.add("require_tags")
        if policy.approvals > 0 and via == "direct":
            (must if judged else may).add("approvals")
        return must, may - must

    @staticmethod
    def _judged(old: Revision | None, new: Revision) -> tuple[set[Target], set[Target]]:
        """The targets a write brings into service for certain (gaining primary, arriving as secondary, the
        secondary's weight raised), and those an open reading may judge as well."""
        if old is None:
            return new.targets(), set()
        judged: set[Target] = set()
        if new.primary != old.primary:
            judged.add(new.primary)  # type: ignore[arg-type]
        if new.secondary is not None and (
            new.secondary not in old.targets()
            or (new.secondary == old.secondary and (new.weight or 0) > (old.weight or 0))
        ):
            judged.add(new.secondary)
        return judged, new.targets() - judged

    def _judge_arriving(self, policy: Policy, old: Revision | None, new: Revision, via: str = "direct") -> set[str]:
        """What the unfixed code judges: only versions that were no target before (judge-every-change)."""
        arriving = new.targets() - (old.targets() if old else set())
        found = set()
        if policy.require_tags and any(not self.tagged(t, policy.require_tags) for t in arriving):
            found.add("require_tags")
        if policy.approvals > 0 and arriving and via == "direct":
            found.add("approvals")
        return found

    def _promoted(
        self, policy: Policy | None, alias: str, version: int, rules: tuple[set[str], set[str]], applied: Option
    ) -> Options:
        """A promotion being applied: refused with the rules it breaks, or applied (either, for an open reading);
        while judge-every-change is pending, also applied where only a version that was a target already (the
        canary made primary) breaks a rule."""
        must, may = rules
        if not must:
            return [applied, *([violation((), may)] if may else [])]
        options = [violation(must, may)]
        new = Revision(version)
        if policy is not None and not self._judge_arriving(policy, self.live_alias(alias), new, via="promotion"):
            options += if_pending("judge-every-change", [replace(applied, pending="judge-every-change")])
        return options

    # Policies.

    def put_policy(self, alias: str, policy: Policy, identity: str) -> Options:
        if not self.exists:
            return [refused(404, "no such artifact")]
        current = self.policies.get(alias)
        forbidden = current is not None and not allowed(current.allowed, identity)
        locks_out = not allowed(policy.allowed, identity)
        live = self.live_alias(alias)
        on_latest = policy.has_rules() and live is not None and "LATEST" in live.targets()

        def effect(_: Any) -> None:
            self.policies[alias] = policy

        def check(body: Any) -> None:
            _eq(body["allowed_principals"], list(policy.allowed), "allowed_principals")
            _eq(body["require_tags"], dict(policy.require_tags), "require_tags")
            _eq(body["approvals"], policy.approvals, "approvals")

        refusals: Options = [violation({PRINCIPALS})] if forbidden else []
        refusals += [refused(409, "the policy would lock its writer out")] if locks_out else []
        refusals += [refused(409, "an alias on LATEST takes no rule but allowed_principals")] if on_latest else []
        if not refusals:
            return [Option(200, effect=effect, check=check)]
        bypassed = [r for r, holds in (("no-lock-out", locks_out), ("latest-alias", on_latest)) if holds]
        if not forbidden and all(pending(r) for r in bypassed):
            refusals.append(Option(200, effect=effect, check=check, pending=bypassed[0]))
        return refusals

    def delete_policy(self, alias: str, identity: str) -> Options:
        current = self.policies.get(alias)
        if not self.exists or current is None:
            return [refused(404, "no policy")]
        if not allowed(current.allowed, identity):
            return [violation({PRINCIPALS})]

        def effect(_: Any) -> None:
            del self.policies[alias]

        return [Option(204, effect=effect)]

    # Promotions.

    def request_promotion(self, alias: str, version: int, identity: str) -> Options:
        if not self.exists:
            return [refused(404, "no such artifact")]
        policy = self.policies.get(alias)
        principals = self._principals(policy, identity) if policy else set()
        conflicts = self._conflicts({version})
        new = Revision(version, by=identity)
        must, may = self._judge(policy, self.live_alias(alias), new, via="promotion") if policy else (set(), set())
        if principals:
            return [*conflicts, violation(principals, must | may)]
        required = policy.approvals if policy else 0
        if required == 0:
            applied = self._applied_promotion(alias, version, identity, approvals=[], status=201)
            if conflicts:
                return conflicts + ([violation(must, may)] if must else [])
            return self._promoted(policy, alias, version, (must, may), applied)

        def effect(body: Any) -> None:
            self.promotions.append(Promotion(body["id"], alias, version, identity, self.day))

        def check(body: Any) -> None:
            _eq(body["state"], "pending", "state")
            _eq(body["version"], version, "version")
            _eq(body["approvals"], [], "approvals")
            _eq(body["requested_by"], identity, "requested_by")

        # Whether a request the policy refuses now, or whose version is gone, is refused at once or left for
        # its approvals is open: both are allowed; only an approved promotion is ever applied.
        options = [Option(201, effect=effect, check=check), *conflicts]
        if must | may:
            options.append(violation((), must | may, why="judged at the request"))
        return options

    def approve(self, promotion: Promotion, identity: str) -> Options:
        policy = self.policies.get(promotion.alias)
        principals = self._principals(policy, identity) if policy else set()
        state = self.promotion_state(promotion)
        if state != "pending":
            return [refused(409, f"the promotion is {state}"), *([violation((), principals)] if principals else [])]
        mine = principal(identity) == principal(promotion.requested_by)
        again = principal(identity) in {principal(a) for a in promotion.approvals}
        rules = principals | ({"approvals"} if mine or again else set())
        proceed = self._approval(promotion, identity, policy)
        if not rules:
            return proceed
        # The unfixed code compares identities as spelt: another session of the requester's role approves.
        spelt_apart = identity != promotion.requested_by and identity not in promotion.approvals
        old_ways = [replace(o, pending="one-principal") for o in proceed]
        return [violation((), rules)] + (
            if_pending("one-principal", old_ways) if spelt_apart and not principals else []
        )

    def _approval(self, promotion: Promotion, identity: str, policy: Policy | None) -> Options:
        approvals = [*promotion.approvals, identity]
        if len(approvals) < (policy.approvals if policy else 0):

            def effect(_: Any) -> None:
                promotion.approvals = approvals

            def check(body: Any) -> None:
                _eq(body["state"], "pending", "state")
                _eq([a["by"] for a in body["approvals"]], approvals, "approvals")

            return [Option(200, effect=effect, check=check)]
        conflicts = self._conflicts({promotion.version})
        new = Revision(promotion.version, by=promotion.requested_by)
        must, may = (
            self._judge(policy, self.live_alias(promotion.alias), new, via="promotion") if policy else (set(), set())
        )
        applied = self._applied_promotion(
            promotion.alias, promotion.version, promotion.requested_by, approvals=approvals, status=200, of=promotion
        )
        if conflicts:
            return conflicts + ([violation(must, may)] if must else [])
        return self._promoted(policy, promotion.alias, promotion.version, (must, may), applied)

    def _applied_promotion(
        self,
        alias: str,
        version: int,
        requester: str,
        *,
        approvals: list[str],
        status: int,
        of: Promotion | None = None,
    ) -> Option:
        """The promotion applied: the alias moves to `version` alone, a revision by the requester."""
        revision = len(self.aliases.get(alias, [])) + 1

        def effect(body: Any) -> None:
            self.aliases.setdefault(alias, []).append(Revision(version, by=requester))
            found = of or Promotion(body["id"], alias, version, requester, self.day)
            found.approvals, found.state = approvals, "applied"
            if of is None:
                self.promotions.append(found)

        def check(body: Any) -> None:
            _eq(body["state"], "applied", "state")
            _eq(body["alias_revision"], revision, "alias_revision")
            _eq([a["by"] for a in body["approvals"]], approvals, "approvals")

        return Option(status, effect=effect, check=check)

    def reject(self, promotion: Promotion, identity: str) -> Options:
        policy = self.policies.get(promotion.alias)
        principals = self._principals(policy, identity) if policy else set()
        state = self.promotion_state(promotion)
        if state != "pending":
            return [refused(409, f"the promotion is {state}"), *([violation((), principals)] if principals else [])]
        if principals:
            return [violation(principals)]

        def effect(_: Any) -> None:
            promotion.state = "rejected"

        return [Option(200, effect=effect, check=lambda body: _eq(body["state"], "rejected", "state"))]
