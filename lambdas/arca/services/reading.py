"""Reading: summaries, versions, listings, aliases and their history, and resolve (alias, number or LATEST).

Resolve is at the physical limit: an alias item carries its targets' content, so resolving an alias is
one item read (a second only for an alias on LATEST, which is mutable) and no S3 call. Through a link, one more.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TypeVar

from pydantic import BaseModel

from arca.adapters import keys
from arca.adapters.s3 import Blobs
from arca.adapters.store.aliases import AliasStore
from arca.adapters.store.artifacts import ArtifactStore
from arca.adapters.store.history import HistoryStore
from arca.adapters.store.records import AliasRecord, LatestRecord, RevisionRecord, VersionRecord, target_of
from arca.adapters.store.uploads import UploadStore
from arca.adapters.store.versions import VersionStore
from arca.domain.entities import (
    AliasList,
    ArtifactEntry,
    ArtifactPage,
    Counts,
    HistoryPage,
    Latest,
    Resolution,
    Summary,
    Target,
    Version,
    VersionPage,
)
from arca.domain.errors import LinkedNameError, NotFoundError, ValidationError
from arca.domain.names import parse_target, validate_alias
from arca.domain.routing import PRIMARY, choose_route
from arca.domain.versions import LATEST
from arca.services.retry import now_iso

CONTENT_REF = "sha256:"
_PREFIX_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789._-/")
R = TypeVar("R", bound=BaseModel)


def refuse_link(name: str, latest: LatestRecord | None) -> None:
    """A write (or a read that does not follow links) under a link name is refused, naming the target
    (LinkedNameError)."""
    if latest is not None and latest.link:
        raise LinkedNameError(name, latest.link)


class Reading:
    def __init__(
        self,
        artifacts: ArtifactStore,
        versions: VersionStore,
        aliases: AliasStore,
        history: HistoryStore,
        layouts: UploadStore,
        blobs: Blobs,
    ) -> None:
        self.artifacts = artifacts
        self.versions = versions
        self.aliases = aliases
        self.revisions = history
        self.layouts = layouts
        self.blobs = blobs

    def follow(self, name: str, read: Callable[[str], R]) -> R:
        """`read(name)`; when `name` is a link, `read(target)` instead, with `via` set to the link's name.

        One hop only: a link never points at a link (the link transaction's conditions), so a target that is
        a link is one that was purged and linked since the first read: 404. The first read already reveals a
        link (LATEST, or the probes of VersionStore.version and AliasStore.alias), so following costs one read
        more than the direct one.
        """
        try:
            return read(name)
        except LinkedNameError as hop:
            if hop.name != name:
                raise
            target = hop.target
        try:
            found = read(target)
        except LinkedNameError:
            raise NotFoundError(f"artifact {target!r}, the target of link {name!r}, does not exist") from None
        return found.model_copy(update={"via": name})

    def summary_through(self, name: str) -> Summary:
        """The summary, through a link too: then `name` stays the link's, `link` is the target and `via` is set."""
        summary = self.follow(name, self.summary)
        if summary.via is None:
            return summary
        return summary.model_copy(update={"name": name, "link": summary.name})

    def live_latest(self, name: str) -> LatestRecord:
        """LATEST of an artifact that exists (being purged counts); NotFoundError otherwise, LinkedNameError
        for a link."""
        latest = self.artifacts.latest(name)
        refuse_link(name, latest)
        if latest is None or latest.purged:
            raise NotFoundError(f"artifact {name!r} does not exist")
        return latest

    def summary(self, name: str) -> Summary:
        return self.summary_of(self.live_latest(name))

    @staticmethod
    def summary_of(latest: LatestRecord) -> Summary:
        return Summary(
            name=latest.name,
            latest=latest.entity(),
            newest_version=latest.newest_version,
            counts=Counts(
                versions=latest.version_count - latest.deleted_count,
                deleted_versions=latest.deleted_count,
                aliases=latest.alias_count,
            ),
            created_at=latest.created_at,
            updated_at=latest.updated_at,
            description=latest.description,
            tags=latest.tags,
        )

    def version(self, name: str, number: int) -> VersionRecord:
        found = self.versions.version(name, number)
        if found is None:
            raise NotFoundError(f"artifact {name!r} has no version {number}")
        return found

    def with_parts(self, found: VersionRecord | LatestRecord) -> Version | Latest:
        """The answer of a version or LATEST: a version of multipart content with its part hashes, read from
        its layout's item (one GetItem)."""
        if isinstance(found, LatestRecord) or found.parts_sha256 is None:
            return found.entity()
        layout = self.layouts.get(found.name, keys.upload_id(found.sha256, found.parts_sha256))
        return found.entity(parts=layout.parts if layout else None)

    def version_or_latest(self, name: str, ref: int | str) -> VersionRecord | LatestRecord:
        if isinstance(ref, str) and ref.startswith(CONTENT_REF):
            return self.content_version(name, ref.removeprefix(CONTENT_REF))
        return self.live_latest(name) if ref == LATEST else self.version(name, int(ref))

    def content_version(self, name: str, sha256: str) -> VersionRecord:
        """A content reference `sha256:<hex>`: the newest version with that content that is not deleted (one
        Query of the search index, which is eventually consistent)."""
        found = self.versions.newest_with_content(name, sha256)
        if found is None:
            self.live_latest(name)
            raise NotFoundError(f"artifact {name!r} has no live version with content {CONTENT_REF}{sha256}")
        return found

    def list_versions(
        self, name: str, *, limit: int, token: str | None, order: str, include_deleted: bool
    ) -> VersionPage:
        self.live_latest(name)
        versions, next_token = self.versions.versions_page(
            name, limit=limit, token=token, newest_first=order == "desc", include_deleted=include_deleted
        )
        return VersionPage(versions=versions, next_token=next_token)

    def list_artifacts(self, *, prefix: str, delimiter: str | None, limit: int, token: str | None) -> ArtifactPage:
        """Names under `prefix`; with delimiter "/", deeper names fold into `prefixes` (as S3 does)."""
        if len(prefix) > 256 or not set(prefix) <= _PREFIX_CHARS:
            raise ValidationError("prefix may only contain a-z, 0-9, '.', '_', '-' and '/'", field="prefix")
        if delimiter is None:
            names, next_token = self.artifacts.names_page(prefix, limit=limit, token=token)
            entries = [ArtifactEntry(name=n, link=link) for n, link in names]
            return ArtifactPage(artifacts=entries, prefixes=[], next_token=next_token)
        children, next_token = self.artifacts.folder_page(prefix, limit=limit, token=token)
        return ArtifactPage(
            artifacts=[ArtifactEntry(name=c, link=link) for c, link in children if not c.endswith("/")],
            prefixes=[c for c, _ in children if c.endswith("/")],
            next_token=next_token,
        )

    def live_alias(self, name: str, alias: str) -> AliasRecord:
        found = self.aliases.alias(name, alias)
        if found is None or found.deleted:
            raise NotFoundError(f"artifact {name!r} has no alias {alias!r}")
        return found

    def list_aliases(self, name: str, *, limit: int = 100, token: str | None = None) -> AliasList:
        self.live_latest(name)
        aliases, next_token = self.aliases.aliases_page(name, limit=limit, token=token)
        return AliasList(aliases=[a.entity() for a in aliases], next_token=next_token)

    def history(self, name: str, alias: str, *, limit: int, token: str | None) -> HistoryPage:
        if self.aliases.alias(name, alias) is None:
            raise NotFoundError(f"artifact {name!r} has no alias {alias!r}")
        history, next_token = self.revisions.history_page(name, alias, limit=limit, token=token)
        return HistoryPage(history=[r.entity() for r in history], next_token=next_token)

    def resolve(self, name: str, ref: str, *, routing_key: str | None = None, at: datetime | None = None) -> Resolution:
        """Turn a version number, LATEST, a content reference or an alias (optionally as it stood `at`) into a
        download."""
        if ref.startswith(CONTENT_REF):
            found = self.content_version(name, ref.removeprefix(CONTENT_REF))
            return self._resolved(name, ref, found.version, target_of(found), PRIMARY, None)
        if ref == LATEST or ref.isdigit():
            target = parse_target(ref, field="ref")
            source = self.version_or_latest(name, target)
            if isinstance(source, VersionRecord) and source.deleted:
                raise NotFoundError(f"artifact {name!r} has no live version {target}")
            return self._resolved(name, ref, target, target_of(source), PRIMARY, None)
        validate_alias(ref, field="ref")
        record: AliasRecord | RevisionRecord = (
            self._as_of(name, ref, at) if at is not None else self.live_alias(name, ref)
        )
        route = PRIMARY
        if record.secondary_version is not None:
            route = choose_route(record.secondary_version_weight or 0, name, ref, routing_key)
        version = record.version if route == PRIMARY else record.secondary_version
        content = record.primary if route == PRIMARY else record.secondary
        if version == LATEST or content is None:
            content = target_of(self.live_latest(name))
        elif at is not None and isinstance(version, int):
            # A live alias pins its versions against deletion; a past revision pins nothing, so its target may
            # have been deleted since. One GetItem: a deleted version is never served, by any path.
            self._live_version(name, version, ref)
        assert version is not None
        return self._resolved(name, ref, version, content, route, record.revision)

    def _live_version(self, name: str, number: int, ref: str) -> VersionRecord:
        found = self.versions.version(name, number)
        if found is None or found.deleted:
            raise NotFoundError(
                f"alias {ref!r} of {name!r} pointed at version {number} then, which is deleted now",
                details={"version": number},
            )
        return found

    def _as_of(self, name: str, alias: str, at: datetime) -> RevisionRecord:
        """The alias's revision in force at `at` (it carries the same targets as the alias item did)."""
        moment = now_iso(at)
        record = self.revisions.revision_at(name, alias, moment)
        if record is None:
            raise NotFoundError(f"alias {alias!r} of {name!r} did not exist at {moment}", field="at")
        return record

    def _resolved(
        self, name: str, ref: str, version: int | str, target: Target, route: str, revision: int | None
    ) -> Resolution:
        filename = target.filename or f"{name.rsplit('/', 1)[-1]}-{version}"
        key = keys.blob_key(name, target.sha256)
        if target.parts_sha256 is not None:
            key = keys.multipart_blob_key(name, target.sha256, target.parts_sha256)
        url, expires_at = self.blobs.presign_download(key, content_type=target.content_type, filename=filename)
        return Resolution(
            name=name,
            ref=ref,
            version=version,
            **target.model_dump(exclude={"filename", "parts_sha256"}),
            download_url=url,
            expires_at=expires_at,
            route=route,
            alias_revision=revision,
        )
