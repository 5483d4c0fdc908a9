"""Aliases: set (with canary), delete, rollback; and the one alias writer every alias write goes through (these,
a rollout's start and steps, a promotion applied): composed, judged by the alias's policy, staged into one Change
(AliasStore.stage_alias), to which the caller adds what else the write carries, then committed once.

A version is deleted only while no alias pins it, and an alias write pins its targets only while they are
live (both conditions on the version item, in the stores), so the two serialise on that item: no
interleaving leaves an alias on a deleted version. The alias item carries its targets' content, so an alias
resolves with one item read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from arca.adapters.store.aliases import AliasStore
from arca.adapters.store.change import Change
from arca.adapters.store.guards import Guard
from arca.adapters.store.history import HistoryStore
from arca.adapters.store.versions import VersionStore
from arca.domain.aggregates import AliasRecord, RevisionRecord, target_of
from arca.domain.entities import Alias, Target
from arca.domain.errors import ConflictError, ContentionError, NotFoundError, PolicyMovedError, PreconditionFailedError
from arca.domain.guards import Via
from arca.domain.models import AliasBody
from arca.domain.receipts import Seal
from arca.services.guards import Guards
from arca.services.reading import Reading
from arca.services.retry import Policy

T = TypeVar("T")
SPEC_FIELDS = ("version", "secondary_version", "secondary_version_weight", "description")


@dataclass(frozen=True)
class Placed:
    """What setting an alias did: the alias as written, and whether that created it (else it moved)."""

    alias: Alias
    created: bool


def _require_revision(alias: str, old: AliasRecord | None, if_match: int | None) -> None:
    """If-Match: the alias must exist (not as a tombstone) at exactly that revision; 412 otherwise."""
    if if_match is not None and (old is None or old.deleted or old.revision != if_match):
        raise PreconditionFailedError(f"alias {alias!r} is not at revision {if_match}", field="If-Match")


class AliasWriter:
    """Every alias write, whoever makes it: its next revision composed (`compose`), judged by the alias's policy
    (`judge`: 403 with every violation, or the Guard that holds the verdict), staged into one Change (`stage`) to
    which the caller adds its own items (a rollout's, a promotion's, an idempotency record), and committed once
    (`commit`)."""

    def __init__(self, store: AliasStore, versions: VersionStore, guards: Guards, reading: Reading, policy: Policy):
        self.store = store
        self.versions = versions
        self.guards = guards
        self.reading = reading
        self.policy = policy

    def alias(self, name: str, alias: str) -> AliasRecord | None:
        """The alias item as it is (a deletion's tombstone included)."""
        return self.store.alias(name, alias)

    def judge(self, new: AliasRecord, old: AliasRecord | None, *, identity: str | None, via: Via) -> Guard:
        return self.guards.judge(new, old, identity=identity, via=via)

    def stage(
        self, new: AliasRecord, old: AliasRecord | None, *, action: str, guard: Guard | None = None
    ) -> tuple[Change, AliasRecord]:
        """A Change of the artifact, by the alias revision's writer at its time, with the alias write staged and
        `guard`'s conditions joined (None: unjudged, a rollout's step); and the alias as it will be written."""
        change = Change(new.name, by=new.updated_by, now=str(new.updated_at))
        written = self.store.stage_alias(
            change, new, old, action=action, policy=None if guard is None else guard.policy_revision
        )
        if guard is not None:
            guard.stage(change)
        return change, written

    def commit(self, change: Change) -> None:
        self.store.commit(change)

    def compose(
        self,
        name: str,
        alias: str,
        spec: dict[str, object] | None,
        old: AliasRecord | None,
        *,
        reason: str | None,
        identity: str | None,
    ) -> AliasRecord:
        """The alias's next revision with targets `spec` (None: its deletion). Raises ConflictError when a
        target version is missing or deleted."""
        now = self.policy.now()
        live_before = old is not None and not old.deleted
        # A new alias numbers on from the revisions earlier incarnations of the artifact used (purge keeps
        # the highest on LATEST), so a revision number never names two states of one alias.
        revision = (old.revision if old else self.reading.live_latest(name).revision_base) + 1
        common = {
            "name": name,
            "alias": alias,
            "revision": revision,
            "first_revision": old.first_revision if old else revision,
            "updated_at": now,
            "updated_by": identity,
            "reason": reason,
        }
        if spec is None:  # deletion: a tombstone keeps the revision counter going
            new = AliasRecord(**common, deleted=True)
        else:
            if spec.get("secondary_version") is not None and spec.get("secondary_version_weight") is None:
                spec = {**spec, "secondary_version_weight": 0}
            created = old.created_at if live_before and old else now
            new = AliasRecord(**common, **spec, **self._targets(name, spec), created_at=created)
        return new

    def _targets(self, name: str, spec: dict[str, object]) -> dict[str, Target | None]:
        """Content of each numbered target (to carry in the alias item); 409 if missing or deleted."""
        found: dict[str, Target | None] = {"primary": None, "secondary": None}
        for side, field in (("primary", "version"), ("secondary", "secondary_version")):
            number = spec.get(field)
            if not isinstance(number, int):
                continue
            version = self.versions.version(name, number)
            if version is None:
                self.reading.live_latest(name)
                raise ConflictError(f"version {number} does not exist", field=field)
            if version.deleted:
                raise ConflictError(f"version {number} is deleted; restore it first", field=field)
            found[side] = target_of(version)
        return found


class Aliases:
    def __init__(self, writer: AliasWriter, history: HistoryStore, reading: Reading, policy: Policy) -> None:
        self.writer = writer
        self.store = writer.store
        self.history = history
        self.reading = reading
        self.policy = policy

    def set(
        self,
        name: str,
        alias: str,
        body: AliasBody,
        *,
        if_match: int | None = None,
        create_only: bool = False,
        identity: str | None = None,
        seal: Seal | None = None,
    ) -> Placed:
        """Create or move an alias. 412 when a precondition does not hold.

        With `seal`, its record (the route's rendering of the Placed) is in the same transaction.
        """
        conditional = if_match is not None or create_only or body.expected_version is not None
        spec = body.model_dump(include=set(SPEC_FIELDS))

        def attempt() -> Placed:
            old = self.store.alias(name, alias)
            live = old is not None and not old.deleted
            if create_only and live:
                raise PreconditionFailedError(f"alias {alias!r} exists (If-None-Match: *)", field="If-None-Match")
            _require_revision(alias, old, if_match)
            if body.expected_version is not None and (not live or old.version != body.expected_version):  # type: ignore[union-attr]
                raise PreconditionFailedError(
                    f"alias {alias!r} does not point at version {body.expected_version}", field="expected_version"
                )
            kept = seal.of(lambda new: Placed(new, created=not live)) if seal else None
            written = self._write(
                name, alias, spec, old, action="set", reason=body.reason, identity=identity, seal=kept, via="direct"
            )
            return Placed(written.entity(), created=not live)

        return self._retry(attempt, alias, precondition=conditional)

    def delete(self, name: str, alias: str, *, if_match: int | None = None, identity: str | None = None) -> None:
        """Delete an alias; the deletion is a revision in its history, and its versions are released."""

        def attempt() -> None:
            old = self.reading.live_alias(name, alias)
            _require_revision(alias, old, if_match)
            self._write(name, alias, None, old, action="delete", reason=None, identity=identity, via="delete")

        self._retry(attempt, alias, precondition=if_match is not None)

    def rollback(
        self,
        name: str,
        alias: str,
        *,
        to_revision: int | None,
        reason: str | None,
        identity: str | None,
        seal: Seal | None = None,
    ) -> Alias:
        """A new revision with the targets of `to_revision` (default: the last one before the current); with
        `seal`, its record (the route's rendering of the alias) is in the same transaction."""

        def attempt() -> AliasRecord:
            old = self.store.alias(name, alias)
            if old is None:
                raise NotFoundError(f"artifact {name!r} has no alias {alias!r}")
            record = self._rollback_target(name, alias, old.revision, to_revision)
            spec = record.model_dump(include=set(SPEC_FIELDS))
            why = reason or f"rollback to revision {record.revision}"
            return self._write(
                name, alias, spec, old, action="rollback", reason=why, identity=identity, seal=seal, via="rollback"
            )

        return self._retry(attempt, alias, precondition=False).entity()

    def _retry(self, attempt: Callable[[], T], alias: str, *, precondition: bool) -> T:
        """Retry lost races, except under a precondition: the caller's view is then stale (412). A change to what
        the policy's verdict read is judged again in both cases (the alias itself did not move)."""
        if not precondition:
            return self.policy.compare_and_set(attempt)

        def once() -> T:
            try:
                return attempt()
            except PolicyMovedError:
                raise
            except ContentionError:
                raise PreconditionFailedError(f"alias {alias!r} changed concurrently", field="If-Match") from None

        return self.policy.compare_and_set(once)

    def _rollback_target(self, name: str, alias: str, current: int, to_revision: int | None) -> RevisionRecord:
        if to_revision is None:
            found = self.history.revision_before(name, alias, current)
            if found is None:
                raise ConflictError(f"alias {alias!r} has no earlier revision to roll back to")
            return found
        if to_revision >= current:
            raise ConflictError(f"to_revision must be before the current revision {current}", field="to_revision")
        record = self.history.revision(name, alias, to_revision)
        if record is None:
            raise NotFoundError(f"alias {alias!r} has no revision {to_revision}", field="to_revision")
        if record.deleted:
            raise ConflictError(f"revision {to_revision} is the alias's deletion", field="to_revision")
        return record

    def _write(
        self,
        name: str,
        alias: str,
        spec: dict[str, object] | None,
        old: AliasRecord | None,
        *,
        action: str,
        reason: str | None,
        identity: str | None,
        via: Via,
        seal: Seal | None = None,
    ) -> AliasRecord:
        new = self.writer.compose(name, alias, spec, old, reason=reason, identity=identity)
        guard = self.writer.judge(new, old, identity=identity, via=via)
        change, written = self.writer.stage(new, old, action=action, guard=guard)
        change.seal(seal, written.entity())
        self.writer.commit(change)
        return written
