"""Alias policies, and the judgement of every alias write against its alias's policy.

`judge` reads what the rules need (the policy, the arriving versions' tags and attestations, the soak alias's
history), refuses with every violation (403, nothing written), and otherwise returns the Guard that the write's
own transaction carries, so that nothing it read can change between the verdict and the commit.
"""

from __future__ import annotations

from arca.adapters.store.aliases import AliasStore
from arca.adapters.store.guards import Guard, GuardStore
from arca.adapters.store.records import AliasRecord
from arca.adapters.store.versions import VersionStore
from arca.domain.errors import NotFoundError, PolicyViolation, ValidationError
from arca.domain.guards import (
    AliasPolicy,
    Candidate,
    PolicyBody,
    PolicyFields,
    Via,
    Violation,
    principal_violation,
    soaked_seconds,
    violations,
)
from arca.services.reading import Reading
from arca.services.retry import Policy

# History records read to measure a soak, at most: the soak is found as soon as the run covers the seconds asked.
SOAK_READ_LIMIT = 200


def refuse(found: list[Violation]) -> None:
    """403 with every violation found; nothing when there is none."""
    if found:
        raise PolicyViolation.of([v.model_dump() for v in found])


class Guards:
    def __init__(
        self, store: GuardStore, versions: VersionStore, aliases: AliasStore, reading: Reading, retry: Policy
    ) -> None:
        self.store = store
        self.versions = versions
        self.aliases = aliases
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
        change it (403). 404 when the artifact does not exist, or (removal) when there is no policy."""
        if body is not None and body.require_soak is not None and body.require_soak.alias == alias:
            raise ValidationError("require_soak.alias must be another alias", field="require_soak.alias")

        def attempt() -> AliasPolicy | None:
            self.reading.live_latest(name)
            current, seen = self.store.policy(name, alias)
            refuse(principal_violation(current, identity, "change this alias's policy"))
            if body is None and current is None:
                raise NotFoundError(f"alias {alias!r} of {name!r} has no policy")
            rules = None if body is None else PolicyFields(**body.model_dump())
            return self.store.write_policy(name, alias, rules, seen=seen, now=self.retry.now(), by=identity)

        return self.retry.compare_and_set(attempt)

    def allowed(self, name: str, alias: str, identity: str | None, action: str) -> AliasPolicy | None:
        """The alias's policy, after checking that `identity` may `action` under it (403 otherwise)."""
        current, _ = self.store.policy(name, alias)
        refuse(principal_violation(current, identity, action))
        return current

    def judge(self, new: AliasRecord, old: AliasRecord | None, *, identity: str | None, via: Via) -> Guard:
        """Refuse the write of `new` over `old` by `identity` with every violation of the alias's policy
        (PolicyViolation), or return the conditions that hold the verdict in the write's transaction."""
        name, alias = new.name, new.alias
        current, seen = self.store.policy(name, alias)
        before = old.pinned if old is not None else set()
        arriving = sorted(new.pinned - before)
        replaces = old is not None and not old.deleted
        if current is None or via in ("rollback", "delete"):
            refuse(violations(current, identity=identity, via=via, candidates=[], replaces=replaces))
            return self.store.guard(name, alias, seen, tags={}, attestations={}, soak=None)
        candidates, soak = self._candidates(name, current, arriving)
        if not new.deleted and not isinstance(new.version, int) and (old is None or old.version != new.version):
            candidates.append(Candidate(version=0))  # LATEST: mutable, so it never carries what a rule asks
        refuse(violations(current, identity=identity, via=via, candidates=candidates, replaces=replaces))
        return self.store.guard(
            name,
            alias,
            seen,
            tags=dict.fromkeys(arriving, current.require_tags),
            attestations=dict.fromkeys(arriving, current.require_attestations),
            soak=soak,
        )

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
