"""Idempotency keys: the receipt of a write, kept beside the change it made (pure; no I/O).

A write sent with an `Idempotency-Key` stores, in the same transaction as its change, the key's record:
who sent it (`scope`), a fingerprint of the request and the answer given. A retry with the same key and
request gets that answer again and changes nothing; the same key with another request is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# How long an answer is kept for replay (the record's `ttl`, also checked on read: TTL deletion is lazy).
RETENTION_SECONDS = 24 * 3600
KEY_PATTERN = r"^[\x20-\x7e]{1,128}$"


@dataclass(frozen=True)
class Answer:
    status: int
    body: str  # the JSON body, exactly as first sent


@dataclass(frozen=True)
class Receipt:
    """An Idempotency-Key as received, with the request's fingerprint and the time (epoch seconds)."""

    scope: str
    key: str
    fingerprint: str
    now: int

    @property
    def expires(self) -> int:
        return self.now + RETENTION_SECONDS


@dataclass(frozen=True)
class StoredReceipt:
    fingerprint: str
    answer: Answer


@dataclass(frozen=True)
class Seal:
    """A receipt and the route's rendering of what its write did: the answer the record keeps and a retry gets.

    The route renders (status and body); the service only says what happened (`of`), and the store writes the
    record in the transaction of the change.
    """

    receipt: Receipt
    render: Callable[[Any], Answer]

    def of(self, outcome: Callable[[Any], Any]) -> Seal:
        """This seal for a store that hands over what it wrote, which `outcome` turns into what the route renders."""
        render = self.render
        return Seal(self.receipt, lambda written: render(outcome(written)))
