"""Rollouts: one item per alias, `__<name>-rollout` / `<alias>`, written in the alias's own transactions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from boto3.dynamodb.conditions import Attr, ConditionBase

from arca.adapters import keys
from arca.adapters.dynamo import Table, TransactionCancelled, Write
from arca.adapters.store.change import ROLLOUT
from arca.adapters.store.conditions import ITEM_NOT_EXIST
from arca.adapters.store.records import rollout_entity, rollout_item
from arca.domain.entities import Rollout
from arca.domain.errors import RegistryError, RolloutMovedError, RolloutRunningError
from arca.domain.events import Change as Announced
from arca.domain.events import (
    Detail,
    RolloutAdvanced,
    RolloutCompleted,
    RolloutRolledBack,
    RolloutStarted,
)

if TYPE_CHECKING:
    from arca.adapters.store.change import Change


class RolloutStore:
    def __init__(self, table: Table) -> None:
        self.table = table

    def rollout(self, name: str, alias: str) -> Rollout | None:
        """The alias's latest rollout, whatever its state."""
        item = self.table.get(keys.rollout_key(name, alias))
        return None if item is None else rollout_entity(item)

    @staticmethod
    def stage_rollout(change: Change, rollout: Rollout, seen: Rollout | None) -> None:
        """Stage the rollout item and its event into the alias change that writes its alias revision.

        A start (`seen` None) is put only where no rollout of the alias is running (one at a time), refused with
        RolloutRunningError (409) when one is. A step or an end is put only while the rollout is still `seen`
        (running, at the same step), refused with RolloutMovedError when it moved on or ended meanwhile (a
        repeated step, an abort, a purge: do nothing).
        """
        if seen is None:
            condition = ITEM_NOT_EXIST | Attr("state").ne("running")
            refused: RegistryError = RolloutRunningError(
                f"alias {rollout.alias!r} has a running rollout; abort it first", field="alias"
            )
        else:
            condition = _still(seen)
            refused = RolloutMovedError(f"rollout {seen.id} moved on since step {seen.step}")
        change.stage(_rollout_write(rollout, condition=condition), refused=refused, rank=ROLLOUT)
        change.announce(_rollout_change(rollout))

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


def _rollout_change(rollout: Rollout) -> Announced:
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
    return Announced(detail, rollout.version, alias=rollout.alias)
