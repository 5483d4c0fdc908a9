"""Alias policies, and the judgement of every alias write against its alias's policy.

`judge` reads what the rules need (the policy, the gaining versions' tags and attestations, the soak alias's
history, under `require_rollout` the alias's rollout), refuses with every violation (403, nothing written), and
otherwise returns the Guard that the write's own change carries, so that nothing it read can change between
the verdict and the commit.
"""

from __future__ import annotations

from arca.adapters.store.aliases import AliasStore
from arca.adapters.store.change import Change
from arca.adapters.store.guards import Guard, GuardStore
from arca.adapters.store.rollouts import RolloutStore
from arca.adapters.store.versions import VersionStore
from arca.domain.aggregates import AliasRecord
from arca.domain.errors import ConflictError, NotFoundError, PolicyMovedError, PolicyViolation, ValidationError
from arca.domain.guards import (
    ROLLOUTS,
    WAYS_BACK,
    AliasPolicy,
    Candidate,
    PolicyBody,
    PolicyFields,
    Via,
    Violation,
    gaining,
    principal_allowed,
    principal_violation,
    refuse_latest,
    soaked_seconds,
    violations,
)
from arca.services.reading import Reading
from arca.services.retry import Policy

FIELDS = set(PolicyFields.model_fields)
# History records read to measure a soak, at most: the soak is found as soon as the run covers the seconds asked.
SOAK_READ_LIMIT = 200


def refuse(found: list[Violation]) -> None:
    """403 with every violation found; nothing when there is none."""
    if found:
        raise PolicyViolation.of([v.model_dump() for v in found])


