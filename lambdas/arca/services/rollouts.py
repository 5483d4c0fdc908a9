"""Progressive rollouts: start, abort, status, and `advance`, the one step every driver runs.

A rollout owns the alias revisions it writes: each of its writes is conditioned on the alias still being at
the revision it wrote last (the alias writer's compare-and-set) and on its own item still being running
at the step it read, in one change. So a step repeated by a retry writes nothing, and an alias write by
anyone else ends the rollout as `superseded` instead of being overwritten.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Protocol

from arca.adapters.store.consumers import ConsumerStore
from arca.adapters.store.rollouts import RolloutStore
from arca.domain.aggregates import AliasRecord
from arca.domain.driver import DriverEvent
from arca.domain.entities import Rollout
from arca.domain.errors import (
    ConflictError,
    ContentionError,
    NotFoundError,
    PolicyMovedError,
    RolloutMovedError,
    RolloutRunningError,
)
from arca.domain.moments import to_iso
from arca.services.reading import Reading
from arca.services.retry import Policy

if TYPE_CHECKING:
    from arca.adapters.store.change import Change
    from arca.adapters.store.guards import Guard
    from arca.domain.guards import Via
    from arca.domain.models import RolloutBody
    from arca.services.aliases import AliasWriter


class Alarms(Protocol):
    def firing(self, names: list[str]) -> tuple[str, str] | None: ...

    def missing(self, names: list[str]) -> list[str]: ...


class Driver(Protocol):
    def start(self, rollout: Rollout) -> None: ...


# Tries of one step whose alias's policy keeps being written meanwhile (each write moves the alias's mark of it).
POLICY_RETRIES = 10


def step_reason(step: int, steps: list[int]) -> str:
    return f"rollout step {step}/{len(steps)}: {steps[step - 1]}%"


class RolloutStarter:
    """A rollout's start, staged into the change of its alias write (the first rollout revision, judged, and the
    rollout's item) and its driver; what a start on its own (`Rollouts.start`) and a promotion applied as a rollout
    (arca.services.promotions, which stages its own item into the same change) share."""

    def __init__(
        self,
        store: RolloutStore,
        writer: AliasWriter,
        driver: Driver,
        *,
        new_id: Callable[[], str] = lambda: uuid.uuid4().hex,
    ) -> None:
        self.store = store
        self.writer = writer
        self.driver = driver
        self.new_id = new_id

    def stage(
        self, name: str, alias: str, body: RolloutBody, *, identity: str | None, via: Via, rollout_id: str
    ) -> tuple[Change, Rollout]:
        """One try of a start, staged and not committed (the caller may stage more into its change, a promotion
        being applied): the alias's first rollout revision, judged, and the rollout's item. Raises what `Rollouts.start`
        answers before anything is written."""
        old = live_alias(self.writer, name, alias)
        if old.version == body.version:
            raise ConflictError(f"version {body.version} is already the target of {alias!r}", field="version")
        current = self.store.rollout(name, alias)
        if current is not None and current.state == "running":
            if current.alias_revision == old.revision:
                raise RolloutRunningError(
                    f"alias {alias!r} has a running rollout of version {current.version}; abort it first",
                    field="alias",
                )
            # Someone else moved the alias: that rollout is over; record it before starting this one.
            self.store.end_rollout(superseded(current, old, self.writer.policy.now()), current)
        spec: dict[str, object] = {
            "version": old.version,
            "secondary_version": body.version,
            "secondary_version_weight": body.steps[0],
            "description": old.description,
        }
        writer = f"rollout:{rollout_id}"
        try:
            new = self.writer.compose(name, alias, spec, old, reason=step_reason(1, body.steps), identity=writer)
        except ConflictError as error:  # the version is missing or deleted: the body's `version` is at fault
            raise ConflictError(error.message, field="version") from None
        moment = self.writer.policy.clock()
        rollout = Rollout(
            id=rollout_id,
            name=name,
            alias=alias,
            state="running",
            version=body.version,
            from_version=old.version,
            steps=body.steps,
            step=1,
            weight=body.steps[0],
            interval_seconds=body.interval_seconds,
            alarms=body.alarms,
            next_at=to_iso(moment + timedelta(seconds=body.interval_seconds)),
            started_at=to_iso(moment),
            reason=body.reason,
            started_by=identity,
            alias_revision=new.revision,
        )
        guard = self.writer.judge(new, old, identity=identity, via=via)
        change, _ = self.writer.stage(new, old, action="rollout", guard=guard)
        self.store.stage_rollout(change, rollout, None)
        return change, rollout

    def launch(self, rollout: Rollout) -> None:
        """Start the driver of a rollout about to be written (before the write: should it fail, the driver finds
        no rollout with its id and ends, whereas a driver started after a crash-interrupted write could be
        missing)."""
        self.driver.start(rollout)


def live_alias(writer: AliasWriter, name: str, alias: str) -> AliasRecord:
    """The live alias; 404 naming the artifact when it is the artifact that is missing, else the alias."""
    found = writer.alias(name, alias)
    if found is None or found.deleted:
        writer.reading.live_latest(name)
        raise NotFoundError(f"artifact {name!r} has no alias {alias!r}", field="alias")
    return found


def superseded(seen: Rollout, current: AliasRecord | None, now: str) -> Rollout:
    """The rollout ended by another writer's alias revision (dated by it where it is still there)."""
    ended_at = current.updated_at if current is not None and current.updated_at else now
    return seen.model_copy(update={"state": "superseded", "next_at": None, "ended_at": ended_at})


