"""Canary choice: which side of an alias serves a request."""

from __future__ import annotations

import hashlib
import random

PRIMARY = "primary"
SECONDARY = "secondary"


def bucket(name: str, alias: str, routing_key: str) -> int:
    """A stable number 0..99 for (artifact, alias, key): the same key always lands in the same bucket."""
    digest = hashlib.sha256(f"{name}\x00{alias}\x00{routing_key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % 100


def choose_route(weight: int, name: str, alias: str, routing_key: str | None, rng: random.Random | None = None) -> str:
    """Secondary for `weight`% of buckets (0 never, 99 almost always); random when there is no key."""
    if weight <= 0:
        return PRIMARY
    point = bucket(name, alias, routing_key) if routing_key is not None else (rng or random).randrange(100)
    return SECONDARY if point < weight else PRIMARY
