"""Idempotency keys: a request's receipt, and the answer kept for a retry of it (records: arca.domain.receipts).

A write's record is written by its store in the transaction of the change, rendered by the route that asked
for the write (a Seal); this service stamps the receipt and reads the record back, so a retry gets the very
status and body the first request got, whichever version of the code wrote them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from arca.adapters.store.receipts import ReceiptStore
from arca.domain.errors import IdempotencyKeyReusedError, IdempotencyKeyTakenError
from arca.domain.receipts import Answer, Receipt
from arca.services.retry import Policy

T = TypeVar("T")


class Idempotency:
    def __init__(self, receipts: ReceiptStore, policy: Policy) -> None:
        self.receipts = receipts
        self.policy = policy

    def receipt(self, scope: str, key: str, fingerprint: str) -> Receipt:
        """The key as received now, for the request with this fingerprint (keys are scoped by caller)."""
        return Receipt(scope, key, fingerprint, int(self.policy.clock().timestamp()))

    def once(self, receipt: Receipt, write: Callable[[], T]) -> T | Answer:
        """`write()`'s outcome (it writes the key's record with its change), or the answer kept for this request
        when the key already has one: also when a concurrent request with the key committed first, which makes
        the write's transaction fail on the record's condition (IdempotencyKeyTakenError).

        IdempotencyKeyReusedError (422) when the key was used for a different request in the last 24 hours.
        """
        kept = self.answered(receipt)
        if kept is not None:
            return kept
        try:
            return write()
        except IdempotencyKeyTakenError:
            kept = self.answered(receipt)
            if kept is None:
                raise
            return kept

    def answered(self, receipt: Receipt) -> Answer | None:
        """The answer the key's record keeps for this very request; None while the key has no record."""
        stored = self.receipts.receipt(receipt.scope, receipt.key, now=receipt.now)
        if stored is None:
            return None
        if stored.fingerprint != receipt.fingerprint:
            raise IdempotencyKeyReusedError(
                "this Idempotency-Key was used for a different request in the last 24 hours", field="Idempotency-Key"
            )
        return stored.answer
