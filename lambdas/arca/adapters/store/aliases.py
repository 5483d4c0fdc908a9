"""Aliases: `__<name>-alias` / `<alias>` items, written with their history and their versions' pins."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from boto3.dynamodb.conditions import Attr, ConditionBase

from arca.adapters import keys
from arca.adapters.dynamo import Table, TransactionCancelled, Update, Write
from arca.adapters.store.conditions import ARTIFACT_IS_LIVE, ITEM_EXISTS, ITEM_NOT_EXIST, below
from arca.adapters.store.feed import Feed
from arca.adapters.store.pages import first_at, page
from arca.adapters.store.receipts import raise_if_key_taken, sealed
from arca.adapters.store.records import AliasRecord, alias_item, alias_record
from arca.domain.errors import (
    AliasLimitError,
    ConflictError,
    ContentionError,
    LinkedNameError,
    NotFoundError,
    PolicyMovedError,
    RegistryError,
)
from arca.domain.models import MAX_ALIASES
from arca.domain.receipts import Seal

if TYPE_CHECKING:  # the event models are imported by the writes that announce them: a resolve imports none
    from arca.adapters.store.guards import Guard
    from arca.domain.events import Change

# Every attribute an alias transaction (write_alias, a rollout's start and steps) names on the artifact's own items,
# LATEST and its versions: the pins (`ADD`/`DELETE pinned_by`, on a live version only), LATEST's alias count and
# event order (`alias_count`, `last_event`), the key and ARTIFACT_IS_LIVE's checks. The alias and rollout roles may
# name no other attribute of those items (infra/functions.py grants them under dynamodb:Attributes); the IAM check of
# local mode and the tests refuses a transaction that names one more, so this list cannot fall behind. An alias
# policy's `require_attestations` is a condition on a target version's `attestations` (arca.adapters.store.guards).
ALIAS_ITEM_ATTRIBUTES = (
    "pk",
    "sk",
    "pinned_by",
    "deleted",
    "alias_count",
    "last_event",
    "purging",
    "purged",
    "attestations",
)


class AliasStore:
    def __init__(self, table: Table, feed: Feed) -> None:
        self.table = table
        self.feed = feed

    def alias(self, name: str, alias: str) -> AliasRecord | None:
        """The alias item, a deletion tombstone (`deleted`) included; LinkedNameError when `name` is a link
        (its marker is the first item at or after any alias name)."""
        item = first_at(self.table, keys.alias_key(name, alias))
        if item is not None and item["sk"] == keys.LINK_SK:
            raise LinkedNameError(name, item["link"])
        return None if item is None or item["sk"] != alias else alias_record(item)

    def live_aliases(self, name: str) -> list[AliasRecord]:
        """The live aliases (at most MAX_ALIASES), as far as one bounded listing reaches past tombstones."""
        return self.aliases_page(name, limit=MAX_ALIASES, token=None)[0]

    def alias_records(self, name: str) -> list[AliasRecord]:
        """Every alias, live or a deletion's tombstone (a rollback re-creates a deleted alias), as far as one
        bounded listing reaches."""
        items, _ = page(
            self.table,
            keys.alias_pk(name),
            f"aliases:{name}:all",
            limit=MAX_ALIASES,
            token=None,
            keep=lambda i: i["sk"] != keys.LINK_SK,
            consistent=True,
        )
        return [alias_record(i) for i in items]

    def aliases_page(self, name: str, *, limit: int, token: str | None) -> tuple[list[AliasRecord], str | None]:
        """Live aliases in name order; deletion tombstones are skipped (within the listing's query budget)."""
        items, next_token = page(
            self.table,
            keys.alias_pk(name),
            f"aliases:{name}",
            limit=limit,
            token=token,
            keep=lambda i: not i.get("deleted") and i["sk"] != keys.LINK_SK,
            consistent=True,
        )
        return [alias_record(i) for i in items], next_token

    def write_alias(
        self,
        new: AliasRecord,
        old: AliasRecord | None,
        *,
        action: str,
        seal: Seal | None = None,
        also: Sequence[Write] = (),
        announce: Sequence[Change] = (),
        guard: Guard | None = None,
    ) -> AliasRecord:
        """One transaction: the alias (compare-and-set on `old`: its revision and its mark of the policy), its
        history record, the artifact check, pins.

        `guard` holds an alias policy's verdict (arca.adapters.store.guards): the alias records the policy's
        revision it judged by, its checks join the transaction and its condition on a gaining version joins that
        version's pin. Without one (a rollout's step), the alias keeps its mark. When the policy or something its
        verdict read changed (the alias itself did not move), PolicyMovedError: the write must be judged again.

        `also` are more items of the same transaction (a rollout's state); when one of their conditions fails,
        the TransactionCancelled is raised as it is, for the caller (the rollout store) to read. `announce` are
        events of the same change after the alias's own (a rollout's step).

        Pins are net deltas: `ADD pinned_by` (only on a live version) for new targets, `DELETE pinned_by` for
        released ones, nothing for a target kept (DynamoDB refuses two actions on one item, and a version this
        alias pins cannot have been deleted meanwhile). Raises ContentionError when the alias moved,
        NotFoundError / ConflictError when the artifact is gone or being purged, ConflictError when a target
        version was deleted meanwhile.
        """
        name, alias = new.name, new.alias
        # The policy's revision the alias carries: the one its verdict read, or, unjudged (a rollout's step), the
        # one it carried; the alias's condition holds the one read, so a policy written meanwhile is never missed.
        marker = guard.policy_revision if guard is not None else (old.policy_revision if old else None)
        new = new.model_copy(update={"policy_revision": marker})
        item = alias_item(new)
        history = {k: v for k, v in item.items() if k != "policy_revision"}
        history.update(kind="alias-history", action=action)
        alias_key = keys.alias_key(name, alias)
        writes = [
            Write(
                "alias",
                "Put",
                alias_key,
                item={**item, **alias_key},
                condition=ITEM_NOT_EXIST if old is None else _unchanged(old),
            ),
            Write(
                "history",
                "Put",
                keys.history_key(name, alias, new.revision),
                item=history,
                condition=ITEM_NOT_EXIST,
            ),
            # The same record under a time-ordered key: "the alias at time T" is one Query (revision_at).
            Write(
                "history-time",
                "Put",
                keys.history_time_key(name, alias, str(new.updated_at), new.revision),
                item={**history, "kind": "alias-history-time"},
            ),
        ]
        # Every alias write, deletions included, holds only while the artifact is live and unmarked, so
        # nothing is written to its partitions once a purge has marked it (a plain purge marks LATEST only
        # where `alias_count` is zero).
        writes.append(self._alias_count_write(name, live_before=old is not None and not old.deleted, new=new))
        writes += _guarded(name, _pin_writes(name, alias, old.pinned if old else set(), new.pinned), guard)
        try:
            self.feed.commit(
                sealed(seal, new.entity()) + writes + list(also),
                name,
                [_alias_change(new, old, action), *announce],
                by=new.updated_by,
                now=str(new.updated_at),
            )
        except TransactionCancelled as cancelled:
            raise_if_key_taken(cancelled)
            if (guard is not None and guard.broken(cancelled)) or _policy_moved(cancelled, old):
                raise PolicyMovedError(f"what the policy of {alias!r} read changed; judged again") from None
            if any(cancelled.failed(w.name) for w in also):
                raise
            raise _alias_refusal(cancelled, name, alias) from None
        return new

    @staticmethod
    def _alias_count_write(name: str, *, live_before: bool, new: AliasRecord) -> Write:
        """LATEST's part of an alias transaction: `alias_count` counts live aliases, under MAX_ALIASES.

        A new live alias adds one only while the count is below the cap (so concurrent creations cannot
        pass it), a deletion takes one away; a move only checks that the artifact is live.
        """
        key = keys.latest_key(name)
        delta = int(not new.deleted) - int(live_before)
        if delta == 0:
            return Write("artifact", "ConditionCheck", key, condition=ARTIFACT_IS_LIVE)
        # a new live alias: only under the cap
        condition = ARTIFACT_IS_LIVE & below("alias_count", MAX_ALIASES) if delta > 0 else ARTIFACT_IS_LIVE
        update = Update(add=("alias_count :delta",))
        return Write("artifact", "Update", key, update=update, condition=condition, values={":delta": delta})


def policy_revision_is(revision: int | None) -> ConditionBase:
    """The alias item carries the policy revision `revision` (None: an item written before it carried one)."""
    return Attr("policy_revision").not_exists() if revision is None else Attr("policy_revision").eq(revision)


def _unchanged(old: AliasRecord) -> ConditionBase:
    """The alias is still as read: at its revision, carrying the policy revision read with it."""
    return Attr("revision").eq(old.revision) & policy_revision_is(old.policy_revision)


def _policy_moved(cancelled: TransactionCancelled, old: AliasRecord | None) -> bool:
    """Whether the alias's condition failed only because its policy changed (the alias itself did not move)."""
    reason = cancelled.failed("alias")
    if reason is None or reason.item is None or old is None:
        return False
    return int(reason.item.get("revision", -1)) == old.revision


def _alias_change(new: AliasRecord, old: AliasRecord | None, action: str) -> Change:
    """alias.updated (a set or a rollback, with the targets before and after) or alias.deleted."""
    from arca.domain.events import AliasDeleted, AliasUpdated, Change

    before = old.version if old is not None and not old.deleted else None
    if new.deleted:
        return Change(AliasDeleted(revision=new.revision), before, alias=new.alias)
    detail = AliasUpdated(
        revision=new.revision,
        action=action,
        secondary_version=new.secondary_version,
        secondary_version_weight=new.secondary_version_weight,
        previous_version=before,
        reason=new.reason,
        rollback=action == "rollback",
    )
    return Change(detail, new.version, alias=new.alias)


def _pin_writes(name: str, alias: str, before: set[int], after: set[int]) -> list[Write]:
    """The net pin changes of an alias write: `ADD pinned_by` (only on a live version) for new targets, `DELETE
    pinned_by` for released ones, nothing for a target kept."""
    writes = [
        Write(
            f"v{number}",
            "Update",
            keys.version_key(name, number),
            update=Update(add=("pinned_by :me",)),
            condition=ITEM_EXISTS & Attr("deleted").eq(False),
            values={":me": {alias}},
        )
        for number in sorted(after - before)
    ]
    writes += [
        Write(
            f"v{number}",
            "Update",
            keys.version_key(name, number),
            update=Update(delete=("pinned_by :me",)),
            condition=ITEM_EXISTS,
            values={":me": {alias}},
        )
        for number in sorted(before - after)
    ]
    return writes


def _guarded(name: str, pins: list[Write], guard: Guard | None) -> list[Write]:
    """The pin writes with a guard's conditions on their versions merged in (DynamoDB takes one action per item in
    a transaction), and the guard's checks. A guarded version the alias pinned already (a secondary made the
    primary, its weight raised) has no pin write: its condition is a ConditionCheck of its own."""
    if guard is None:
        return pins
    found = []
    merged: set[int] = set()
    for write in pins:
        number = int(write.name[1:])
        extra = guard.versions.get(number)
        if extra is not None and isinstance(write.update, Update) and write.update.add:
            write = dataclasses.replace(write, condition=write.condition & extra)
            merged.add(number)
        found.append(write)
    kept = [
        Write(f"guard-v{number}", "ConditionCheck", keys.version_key(name, number), condition=condition)
        for number, condition in sorted(guard.versions.items())
        if number not in merged
    ]
    return [*guard.checks, *kept, *found]


def _alias_refusal(cancelled: TransactionCancelled, name: str, alias: str) -> RegistryError:
    """What a cancelled alias transaction means: the alias moved, the artifact is gone, linked, being purged or
    at its alias limit, or a target version was deleted meanwhile."""
    if cancelled.failed("alias") or cancelled.failed("history"):
        return ContentionError(f"alias {alias!r} changed concurrently")
    artifact = cancelled.failed("artifact")
    if artifact is not None:
        if artifact.item is not None and artifact.item.get("link"):
            return LinkedNameError(name, artifact.item["link"])
        if artifact.item is None or artifact.item.get("purged"):
            return NotFoundError(f"artifact {name!r} does not exist")
        if artifact.item.get("purging"):
            return ConflictError(f"artifact {name!r} is being purged")
        return AliasLimitError(
            f"artifact {name!r} has {MAX_ALIASES} aliases, the most it may have; delete one first",
            field="alias",
            details={"limit": MAX_ALIASES},
        )
    number = next(int(n[1:]) for n in cancelled.reasons if n.startswith("v"))
    return ConflictError(f"version {number} was deleted or removed meanwhile", field="version")
