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
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from boto3.dynamodb.conditions import Attr, ConditionBase

from arca.adapters import keys
from arca.adapters.dynamo import Item, Table, TransactionCancelled, Write
from arca.adapters.store.conditions import ARTIFACT_IS_LIVE, ITEM_NOT_EXIST
from arca.adapters.store.feed import Feed
from arca.adapters.store.pages import page
from arca.adapters.store.records import AliasRecord, alias_item
from arca.domain.errors import ConflictError, ContentionError, NotFoundError
from arca.domain.events import AliasPolicyUpdated, Change
from arca.domain.guards import AliasPolicy, PolicyFields, Promotion

POLICY_FIELDS = tuple(PolicyFields.model_fields)
TTL_GRACE_SECONDS = 86_400


@dataclass(frozen=True)
class Guard:
    """Conditions an alias transaction carries: `policy_revision` is the live policy's revision the alias item
    records (0: none), `checks` are ConditionChecks on other items (named `guard…`), `versions` a condition on a
    target version's own item (ANDed onto its pin)."""

    policy_revision: int = 0
    checks: tuple[Write, ...] = ()
    versions: dict[int, ConditionBase] = field(default_factory=dict)

    def broken(self, cancelled: TransactionCancelled) -> bool:
        """Whether the cancellation came from one of these conditions (a target version still live: its extra
        condition failed, not its pin's)."""
        if any(name.startswith("guard") and cancelled.failed(name) for name in cancelled.reasons):
            return True
        for number in self.versions:
            reason = cancelled.failed(f"v{number}")
            if reason is not None and reason.item is not None and not reason.item.get("deleted"):
                return True
        return False


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

    def write_policy(
        self,
        name: str,
        alias: str,
        rules: PolicyFields | None,
        *,
        seen: int,
        alias_seen: AliasRecord | None,
        now: str,
        by: str | None,
    ) -> AliasPolicy | None:
        """Put the policy (None: its tombstone) as revision `seen + 1`, under the revision read, and the alias item
        as read (`alias_seen`, under its revision) carrying the policy's revision (0: removed); with no alias item
        (None), check that there still is none. Raises ContentionError when either changed, NotFoundError /
        ConflictError when the artifact is gone or being purged."""
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
                item={**alias_item(mark), **alias_key},
                condition=Attr("revision").eq(alias_seen.revision),
            )
        writes = [
            Write("policy", "Put", keys.policy_key(name, alias), item=item, **_at_revision(seen)),
            Write("artifact", "ConditionCheck", keys.latest_key(name), condition=ARTIFACT_IS_LIVE),
            marked,
        ]
        policy = None if rules is None else compact(rules.model_dump(mode="json"))
        change = Change(AliasPolicyUpdated(revision=revision, removed=rules is None, policy=policy), alias=alias)
        try:
            self.feed.commit(writes, name, [change], by=by, now=now)
        except TransactionCancelled as cancelled:
            _refuse(cancelled, name, what=f"the policy of {alias!r}", item="policy", also=("alias",))
        return policy_entity(item)

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
            checks.append(Write("guard-policy", "ConditionCheck", keys.policy_key(name, alias), **_at_revision(seen)))
        for number, wanted in sorted(tags.items()):
            for i, (tag, value) in enumerate(sorted(wanted.items())):
                checks.append(
                    Write(
                        f"guard-tag-{number}-{i}",
                        "ConditionCheck",
                        keys.version_tag_key(name, number, tag),
                        condition=Attr("value").eq(value),
                    )
                )
        if soak is not None:
            soak_alias, revision = soak
            checks.append(
                Write(
                    "guard-soak",
                    "ConditionCheck",
                    keys.alias_key(name, soak_alias),
                    condition=Attr("revision").eq(revision),
                )
            )
        versions = {}
        for number, types in attestations.items():
            if types:
                versions[number] = functools.reduce(operator.and_, (Attr("attestations").contains(t) for t in types))
        return Guard(policy.revision if policy is not None else 0, tuple(checks), versions)

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
    def promotion_write(promotion: Promotion, *, seen: int, ttl: int) -> Write:
        """The promotion put as written `seen + 1` times, under `seq = :seen` (absent for a new one)."""
        item = {
            "kind": "promotion",
            **compact(promotion.model_dump(mode="json")),
            "seq": seen + 1,
            "ttl": ttl + TTL_GRACE_SECONDS,
        }
        key = keys.promotion_key(promotion.name, promotion.alias, promotion.id)
        if seen == 0:
            return Write("promotion", "Put", key, item=item, condition=ITEM_NOT_EXIST)
        return Write("promotion", "Put", key, item=item, condition=Attr("seq").eq(seen))

    def put_promotion(self, write: Write, name: str, changes: list[Change], *, by: str | None, now: str) -> None:
        """A promotion change alone (requested, an approval short of the count, rejected). Raises ContentionError
        when the promotion changed since read, NotFoundError / ConflictError for the artifact."""
        latest = Write("artifact", "ConditionCheck", keys.latest_key(name), condition=ARTIFACT_IS_LIVE)
        try:
            self.feed.commit([write, latest], name, changes, by=by, now=now)
        except TransactionCancelled as cancelled:
            _refuse(cancelled, name, what="the promotion", item="promotion")


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


def _at_revision(seen: int) -> dict[str, Any]:
    if seen == 0:
        return {"condition": ITEM_NOT_EXIST}
    return {"condition": Attr("revision").eq(seen)}


def _refuse(cancelled: TransactionCancelled, name: str, *, what: str, item: str, also: tuple[str, ...] = ()) -> None:
    artifact = cancelled.failed("artifact")
    if artifact is not None:
        if artifact.item is None or artifact.item.get("purged"):
            raise NotFoundError(f"artifact {name!r} does not exist") from None
        if artifact.item.get("purging"):
            raise ConflictError(f"artifact {name!r} is being purged") from None
    if any(cancelled.failed(n) is not None for n in (item, *also)):
        raise ContentionError(f"{what} changed concurrently") from None
    raise cancelled
