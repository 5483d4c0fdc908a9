"""Consumer leases: who runs which version of an artifact, until when (arca.adapters.store.consumers stores them).

A lease is written by its consumer (or the SDK's Resolver for it), never on the resolve path. A renewal that
changes nothing is one write; taking a lease, moving it to another version or changing its labels is one
transaction conditioned on the version being live, and announced as `consumer.updated`. Limits (MAX_LEASES an
artifact, MAX_LEASES_PER_VERSION a version) are checked when a consumer without a live lease takes one.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from arca.adapters.store.change import Change
from arca.adapters.store.consumers import ConsumerStore, LeaseRecord, LeaseWrite
from arca.domain.consumers import MAX_LEASES, MAX_LEASES_PER_VERSION, RENEW_MARGIN, expiry
from arca.domain.entities import ConsumerList, Lease
from arca.domain.errors import LeaseLimitError
from arca.domain.moments import to_iso
from arca.services.reading import Reading
from arca.services.retry import Policy


class Consumers:
    def __init__(self, store: ConsumerStore, reading: Reading, policy: Policy) -> None:
        self.store = store
        self.reading = reading
        self.policy = policy

    def lease(
        self,
        name: str,
        consumer: str,
        version: int,
        *,
        ttl_seconds: int,
        labels: Mapping[str, str] | None,
        identity: str | None = None,
    ) -> Lease:
        """Take or renew `consumer`'s lease on `version` of `name` for `ttl_seconds`. `labels` None keeps the
        lease's labels (none for a new lease).

        Raises NotFoundError (artifact, or field version), ConflictError (field version: deleted), LeaseLimitError
        (field consumer), LinkedNameError (a link: write to its target).
        """

        def attempt() -> LeaseRecord:
            moment = self.policy.clock()
            now = to_iso(moment)
            seen = self.store.lease(name, consumer)
            wanted = dict(labels) if labels is not None else (dict(seen.labels) if seen is not None else {})
            request = LeaseWrite(
                name=name,
                consumer=consumer,
                version=version,
                labels=wanted,
                expires_at=to_iso(expiry(moment, ttl_seconds)),
                ttl=int(expiry(moment, ttl_seconds).timestamp()),
                by=identity,
                now=now,
            )
            if seen is not None and seen.version == version and seen.labels == wanted:
                renewed = self.store.renew(request, live_after=to_iso(moment + RENEW_MARGIN))
                if renewed is not None:
                    return renewed
            if seen is None or not seen.live(now) or seen.version != version:
                self._check_limits(name, consumer, version, now)
            change = Change(name, by=identity, now=now)
            taken = self.store.stage_take(change, request, seen)
            self.store.commit(change)
            return taken

        return self.policy.compare_and_set(attempt).entity()

    def _check_limits(self, name: str, consumer: str, version: int, now: str) -> None:
        others = [r for r in self.store.live_leases(name, now=now) if r.consumer != consumer]
        if len(others) >= MAX_LEASES:
            raise LeaseLimitError(
                f"artifact {name!r} has {MAX_LEASES} live leases, as many as it may have; release one first",
                field="consumer",
                details={"limit": MAX_LEASES},
            )
        if sum(r.version == version for r in others) >= MAX_LEASES_PER_VERSION:
            raise LeaseLimitError(
                f"version {version} has {MAX_LEASES_PER_VERSION} live leases, as many as a version may have",
                field="version",
                details={"limit": MAX_LEASES_PER_VERSION},
            )

    def release(self, name: str, consumer: str, *, identity: str | None = None) -> None:
        """End `consumer`'s lease (idempotent: no lease, nothing to do). A live lease's end is announced."""

        def attempt() -> None:
            self.reading.live_latest(name)  # 404 for no artifact, LinkedNameError for a link
            seen = self.store.lease(name, consumer)
            if seen is None:
                return
            now = self.policy.now()
            change = Change(name, by=identity, now=now)
            self.store.stage_release(change, seen)
            if seen.live(now):
                self.store.stage_released(change, seen)
            self.store.commit(change)

        self.policy.compare_and_set(attempt)

    def leases(self, name: str, *, version: int | None, limit: int, token: str | None) -> ConsumerList:
        """The live leases of `name` (on `version`), in consumer order; NotFoundError for no artifact."""
        self.reading.live_latest(name)
        leases, next_token = self.store.leases_page(
            name, now=self.policy.now(), version=version, limit=limit, token=token
        )
        return ConsumerList(consumers=leases, next_token=next_token)

    def on_version(self, name: str, version: int, *, at: datetime | None = None) -> list[str]:
        """The consumers whose live leases name `version`, sorted."""
        now = to_iso(at) if at is not None else self.policy.now()
        return sorted(r.consumer for r in self.store.live_leases(name, now=now, version=version))
