"""Retention: policies, the preview, apply (soft delete, expiry, collection of unreferenced bytes) and the sweep.

Preview and apply read the same roots and run every version through the same `decide`
(arca.domain.retention), so what the preview says is what apply does. Both read the versions newest first in
bounded pages and hand back a `next_token` (carrying the count of live versions seen, for `keep_last`) while
versions remain. Every deletion is conditioned as a user's delete is (live and unpinned), and every expiry on
the version being soft-deleted since before the cutoff and unpinned, so a version an alias, a canary or a
rollout came to point at after the roots were read is never touched.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from arca.adapters import keys
from arca.adapters.s3 import Blobs
from arca.adapters.store.aliases import AliasStore
from arca.adapters.store.change import Change
from arca.adapters.store.consumers import ConsumerStore
from arca.adapters.store.retention import ExpiryRefused, RetentionStore
from arca.adapters.store.versions import DELETE_BATCH, VersionStore
from arca.domain.aggregates import LatestRecord, VersionRecord
from arca.domain.errors import ConflictError, ContentionError, NotFoundError, VersionPinnedError
from arca.domain.events import VersionDeleted
from arca.domain.moments import to_iso
from arca.domain.retention import (
    Applied,
    Facts,
    Planned,
    Preview,
    RetentionBody,
    RetentionPolicy,
    Roots,
    decide,
    roots_of,
)
from arca.services.collection import Collection
from arca.services.reading import Reading
from arca.services.retry import Budget, Policy

BY = "retention"
# Pages of DELETE_BATCH versions one apply request reads; and the expiries (each a transaction and its clean-up)
# and unfinished clean-ups it takes on. Together they bound one request's calls whatever the artifact's size.
APPLY_PAGES = 4
EXPIRIES = 10
MARKERS = 10
# Policies the sweep reads per index Query.
SWEEP_PAGE = 25


@dataclass(frozen=True)
class Pass:
    """What a sweep pass reads of an artifact once: LATEST, its policy and the protected roots."""

    latest: LatestRecord
    policy: RetentionPolicy
    roots: Roots


@dataclass(frozen=True)
class SweepProgress:
    artifacts: int
    deleted: int
    expired: int
    next_token: dict[str, str] | None


class Retention:
    def __init__(
        self,
        store: RetentionStore,
        versions: VersionStore,
        aliases: AliasStore,
        collection: Collection,
        blobs: Blobs,
        reading: Reading,
        policy: Policy,
        consumers: ConsumerStore,
    ) -> None:
        self.consumers = consumers
        self.store = store
        self.versions = versions
        self.aliases = aliases
        self.collection = collection
        self.blobs = blobs
        self.reading = reading
        self.policy = policy

    # Policies.

    def put(self, name: str, body: RetentionBody, *, identity: str | None = None) -> RetentionPolicy:
        """Store the artifact's policy (replacing any); NotFoundError / LinkedNameError as any write."""
        self.reading.live_latest(name)
        policy = RetentionPolicy(**body.model_dump(), name=name, updated_at=self.policy.now(), updated_by=identity)
        change = Change(name, by=identity, now=policy.updated_at)
        self.store.stage_policy(change, policy)
        self.store.commit(change)
        return policy

    def get(self, name: str) -> RetentionPolicy:
        self.reading.live_latest(name)
        found = self.store.policy(name)
        if found is None:
            raise NotFoundError(f"artifact {name!r} has no retention policy")
        return found

    def delete(self, name: str) -> None:
        self.reading.live_latest(name)
        if not self.store.delete_policy(name):
            raise NotFoundError(f"artifact {name!r} has no retention policy")

    # Preview and apply.

    def roots(self, name: str, latest: LatestRecord, policy: RetentionPolicy) -> Roots:
        """The protected roots: live aliases (one listing, tombstones included), running rollouts (one Query) and
        each alias's last `rollback_window` revisions (one Query each), a deleted alias's too: a rollback
        re-creates it on what it served."""
        aliases = self.aliases.alias_records(name)
        live = [a for a in aliases if not a.deleted]
        return roots_of(
            aliases=[(a.alias, _number(a.version), _number(a.secondary_version)) for a in live],
            rollouts=self.store.running_rollouts(name),
            history=[(a.alias, self.store.recent_targets(name, a.alias, policy.rollback_window)) for a in aliases],
            latest_sha256=latest.sha256,
        )

    def preview(self, name: str, *, limit: int, token: str | None) -> Preview:
        """What applying the policy now would do to the next `limit` versions, newest first (one Query of them,
        expired ones left out), and the token for the rest."""
        start, state = self.versions.resume_from(name, _scope("preview", name), token) if token else (None, {})
        latest, policy = self.reading.live_latest(name), self.get(name)
        roots, now = self.roots(name, latest, policy), self.policy.clock()
        versions, last = self.versions.versions_chunk(name, start=start, size=limit)
        roots = self.leased(name, roots, now)
        live = state.get("live", 0)
        rows: list[Planned] = []
        for version in versions:
            planned, live = self._decide(version, live, policy, roots, now)
            if planned is not None:
                rows.append(planned)
        next_token = (
            None if last is None else self.versions.resume_token(name, _scope("preview", name), last, {"live": live})
        )
        return Preview(name=name, versions=rows, next_token=next_token)

    def leased(self, name: str, roots: Roots, now: datetime) -> Roots:
        """`roots` and the versions live consumer leases name (reason `consumer:<id>`), read after the versions
        they judge: a lease taken since moves its version's `lease_rev`, under which every delete is written."""
        found = Roots(reasons={v: list(r) for v, r in roots.reasons.items()}, latest_sha256=roots.latest_sha256)
        for lease in sorted(self.consumers.live_leases(name, now=to_iso(now)), key=lambda r: r.consumer):
            found.protect(lease.version, f"consumer:{lease.consumer}")
        return found

    @staticmethod
    def _decide(
        version: VersionRecord, live: int, policy: RetentionPolicy, roots: Roots, now: datetime
    ) -> tuple[Planned | None, int]:
        """`decide` for one version read newest first, and the live count after it (expired ones: None)."""
        if version.expired:
            return None, live
        if not version.deleted:
            live += 1
        facts = Facts(
            version=version.version,
            sha256=version.sha256,
            created_at=version.created_at,
            deleted=version.deleted,
            deleted_at=version.deleted_at,
            tags=version.tags,
            aliases=tuple(version.aliases),
        )
        return decide(facts, live_rank=None if version.deleted else live, policy=policy, roots=roots, now=now), live

    def apply(self, name: str, *, token: str | None = None) -> Applied:
        """Apply the policy to the next versions: at most APPLY_PAGES Queries of DELETE_BATCH versions, EXPIRIES
        expiries and MARKERS unfinished clean-ups per request; `next_token` goes on from there.

        Soft deletes go in batches of one transaction (`version.deleted`, `by` retention); a batch refused
        because a version was pinned meanwhile is retried one by one, skipping the pinned ones.
        """
        return self._apply(name, token, None)[0]

    def _apply(self, name: str, token: str | None, known: Pass | None) -> tuple[Applied, Pass]:
        """`apply`, with what an earlier request of the same sweep pass read of the artifact (`known`: LATEST, the
        policy and the roots, read once per pass; the unfinished clean-ups are taken on by the pass's first
        request). Reusing them is safe for the same reason reading them once per request is: every deletion and
        expiry is conditioned on what could have changed since (pins, tags, LATEST's content)."""
        scope = _scope("apply", name)
        start, state = self.versions.resume_from(name, scope, token) if token else (None, {})
        live = state.get("live", 0)
        expired: list[int] = []
        if known is None:
            latest, policy = self.reading.live_latest(name), self.get(name)
            expired = self.finish(name)
            known = Pass(latest=latest, policy=policy, roots=self.roots(name, latest, policy))
        policy, roots, now = known.policy, known.roots, self.policy.clock()
        cutoff = to_iso(now - timedelta(days=policy.expire_after_days))
        deleted: list[int] = []
        expiries = 0
        next_token: str | None = None
        for page in range(APPLY_PAGES):
            versions, last = self.versions.versions_chunk(name, start=start, size=DELETE_BATCH)
            leased = self.leased(name, roots, now)
            doomed: dict[int, int] = {}  # version: its tags' counter as judged
            lease_revs: dict[int, int] = {}  # version: its leases' counter as judged
            for index, version in enumerate(versions):
                planned, live = self._decide(version, live, policy, leased, now)
                if planned is None or planned.action == "keep":
                    continue
                if planned.action == "delete":
                    doomed[version.version] = version.tag_rev
                    lease_revs[version.version] = version.lease_rev
                    continue
                if self._expire(version, cutoff):
                    expiries += 1
                    expired.append(version.version)
                    self._finish_one(name, version.version, version.sha256)
                if expiries == EXPIRIES and index < len(versions) - 1:
                    last = dict(keys.version_key(name, version.version))
                    break
            deleted += self._delete(name, doomed, lease_revs)
            if last is None:
                break
            start = last
            if expiries == EXPIRIES or page == APPLY_PAGES - 1:
                next_token = self.versions.resume_token(name, scope, last, {"live": live})
                break
        applied = Applied(name=name, deleted=deleted, expired=sorted(set(expired), reverse=True), next_token=next_token)
        return applied, known

    def _expire(self, version: VersionRecord, cutoff: str) -> bool:
        """Expire `version` in one transaction; False when its state changed since it was read (nothing written)."""
        change = Change(version.name, by=BY, now=self.policy.now())
        if not self.store.stage_expiry(change, version, cutoff=cutoff):
            return False
        try:
            self.store.commit(change)
        except ExpiryRefused:
            return False
        return True

    def _delete(self, name: str, doomed: dict[int, int], lease_revs: dict[int, int]) -> list[int]:
        """Soft-delete `doomed` (version: its tags' counter when judged), each only while unpinned, its tags
        unchanged and no lease taken on it (`lease_revs`): a tag a policy keeps, or a consumer's lease, added since
        the versions were read, stops the deletion."""
        if not doomed:
            return []
        now = self.policy.now()
        numbers = list(doomed)
        detail = VersionDeleted(retention=True)
        change = Change(name, by=BY, now=now)
        self.versions.stage_deleted(
            change, numbers, deleted=True, tag_revs=doomed, lease_revs=lease_revs, explained=False, detail=detail
        )
        try:
            self.versions.commit(change)
            return numbers
        except ContentionError:  # one of them was pinned, tagged, leased or deleted meanwhile: one by one
            pass
        done = []
        for number, tag_rev in doomed.items():
            one = Change(name, by=BY, now=now)
            leases = {number: lease_revs[number]}
            self.versions.stage_deleted(one, [number], deleted=True, tag_revs={number: tag_rev}, lease_revs=leases)
            try:
                self.versions.commit(one)
                done.append(number)
            except (VersionPinnedError, ConflictError, NotFoundError):
                continue  # pinned, or its tags changed, since it was read: the alias or the tag wins
        return done

    # Clean-up after an expiry.

    def finish(self, name: str) -> list[int]:
        """Finish the clean-up of up to MARKERS earlier expiries (interrupted after their commit); returns their
        versions."""
        markers = self.store.markers(name, limit=MARKERS)
        for version, sha256 in markers:
            self._finish_one(name, version, sha256)
        return [version for version, _ in markers]

    def _finish_one(self, name: str, version: int, sha256: str) -> None:
        """An expiry's clean-up: the version's attestation items and objects, then its bytes when no version and
        not LATEST hold that content (arca.services.collection), then its marker (kept while another collection
        holds the content: that one's owner, or a takeover after its lease, finishes). Every step is safe to
        repeat."""
        self.store.delete_items(self.store.attestation_keys(name, version))
        self.blobs.delete_prefix(keys.attestation_blob_prefix(name, version))
        self.collection.collect(name, sha256, expiring=version, marker=version)

    # The sweep.

    def sweep(self, *, start: dict[str, str] | None, budget: Budget) -> SweepProgress:
        """Apply every policy (artifacts found through the sparse index), artifact after artifact, while the
        budget lasts (one unit per index Query and per apply request); `next_token` is the index key the next
        invocation goes on after (None: the pass is complete). An artifact left unfinished is started again.
        Each artifact's roots are read once a pass, by its first request (`_apply`)."""
        artifacts = deleted = expired = 0
        while budget.spend():
            names, last = self.store.policies_page(start=start, limit=SWEEP_PAGE)
            for name in names:
                token: str | None = None
                known: Pass | None = None  # the artifact's roots, read by its first request of the pass
                while True:
                    if not budget.spend():
                        return SweepProgress(artifacts, deleted, expired, start)
                    try:
                        done, known = self._apply(name, token, known)
                    except NotFoundError:
                        break  # purged, or its policy removed meanwhile
                    deleted, expired = deleted + len(done.deleted), expired + len(done.expired)
                    token = done.next_token
                    if token is None:
                        break
                artifacts += 1
                start = self.store.index_key(name)
            if last is None:
                return SweepProgress(artifacts, deleted, expired, None)
            start = last
        return SweepProgress(artifacts, deleted, expired, start)

    def scheduled(self, *, every_seconds: int, time_left: Callable[[], float], reserve: float) -> dict[str, Any]:
        """One invocation of the scheduled sweep: go on with the current pass, or start one when the last one
        started `every_seconds` ago or more; idle otherwise. Work stops while `reserve` seconds of `time_left`
        remain; progress is kept in the sweep's item, so a pass longer than one invocation continues in the
        next."""
        budget = Budget(time_left=time_left, reserve=reserve)
        cursor, started_at = self.store.sweep_state()
        now = self.policy.clock()
        if cursor is None or started_at is None:
            if started_at is not None and started_at > to_iso(now - timedelta(seconds=every_seconds)):
                return {"idle": True, "pass_started_at": started_at}
            started_at = to_iso(now)
        progress = self.sweep(start=cursor, budget=budget)
        self.store.save_sweep(progress.next_token, started_at)
        return {
            "idle": False,
            "pass_started_at": started_at,
            "artifacts": progress.artifacts,
            "deleted": progress.deleted,
            "expired": progress.expired,
            "complete": progress.next_token is None,
        }


def _scope(kind: str, name: str) -> str:
    return f"retention-{kind}:{name}"


def _number(version: object) -> int | None:
    return version if isinstance(version, int) else None
