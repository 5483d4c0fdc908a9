"""Publishing: uploads, LATEST, publish, version delete/restore, prune, purge.

Invariants (the repository names the conditions; docs/access-patterns.md lists them):
- A version number is taken only by advancing LATEST's `newest` counter under the condition that LATEST
  is as it was read, in the same transaction that puts the version: concurrent publishers never share or
  skip a number; a loser re-reads and retries (Policy.compare_and_set).
- Purge leaves LATEST as a tombstone that keeps `newest`, so numbers are never reused.
- A version pinned by an alias cannot be deleted, pruned or purged.
"""

from __future__ import annotations

from datetime import timedelta

from arca.adapters import keys
from arca.adapters.repository import DELETE_BATCH, Repository
from arca.adapters.s3 import Blobs
from arca.domain.entities import Latest, PruneResult, Published, Skipped, Upload, Version
from arca.domain.errors import ConflictError, NotFoundError, PayloadTooLargeError, VersionLimitError, VersionPinnedError
from arca.domain.models import MAX_BLOB_SIZE, BlobRef, Content
from arca.domain.versions import MAX_VERSION
from arca.services.reading import Reading
from arca.services.retry import Policy, now_iso

# Pages of DELETE_BATCH versions one prune request reads (and deletes, one transaction each).
PRUNE_PAGES = 5


