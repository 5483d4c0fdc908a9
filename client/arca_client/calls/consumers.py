"""Consumer leases: who runs which version of an artifact, until when."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from arca_client.calls.http import HttpCalls, artifact_path
from arca_client.models import Lease, Page, VersionConsumers

# Consumers named for a version (as the API's rollout status names them); the rest are counted.
SHOWN = 20


class ConsumerCalls(HttpCalls):
    def lease(
        self,
        name: str,
        consumer: str,
        version: int,
        *,
        ttl_seconds: int | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> Lease:
        """Record that `consumer` runs `version` of `name` until the lease lapses (`ttl_seconds`, default a day)
        or is renewed by the same call. One write; a renewal that changes nothing announces nothing."""
        body: dict[str, Any] = {"version": version}
        if ttl_seconds is not None:
            body["ttl_seconds"] = ttl_seconds
        if labels is not None:
            body["labels"] = dict(labels)
        data, _ = self._write("PUT", artifact_path(name, "consumers", consumer), body=body)
        return Lease.from_dict(data or {})

    def release(self, name: str, consumer: str) -> None:
        """End `consumer`'s lease on `name` (idempotent)."""
        self._write("DELETE", artifact_path(name, "consumers", consumer))

    def list_consumers(
        self, name: str, *, version: int | None = None, limit: int | None = None, next_token: str | None = None
    ) -> Page[Lease]:
        """The live leases of `name` (lapsed ones are never listed), optionally only those on `version`."""
        data = self._get(
            artifact_path(name, "consumers"), {"version": version, "limit": limit, "next_token": next_token}
        )
        return Page([Lease.from_dict(c) for c in data.get("consumers") or []], data.get("next_token"))

    def iter_consumers(self, name: str, *, version: int | None = None, page_size: int | None = None) -> Iterator[Lease]:
        return self._pages(
            artifact_path(name, "consumers"), "consumers", Lease.from_dict, {"version": version, "limit": page_size}
        )

    def version_consumers(self, name: str, version: int, *, shown: int = SHOWN) -> VersionConsumers:
        """The consumers still on `version` of `name` (live leases): all of them counted, the first `shown` named
        (the listing read to its end: a version holds at most 250 leases)."""
        ids = sorted(lease.consumer for lease in self.iter_consumers(name, version=version))
        return VersionConsumers(version=version, count=len(ids), consumers=ids[:shown])