class Guards:
    def __init__(
        self,
        store: GuardStore,
        versions: VersionStore,
        aliases: AliasStore,
        rollouts: RolloutStore,
        reading: Reading,
        retry: Policy,
    ) -> None:
        self.store = store
        self.versions = versions
        self.aliases = aliases
        self.rollouts = rollouts
        self.reading = reading
        self.retry = retry

    def policy(self, name: str, alias: str) -> AliasPolicy:
        self.reading.live_latest(name)
        found, _ = self.store.policy(name, alias)
        if found is None:
            raise NotFoundError(f"alias {alias!r} of {name!r} has no policy")
        return found

    def set_policy(self, name: str, alias: str, body: PolicyBody | None, *, identity: str | None) -> AliasPolicy | None:
        """Put (or, with None, remove) the alias's policy; once one is set, only its `allowed_principals` may
        change it (403); the rules it has already change nothing (a retried PUT writes nothing). 404 when the
        artifact does not exist, or (removal) when there is no policy. 409 when the new `allowed_principals` would
        not let the caller in (it would lock them out), and for rules besides `allowed_principals` on an alias
        that serves LATEST. The alias is read and checked unchanged in the policy's transaction, so an alias
        moved to LATEST meanwhile is never guarded by such rules."""
        if body is not None and body.require_soak is not None and body.require_soak.alias == alias:
            raise ValidationError("require_soak.alias must be another alias", field="require_soak.alias")
        rules = None if body is None else PolicyFields(**body.model_dump())
        if rules is not None and not principal_allowed(rules.allowed_principals, identity):
            raise ConflictError(
                f"allowed_principals does not match you ({identity or 'an anonymous caller'}): this policy would "
                "lock you out of the alias and its policy for good; include a glob that matches you",
                field="allowed_principals",
            )

        def attempt() -> AliasPolicy | None:
            self.reading.live_latest(name)
            current, seen = self.store.policy(name, alias)
            refuse(principal_violation(current, identity, "change this alias's policy"))
            if body is None and current is None:
                raise NotFoundError(f"alias {alias!r} of {name!r} has no policy")
            if current is not None and rules == PolicyFields(**current.model_dump(include=FIELDS)):
                return current
            target = self.aliases.alias(name, alias)
            serving = target.serving() if target is not None else None
            if rules is not None and rules.rules and serving is not None and "LATEST" in serving.targets:
                raise ConflictError(
                    f"alias {alias!r} points at LATEST, whose content changes with every PUT latest unjudged: its "
                    f"policy may hold allowed_principals only, not {', '.join(rules.rules)}; point it at a version "
                    "first",
                    field="alias",
                )
            change = Change(name, by=identity, now=self.retry.now())
            written = self.store.stage_policy(change, alias, rules, seen=seen, alias_seen=target)
            self.store.commit(change)
            return written

        return self.retry.compare_and_set(attempt)

    def allowed(self, name: str, alias: str, identity: str | None, action: str) -> AliasPolicy | None:
        """The alias's policy, after checking that `identity` may `action` under it (403 otherwise)."""
        current, _ = self.store.policy(name, alias)
        refuse(principal_violation(current, identity, action))
        return current

    def judge(self, new: AliasRecord, old: AliasRecord | None, *, identity: str | None, via: Via) -> Guard:
        """Refuse the write of `new` over `old` by `identity` with every violation of the alias's policy
        (PolicyViolation; ConflictError for LATEST under rules, see arca.domain.guards.refuse_latest), or return
        the conditions that hold the verdict in the write's transaction.

        Judged: every version gaining share of the alias (a rollout's version always: it ends as the primary),
        and, for `approvals` and `require_rollout`, whether the write moves the alias at all. A rollout read as
        running is running at the alias revision the write replaces, which the write's compare-and-set holds."""
        name, alias = new.name, new.alias
        current, seen = self._policy_of(name, alias, old)
        before = old.serving() if old is not None else None
        after = new.serving()
        refuse_latest(current, after, via=via, alias=alias)
        replaces = before is not None
        if current is None or via in WAYS_BACK:
            refuse(violations(current, identity=identity, via=via, candidates=[], replaces=replaces))
            return self.store.guard(name, alias, current, seen, tags={}, attestations={}, soak=None)
        gained = {t for t in gaining(before, after) if isinstance(t, int)}
        if via in ROLLOUTS and isinstance(new.secondary_version, int):
            gained.add(new.secondary_version)
        numbers = sorted(gained)
        # Read only where it decides: a version gaining a role outside a rollout is refused by the rule already.
        running = (
            current.require_rollout
            and via in ("direct", "promotion")
            and old is not None
            and not (replaces and numbers)
            and self._rollout_running(old)
        )
        candidates, soak = self._candidates(name, current, numbers)
        found = violations(
            current,
            identity=identity,
            via=via,
            candidates=candidates,
            replaces=replaces,
            moves=via in ROLLOUTS or before != after,
            rollout_running=running,
        )
        refuse(found)
        return self.store.guard(
            name,
            alias,
            current,
            seen,
            tags=dict.fromkeys(numbers, current.require_tags),
            attestations=dict.fromkeys(numbers, current.require_attestations),
            soak=soak,
        )

    def _policy_of(self, name: str, alias: str, old: AliasRecord | None) -> tuple[AliasPolicy | None, int | None]:
        """The alias's live policy, and the policy item's revision to check in the transaction (None: no check, the
        alias item's mark holds it). A mark of 0 is no policy, read from the alias item alone; a mark of a
        revision reads the policy (its rules); no mark (a new alias, an item written before marks) reads it and
        checks it. PolicyMovedError when the policy read is not the one marked (it changed between the reads)."""
        mark = old.policy_revision if old is not None else None
        if mark == 0:
            return None, None
        current, seen = self.store.policy(name, alias)
        if mark is None:
            return current, seen
        if current is None or current.revision != mark:
            raise PolicyMovedError(f"the policy of {alias!r} changed while it was read; judged again")
        return current, None

    def _rollout_running(self, old: AliasRecord) -> bool:
        """Whether a rollout of the alias runs at `old`'s revision (one it no longer owns is over)."""
        rollout = self.rollouts.rollout(old.name, old.alias)
        return rollout is not None and rollout.state == "running" and rollout.alias_revision == old.revision

    def _candidates(
        self, name: str, policy: PolicyFields, numbers: list[int]
    ) -> tuple[list[Candidate], tuple[str, int] | None]:
        found: list[Candidate] = []
        soak_alias = policy.require_soak.alias if policy.require_soak else None
        runs: list[tuple[int | None, str]] = []
        soak: tuple[str, int] | None = None
        if soak_alias is not None and numbers:
            runs, soak = self._primary_runs(name, soak_alias, policy.require_soak.seconds)  # type: ignore[union-attr]
        reads_version = bool(policy.require_tags or policy.require_attestations)
        for number in numbers:
            version = self.versions.version(name, number) if reads_version else None
            tags = version.tags if version else {}
            attestations = tuple(version.attestations) if version else ()
            soaked = soaked_seconds(runs, number, self.retry.clock()) if soak_alias else None
            found.append(Candidate(number, tags, attestations, soaked))
        return found, soak

    def _primary_runs(
        self, name: str, alias: str, seconds: int
    ) -> tuple[list[tuple[int | None, str]], tuple[str, int] | None]:
        """The soak alias's primaries, newest revision first, as far as a run of one primary covers `seconds`;
        and the (alias, revision) they were read at (None: no such alias)."""
        current = self.aliases.alias(name, alias)
        if current is None:
            return [], None
        at = (alias, current.revision)
        if current.deleted or not isinstance(current.version, int):
            return [], at
        runs: list[tuple[int | None, str]] = []
        moment = self.retry.clock()
        for primary, updated_at in self.store.primaries(name, alias, current.revision):
            runs.append((primary, updated_at))
            elapsed = soaked_seconds(runs, current.version, moment)
            if (
                primary != current.version
                or (elapsed is not None and elapsed >= seconds)
                or len(runs) >= SOAK_READ_LIMIT
            ):
                break
        return runs, at
