"""Alias policies and promotions: their items, and the conditions that hold a policy's verdict in a write.

Items (keys: arca.adapters.keys):
- The policy, `__<name>-policy` / `<alias>`: its rules, `revision`, `updated_at`, `updated_by`; a removal keeps
  the item as a tombstone (`deleted`) so the revision only grows and a check on it is never fooled by an
  item removed and put again.
- A promotion, `__<name>-promotions` / `<alias>#<id>`: the request, its approvals and its decision, with `ttl`
  (the table's TTL attribute) a day after it expires.

The alias item carries its live policy's revision (`policy_revision`, 0: none): every policy write puts the alias
item (if there is one) with the new revision under the alias's revision read, and every alias write conditions its
own item on the revision it read there. So an alias write learns whether a policy exists from the item it reads
anyway, and holds that verdict by the condition it has anyway; only the policy's rules cost a read. An alias
item written before it carried the revision, and an alias not yet created, read the policy item instead and check
it in the transaction.

A `Guard` is what an alias write adds to its own transaction so that what the policy's verdict read still holds
when it commits: the policy's revision for the alias item (or, unmarked, a ConditionCheck on the policy at the
revision read or its absence), a ConditionCheck on each required tag's index row (the tag rows are written in
the same transaction as the version's tags), on the soak alias at the revision whose history gave the soak, and
on a gaining version's `attestations` (merged into its pin update where it has one: one item, one action). A
failure of any of them is a PolicyMovedError: judged again.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from boto3.dynamodb.conditions import Attr, ConditionBase

from arca.adapters import keys
from arca.adapters.dynamo import Item, Reason, Table, Write
from arca.adapters.store.change import POLICY, PROMOTION, Change
from arca.adapters.store.conditions import ARTIFACT_IS_LIVE, ITEM_NOT_EXIST
from arca.adapters.store.feed import Feed
from arca.adapters.store.pages import page
from arca.adapters.store.records import alias_item
from arca.domain.aggregates import AliasRecord
from arca.domain.errors import ConflictError, ContentionError, NotFoundError, PolicyMovedError, RegistryError
from arca.domain.events import AliasPolicyUpdated
from arca.domain.events import Change as Announced
from arca.domain.guards import AliasPolicy, PolicyFields, Promotion

POLICY_FIELDS = tuple(PolicyFields.model_fields)
TTL_GRACE_SECONDS = 86_400
# A policy's own change: the artifact's refusal (0) before the policy's or the alias's having moved.
MOVED = 1


@dataclass(frozen=True)
class Guard:
    """Conditions an alias change carries for a policy's verdict on the alias `alias` of the change's artifact:
    `policy_revision` is the live policy's revision the alias item records (0: none), `checks` are conditions on
    other items (key, condition), `versions` a condition on a target version's own item (joined to its pin where it
    has one)."""

    alias: str
    policy_revision: int = 0
    checks: tuple[tuple[str, dict[str, str], ConditionBase], ...] = ()
    versions: dict[int, ConditionBase] = field(default_factory=dict)

    def stage(self, change: Change) -> None:
        """Join these conditions to `change`, after the alias write is staged (a target version's condition joins
        its pin: one item, one action). Each one's failure is a PolicyMovedError, a version's only while the
        version is still live (else its pin's own refusal says it was deleted)."""
        moved = PolicyMovedError.judged_again(self.alias)
        for label, key, condition in self.checks:
            change.require(key, condition, refused=moved, rank=POLICY, label=label)

        def live(reason: Reason) -> RegistryError | None:
            return moved if reason.item is not None and not reason.item.get("deleted") else None

        for number, condition in sorted(self.versions.items()):
            change.require(
                keys.version_key(change.name, number), condition, refused=live, rank=POLICY, label=f"guard-v{number}"
            )


def policy_entity(item: Item) -> AliasPolicy | None:
    if item.get("deleted"):
        return None
    return AliasPolicy(
        name=item["name"],
        alias=item["alias"],
        revision=int(item["revision"]),
        updated_at=item["updated_at"],
        updated_by=item.get("updated_by"),
        **{f: item[f] for f in POLICY_FIELDS if f in item},
    )


def promotion_entity(item: Item, now: str) -> Promotion:
    fields = {k: v for k, v in item.items() if k in Promotion.model_fields}
    fields["version"] = int(item["version"])
    rollout = item.get("rollout")
    if rollout:  # numbers nested in a map come back as Decimals; the request model is strict
        steps = [int(w) for w in rollout["steps"]]
        fields["rollout"] = {**rollout, "steps": steps, "interval_seconds": int(rollout["interval_seconds"])}
    state = item["state"]
    if state == "pending" and now >= item["expires_at"]:
        state = "expired"
    return Promotion(**{**fields, "state": state})


class GuardStore:
    """Policies and promotions; writes announce themselves through the feed. The artifact must be live for a
    policy or a promotion to change (the same check as every alias write)."""

    def __init__(self, table: Table, feed: Feed) -> None:
        self.table = table
        self.feed = feed

    # Policies.

    def policy(self, name: str, alias: str) -> tuple[AliasPolicy | None, int]:
        """The live policy (None: none) and the revision to condition on (0: the item never existed)."""
        item = self.table.get(keys.policy_key(name, alias))
        if item is None:
            return None, 0
        return policy_entity(item), int(item["revision"])

    def stage_policy(
        self,
        change: Change,
        alias: str,
        rules: PolicyFields | None,
        *,
        seen: int,
        alias_seen: AliasRecord | None,
    ) -> AliasPolicy | None:
        """Stage the policy (None: its tombstone) as revision `seen + 1`, under the revision read, and the alias
        item as read (`alias_seen`, under its revision) carrying the policy's revision (0: removed); with no alias
        item (None), check that there still is none. Refused: ContentionError when either changed, NotFoundError /
        ConflictError when the artifact is gone or being purged."""
        name, now, by = change.name, change.now, change.by
        revision = seen + 1
        item: dict[str, Any] = {
            "kind": "alias-policy",
            "name": name,
            "alias": alias,
            "revision": revision,
            "updated_at": now,
            **({"updated_by": by} if by else {}),
        }
        if rules is None:
            item["deleted"] = True
        else:
            item.update(compact(rules.model_dump(mode="json")))
        alias_key = keys.alias_key(name, alias)
        if alias_seen is None:  # an alias created meanwhile must be marked: its creation read no mark
            marked = Write("alias", "ConditionCheck", alias_key, condition=ITEM_NOT_EXIST)
        else:
            mark = alias_seen.model_copy(update={"policy_revision": 0 if rules is None else revision})
            marked = Write(
                "alias",
                "Put",
                alias_key,
                item=alias_item(mark),
                condition=Attr("revision").eq(alias_seen.revision),
            )
        # The artifact gone or being purged is said before the policy or the alias moved (require_live's rank 0).
        moved = ContentionError(f"the policy of {alias!r} changed concurrently")
        policy_put = Write("policy", "Put", keys.policy_key(name, alias), item=item, condition=_at_revision(seen))
        change.stage(policy_put, refused=moved, rank=MOVED)
        self.require_live(change)
        change.stage(marked, refused=moved, rank=MOVED)
        policy = None if rules is None else compact(rules.model_dump(mode="json"))
        change.announce(
            Announced(AliasPolicyUpdated(revision=revision, removed=rules is None, policy=policy), alias=alias)
        )
        return policy_entity(item)

    def commit(self, change: Change) -> None:
        """Commit a policy's or a promotion's change through the feed."""
        self.feed.commit(change)

    def guard(
        self,
        name: str,
        alias: str,
        policy: AliasPolicy | None,
        seen: int | None,
        *,
        tags: dict[int, dict[str, str]],
        attestations: dict[int, list[str]],
        soak: tuple[str, int] | None,
    ) -> Guard:
        """The conditions that hold a verdict: the live `policy` (None: none) recorded on the alias item, and its
        item checked at `seen` when the alias item carried no mark (`seen` None: it did), each version's required
        `tags` (its tag rows) and `attestations` (its item), and the soak alias `soak` = (alias, revision read)."""
        checks = []
        if seen is not None:
            checks.append(("guard-policy", keys.policy_key(name, alias), _at_revision(seen)))
        for number, wanted in sorted(tags.items()):
            for i, (tag, value) in enumerate(sorted(wanted.items())):
                checks.append(
                    (f"guard-tag-{number}-{i}", keys.version_tag_key(name, number, tag), Attr("value").eq(value))
                )
        if soak is not None:
            soak_alias, revision = soak
            checks.append(("guard-soak", keys.alias_key(name, soak_alias), Attr("revision").eq(revision)))
        versions = {}
        for number, types in attestations.items():
            if types:
                versions[number] = functools.reduce(operator.and_, (Attr("attestations").contains(t) for t in types))
        return Guard(alias, policy.revision if policy is not None else 0, tuple(checks), versions)

    def primaries(self, name: str, alias: str, current: int) -> Iterator[tuple[int | None, str]]:
        """The alias's primary version at each revision up to `current`, newest first, as (version, updated_at);
        None for a deletion or LATEST. Strongly consistent Queries of a few records each, read lazily."""
        bounds = (keys.history_key(name, alias, 0)["sk"], keys.history_key(name, alias, current)["sk"])
        for item in self.table.query_all(
            keys.history_pk(name), sk_between=bounds, forward=False, consistent=True, limit=20
        ):
            version = item.get("version")
            live = not item.get("deleted") and version is not None and version != "LATEST"
            yield (int(version) if live and version is not None else None), str(item["updated_at"])

    # Promotions.

    def promotion(self, name: str, alias: str, promotion_id: str, *, now: str) -> tuple[Promotion, int] | None:
        """The promotion and its `seq` (how many times it was written: the compare-and-set token)."""
        item = self.table.get(keys.promotion_key(name, alias, promotion_id))
        return None if item is None else (promotion_entity(item, now), int(item["seq"]))

    def promotions_page(
        self, name: str, alias: str, *, state: str | None, limit: int, token: str | None, now: str
    ) -> tuple[list[Promotion], str | None]:
        """An alias's promotions, newest first, only those in `state` when given: the bounded page of every
        listing (at most QUERY_BUDGET strongly consistent Queries, cut at PAGE_BYTES of JSON)."""
        items, next_token = page(
            self.table,
            keys.promotions_pk(name),
            f"promotions:{name}:{alias}",
            limit=limit,
            token=token,
            keep=lambda item: state is None or promotion_entity(item, now).state == state,
            sk_prefix=keys.promotion_prefix(alias),
            forward=False,
            consistent=True,
        )
        return [promotion_entity(i, now) for i in items], next_token

    @staticmethod
    def stage_promotion(change: Change, promotion: Promotion, *, seen: int, ttl: int) -> None:
        """Stage the promotion as written `seen + 1` times, under `seq = :seen` (absent for a new one); refused
        with a ContentionError when it changed since read (asked after a rollout's refusal, before the alias's
        when it is applied with the alias write)."""
        item = {
            "kind": "promotion",
            **compact(promotion.model_dump(mode="json")),
            "seq": seen + 1,
            "ttl": ttl + TTL_GRACE_SECONDS,
        }
        key = keys.promotion_key(promotion.name, promotion.alias, promotion.id)
        condition = ITEM_NOT_EXIST if seen == 0 else Attr("seq").eq(seen)
        change.stage(
            Write("promotion", "Put", key, item=item, condition=condition),
            refused=ContentionError(f"promotion {promotion.id} changed concurrently"),
            rank=PROMOTION,
        )

    @staticmethod
    def require_live(change: Change) -> None:
        """Stage the check that the artifact is live (a policy's or a promotion's change alone, which writes no
        alias); refused with NotFoundError / ConflictError when it is gone or being purged."""
        change.require(
            keys.latest_key(change.name), ARTIFACT_IS_LIVE, refused=_artifact_refusal(change.name), label="artifact"
        )


def compact(value: dict[str, Any]) -> dict[str, Any]:
    """`value` without its empty or null fields, at every depth: DynamoDB Local's stream gives an empty map or
    list in a way no decoder reads, and the defaults say the same."""
    kept: dict[str, Any] = {}
    for key, field_value in value.items():
        inner = compact(field_value) if isinstance(field_value, dict) else field_value
        if inner is None or inner == {} or inner == [] or inner is False:
            continue
        kept[key] = inner
    return kept


def _at_revision(seen: int) -> ConditionBase:
    """The policy's item as read: absent (0) or at revision `seen`."""
    return ITEM_NOT_EXIST if seen == 0 else Attr("revision").eq(seen)


def _artifact_refusal(name: str) -> Callable[[Reason], RegistryError | None]:
    def refusal(reason: Reason) -> RegistryError | None:
        if reason.item is None or reason.item.get("purged"):
            return NotFoundError(f"artifact {name!r} does not exist")
        if reason.item.get("purging"):
            return ConflictError(f"artifact {name!r} is being purged")
        return None

    return refusal
