"""The aggregates the services read and write: an artifact (its LATEST), a version, an alias and an alias's
revision, each with all the state it holds besides what the API answers of it (counters, a multipart layout's
name, an alias's copied targets, tombstones). `entity()` is each one's answer (arca.domain.entities).

How each is stored (its item, written and read back) is the store's: arca.adapters.store.records.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from arca.domain.downloads import recorded_filename
from arca.domain.entities import (
    Alias,
    AliasAction,
    AliasRevision,
    AliasState,
    Latest,
    Target,
    Version,
    VersionFields,
)

if TYPE_CHECKING:  # the write side's: a resolve's cold start imports no guard model
    from arca.domain.guards import Serving


class LatestRecord(BaseModel):
    """What LATEST's item holds: the working copy (the API answers it as `Latest`, see `entity`) and the
    artifact's state the writes keep there."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    name: str
    sha256: str | None = None
    size: int | None = None
    content_type: str | None = None
    metadata: dict[str, str] | None = None
    created_at: str | None = None
    updated_at: str | None = None
    newest_version: int | None = None
    rev: int = 0  # compare-and-set counter advanced by every LATEST write
    newest_sha256: str | None = None
    # The content whose reference LATEST holds in the artifact's blob counts (absent: written before counts).
    counted_sha256: str | None = None
    version_count: int = 0
    deleted_count: int = 0
    alias_count: int = 0  # live aliases, kept by the alias transactions
    purging: str | None = None
    purged: str | None = None
    purges: int = 0  # finished purges: a publish re-checks its blob when this moved
    # Collections of the artifact's content claimed or finished (retention): a reference is added only under this
    # count as read when the bytes were checked, so no collection can start between the check and the write.
    collections: int = 0
    revision_base: int = 0  # the highest alias revision purges removed: new aliases go on from it
    link: str | None = None  # set: this name is a link to that artifact, not an artifact
    link_count: int = 0  # links that point at this artifact
    part_size: int | None = None
    parts_sha256: str | None = None  # the layout of multipart content (arca.domain.multipart)
    files: int | None = None  # a tree's count of files (None: one blob)
    file_types: str | None = None  # the sha256 of a tree's types document (decision 113)
    tags: dict[str, str] = Field(default_factory=dict)  # the artifact's tags (the summary shows them)
    description: str | None = None
    tag_rev: int = 0  # compare-and-set counter of the artifact's tags and description
    last_event: str | None = None  # the newest event id: the next one must sort after it
    tagged_at: str | None = None  # when the tags or the description last changed
    # The signed manifest of the newest version while LATEST holds its bytes (resolving LATEST shows it).
    manifest: str | None = None
    signature: str | None = None

    @property
    def newest(self) -> int:
        return self.newest_version or 0

    def entity(self) -> Latest:
        """LATEST as the API answers it."""
        return Latest.model_validate({f: getattr(self, f) for f in _LATEST_FIELDS})


_LATEST_FIELDS = tuple(f for f in LatestRecord.model_fields if f in Latest.model_fields)


class VersionRecord(VersionFields):
    """What a version's item holds: the version (the API answers it as `Version`, see `entity`) and the state
    the services need besides: the tags' and the leases' compare-and-set counters, the name of a multipart layout
    and a tree's types document."""

    tag_rev: int = 0  # compare-and-set counter of the tags
    lease_rev: int = 0  # counts the leases taken on it: a soft delete holds only while none was taken since
    parts_sha256: str | None = None  # the layout's name (arca.domain.multipart)
    file_types: str | None = None  # the sha256 of a tree's types document (decision 113)

    def entity(self, parts: list[str] | None = None) -> Version:
        """The version as the API answers it (with `parts`, the part hashes of multipart content)."""
        return Version.model_validate({**{f: getattr(self, f) for f in _VERSION_FIELDS}, "parts": parts})


_VERSION_FIELDS = tuple(VersionFields.model_fields)


class _AliasStateRecord(AliasState):
    """What an alias item and a history record hold of an alias's state besides what the API answers: the
    targets' content copied on the item (an alias resolves with one item read) and the deletion tombstone."""

    primary: Target | None = None
    secondary: Target | None = None
    deleted: bool = False  # a tombstone keeps the revision counter after a delete

    @property
    def pinned(self) -> set[int]:
        """The numbered versions this state points at (LATEST is never pinned: it cannot be deleted)."""
        if self.deleted:
            return set()
        return {v for v in (self.version, self.secondary_version) if isinstance(v, int)}

    def serving(self) -> Serving | None:
        """What this state serves (None: a deletion), as a policy judges it."""
        from arca.domain.guards import Serving

        if self.deleted or self.version is None:
            return None
        weight = self.secondary_version_weight or 0
        return Serving(self.version, self.secondary_version, weight if self.secondary_version is not None else 0)


class AliasRecord(_AliasStateRecord):
    """What an alias item holds (the API answers it as `Alias`, see `entity`)."""

    name: str
    alias: str
    created_at: str | None = None
    first_revision: int = 1  # where this alias's history starts (after a purge: later)
    # The revision of the alias's live policy (0: none), kept true by the alias's writes and its policy's writes,
    # so a write of an alias without a policy reads none; None: an item written before the alias carried it.
    policy_revision: int | None = None

    def entity(self) -> Alias:
        """The alias as the API answers it."""
        return Alias.model_validate({f: getattr(self, f) for f in _ALIAS_FIELDS})


class RevisionRecord(_AliasStateRecord):
    """What a history record holds (the API answers it as `AliasRevision`, see `entity`)."""

    action: AliasAction

    def entity(self) -> AliasRevision:
        """The revision as the API answers it."""
        return AliasRevision.model_validate({f: getattr(self, f) for f in _REVISION_FIELDS})


_ALIAS_FIELDS = tuple(f for f in AliasRecord.model_fields if f in Alias.model_fields)
_REVISION_FIELDS = tuple(f for f in RevisionRecord.model_fields if f in AliasRevision.model_fields)


def target_of(source: LatestRecord | VersionRecord) -> Target:
    """The content an alias copies of the version (or LATEST) it points at."""
    return Target(
        sha256=str(source.sha256),
        size=int(source.size or 0),
        content_type=str(source.content_type),
        filename=recorded_filename(source.metadata),
        part_size=source.part_size,
        parts_sha256=source.parts_sha256,
        files=source.files,
        file_types=source.file_types,
        manifest=source.manifest,
        signature=source.signature,
    )
