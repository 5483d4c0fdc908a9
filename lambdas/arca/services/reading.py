"""Reading: summaries, versions, listings, aliases and their history, and resolve (alias, number or LATEST).

Resolve is at the physical limit: an alias item carries its targets' content, so resolving an alias is
one item read (a second only for an alias on LATEST, which is mutable) and no S3 call. Through a link, one more.
"""

from __future__ import annotations

import bisect
import threading
from collections import OrderedDict
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, TypeVar

from pydantic import BaseModel

from arca.adapters import keys
from arca.adapters.s3 import Blobs
from arca.adapters.store.aliases import AliasStore
from arca.adapters.store.artifacts import ArtifactStore
from arca.adapters.store.history import HistoryStore
from arca.adapters.store.pages import PAGE_BYTES
from arca.adapters.store.uploads import COMPLETE, UploadStore
from arca.adapters.store.versions import VersionStore
from arca.domain.aggregates import AliasRecord, LatestRecord, RevisionRecord, VersionRecord, target_of
from arca.domain.entities import (
    AliasList,
    ArtifactEntry,
    ArtifactPage,
    Counts,
    FilePage,
    FileResolution,
    HistoryPage,
    Latest,
    Resolution,
    Summary,
    Target,
    TreeFile,
    Version,
    VersionPage,
)
from arca.domain.errors import ConflictError, LinkedNameError, NotFoundError, ValidationError
from arca.domain.moments import to_iso
from arca.domain.names import parse_target, validate_alias
from arca.domain.routing import PRIMARY, choose_route
from arca.domain.versions import LATEST
from arca.services.resolving import follow

if TYPE_CHECKING:  # loaded by the first tree read: the resolve function's cold start loads no request model
    from arca.domain.trees import FileEntry, Tree

