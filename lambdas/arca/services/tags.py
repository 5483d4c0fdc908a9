"""Tags and search: tag patches on versions and artifacts, filtered version listings, registry-wide search.

A tag patch reads the tagged item, merges, and writes it back under a compare-and-set on its tag counter
(Policy.compare_and_set), so two concurrent patches never lose each other's keys: the loser re-reads and
merges again. Searches are Queries of the table's secondary indexes (eventually consistent).
"""

from __future__ import annotations

from datetime import datetime

from arca.adapters.store.change import Change
from arca.adapters.store.tags import TagStore
from arca.adapters.store.versions import VersionFilters, VersionStore
from arca.domain.aggregates import LatestRecord, VersionRecord
from arca.domain.entities import ArtifactEntry, ArtifactPage, HitPage, Summary, Version, VersionPage
from arca.domain.errors import ConflictError, ValidationError
from arca.domain.moments import to_iso
from arca.domain.tags import TagPatch, merge, parse_filter
from arca.services.reading import Reading
from arca.services.retry import Policy

UNSET = object()


class Tagging:
    def __init__(self, store: TagStore, reading: Reading, policy: Policy) -> None:
        self.store = store
        self.reading = reading
        self.policy = policy

    def tag_version(self, name: str, number: int, patch: TagPatch, *, identity: str | None = None) -> Version:
        """Merge `patch` into the version's tags (a None value removes the key); soft-deleted versions too.

        Raises NotFoundError, ValidationError (over the tag limit, field `tags`) or ConflictError (purging, or
        the version expired: an expired version carries no tags).
        """

        def attempt() -> VersionRecord:
            seen = self.reading.version(name, number)
            if seen.expired:
                raise _expired(number)
            merged = merge(seen.tags, patch)
            if merged == seen.tags:  # nothing changes: nothing is written
                return seen
            change = Change(seen.name, by=identity, now=self.policy.now())
            written = self.store.stage_version_tags(change, seen, merged)
            self.store.commit(change)
            return written

        return self.policy.compare_and_set(attempt).entity()

    def update_artifact(
        self, name: str, *, patch: TagPatch | None, description: object = UNSET, identity: str | None = None
    ) -> Summary:
        """Merge `patch` into the artifact's tags and set its description (when given; None clears it)."""

        def attempt() -> LatestRecord:
            seen = self.reading.live_latest(name)
            merged = merge(seen.tags, patch or {})
            wanted = seen.description if description is UNSET else description  # absent keeps, None clears
            assert wanted is None or isinstance(wanted, str)
            if merged == seen.tags and wanted == seen.description:
                return seen
            change = Change(seen.name, by=identity, now=self.policy.now())
            written = self.store.stage_artifact_tags(change, seen, merged, wanted)
            self.store.commit(change)
            return written

        return self.reading.summary_of(self.policy.compare_and_set(attempt))


def _expired(number: int) -> ConflictError:
    return ConflictError(f"version {number} expired: it carries no tags", field="version")


def tag_filters(texts: list[str] | None, field: str = "tag") -> tuple[tuple[str, str], ...]:
    return tuple(parse_filter(t, field) for t in texts or ())


class Searching:
    def __init__(self, store: TagStore, versions: VersionStore, reading: Reading) -> None:
        self.store = store
        self.versions = versions
        self.reading = reading

    def list_versions(
        self,
        name: str,
        *,
        limit: int,
        token: str | None,
        order: str,
        include_deleted: bool,
        tags: list[str] | None = None,
        sha256: str | None = None,
        created_after: datetime | None = None,
        created_before: datetime | None = None,
    ) -> VersionPage:
        """The artifact's versions; with filters, only those matching all of them (AND)."""
        filters = VersionFilters(
            tags=tag_filters(tags),
            sha256=sha256,
            after=None if created_after is None else to_iso(created_after),
            before=None if created_before is None else to_iso(created_before),
        )
        if not filters.active:  # the plain listing, its tokens unchanged
            return self.reading.list_versions(
                name, limit=limit, token=token, order=order, include_deleted=include_deleted
            )
        self.reading.live_latest(name)
        versions, next_token = self.versions.filtered_versions_page(
            name,
            filters=filters,
            limit=limit,
            token=token,
            newest_first=order == "desc",
            include_deleted=include_deleted,
        )
        return VersionPage(versions=versions, next_token=next_token)

    def search_versions(self, *, sha256: str | None, tags: list[str] | None, limit: int, token: str | None) -> HitPage:
        """Registry-wide: every version holding the content `sha256`, or the one tag `k=v` / `k:v`."""
        parsed = tag_filters(tags)
        # One index partition a search: a second criterion could only be checked item by item, and a tag row
        # carries no other tags to check.
        if (sha256 is None) == (not parsed) or len(parsed) > 1:
            raise ValidationError("give either sha256 or one tag", field="tag" if parsed else "sha256")
        hits, next_token = self.store.search_versions(
            sha256=sha256, tag=parsed[0] if parsed else None, limit=limit, token=token
        )
        return HitPage(versions=hits, next_token=next_token)

    def search_artifacts(self, tags: list[str], *, limit: int, token: str | None) -> ArtifactPage:
        """The artifacts whose own tags hold the one tag `k=v` / `k:v`, in name order."""
        parsed = tag_filters(tags)
        if len(parsed) != 1:
            raise ValidationError("give one tag to search artifacts by", field="tag")
        names, next_token = self.store.search_artifacts(parsed[0], limit=limit, token=token)
        return ArtifactPage(artifacts=[ArtifactEntry(name=n) for n in names], prefixes=[], next_token=next_token)
