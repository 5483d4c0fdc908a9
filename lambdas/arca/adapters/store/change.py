"""One unit of work on one artifact: the writes of one compare-and-set try, staged by the stores, committed once.

A service opens a `Change` for each try of a write (arca.services.retry), asks the stores to *stage* their items
into it (a store never commits), and hands it to `Feed.commit`, the one place a change is committed: its
events are stamped and ordered there, the items sent as one TransactWriteItems, and a cancellation answered by the
refusals the staged items carry. Each staged item says itself what the failure of its condition means (an
exception, or a function of the item as it was that gives one or passes), so no caller reads a cancellation by item
name. An item may be staged once (DynamoDB takes one action per item in a transaction): a further condition on it
(`require`) joins its condition, and its refusal joins the item's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.conditions import ConditionBase

from arca.adapters.dynamo import Reason, TransactionCancelled, Write
from arca.adapters.store.records import receipt_write
from arca.domain.errors import ContentionError, IdempotencyKeyTakenError, RegistryError

if TYPE_CHECKING:  # the events' models are imported by the writes that announce them: a resolve imports none
    from arca.domain.events import Change as Announced
    from arca.domain.receipts import Seal

# What a failed condition means: an error to raise, or a function of the item as it was (None: absent) that gives
# one or None (not its to say: the next refusal of the item, then of the next item, is asked).
Refusal = RegistryError | Callable[[Reason], RegistryError | None]
# The rank of the idempotency record's refusal: a key taken by a concurrent request is said before anything else.
FIRST = -1
# The order in which an alias change's refusals are asked (lower first), whichever store stages the item: a policy
# moved under the verdict (judged again: the guard's checks, the alias item's mark), then the items staged beside
# the alias (a rollout's, then a promotion's), then the alias's own: the alias moved, the artifact as it was, a
# pinned version gone.
POLICY = 0
ROLLOUT = 1
PROMOTION = 2
ALIAS_MOVED = 10
ARTIFACT = 11
PINS = 12


@dataclass
class Staged:
    write: Write
    refusals: list[tuple[int, Refusal]] = field(default_factory=list)


@dataclass
class Change:
    """The staged items and announced events of one write to the artifact `name`, by `by` at `now`."""

    name: str
    by: str | None
    now: str
    staged: list[Staged] = field(default_factory=list)
    announced: list[Announced] = field(default_factory=list)
    sealed: bool = False

    def stage(self, write: Write, *, refused: Refusal | None = None, rank: int = 0) -> None:
        """Add one item. `refused` says what its condition's failure means (none: the artifact changed
        concurrently, a ContentionError the service's compare-and-set retries); refusals are asked by `rank`,
        then in the order staged."""
        if self._at(write.key) is not None:
            raise ValueError(f"an item is staged once in a transaction: {dict(write.key)}")
        self.staged.append(Staged(write, [(rank, refused)] if refused is not None else []))

    def require(
        self, key: Mapping[str, str], condition: ConditionBase, *, refused: Refusal, rank: int = 0, label: str = "check"
    ) -> None:
        """A condition on an item: joined to the item's staged write, or a ConditionCheck of its own."""
        staged = self._at(key)
        if staged is None:
            self.staged.append(Staged(Write(label, "ConditionCheck", key, condition=condition), [(rank, refused)]))
            return
        joined = condition if staged.write.condition is None else staged.write.condition & condition
        staged.write = dataclasses.replace(staged.write, condition=joined)
        staged.refusals.append((rank, refused))

    def refuse(self, key: Mapping[str, str], refused: Refusal, *, rank: int = 0) -> None:
        """One more meaning of the failure of the item staged at `key`, asked at `rank` (an item whose one
        condition fails for one of two reasons, each asked in its own place)."""
        staged = self._at(key)
        if staged is None:
            raise ValueError(f"no item is staged at {dict(key)}")
        staged.refusals.append((rank, refused))

    def announce(self, *changes: Announced) -> None:
        """Events of this change, in order (each becomes an event item of the same transaction)."""
        self.announced.extend(changes)

    def seal(self, seal: Seal | None, outcome: Any) -> None:
        """The idempotency record of the request this change answers (`outcome` as the seal renders it), once."""
        if seal is None:
            return
        if self.sealed:
            raise ValueError("a change carries one idempotency record")
        self.sealed = True
        self.stage(
            receipt_write(seal.receipt, seal.render(outcome)),
            refused=IdempotencyKeyTakenError("this Idempotency-Key was used by a concurrent request"),
            rank=FIRST,
        )

    def writes(self) -> list[Write]:
        """The items as sent: each named by its place, so that a cancellation is read by place, never by name."""
        return [dataclasses.replace(s.write, name=f"{i}:{s.write.name}") for i, s in enumerate(self.staged)]

    def refusal(self, cancelled: TransactionCancelled) -> RegistryError:
        """What a cancellation of `writes()` means: the first refusal, by rank then order, that speaks for a failed
        item; a ContentionError when none does."""
        asked: list[tuple[int, int, Refusal, Reason]] = []
        for place, (staged, write) in enumerate(zip(self.staged, self.writes(), strict=True)):
            reason = cancelled.failed(write.name)
            if reason is not None:
                asked += [(rank, place, refusal, reason) for rank, refusal in staged.refusals]
        for _, _, refusal, reason in sorted(asked, key=lambda a: (a[0], a[1])):
            error = refusal if isinstance(refusal, RegistryError) else refusal(reason)
            if error is not None:
                return error
        return ContentionError(f"artifact {self.name!r} changed concurrently; retry")

    def _at(self, key: Mapping[str, str]) -> Staged | None:
        wanted = dict(key)
        return next((s for s in self.staged if dict(s.write.key) == wanted), None)
