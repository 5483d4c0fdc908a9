"""Aliases: `__<name>-alias` / `<alias>` items, written with their history and their versions' pins."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from boto3.dynamodb.conditions import Attr, ConditionBase

from arca.adapters import keys
from arca.adapters.dynamo import Condition, Reason, Table, Update, Write
from arca.adapters.store.change import ALIAS_MOVED, ARTIFACT, PINS, POLICY, Refusal
from arca.adapters.store.conditions import ARTIFACT_IS_LIVE, ITEM_EXISTS, ITEM_NOT_EXIST, below
from arca.adapters.store.feed import Feed
from arca.adapters.store.pages import page
from arca.adapters.store.records import alias_at, alias_item, alias_record, revision_item
from arca.domain.aggregates import AliasRecord
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

if TYPE_CHECKING:  # the event models are imported by the writes that announce them: a resolve imports none
    from arca.adapters.store.change import Change as StagedChange
    from arca.domain.events import Change

# Every attribute an alias transaction (stage_alias, a rollout's start and steps) names on the artifact's own items,
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
        return alias_at(self.table, name, alias)

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

    def stage_alias(
        self, change: StagedChange, new: AliasRecord, old: AliasRecord | None, *, action: str, policy: int | None = None
    ) -> AliasRecord:
        """Stage the alias write into `change`: the alias (compare-and-set on `old`: its revision and its mark of the
        policy), its history records, LATEST's alias count and check, the pins, and its event. Returns the alias as
        it will be written.

        `policy` is the live policy's revision an alias policy's verdict read (0: none; arca.adapters.store.guards,
        whose Guard stages the rest of that verdict after this): the alias records it. Unjudged (None, a rollout's
        step), the alias keeps its mark. Pins are net deltas: `ADD pinned_by` (only on a live version) for new
        targets, `DELETE pinned_by` for released ones, nothing for a target kept (DynamoDB refuses two actions on
        one item, and a version this alias pins cannot have been deleted meanwhile).

        Each item carries its refusal: PolicyMovedError when only the alias's mark of its policy moved (the write
        must be judged again), ContentionError when the alias moved, NotFoundError / LinkedNameError /
        ConflictError (being purged) / AliasLimitError from LATEST as it was, ConflictError when a target version
        was deleted meanwhile.
        """
        name, alias = new.name, new.alias
        # The policy's revision the alias carries: the one its verdict read, or, unjudged (a rollout's step), the
        # one it carried; the alias's condition holds the one read, so a policy written meanwhile is never missed.
        marker = policy if policy is not None else (old.policy_revision if old else None)
        new = new.model_copy(update={"policy_revision": marker})
        alias_key = keys.alias_key(name, alias)
        moved = ContentionError(f"alias {alias!r} changed concurrently")
        put = Write("alias", "Put", alias_key, item=alias_item(new))
        if old is None:
            change.stage(dataclasses.replace(put, condition=ITEM_NOT_EXIST), refused=moved, rank=ALIAS_MOVED)
        else:
            change.stage(dataclasses.replace(put, condition=_unchanged(old)), refused=_policy_moved(old), rank=POLICY)
            change.refuse(alias_key, moved, rank=ALIAS_MOVED)
        change.stage(
            Write(
                "history",
                "Put",
                keys.history_key(name, alias, new.revision),
                item=revision_item(new, action),
                condition=ITEM_NOT_EXIST,
            ),
            refused=moved,
            rank=ALIAS_MOVED,
        )
        # The same record under a time-ordered key: "the alias at time T" is one Query (revision_at).
        change.stage(
            Write(
                "history-time",
                "Put",
                keys.history_time_key(name, alias, str(new.updated_at), new.revision),
                item=revision_item(new, action, timed=True),
            )
        )
        # Every alias write, deletions included, holds only while the artifact is live and unmarked, so
        # nothing is written to its partitions once a purge has marked it (a plain purge marks LATEST only
        # where `alias_count` is zero).
        change.stage(
            self._alias_count_write(name, live_before=old is not None and not old.deleted, new=new),
            refused=lambda reason: _artifact_refusal(reason, name),
            rank=ARTIFACT,
        )
        for number, write in _pin_writes(name, alias, old.pinned if old else set(), new.pinned):
            gone = ConflictError(f"version {number} was deleted or removed meanwhile", field="version")
            change.stage(write, refused=gone, rank=PINS)
        change.announce(_alias_change(new, old, action))
        return new

    def commit(self, change: StagedChange) -> None:
        """Commit an alias change (staged by this store and the stores writing beside it) through the feed."""
        self.feed.commit(change)

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
        update = Update(add={"alias_count": delta})
        return Write("artifact", "Update", key, update=update, condition=condition)


def policy_revision_is(revision: int | None) -> ConditionBase:
    """The alias item carries the policy revision `revision` (None: an item written before it carried one)."""
    return Attr("policy_revision").not_exists() if revision is None else Attr("policy_revision").eq(revision)


def _unchanged(old: AliasRecord) -> ConditionBase:
    """The alias is still as read: at its revision, carrying the policy revision read with it."""
    return Attr("revision").eq(old.revision) & policy_revision_is(old.policy_revision)


def _policy_moved(old: AliasRecord) -> Refusal:
    """The alias's condition failed only because its policy changed (the alias itself did not move)."""

    def refusal(reason: Reason) -> RegistryError | None:
        if reason.item is None or int(reason.item.get("revision", -1)) != old.revision:
            return None
        return PolicyMovedError.judged_again(old.alias)

    return refusal


def _artifact_refusal(reason: Reason, name: str) -> RegistryError:
    """What LATEST's failed condition in an alias write means: the artifact is gone, linked, being purged or at
    its alias limit."""
    item = reason.item
    if item is not None and item.get("link"):
        return LinkedNameError(name, item["link"])
    if item is None or item.get("purged"):
        return NotFoundError(f"artifact {name!r} does not exist")
    if item.get("purging"):
        return ConflictError(f"artifact {name!r} is being purged")
    return AliasLimitError(
        f"artifact {name!r} has {MAX_ALIASES} aliases, the most it may have; delete one first",
        field="alias",
        details={"limit": MAX_ALIASES},
    )


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


def _pin_writes(name: str, alias: str, before: set[int], after: set[int]) -> list[tuple[int, Write]]:
    """The net pin changes of an alias write, by version: `ADD pinned_by` (only on a live version) for new targets,
    `DELETE pinned_by` for released ones, nothing for a target kept."""

    def pin(number: int, update: Update, condition: Condition) -> tuple[int, Write]:
        return number, Write(f"v{number}", "Update", keys.version_key(name, number), update=update, condition=condition)

    pins = [
        pin(n, Update(add={"pinned_by": {alias}}), ITEM_EXISTS & Attr("deleted").eq(False))
        for n in sorted(after - before)
    ]
    return pins + [pin(n, Update(delete={"pinned_by": {alias}}), ITEM_EXISTS) for n in sorted(before - after)]
