"""Rollouts: one item per alias, `__<name>-rollout` / `<alias>`, written in the alias's own transactions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from boto3.dynamodb.conditions import Attr, ConditionBase

from arca.adapters import keys
from arca.adapters.dynamo import Table, TransactionCancelled, Write
from arca.adapters.store.aliases import AliasStore
from arca.adapters.store.conditions import ITEM_NOT_EXIST
from arca.adapters.store.records import AliasRecord, rollout_entity, rollout_item
from arca.domain.entities import Rollout
from arca.domain.errors import RolloutMovedError, RolloutRunningError
from arca.domain.events import (
    Change,
    Detail,
    RolloutAdvanced,
    RolloutCompleted,
    RolloutRolledBack,
    RolloutStarted,
)

if TYPE_CHECKING:
    from arca.adapters.store.guards import Guard


class RolloutStore:
    def __init__(self, table: Table, aliases: AliasStore) -> None:
        self.table = table
        self.aliases = aliases

    def rollout(self, name: str, alias: str) -> Rollout | None:
        """The alias's latest rollout, whatever its state."""
        item = self.table.get(keys.rollout_key(name, alias))
        return None if item is None else rollout_entity(item)

    def start_rollout(
        self,
        new: AliasRecord,
        old: AliasRecord,
        rollout: Rollout,
        *,
        guard: Guard | None = None,
        also: Sequence[Write] = (),
        announce: Sequence[Change] = (),
    ) -> AliasRecord:
        """The alias's first rollout revision and the rollout item, in one transaction (with `guard`, `also` and
        `announce` as write_alias: a policy's conditions, a promotion's item and its events).

        The item is put only where no rollout of the alias is running (one at a time). Raises
        RolloutRunningError (409) when one is, and what write_alias raises (ContentionError when the alias moved).
        """
        put = _rollout_write(
            rollout,
            condition=ITEM_NOT_EXIST | Attr("state").ne("running"),
        )
        try:
            return self.aliases.write_alias(
                new,
                old,
                action="rollout",
                also=[put, *also],
                announce=[_rollout_change(rollout), *announce],
                guard=guard,
            )
        except TransactionCancelled as cancelled:
            if not cancelled.failed("rollout"):
                raise
            raise RolloutRunningError(
                f"alias {new.alias!r} has a running rollout; abort it first", field="alias"
            ) from None

    def step_rollout(
        self, rollout: Rollout, seen: Rollout, new: AliasRecord, old: AliasRecord, *, guard: Guard | None = None
    ) -> AliasRecord:
        """One rollout step: the alias revision `new` (compare-and-set on `old`, the revision the rollout wrote
        last) and the rollout as `rollout`, only while it is still `seen` (running, at the same step); with
        `guard`, a policy's verdict on it (an abort), as write_alias.

        Raises RolloutMovedError when the rollout moved on or ended meanwhile (a repeated step, an abort, a
        purge: do nothing), ContentionError when someone else wrote the alias (the rollout is superseded), and
        what write_alias raises otherwise.
        """
        put = _rollout_write(rollout, condition=_still(seen))
        try:
            return self.aliases.write_alias(
                new, old, action="rollout", also=[put], announce=[_rollout_change(rollout)], guard=guard
            )
        except TransactionCancelled:
            raise RolloutMovedError(f"rollout {seen.id} moved on since step {seen.step}") from None

    def end_rollout(self, rollout: Rollout, seen: Rollout) -> bool:
        """Store `rollout` (an end without an alias write: superseded) only while it is still `seen`.

        False when the rollout moved on meanwhile (or was purged): then nothing is written.
        """
        put = _rollout_write(rollout, condition=_still(seen))
        try:
            self.table.transact([put])
        except TransactionCancelled:
            return False
        return True


def _rollout_write(rollout: Rollout, *, condition: ConditionBase) -> Write:
    return Write(
        "rollout",
        "Put",
        keys.rollout_key(rollout.name, rollout.alias),
        item=rollout_item(rollout),
        condition=condition,
    )


def _still(seen: Rollout) -> ConditionBase:
    """The condition that the rollout is the one read: same id, running, at the same step. Conditioning every
    write on the step makes a repeated step (a retried invocation) write nothing."""
    return Attr("id").eq(seen.id) & Attr("state").eq("running") & Attr("step").eq(seen.step)


def _rollout_change(rollout: Rollout) -> Change:
    """The rollout's own event for the alias write it makes: started, advanced, then completed or rolled back
    (an abort is a roll back that says so)."""
    facts = {"id": rollout.id, "step": rollout.step, "weight": rollout.weight, "steps": rollout.steps}
    detail: Detail
    if rollout.state == "running":
        detail = (RolloutStarted if rollout.step == 1 else RolloutAdvanced)(**facts)
    elif rollout.state == "completed":
        detail = RolloutCompleted(**facts)
    elif rollout.state in ("aborted", "rolled_back"):  # an end that names itself and its alarm (null: an abort)
        detail = RolloutRolledBack(**facts, state=rollout.state, alarm=rollout.alarm)
    else:
        detail = RolloutRolledBack(**facts)
    return Change(detail, rollout.version, alias=rollout.alias)
