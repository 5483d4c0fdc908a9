"""Idempotency records: `__idem#<scope>` / `<key>`, written in the transaction of the change they answer."""

from __future__ import annotations

from typing import Any

from arca.adapters import keys
from arca.adapters.dynamo import Table, TransactionCancelled
from arca.adapters.store.records import receipt_write
from arca.domain.errors import IdempotencyKeyTakenError
from arca.domain.receipts import Answer, Seal, StoredReceipt


class ReceiptStore:
    def __init__(self, table: Table) -> None:
        self.table = table

    def receipt(self, scope: str, key: str, *, now: int) -> StoredReceipt | None:
        """The key's record if it is still retained (TTL deletion lags, so `ttl` is checked here too)."""
        item = self.table.get(keys.receipt_key(scope, key))
        if item is None or int(item["ttl"]) <= now:
            return None
        return StoredReceipt(item["fingerprint"], Answer(int(item["status"]), item["body"]))

    def put_receipt(self, seal: Seal, outcome: Any) -> None:
        """The record alone (`outcome` as the seal renders it), for a write that changed nothing (a deduplicated
        publish, a dry run)."""
        try:
            self.table.transact([receipt_write(seal.receipt, seal.render(outcome))])
        except TransactionCancelled:  # its one item's condition: the key was taken meanwhile
            raise IdempotencyKeyTakenError("this Idempotency-Key was used by a concurrent request") from None
