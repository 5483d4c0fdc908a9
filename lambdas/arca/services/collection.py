"""Collection: removing an artifact's content once nothing references it, safe against every concurrent writer.

The content's blob count (`__<name>-blobs` / `<sha256>`) is the lock. A collection claims it (`collecting`, our
token, when, and the exact object versions it will delete) only while no reference holds it and no other
collection does, deletes those objects and its layout records, then releases it. Three rules make this safe:

- *The fence.* A claim and a release each advance LATEST's `collections`, and a publish or `PUT latest` adds its
  reference only while that count is as it was when it checked the bytes (and while no claim holds the count):
  a reference checked before a collection cannot commit after it; it answers 409 and commits nothing.
- *One owner.* Only the holder of the claim deletes. A claim older than LEASE belongs to an invocation that has
  ended (longer than any function may run), and is then taken over with the objects it recorded.
- *Exact versions.* On a versioned bucket the claim names the object versions it saw, so a slow collector never
  deletes bytes uploaded after it claimed.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from enum import Enum

from arca.adapters import keys
from arca.adapters.s3 import Blobs
from arca.adapters.store.artifacts import ArtifactStore
from arca.adapters.store.change import Change
from arca.adapters.store.retention import Claim, CollectionHeld, NotCollectable, RetentionStore, StoredObject, claim_of
from arca.adapters.store.uploads import UploadStore
from arca.domain.moments import from_iso, to_iso
from arca.services.retry import Policy

# Longer than any of Arca's functions may run (Lambda stops every function by 15 minutes; Arca's API functions
# at 29 s, retention at 5 minutes): a claim this old belongs to an invocation that has ended.
LEASE = timedelta(minutes=20)


class Collected(Enum):
    KEPT = "kept"  # something references the content: nothing deleted
    REMOVED = "removed"  # its objects are gone, and its count released
    BUSY = "busy"  # another collection holds it (or lost it to a takeover): its owner finishes


class Collection:
    def __init__(
        self, store: RetentionStore, artifacts: ArtifactStore, layouts: UploadStore, blobs: Blobs, policy: Policy
    ) -> None:
        self.store = store
        self.artifacts = artifacts
        self.layouts = layouts
        self.blobs = blobs
        self.policy = policy

    def collect(self, name: str, sha256: str, *, expiring: int | None = None, marker: int | None = None) -> Collected:
        """Remove the content's objects (its single PUT and its multipart layouts) if nothing references it
        (`expiring`: the version whose expiry took the last reference, not a holder), and release its count with
        the expiry's `marker` (kept while another collection holds the content, so a later run finishes)."""
        count = self.store.blob_count(name, sha256)
        held = claim_of(count) if count is not None else None
        if held is None:
            if count is not None and int(count.get("refs", 0)) > 0:
                self.store.release(name, marker, sha256, token=None)
                return Collected.KEPT
            latest = self.artifacts.latest(name)
            referenced = latest is not None and latest.sha256 == sha256  # LATEST written before blob counts existed
            if referenced or self.store.legacy_holder(name, sha256, expiring=expiring):
                self.store.release(name, marker, sha256, token=None)
                return Collected.KEPT
            token = _token()
            claim = self._claim(name, sha256, token)
            if claim is None:
                self.store.release(name, marker, sha256, token=None)  # a reference came first
                return Collected.KEPT
            if claim.token != token:
                return Collected.BUSY  # another collection claimed it first: the marker stays for a later run
        else:
            claim = self._take_over(name, sha256, held)
            if claim is None:
                return Collected.BUSY
        return self._remove(name, sha256, claim, marker)

    def _claim(self, name: str, sha256: str, token: str) -> Claim | None:
        """Claim the content for our collection (`token`): our claim, another collection's that holds it, or None
        when a reference holds it or the artifact is gone (arca.adapters.store.retention, `stage_claim`)."""
        change = Change(name, by=None, now=self.policy.now())
        claim = self.store.stage_claim(change, sha256, token=token, objects=self._seen(name, sha256))
        try:
            self.store.commit(change)
        except CollectionHeld as held:
            return held.claim
        except NotCollectable:
            return None
        return claim

    def abandoned(self, name: str, sha256: str) -> Claim | None:
        """The collection holding this content, if one does (a GetItem of its count)."""
        count = self.store.blob_count(name, sha256)
        return claim_of(count) if count is not None else None

    def finish(self, name: str, sha256: str, held: Claim) -> Collected:
        """Finish a collection someone abandoned (`held`, older than LEASE): BUSY while it may still run."""
        claim = self._take_over(name, sha256, held)
        return Collected.BUSY if claim is None else self._remove(name, sha256, claim, None)

    def stale(self, held: Claim) -> bool:
        """Whether `held` was claimed LEASE ago or more: longer than any function runs."""
        return held.claimed_at <= to_iso(self.policy.clock() - LEASE)

    def retry_after(self, held: Claim) -> str:
        """When `held` can be taken over, if its owner does not finish it first."""
        return to_iso(from_iso(held.claimed_at) + LEASE) if held.claimed_at else self.policy.now()

    def _take_over(self, name: str, sha256: str, held: Claim) -> Claim | None:
        if not self.stale(held):
            return None
        # A claim made before claims recorded their objects deletes what is there now, as collections did then.
        objects = list(held.objects) if held.claimed_at else self._seen(name, sha256)
        return self.store.take_over(name, sha256, held, token=_token(), now=self.policy.now(), objects=objects)

    def _seen(self, name: str, sha256: str) -> list[StoredObject]:
        """The object versions a claim records: the content's single PUT (`<sha256>`) and its multipart layouts
        (`<sha256>.<parts>`)."""
        return [StoredObject(key, version) for key, version in self.blobs.current_versions(keys.blob_key(name, sha256))]

    def _remove(self, name: str, sha256: str, claim: Claim, marker: int | None) -> Collected:
        # The layouts' records go first, so that no upload finds a layout without its object.
        self.store.delete_items(self.layouts.layout_keys(name, sha256))
        self.blobs.delete_versions([(o.key, o.version) for o in claim.objects])
        self.store.release(name, marker, sha256, token=claim.token)
        return Collected.REMOVED


def _token() -> str:
    return uuid.uuid4().hex
