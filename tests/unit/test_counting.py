"""A tree's file contents counted before its version is written (decision 98): COUNT_BATCH references a
transaction, each only while no collection holds the content; a refusal names the content, and what earlier
transactions counted stays counted (over-counted, never under)."""

from __future__ import annotations

import pytest

from arca.adapters import keys
from arca.adapters.dynamo import CONDITION_FAILED, Reason, TransactionCancelled, Update, Write
from arca.adapters.store.artifacts import COUNT_BATCH, ArtifactStore
from arca.adapters.store.feed import Feed
from arca.domain.errors import ConflictError
from arca.services.publishing import count_contents


class Transactions:
    """A table that records each transaction, and refuses the one whose `collecting` content is named."""

    def __init__(self, collecting: str | None = None) -> None:
        self.collecting = collecting
        self.committed: list[list[Write]] = []

    def transact(self, writes: list[Write]) -> None:
        for write in writes:
            if write.key == keys.blob_count_key("m", self.collecting or ""):
                reasons = {w.name: Reason("None", None) for w in writes}
                item = {"refs": 0, "collecting": "token", "claimed_at": "2026-01-01T00:00:00Z"}
                reasons[write.name] = Reason(CONDITION_FAILED, item)
                raise TransactionCancelled(reasons)
        self.committed.append(writes)


NOW = "2026-01-01T00:00:00Z"


def store(table: Transactions) -> ArtifactStore:
    """The artifact store over the recording table, its changes committed through a feed as the service's are."""
    return ArtifactStore(table, Feed(table))  # type: ignore[arg-type]


def contents(n: int) -> list[str]:
    return [f"{i:064x}" for i in range(n)]


def test_the_contents_are_counted_a_bounded_transaction_at_a_time_in_the_order_given() -> None:
    # Given
    table = Transactions()
    # When 2.5 transactions' worth are counted
    count_contents(store(table), "m", contents(COUNT_BATCH * 2 + COUNT_BATCH // 2), now=NOW)
    # Then each transaction adds one reference to each of at most COUNT_BATCH counts, each once, in order
    assert [len(t) for t in table.committed] == [COUNT_BATCH, COUNT_BATCH, COUNT_BATCH // 2]
    written = [w for t in table.committed for w in t]
    assert [w.key for w in written] == [keys.blob_count_key("m", c) for c in contents(len(written))]
    assert all(w.kind == "Update" and w.update == Update(add={"refs": 1}) for w in written)
    # And each holds only while no collection holds its content
    assert all(w.condition is not None for w in written)


def test_a_content_being_collected_is_refused_by_name_and_earlier_counts_stay() -> None:
    # Given a content of the second transaction being collected
    held = contents(COUNT_BATCH + 3)[COUNT_BATCH + 1]
    table = Transactions(collecting=held)
    # When
    with pytest.raises(ConflictError) as refused:
        count_contents(store(table), "m", contents(COUNT_BATCH + 3), now=NOW)
    # Then the 409 names that content, and the first transaction's counts are not taken back
    assert held in refused.value.message and refused.value.details == {"collecting": True}
    assert "since 2026-01-01T00:00:00Z" in refused.value.message
    assert len(table.committed) == 1 and len(table.committed[0]) == COUNT_BATCH


def test_no_contents_write_nothing() -> None:
    table = Transactions()
    count_contents(store(table), "m", [], now=NOW)
    assert table.committed == []
