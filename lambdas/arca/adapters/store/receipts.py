"""Idempotency records: `__idem#<scope>` / `<key>`, written in the transaction of the change they answer."""

from __future__ import annotations

from typing import Any

from arca.adapters import keys
from arca.adapters.dynamo import Table, TransactionCancelled, Write
from arca.adapters.store.conditions import receipt_not_exist_or_expired
from arca.domain.errors import IdempotencyKeyTakenError
from arca.domain.receipts import Answer, Receipt, Seal, StoredReceipt


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
            self.table.transact([_receipt_write(seal.receipt, seal.render(outcome))])
        except TransactionCancelled as cancelled:
            raise_if_key_taken(cancelled)
            raise


def sealed(seal: Seal | None, entity: Any) -> list[Write]:
    """The idempotency record a write carries in its own transaction (none without a seal)."""
    return [] if seal is None else [_receipt_write(seal.receipt, seal.render(entity))]


def _receipt_write(receipt: Receipt, answer: Answer) -> Write:
    """The record `__idem#<scope>` / `<key>`, put only where none is retained (an expired one is replaced)."""
    item = {
        "kind": "idempotency",
        "fingerprint": receipt.fingerprint,
        "status": answer.status,
        "body": answer.body,
        "ttl": receipt.expires,
    }
    return Write(
        "receipt",
        "Put",
        keys.receipt_key(receipt.scope, receipt.key),
        item=item,
        condition=receipt_not_exist_or_expired(receipt.now),
    )


def raise_if_key_taken(cancelled: TransactionCancelled) -> None:
    if cancelled.failed("receipt") is not None:
        raise IdempotencyKeyTakenError("this Idempotency-Key was used by a concurrent request") from None
