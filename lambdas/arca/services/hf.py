"""Arca's reads as the Hugging Face Hub protocol asks them (`arca.protocols.hf.Backend`), over Reading.

A repo is an artifact (a link is followed once, as every read does); a revision resolves as `resolve` does (one
read; an alias's canary picks by the routing key). A version that is a tree of files lists its tree; a version that
is one blob is a tree of one file, named by the file name it was published from (else `<leaf>-<version>`), so a
plain `arca publish` of a single file downloads with `hf_hub_download` too. A file is a presigned S3 GET: another
origin than the API, which is what the client needs to take the redirect's headers as the file's metadata.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from arca.adapters import keys
from arca.domain.aggregates import LatestRecord, target_of
from arca.domain.entities import Target as Content
from arca.domain.errors import LinkedNameError, NotFoundError
from arca.domain.versions import LATEST
from arca.protocols.hf.backend import EntryNotFound, FileEntry, RepoNotFound, RevisionNotFound, Target
from arca.protocols.hf.listing import BadCursor
from arca.services.reading import Reading

if TYPE_CHECKING:
    from arca.domain.trees import Tree

T = TypeVar("T")


@dataclass(frozen=True)
class _Held:
    """What a revision resolved to: the artifact holding it (the link's target for a link) and its content."""

    name: str
    version: int | None
    content: Content

    @property
    def blob(self) -> FileEntry | None:
        """The one file of a version that is one blob (None for a tree)."""
        if self.content.files is not None:
            return None
        leaf = self.name.rsplit("/", 1)[-1]
        filename = self.content.filename or f"{leaf}-{self.version if self.version is not None else LATEST}"
        return FileEntry(filename, self.content.sha256, self.content.size)


class HubReads:
    """`arca.protocols.hf.Backend` over Arca's reading service: reads only."""

    def __init__(self, reading: Reading) -> None:
        self.reading = reading

    def resolve(self, repo: str, ref: int | str, routing_key: str | None) -> Target:
        """One read (an alias on LATEST: two; through a link: one more); RepoNotFound / RevisionNotFound on a miss."""
        held = self._follow(repo, lambda name: self._locate(name, ref, routing_key))
        return Target(held.version, held.content.sha256, held.content.size, source=held)

    def files(
        self, repo: str, target: Target, prefix: str, limit: int, token: str | None
    ) -> tuple[list[FileEntry], str | None]:
        """A page of the files under `prefix`, in path order; the token is the index of the next file in the tree
        (the tree's manifest is read once per function, then kept: content-addressed, it never changes)."""
        held = _held(target)
        single = held.blob
        if single is not None:
            if token is not None:
                raise BadCursor("cursor: not a cursor of this listing")
            return ([single] if single.path.startswith(prefix) else []), None
        tree = self._tree(held)
        start = bisect.bisect_left(tree.files, prefix, key=lambda entry: entry.path)
        if token is not None:
            if not (token.isascii() and token.isdigit()) or not start <= int(token) <= tree.count:
                raise BadCursor("cursor: not a cursor of this listing")
            start = int(token)
        found: list[FileEntry] = []
        index = start
        while index < tree.count and tree.files[index].path.startswith(prefix):
            if len(found) == limit:
                return found, str(index)  # a file under the prefix is left: the next page starts at it
            entry = tree.files[index]
            found.append(FileEntry(entry.path, entry.sha256, entry.size))
            index += 1
        return found, None

    def file(self, repo: str, target: Target, path: str) -> tuple[FileEntry, str]:
        """The file at `path` and a presigned GET of its bytes (a tree's file: one HeadObject to find its object)."""
        held = _held(target)
        single = held.blob
        if single is not None:
            if path != single.path:
                raise EntryNotFound(f"{repo} holds one file, {single.path!r}, not {path!r}")
            key = keys.blob_key(held.name, single.sha256)
            if held.content.parts_sha256 is not None:
                key = keys.multipart_blob_key(held.name, single.sha256, held.content.parts_sha256)
            url, _ = self.reading.blobs.presign_download(
                key, content_type=held.content.content_type, filename=single.path.rsplit("/", 1)[-1]
            )
            return single, url
        tree = self._tree(held)
        index = bisect.bisect_left(tree.files, path, key=lambda entry: entry.path)
        if index >= tree.count or tree.files[index].path != path:
            raise EntryNotFound(f"{repo} has no file {path!r}")
        entry = tree.files[index]
        url, _ = self.reading.blobs.presign_download(
            self.reading.file_key(held.name, entry), content_type=entry.served_as(), filename=path.rsplit("/", 1)[-1]
        )
        return FileEntry(entry.path, entry.sha256, entry.size), url

    def _locate(self, name: str, ref: int | str, routing_key: str | None) -> _Held:
        if ref == LATEST:
            latest = self._artifact(name)
            if latest.sha256 is None:
                raise RevisionNotFound(f"{name} has no content yet")
            return _Held(name, self._newest_holding(latest), target_of(latest))
        try:
            version, content, _, _ = self.reading.locate(name, str(ref), routing_key=routing_key)
        except NotFoundError:
            self._artifact(name)  # RepoNotFound when the artifact itself is missing
            raise RevisionNotFound(f"{name} has no revision {ref}") from None
        # An alias on LATEST answers LATEST's content as no version's (its commit then holds while LATEST does).
        return _Held(name, version if isinstance(version, int) else None, content)

    def _newest_holding(self, latest: LatestRecord) -> int | None:
        """The newest version when LATEST holds its content and it is live (one more read), else None: LATEST then
        answers that version, so `main` has the version's stable commit id, which a later call resolves by number."""
        if not latest.newest_version or latest.newest_sha256 != latest.sha256:
            return None
        try:
            found = self.reading.version(latest.name, latest.newest_version)
        except NotFoundError:
            return None
        return None if found.deleted else latest.newest_version

    def _artifact(self, name: str) -> LatestRecord:
        try:
            return self.reading.live_latest(name)
        except NotFoundError:
            raise RepoNotFound(f"no repository {name}") from None

    def _follow(self, repo: str, read: Callable[[str], T]) -> T:
        """`read(repo)`, or `read(target)` when `repo` is a link (one hop, as Reading.follow)."""
        try:
            return read(repo)
        except LinkedNameError as hop:
            if hop.name != repo:
                raise
            target = hop.target
        try:
            return read(target)
        except LinkedNameError:
            raise RepoNotFound(f"no repository {target}, the target of link {repo}") from None

    def _tree(self, held: _Held) -> Tree:
        content = held.content
        return self.reading.tree(held.name, content.sha256, content.content_type, content.file_types)


def _held(target: Target) -> _Held:
    if not isinstance(target.source, _Held):
        raise TypeError("a target this backend did not resolve")
    return target.source