class Publishing:
    def __init__(self, repository: Repository, blobs: Blobs, reading: Reading, policy: Policy) -> None:
        self.repository = repository
        self.blobs = blobs
        self.reading = reading
        self.policy = policy

    def create_upload(self, name: str, blob: BlobRef) -> Upload:
        """Where to upload a blob: `exists` when stored already, else a presigned PUT."""
        _check_size(blob.size)
        key = keys.blob_key(name, blob.sha256)
        stat = self.blobs.stat(key)
        if stat is not None and stat.size == blob.size:
            return Upload(exists=True, sha256=blob.sha256, size=blob.size)
        return Upload(
            exists=False, sha256=blob.sha256, size=blob.size, upload=self.blobs.presign_upload(key, blob.sha256)
        )

    def put_latest(self, name: str, content: Content) -> Latest:
        """Point LATEST at an uploaded blob (verified in S3 first); creates the artifact if new."""
        self._verify(name, content)
        return self._set_latest(name, content)

    def _set_latest(self, name: str, content: Content) -> Latest:
        def attempt() -> Latest:
            written = self.repository.write_latest(name, self.repository.latest(name), content, now=self.policy.now())
            assert isinstance(written, Latest)
            return written

        return self.policy.compare_and_set(attempt)

    def publish(self, name: str, content: Content | None, *, force: bool = False) -> Published:
        """Snapshot LATEST (content None) or set LATEST to `content` and snapshot it, in one transaction.

        Deduplicates onto the newest version when it has the same sha256 and is not deleted, unless
        `force`. Raises NotFoundError (no LATEST to snapshot), VersionLimitError, ConflictError.
        """
        if content is not None:
            self._verify(name, content)

        def attempt() -> Published:
            latest = self.repository.latest(name)
            if content is None and (latest is None or latest.purged):
                raise NotFoundError(f"artifact {name!r} has no LATEST to publish; PUT …/latest first")
            snapshot = content or Content.model_validate(latest.model_dump(include=set(Content.model_fields)))  # type: ignore[union-attr]
            newest = latest.newest if latest else 0
            if latest is not None and not force and newest and latest.newest_sha256 == snapshot.sha256:
                existing = self.repository.version(name, newest)
                if existing is not None and not existing.deleted:
                    if content is not None and any(getattr(latest, f) != v for f, v in content.model_dump().items()):
                        self._set_latest(name, content)
                    return Published(**existing.model_dump(), deduplicated=True)
            if newest >= MAX_VERSION:
                raise VersionLimitError(f"artifact {name!r} has reached version {MAX_VERSION}, the last one")
            version = self.repository.write_latest(name, latest, snapshot, now=self.policy.now(), publish_as=newest + 1)
            return Published(**version.model_dump(), deduplicated=False)

        return self.policy.compare_and_set(attempt)

    def delete_version(self, name: str, number: int) -> Version:
        """Soft-delete; idempotent. VersionPinnedError (409) names the aliases that point at it."""
        return self._set_deleted(name, number, deleted=True)

    def restore_version(self, name: str, number: int) -> Version:
        """Undo a soft delete; idempotent."""
        return self._set_deleted(name, number, deleted=False)

    def _set_deleted(self, name: str, number: int, *, deleted: bool) -> Version:
        unchanged = self.repository.set_deleted(name, number, deleted=deleted, now=self.policy.now())
        return unchanged or self.reading.version(name, number)

    def prune(
        self, name: str, *, keep_last: int, older_than_days: int | None, dry_run: bool, token: str | None = None
    ) -> PruneResult:
        """Soft-delete old live versions, never the newest `keep_last` and never a pinned one.

        Page by page, newest first: at most PRUNE_PAGES Queries of DELETE_BATCH versions and one transaction
        per page, so every request is bounded. When pages remain, `next_token` says where the next request
        (same body plus the token) goes on; the token carries how many live versions were kept so far.
        """
        self.reading.live_latest(name)
        cutoff = None
        if older_than_days is not None:
            cutoff = now_iso(self.policy.clock() - timedelta(days=older_than_days))
        scope = f"prune:{name}:{keep_last}:{older_than_days}:{dry_run}"
        start, state = self.repository.resume_from(name, scope, token) if token else (None, {})
        seen_live = state.get("live", 0)
        deleted: list[int] = []
        skipped: list[Skipped] = []
        for _ in range(PRUNE_PAGES):
            versions, start = self.repository.versions_chunk(name, start=start, size=DELETE_BATCH)
            doomed: list[int] = []
            for version in versions:
                if version.deleted:
                    continue
                seen_live += 1
                if seen_live <= keep_last or (cutoff is not None and version.created_at >= cutoff):
                    continue
                if version.aliases:
                    skipped.append(Skipped(version=version.version, aliases=version.aliases))
                else:
                    doomed.append(version.version)
            if dry_run:
                deleted.extend(doomed)
            elif doomed:
                self._delete_batch(name, doomed, deleted, skipped)
            if start is None:
                break
        next_token = None if start is None else self.repository.resume_token(name, scope, start, {"live": seen_live})
        return PruneResult(name=name, dry_run=dry_run, deleted=deleted, skipped=skipped, next_token=next_token)

    def _delete_batch(self, name: str, batch: list[int], deleted: list[int], skipped: list[Skipped]) -> None:
        """One transaction. If one of its versions was pinned meanwhile the batch is cancelled whole, and its
        versions are then deleted one by one."""
        if self.repository.delete_versions(name, batch, now=self.policy.now()):
            deleted.extend(batch)
            return
        for number in batch:
            try:
                self.delete_version(name, number)
            except VersionPinnedError as pinned:
                skipped.append(Skipped(version=number, aliases=pinned.details["aliases"]))
                continue
            deleted.append(number)

    def purge(self, name: str, *, force: bool) -> None:
        """Remove every item and object of the artifact; LATEST stays as a tombstone keeping the counter.

        Refused (409) while aliases exist unless `force`. Safe to re-run after a crash: the `purging`
        mark is set first and cleared only by the final transaction, and every step is idempotent.
        """
        latest = self.reading.live_latest(name)
        self._refuse_aliases(name, force)
        if not latest.purging:
            self.repository.mark_purging(name, now=self.policy.now())
        # An alias written between the check and the mark is caught here; after the mark, alias writes fail.
        try:
            self._refuse_aliases(name, force)
        except ConflictError:
            self.repository.clear_purging(name)
            raise
        self.repository.delete_rows(name)
        self.blobs.delete_prefix(keys.blob_prefix(name))
        self.repository.finish_purge(name, now=self.policy.now())

    def _refuse_aliases(self, name: str, force: bool) -> None:
        live = [a.alias for a in self.repository.live_aliases(name)]
        if live and not force:
            raise ConflictError(
                f"artifact {name!r} has aliases ({', '.join(live)}); delete them or purge with force=true",
                details={"aliases": live},
            )

    def _verify(self, name: str, content: Content) -> None:
        _check_size(content.size)
        self.blobs.verify(keys.blob_key(name, content.sha256), content.sha256, content.size)


def _check_size(size: int) -> None:
    if size > MAX_BLOB_SIZE:
        raise PayloadTooLargeError(f"size {size} is over the {MAX_BLOB_SIZE}-byte limit of one upload", field="size")