class Rollouts:
    def __init__(
        self,
        store: RolloutStore,
        writer: AliasWriter,
        reading: Reading,
        policy: Policy,
        *,
        consumers: ConsumerStore,
        alarms: Alarms,
        starter: RolloutStarter,
    ) -> None:
        self.store = store
        self.writer = writer
        self.consumers = consumers
        self.reading = reading
        self.policy = policy
        self.alarms = alarms
        self.starter = starter

    def missing_alarms(self, names: list[str]) -> list[str]:
        """The alarms among `names` that do not exist. A rollout naming one rolls back at its first step (a
        missing alarm counts as firing), so whoever starts it is told at once; the start itself stands."""
        return self.alarms.missing(names)

    def start(self, name: str, alias: str, body: RolloutBody, *, identity: str | None, via: Via = "rollout") -> Rollout:
        """The alias gets `body.version` as its secondary at the first weight (a new revision), and the driver
        is started. 404 without the alias, 409 when `version` is its target, missing or deleted, or when a
        rollout of the alias is running; 403 when the alias's policy refuses it (judged as arriving `via`).

        The driver is started before the write: should the write then fail, the driver finds no rollout with
        its id and ends, whereas a driver started after a crash-interrupted write could be missing.
        """
        rollout_id = self.starter.new_id()
        started = False

        def attempt() -> Rollout:
            nonlocal started
            change, rollout = self.starter.stage(name, alias, body, identity=identity, via=via, rollout_id=rollout_id)
            if not started:
                self.starter.launch(rollout)
                started = True
            self.writer.commit(change)
            return rollout

        return self.policy.compare_and_set(attempt)

    def status(self, name: str, alias: str) -> Rollout:
        """The alias's latest rollout, with the consumers still on the version it rolls out from and on the one it
        rolls out (one Query of the leases). A running one whose alias someone else wrote since is shown as
        superseded (the driver records that at its next step)."""
        found = self._status(name, alias)
        versions = [v for v in (found.from_version, found.version) if isinstance(v, int)]
        on = self.consumers.on_versions(name, list(dict.fromkeys(versions)), now=self.policy.now())
        return found.model_copy(update={"consumers": on})

    def _status(self, name: str, alias: str) -> Rollout:
        seen = self._rollout(name, alias)
        if seen.state != "running":
            return seen
        current = self.writer.alias(name, alias)
        if current is None or current.deleted or current.revision != seen.alias_revision:
            # The two reads are not one snapshot: a step of this rollout may have committed between them (it
            # writes the alias and the rollout together). Read the rollout again: moved on, it is the answer.
            again = self._rollout(name, alias)
            if again != seen:
                return again
            return self._superseded(seen, current)
        return seen

    def abort(self, name: str, alias: str, *, identity: str | None) -> Rollout:
        """Roll back a running rollout: the alias keeps its primary and loses the secondary (a new revision).

        404 without a rollout; 403 when the alias's policy does not let `identity` write the alias (an abort is a
        way back, judged by `allowed_principals` alone); 409 when it is not running, or when someone else wrote
        the alias since (the rollout is then recorded as superseded and that write is kept).
        """

        def attempt() -> Rollout:
            seen = self._rollout(name, alias)
            if seen.state != "running":
                raise RolloutRunningError(f"the rollout of {alias!r} is {seen.state}, not running", field="alias")
            old = self.writer.alias(name, alias)
            if old is None or old.deleted or old.revision != seen.alias_revision:
                self.store.end_rollout(self._superseded(seen, old), seen)
                raise ConflictError(
                    f"alias {alias!r} was changed by another writer: the rollout is superseded and that change kept",
                    field="alias",
                )
            why = f"rollout {seen.id} aborted"
            return self._end(seen, old, "aborted", reason=why, identity=identity, judged="abort")

        return self.policy.compare_and_set(attempt)

    def advance(self, name: str, alias: str, rollout_id: str, step: int) -> Rollout | None:
        """Run step `step` of the rollout: read its alarms, then roll back (one in ALARM), move to the next
        weight, or make `version` the primary after the last. Idempotent: a rollout no longer at `step`
        (the step ran already, or it ended) is returned as it is, unchanged. None when the rollout is gone
        (purged) or replaced by another one. A policy written meanwhile (the alias's mark of it moved, not the
        alias) only makes the step read the alias again: the steps are not judged.
        """
        for _ in range(POLICY_RETRIES):
            try:
                return self._advance(name, alias, rollout_id, step)
            except PolicyMovedError:
                continue
        raise ContentionError(f"the policy of {alias!r} kept changing; the step runs again")

    def _advance(self, name: str, alias: str, rollout_id: str, step: int) -> Rollout | None:
        seen = self.store.rollout(name, alias)
        if seen is None or seen.id != rollout_id:
            return None
        if seen.state != "running" or seen.step != step:
            return seen
        old = self.writer.alias(name, alias)
        if old is None or old.deleted or old.revision != seen.alias_revision:
            return self._supersede(seen, old)
        try:
            fired = self.alarms.firing(seen.alarms)
            if fired is not None:
                alarm, why = fired
                reason = f"rollout {seen.id} rolled back: alarm {alarm} {why}"
                return self._end(seen, old, "rolled_back", reason=reason, identity=seen.writer, alarm=alarm)
            if seen.step < len(seen.steps):
                return self._next_weight(seen, old)
            reason = f"rollout {seen.id} complete: version {seen.version} is the primary"
            return self._end(seen, old, "completed", reason=reason, identity=seen.writer)
        except RolloutMovedError:  # another invocation ran this step, or the rollout was aborted meanwhile
            return self.store.rollout(name, alias)
        except PolicyMovedError:  # the alias's policy changed, not the alias: read it again (advance)
            raise
        except ContentionError:  # the alias moved between our read and our write
            return self._supersede(seen, self.writer.alias(name, alias))
        except (NotFoundError, ConflictError):  # the artifact is gone or being purged: nothing left to drive
            return None

    def drive(self, event: DriverEvent) -> DriverEvent:
        """The driver's entry (the state machine's Lambda task, the local server's timer): `advance` for the
        event's rollout and step, and the event of the next step (`done` once nothing is left to do)."""
        rollout = self.advance(event.name, event.alias, event.rollout_id, event.step)
        if rollout is None or rollout.id != event.rollout_id:
            return event.model_copy(update={"done": True})
        return DriverEvent.of(rollout)

    def _next_weight(self, seen: Rollout, old: AliasRecord) -> Rollout:
        step = seen.step + 1
        weight = seen.steps[step - 1]
        spec = {**self._spec(old), "secondary_version": seen.version, "secondary_version_weight": weight}
        new = self.writer.compose(
            seen.name, seen.alias, spec, old, reason=step_reason(step, seen.steps), identity=seen.writer
        )
        moment = self.policy.clock()
        updated = seen.model_copy(
            update={
                "step": step,
                "weight": weight,
                "next_at": to_iso(moment + timedelta(seconds=seen.interval_seconds)),
                "alias_revision": new.revision,
            }
        )
        self._step(updated, seen, new, old, guard=None)
        return updated

    def _end(
        self,
        seen: Rollout,
        old: AliasRecord,
        state: str,
        *,
        reason: str,
        identity: str | None,
        alarm: str | None = None,
        judged: Via | None = None,
    ) -> Rollout:
        """The rollout's last write: `version` alone (completed), or the primary alone (rolled back, aborted).
        `judged`: the write is a person's (an abort), judged by the alias's policy as coming that way; the driver's
        own writes are not (the rollout was judged when it started)."""
        spec = self._spec(old)
        if state == "completed":
            spec["version"] = seen.version
        new = self.writer.compose(seen.name, seen.alias, spec, old, reason=reason, identity=identity)
        guard = None if judged is None else self.writer.judge(new, old, identity=identity, via=judged)
        updated = seen.model_copy(
            update={
                "state": state,
                "step": seen.step + 1,
                "weight": 100 if state == "completed" else 0,
                "next_at": None,
                "ended_at": new.updated_at,
                "alarm": alarm,
                "alias_revision": new.revision,
            }
        )
        self._step(updated, seen, new, old, guard=guard)
        return updated

    def _step(
        self, rollout: Rollout, seen: Rollout, new: AliasRecord, old: AliasRecord, *, guard: Guard | None
    ) -> None:
        """One step (or the end) of a rollout: the alias revision `new` over `old` (the revision the rollout wrote
        last) and the rollout as `rollout` while it is still `seen`, in one change; with `guard`, a policy's verdict
        on it (an abort). RolloutMovedError when the rollout moved on, ContentionError when someone else wrote the
        alias (the rollout is superseded)."""
        change, _ = self.writer.stage(new, old, action="rollout", guard=guard)
        self.store.stage_rollout(change, rollout, seen)
        self.writer.commit(change)

    def _supersede(self, seen: Rollout, current: AliasRecord | None) -> Rollout | None:
        ended = self._superseded(seen, current)
        if self.store.end_rollout(ended, seen):
            return ended
        return self.store.rollout(seen.name, seen.alias)

    def _superseded(self, seen: Rollout, current: AliasRecord | None) -> Rollout:
        return superseded(seen, current, self.policy.now())

    @staticmethod
    def _spec(old: AliasRecord) -> dict[str, object]:
        """The alias's primary alone (no secondary), its description kept."""
        return {"version": old.version, "description": old.description}

    def _rollout(self, name: str, alias: str) -> Rollout:
        found = self.store.rollout(name, alias)
        if found is None:
            self.reading.live_latest(name)
            raise NotFoundError(f"alias {alias!r} of {name!r} has no rollout")
        return found
