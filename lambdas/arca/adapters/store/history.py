"""Alias history: one record per revision (`__<name>-history` / `<alias>#%012d`) and the same record under a
time-ordered key (`<alias>@<updated_at>#n`), both written in the alias's own transaction (arca.adapters.store.aliases).
"""

from __future__ import annotations

from arca.adapters import keys
from arca.adapters.dynamo import Item, Table
from arca.adapters.store.pages import page
from arca.adapters.store.records import alias_at, revision_record
from arca.domain.aggregates import RevisionRecord


class HistoryStore:
    def __init__(self, table: Table) -> None:
        self.table = table

    def revision(self, name: str, alias: str, revision: int) -> RevisionRecord | None:
        item = self.table.get(keys.history_key(name, alias, revision))
        return None if item is None else revision_record(item)

    def history_page(
        self, name: str, alias: str, *, limit: int, token: str | None
    ) -> tuple[list[RevisionRecord], str | None]:
        items, next_token = page(
            self.table,
            keys.history_pk(name),
            f"history:{name}:{alias}",
            limit=limit,
            token=token,
            keep=lambda i: True,
            sk_prefix=keys.history_prefix(alias),
            forward=False,
        )
        return [revision_record(i) for i in items], next_token

    def revision_before(self, name: str, alias: str, current: int) -> RevisionRecord | None:
        """The newest revision before `current` that is not a deletion (a few records a page)."""
        below = (keys.history_key(name, alias, 0)["sk"], keys.history_key(name, alias, current - 1)["sk"])
        for item in self.table.query_all(
            keys.history_pk(name), sk_between=below, forward=False, consistent=True, limit=5
        ):
            if not item.get("deleted"):
                return revision_record(item)
        return None

    def revision_at(self, name: str, alias: str, moment: str) -> RevisionRecord | None:
        """The alias as it stood at `moment`: its newest revision written at or before it; None if deleted then.

        One Query of the alias's time rows (`<alias>@<updated_at>#n`, written with every revision), `sk <=
        moment`, newest first, Limit 1, strongly consistent: one item read however long the history. Every
        revision written before time rows existed is older than every revision that has one, so a time row found
        is the answer; none found means the alias did not exist then, or the answer is such an older revision
        (`_untimed_revision_at`).
        """
        timed = self.table.query(
            keys.history_pk(name),
            sk_between=keys.history_time_bounds(alias, moment),
            forward=False,
            limit=1,
            consistent=True,
        )
        found = timed.items[0] if timed.items else self._untimed_revision_at(name, alias, moment)
        return None if found is None or found.get("deleted") else revision_record(found)

    def _untimed_revision_at(self, name: str, alias: str, moment: str) -> Item | None:
        """No time row at or before `moment`: the alias's oldest record says whether it existed then (one item
        read, and a 404 costs no more). When it did, the answer was written before time rows existed: a binary
        search by revision over its records, at most 1 + ceil(log2(revisions + 1)) GetItems (sound because
        revisions are dense, 1..current, and `updated_at` grows with the revision)."""
        pk = keys.history_pk(name)
        oldest = self.table.query(pk, sk_prefix=keys.history_prefix(alias), limit=1, consistent=True).items
        if not oldest:
            alias_at(self.table, name, alias)  # no history at all: a link name shows here (LinkedNameError)
            return None
        if oldest[0]["updated_at"] > moment:
            return None
        current = alias_at(self.table, name, alias)
        if current is None:
            return None
        found: Item | None = None
        # invariant: revision `low` is at or before `moment`
        low, high = int(oldest[0]["revision"]), current.revision
        while low < high:
            middle = (low + high + 1) // 2
            item = self.table.get(keys.history_key(name, alias, middle))
            if item is not None and item["updated_at"] <= moment:
                low, found = middle, item
            else:
                high = middle - 1
        return found if found is not None else oldest[0]  # `found` is the record of `low` once it moved
