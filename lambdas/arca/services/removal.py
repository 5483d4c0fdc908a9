"""Removing: a version's soft delete and restore, pruning old versions, purging an artifact.

Invariants (the stores name the conditions; docs/access-patterns.md lists them):
- A version pinned by an alias, or named by a live consumer lease, cannot be deleted, pruned or purged (a purge
  with `force` removes the leases with the artifact's other rows).
- Purge leaves LATEST as a tombstone that keeps `newest`, so version numbers are never reused.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import timedelta

from arca.adapters import keys
from arca.adapters.s3 import Blobs
from arca.adapters.store.aliases import AliasStore
from arca.adapters.store.artifacts import ArtifactStore
from arca.adapters.store.change import Change
from arca.adapters.store.consumers import ConsumerStore
from arca.adapters.store.links import LinkStore
from arca.adapters.store.purge import PurgeStore
from arca.adapters.store.receipts import ReceiptStore
from arca.adapters.store.versions import DELETE_BATCH, VersionStore, VersionUnchanged
from arca.domain.aggregates import VersionRecord
from arca.domain.entities import PruneResult, Skipped, Version
from arca.domain.errors import ConflictError, ContentionError, NotFoundError, VersionLeasedError, VersionPinnedError
from arca.domain.moments import to_iso
from arca.domain.receipts import Seal
from arca.services.reading import Reading, refuse_link
from arca.services.retry import Budget, Policy

# Pages of DELETE_BATCH versions one prune request reads (and deletes, one transaction each).
PRUNE_PAGES = 5


@dataclass(frozen=True)
class RemovalStores:
    """What deletion, prune and purge read and write: the artifact, its versions and the rows a purge removes."""

    artifacts: ArtifactStore
    versions: VersionStore
    aliases: AliasStore
    links: LinkStore
    purge: PurgeStore
    receipts: ReceiptStore
    consumers: ConsumerStore


class Removal:
    def __init__(self, stores: RemovalStores, blobs: Blobs, reading: Reading, policy: Policy) -> None:
        self.artifacts = stores.artifacts
        self.versions = stores.versions
        self.aliases = stores.aliases
        self.links = stores.links
        self.purging = stores.purge
        self.receipts = stores.receipts
        self.consumers = stores.consumers
        self.blobs = blobs
        self.reading = reading
        self.policy = policy

    def delete_version(self, name: str, number: int, *, identity: str | None = None) -> Version:
        """Soft-delete; idempotent. VersionPinnedError (409) names the aliases that point at it, VersionLeasedError
        (409) the consumers whose live leases name it.

        The leases are read after the version's `lease_rev`, and the delete holds only while `lease_rev` is as
        read: a lease taken meanwhile either commits first (the delete is judged again and refused) or finds the
        version deleted (the lease is refused)."""

        def attempt() -> Version:
            seen = self.versions.version(name, number)
            if seen is None or seen.deleted:
                return self._set_deleted(name, number, deleted=True, identity=identity)
            now = self.policy.now()
            leased = sorted(r.consumer for r in self.consumers.live_leases(name, now=now, version=number))
            if leased:
                raise VersionLeasedError(
                    f"version {number} is run by consumer(s) {', '.join(leased)} (live leases)",
                    field="version",
                    details={"consumers": leased},
                )
            return self._set_deleted(name, number, deleted=True, identity=identity, lease_rev=seen.lease_rev)

        return self.policy.compare_and_set(attempt)

    def restore_version(self, name: str, number: int, *, identity: str | None = None) -> Version:
        """Undo a soft delete; idempotent."""
        return self._set_deleted(name, number, deleted=False, identity=identity)

    def _set_deleted(
        self, name: str, number: int, *, deleted: bool, identity: str | None, lease_rev: int | None = None
    ) -> Version:
        change = Change(name, by=identity, now=self.policy.now())
        leases = None if lease_rev is None else {number: lease_rev}
        self.versions.stage_deleted(change, [number], deleted=deleted, lease_revs=leases)
        try:
            self.versions.commit(change)
        except VersionUnchanged as unchanged:  # already so: idempotent, the version as it is
            return unchanged.record.entity()
        return self.reading.version(name, number).entity()

    def prune(
        self,
        name: str,
        *,
        keep_last: int,
        older_than_days: int | None,
        dry_run: bool,
        token: str | None = None,
        seal: Seal | None = None,
        identity: str | None = None,
    ) -> PruneResult:
        """Soft-delete old live versions, never the newest `keep_last` and never a pinned one.

        Page by page, newest first: at most PRUNE_PAGES Queries (pages of DELETE_BATCH versions, and a listing of
        the live leases after a page that holds a version ever leased) and one transaction per page, so every
        request is bounded. When pages remain, `next_token` says where the next request (same body plus the token)
        goes on; the token carries how many live versions were kept so far.

        With `seal`, its record (the route's rendering of the PruneResult) goes into the transaction of the
        request's last batch (alone when that page deletes nothing, or fell back to one by one): a retry after
        a crash before it prunes what is left, and only a completed request is replayed.
        """
        self.reading.live_latest(name)
        cutoff = None
        if older_than_days is not None:
            cutoff = to_iso(self.policy.clock() - timedelta(days=older_than_days))
        scope = f"prune:{name}:{keep_last}:{older_than_days}:{dry_run}"
        start, state = self.versions.resume_from(name, scope, token) if token else (None, {})
        seen_live = state.get("live", 0)
        deleted: list[int] = []
        skipped: list[Skipped] = []
        sealed = False
        next_token: str | None = None

        def outcome(done: list[int]) -> PruneResult:
            """The request's outcome, as the transaction of its last batch (which deletes `done`) records it."""
            return PruneResult(name=name, dry_run=False, deleted=deleted + done, skipped=skipped, next_token=next_token)

        # Queries spent (PRUNE_PAGES at most: pages and lease listings alike). The leases are read after a page that
        # holds a candidate ever leased (`lease_rev`), so a lease taken since moves the `lease_rev` its delete holds
        # on; a page with no such candidate needs none read.
        spent = 0
        leased: dict[int, list[str]] = {}
        while True:
            page_start, live_before = start, seen_live
            versions, start = self.versions.versions_chunk(name, start=start, size=DELETE_BATCH)
            spent += 1
            candidates, seen_live = _candidates(versions, seen_live, keep_last=keep_last, cutoff=cutoff)
            if any(v.lease_rev for v in candidates):
                if spent == PRUNE_PAGES and page_start is not None:  # no Query left for the leases: the next
                    start, seen_live = page_start, live_before  # request takes this page again
                    next_token = self.versions.resume_token(name, scope, start, {"live": seen_live})
                    break
                leased = self._leased(name)
                spent += 1
            doomed: list[int] = []
            lease_revs: dict[int, int] = {}
            for version in candidates:
                if version.aliases or version.version in leased:
                    consumers = sorted(leased.get(version.version, []))
                    skipped.append(Skipped(version=version.version, aliases=version.aliases, consumers=consumers))
                else:
                    doomed.append(version.version)
                    lease_revs[version.version] = version.lease_rev
            last = start is None or spent >= PRUNE_PAGES
            if last and start is not None:
                next_token = self.versions.resume_token(name, scope, start, {"live": seen_live})
            if dry_run:
                deleted.extend(doomed)
            elif doomed:
                batch_seal = seal.of(outcome) if seal and last else None
                sealed = self._delete_batch(name, doomed, deleted, skipped, batch_seal, identity, lease_revs)
                sealed = sealed and batch_seal is not None
            if last:
                break
        result = PruneResult(name=name, dry_run=dry_run, deleted=deleted, skipped=skipped, next_token=next_token)
        if seal is not None and not sealed:
            self.receipts.put_receipt(seal, result)
        return result

    def _leased(self, name: str) -> dict[int, list[str]]:
        """The consumers of each version with live leases (one Query)."""
        leased: dict[int, list[str]] = {}
        for lease in self.consumers.live_leases(name, now=self.policy.now()):
            leased.setdefault(lease.version, []).append(lease.consumer)
        return leased

    def _delete_batch(
        self,
        name: str,
        batch: list[int],
        deleted: list[int],
        skipped: list[Skipped],
        seal: Seal | None,
        identity: str | None,
        lease_revs: dict[int, int],
    ) -> bool:
        """One transaction (with `seal`'s record, if any); True when it committed. If one of its versions
        was pinned or leased meanwhile the batch is cancelled whole, and its versions are then deleted one by one."""
        from arca.domain.events import VersionDeleted

        change = Change(name, by=identity, now=self.policy.now())
        self.versions.stage_deleted(
            change, batch, deleted=True, lease_revs=lease_revs, explained=False, detail=VersionDeleted(prune=True)
        )
        change.seal(seal, batch)
        try:
            self.versions.commit(change)
        except ContentionError:  # one of its versions was pinned, leased or deleted meanwhile: one by one
            pass
        else:
            deleted.extend(batch)
            return True
        for number in batch:
            try:
                self.delete_version(name, number, identity=identity)
            except VersionPinnedError as pinned:
                skipped.append(Skipped(version=number, aliases=pinned.details["aliases"]))
                continue
            except VersionLeasedError as leased:
                skipped.append(Skipped(version=number, aliases=[], consumers=leased.details["consumers"]))
                continue
            deleted.append(number)
        return False

    def purge(self, name: str, *, force: bool, budget: Budget | None = None, released: list[str] | None = None) -> bool:
        """Remove every item and object of the artifact; LATEST stays as a tombstone keeping the counter.

        Refused (409) while aliases or live consumer leases exist unless `force` (which removes the leases with the
        artifact's other rows). Marks LATEST with a token of its own first
        (PurgeStore.mark_purging: no aliases and the mark are one condition), deletes page by page, and
        finishes only while it still owns the mark. Returns True when purged, False when the budget ran
        out (or another purge took the mark over) first: the same call again continues; every step is
        idempotent; so is a purge repeated after it finished (True again, until the name is re-created).
        The consumers whose live leases this call removed (a forced purge's) are appended to `released`.
        """
        latest = self.artifacts.latest(name)
        if latest is None:
            raise NotFoundError(f"artifact {name!r} does not exist")
        refuse_link(name, latest)
        if latest.purged:
            return True
        if not force:
            self._refuse_aliases(name)
        token = uuid.uuid4().hex
        self.purging.mark_purging(
            name,
            token=token,
            force=force,
            now=self.policy.now(),
            aliases=lambda: [a.alias for a in self.aliases.live_aliases(name)],
            links=lambda: self.links.links_to(name),
        )
        if not force:
            try:
                # LATEST items written before `alias_count` existed count no aliases: look once more.
                self._refuse_aliases(name)
                # No lease is taken once the mark is set (a lease's transaction checks LATEST is live), so the
                # leases read now are every one there will be.
                self._refuse_leases(name)
            except ConflictError:
                self.purging.clear_purging(name, token=token)
                raise
        spend = (budget or Budget()).spend
        # Links first (a forced purge only: a plain one was marked under `link_count <= 0`), while the mark
        # keeps new links out.
        if force and not self.links.remove_links(name, spend=spend):
            return False
        if not self.purging.delete_rows(name, spend=spend, released=released, now=self.policy.now()):
            return False
        if not self.blobs.delete_prefix(keys.blob_prefix(name), spend=spend):
            return False
        return self.purging.finish_purge(name, token=token, now=self.policy.now())

    def _refuse_leases(self, name: str) -> None:
        leased = sorted({r.consumer for r in self.consumers.live_leases(name, now=self.policy.now())})
        if leased:
            raise VersionLeasedError(
                f"artifact {name!r} has live consumer leases ({', '.join(leased)}); release them or purge with "
                "force=true",
                details={"consumers": leased},
            )

    def _refuse_aliases(self, name: str) -> None:
        live = [a.alias for a in self.aliases.live_aliases(name)]
        if live:
            raise ConflictError(
                f"artifact {name!r} has aliases ({', '.join(live)}); delete them or purge with force=true",
                details={"aliases": live},
            )


def _candidates(
    versions: list[VersionRecord], seen_live: int, *, keep_last: int, cutoff: str | None
) -> tuple[list[VersionRecord], int]:
    """The live versions of a page (newest first) past the newest `keep_last` and older than `cutoff`, and the count
    of live versions seen so far with this page's."""
    found: list[VersionRecord] = []
    for version in versions:
        if version.deleted:
            continue
        seen_live += 1
        if seen_live <= keep_last or (cutoff is not None and version.created_at >= cutoff):
            continue
        found.append(version)
    return found, seen_live