CONTENT_REF = "sha256:"
# Parsed tree manifests a function keeps (content-addressed, so never stale): up to this many trees, and up to
# TREES_KEPT_FILES files among them (10,000 files with 1,024-byte paths are ~12 MB in memory).
TREES_KEPT = 16
TREES_KEPT_FILES = 50_000
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
        self._trees: OrderedDict[tuple[str, str, str | None], Tree] = OrderedDict()
        self._trees_lock = threading.Lock()

    def follow(self, name: str, read: Callable[[str], R]) -> R:
        """`read(name)`; when `name` is a link, `read(target)` instead, with `via` set to the link's name (one hop:
        arca.services.resolving.follow)."""

        def marked(found: R, link: str) -> R:
            return found.model_copy(update={"via": link})

        return follow(name, read, marked)

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

    def content_latest(self, name: str) -> LatestRecord:
        """LATEST of an artifact that exists and holds content: an artifact created with no version yet
        (decision 111) has none, a NotFoundError saying so."""
        latest = self.live_latest(name)
        if latest.sha256 is None:
            raise NotFoundError(f"artifact {name!r} has no version yet: LATEST holds no content")
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
        return self.content_latest(name) if ref == LATEST else self.version(name, int(ref))

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
        return self._resolved(name, ref, *self.locate(name, ref, routing_key=routing_key, at=at))

    def locate(
        self, name: str, ref: str, *, routing_key: str | None = None, at: datetime | None = None
    ) -> tuple[int | str, Target, str, int | None]:
        """What `resolve` resolves `ref` to, with no download URL: (version, its content, the route taken, the
        alias revision or None). The same reads as `resolve`."""
        if ref.startswith(CONTENT_REF):
            found = self.content_version(name, ref.removeprefix(CONTENT_REF))
            return found.version, target_of(found), PRIMARY, None
        if ref == LATEST or ref.isdigit():
            target = parse_target(ref, field="ref")
            source = self.version_or_latest(name, target)
            if isinstance(source, VersionRecord) and source.deleted:
                raise NotFoundError(f"artifact {name!r} has no live version {target}")
            return target, target_of(source), PRIMARY, None
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
            content = target_of(self.content_latest(name))
        elif at is not None and isinstance(version, int):
            # A live alias pins its versions against deletion; a past revision pins nothing, so its target may
            # have been deleted since. One GetItem: a deleted version is never served, by any path.
            self._live_version(name, version, ref)
        assert version is not None
        return version, content, route, record.revision

    def tree_files(
        self, name: str, version: int | str, *, prefix: str, limit: int, token: str | None, page_bytes: int = PAGE_BYTES
    ) -> FilePage:
        """A page of a tree version's files (LATEST too), in path order, filtered by a string prefix of paths: at
        most `limit` files and `page_bytes` of their answers. One read of the version, then its manifest (kept
        once read). ConflictError for a version that is one blob."""
        from arca.domain.trees import check_prefix, files_page

        check_prefix(prefix)
        source = self.version_or_latest(name, version)
        tree = self._tree_of(name, source, f"version {version}")
        scope = f"files:{name}:{version}:{prefix}"
        after = None
        if token is not None:
            key = keys.decode_token(token, scope, pk=tree.digest, within=lambda sk: sk.isdigit())
            index = int(key["sk"])
            if index >= tree.count:
                raise ValidationError("next_token is not a token this listing issued", field="next_token")
            after = tree.files[index].path
        found, last = files_page(tree.files, prefix=prefix, limit=limit, after=after, max_bytes=page_bytes)
        next_token = None
        if last is not None:
            index = _index_of(tree, last)
            next_token = keys.encode_token({"pk": tree.digest, "sk": f"{index:05d}"}, scope)
        return FilePage(files=[_file(entry) for entry in found], next_token=next_token)

    def resolve_file(
        self, name: str, ref: str, path: str, *, routing_key: str | None = None, at: datetime | None = None
    ) -> FileResolution:
        """One file of the tree a reference resolves to (as `resolve` does: alias, number, LATEST or content), and a
        download URL of its content. NotFoundError naming the path when the tree holds no such file."""
        from arca.domain.trees import check_path

        check_path(path)
        located = self.locate(name, ref, routing_key=routing_key, at=at)
        resolution = self._resolved(name, ref, *located)
        if resolution.files is None:
            raise ConflictError(
                f"{ref!r} of {name!r} resolves to one blob (version {resolution.version}), not a tree of files",
                field="ref",
            )
        tree = self.tree(name, resolution.sha256, resolution.content_type, located[1].file_types)
        index = _index_of(tree, path)
        if index >= tree.count or tree.files[index].path != path:
            raise NotFoundError(
                f"the tree of {name!r} at {ref!r} (version {resolution.version}) has no file {path!r}",
                field="path",
                details={"path": path},
            )
        entry = tree.files[index]
        url, expires_at = self.blobs.presign_download(
            self.file_key(name, entry), content_type=entry.served_as(), filename=path.rsplit("/", 1)[-1]
        )
        return FileResolution(
            name=name,
            ref=ref,
            version=resolution.version,
            **_file(entry).model_dump(),
            download_url=url,
            expires_at=expires_at,
            tree_sha256=resolution.sha256,
            route=resolution.route,
            alias_revision=resolution.alias_revision,
        )

    def file_key(self, name: str, entry: FileEntry) -> str:
        """Where a file's content is: its single PUT, else its newest verified multipart layout (a publish checked
        one of them)."""
        key = keys.blob_key(name, entry.sha256)
        if self.blobs.stat(key) is not None:
            return key
        verified = [layout for layout in self.layouts.layouts(name, entry.sha256) if layout.state == COMPLETE]
        if not verified:
            raise ConflictError(f"the content of {entry.path!r} ({entry.sha256}) is not stored", field="path")
        return keys.multipart_blob_key(name, entry.sha256, verified[0].parts_sha256)

    def _tree_of(self, name: str, source: VersionRecord | LatestRecord, what: str) -> Tree:
        if source.files is None or source.sha256 is None:
            raise ConflictError(f"{what} of {name!r} is one blob, not a tree of files", field="version")
        return self.tree(name, source.sha256, source.content_type, source.file_types)

    def tree(self, name: str, sha256: str, media_type: str | None = None, file_types: str | None = None) -> Tree:
        """The tree whose manifest is the content `sha256` of `name` (read from S3 once, then kept): a canonical tree
        manifest, typed by its types document `file_types` when the version names one (decision 113: one more
        read, kept with the tree), or an OCI manifest (`media_type`, the version's content type) whose files are its
        config and layers, each typed by its descriptor's media type."""
        kept_as = (name, sha256, file_types)
        with self._trees_lock:
            kept = self._trees.get(kept_as)
            if kept is not None:
                self._trees.move_to_end(kept_as)
                return kept
        from arca.domain.trees import TREE_MEDIA_TYPE, oci_manifest_tree, parse_manifest, with_types

        document = self.blobs.read(keys.blob_key(name, sha256))
        if media_type is not None and media_type != TREE_MEDIA_TYPE:
            tree = oci_manifest_tree(document, field="version")
        else:
            tree = parse_manifest(document, field="version")
            if file_types is not None:
                tree = with_types(tree, self.blobs.read(keys.blob_key(name, file_types)))
        with self._trees_lock:
            self._trees[kept_as] = tree
            while len(self._trees) > TREES_KEPT or (
                len(self._trees) > 1 and sum(t.count for t in self._trees.values()) > TREES_KEPT_FILES
            ):
                self._trees.popitem(last=False)
        return tree

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
        moment = to_iso(at)
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
            **target.model_dump(exclude={"filename", "parts_sha256", "file_types"}),
            download_url=url,
            expires_at=expires_at,
            route=route,
            alias_revision=revision,
        )


def _file(entry: FileEntry) -> TreeFile:
    return TreeFile(path=entry.path, sha256=entry.sha256, size=entry.size, content_type=entry.served_as())


def _index_of(tree: Tree, path: str) -> int:
    """Where `path` is (or would be) among the tree's files, in path order."""
    return bisect.bisect_left(tree.files, path, key=lambda entry: entry.path)
