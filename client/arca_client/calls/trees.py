"""Versions that are trees of files: publish a directory, list a tree's files, resolve and download its files."""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO, Any, ClassVar
from urllib.parse import quote

import requests

from arca_client import transfer
from arca_client.calls.http import artifact_path, iso
from arca_client.calls.transfers import CHUNK, ProgressFn, TransferCalls, check_destination
from arca_client.errors import ArcaError, ChecksumMismatchError, ConflictError, TransportError
from arca_client.models import LATEST, Downloaded, Page, Published, Resolution, Version
from arca_client.refs import RefKind, ref_kind
from arca_client.trees import (
    TREE_MEDIA_TYPE,
    HashCache,
    LocalFile,
    TreeDiff,
    TreeEntry,
    TreeError,
    parse_manifest,
    plan_download,
    plan_upload,
    publish_form,
    receive,
    tree_diff,
    walk,
)

# A progress callback of a tree: (what, bytes or files done, in all): "hash" counts files, "upload" and
# "download" count bytes.
TreeProgress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class TreeFile:
    """A file of a tree version as the API lists it."""

    SCHEMA: ClassVar[tuple[str, ...]] = ("TreeFile",)

    path: str
    sha256: str
    size: int
    content_type: str


@dataclass(frozen=True)
class PublishedTree:
    """The outcome of a directory's publish: the version, and what was sent."""

    SCHEMA: ClassVar[tuple[str, ...]] = ()  # made by the client, not an answer of the API

    published: Published
    files: int
    files_uploaded: int
    bytes_uploaded: int
    by_reference: bool


@dataclass(frozen=True)
class DownloadedTree:
    """The outcome of a tree's download: the version's sha256 (its manifest's), and what moved."""

    SCHEMA: ClassVar[tuple[str, ...]] = ()  # made by the client, not an answer of the API

    name: str
    version: int | str
    sha256: str
    directory: Path
    files: int
    files_fetched: int
    bytes_fetched: int


def file_path(name: str, ref: str, path: str) -> str:
    """`…/resolve/{ref}/files/{path}`, each segment of the path quoted once."""
    return artifact_path(name, "resolve", ref, "files") + "/" + "/".join(quote(s, safe="") for s in path.split("/"))


class TreeCalls(TransferCalls):
    def list_files(
        self,
        name: str,
        version: int | str = LATEST,
        *,
        prefix: str | None = None,
        limit: int | None = None,
        next_token: str | None = None,
    ) -> Page[TreeFile]:
        """One page of a tree version's files, in path order; ConflictError for a version that is one blob."""
        query = {"prefix": prefix, "limit": limit, "next_token": next_token}
        data = self._get(artifact_path(name, "versions", str(version), "files"), query)
        return Page([_file(f) for f in data.get("files") or []], data.get("next_token"))

    def iter_files(
        self, name: str, version: int | str = LATEST, *, prefix: str | None = None, page_size: int | None = None
    ) -> Iterator[TreeFile]:
        """Every file of a tree version (under `prefix`), in path order, a page at a time."""
        path = artifact_path(name, "versions", str(version), "files")
        return self._pages(path, "files", _file, {"prefix": prefix, "limit": page_size})

    def diff_files(self, name: str, before: int | str, after: int | str, *, other: str | None = None) -> TreeDiff:
        """The files added, removed and changed (another sha256 or size) from the tree version `before` of `name` to
        `after` (of `other` when given), and how many are unchanged. Each side is a version number, LATEST, an alias
        or `sha256:<hex>` (an alias is resolved once, to the version it points at); ConflictError for a side that
        is one blob."""

        def files(artifact: str, ref: int | str) -> list[TreeEntry]:
            version = self.resolve(artifact, str(ref)).version if ref_kind(str(ref)) is RefKind.ALIAS else ref
            return [TreeEntry(f.path, f.sha256, f.size, f.content_type) for f in self.iter_files(artifact, version)]

        return tree_diff(files(name, before), files(other or name, after))

    def resolve_file(
        self, name: str, ref: int | str, path: str, *, routing_key: str | None = None, at: datetime | str | None = None
    ) -> dict[str, Any]:
        """One file of the tree `ref` resolves to: its path, sha256, size, content type and a download URL."""
        if isinstance(at, datetime):
            at = iso(at)
        data: dict[str, Any] = self._get(file_path(name, str(ref), path), {"routing_key": routing_key, "at": at})
        return data

    def publish_directory(
        self,
        name: str,
        directory: str | os.PathLike[str],
        *,
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        follow_symlinks: bool = False,
        metadata: Mapping[str, str] | None = None,
        force: bool = False,
        parallel: int = transfer.DEFAULT_PARALLEL,
        cache: HashCache | None = None,
        progress: TreeProgress | None = None,
    ) -> PublishedTree:
        """Publish a directory as a tree: walk and hash it (with the hash cache), upload each content the artifact
        lacks (`parallel` at a time; a content already held is not sent), then publish `{files}`, or `{tree}` with
        its manifest uploaded first when the list would not fit one request. TreeError for a directory that is no
        tree (empty, a symlink without `follow_symlinks`, a bad path)."""
        hashing = (lambda done, total: progress("hash", done, total)) if progress else None
        owned = cache is None
        cache = HashCache.default() if cache is None else cache
        try:
            files = walk(
                directory, include=include, exclude=exclude, follow_symlinks=follow_symlinks, cache=cache,
                progress=hashing,
            )  # fmt: skip
        finally:
            if owned:
                cache.close()
        if not files:
            raise TreeError(f"{os.fspath(directory)} holds no file to publish", code="EmptyTree")
        form = publish_form(files, metadata=dict(metadata) if metadata else None, force=force)
        held = self._newest_tree_contents(name)
        plan = plan_upload(files, held=held)
        sent = self._upload_contents(name, plan.uploads, plan.bytes_to_send, parallel, progress)
        if form.manifest is not None:
            self._upload_bytes(name, form.manifest)
        if form.types is not None:
            self._upload_bytes(name, form.types)
        try:
            data, _ = self._write("POST", artifact_path(name, "versions"), body=form.body)
        except ConflictError as refused:
            if not held or "missing" not in refused.details:
                raise
            # A content the newest tree held was collected since (its version expired): check every content
            # through `POST …/uploads`, as a publish with nothing known held does, and publish again.
            rest = plan_upload(files, held={u.sha256 for u in sent})
            sent += self._upload_contents(name, rest.uploads, rest.bytes_to_send, parallel, progress)
            data, _ = self._write("POST", artifact_path(name, "versions"), body=form.body)
        published = Published(Version.from_dict(data), deduplicated=bool(data.get("deduplicated")), uploaded=bool(sent))
        return PublishedTree(published, len(files), len(sent), sum(u.size for u in sent), form.by_reference)

    def _newest_tree_contents(self, name: str) -> set[str]:
        """The file contents of the artifact's newest version when it is a tree (its manifest read once through
        its download URL and checked against its sha256), so a publish does not ask about each of them again;
        empty for a new artifact, a blob or an OCI document. The publish still checks every content it names."""
        try:
            newest = self.resolve(name, LATEST)
        except ArcaError as error:
            if error.status in (403, 404):  # no version yet, or a caller who may not read: nothing known
                return set()
            raise
        if newest.files is None or newest.content_type != TREE_MEDIA_TYPE:
            return set()
        return {entry.sha256 for entry in self._entries(name, newest)}

    def _upload_contents(
        self, name: str, uploads: Sequence[Any], total: int, parallel: int, progress: TreeProgress | None
    ) -> list[Any]:
        """Upload each content (single PUT or in parts, as `publish` does); the ones whose bytes were sent."""
        done = [0]

        def one(upload: Any) -> bool:
            before = [0]

            def moved(_: str, sent: int, __: int) -> None:
                done[0] += sent - before[0]
                before[0] = sent
                if progress:
                    progress("upload", done[0], total)

            _, uploaded, _ = self._send(name, upload.source, None, 1, moved)
            return uploaded

        with ThreadPoolExecutor(max(1, parallel)) as pool:
            results = list(pool.map(one, uploads))
        return [u for u, uploaded in zip(uploads, results, strict=True) if uploaded]

    def _upload_bytes(self, name: str, data: bytes) -> None:
        stream = io.BytesIO(data)
        self._send(name, stream, 0, 1, None)

    def download(
        self,
        name: str,
        ref: int | str = LATEST,
        dest: str | os.PathLike[str] | IO[bytes] | None = None,
        *,
        routing_key: str | None = None,
        progress: ProgressFn | None = None,
        overwrite: bool = True,
        parallel: int = transfer.DEFAULT_PARALLEL,
        verify: bool = False,
        only: str | None = None,
    ) -> Downloaded:
        """`TransferCalls.download`, and for a tree version its files into the directory `dest` (default: the
        name's last segment), as `download_tree` does (`only`: one path); `transfer` is then a DownloadedTree."""
        if isinstance(dest, str | os.PathLike) and only is None:
            check_destination(dest)
        resolution = self.resolve(name, ref, routing_key=routing_key)
        if verify:
            self.verify_resolution(resolution)
        if resolution.files is None or not (dest is None or isinstance(dest, str | os.PathLike)):
            if only is not None:
                raise _not_a_tree(name, ref, resolution.version)
            return self.download_resolved(resolution, dest, progress=progress, overwrite=overwrite, parallel=parallel)
        directory = Path(dest if dest is not None else name.rsplit("/", 1)[-1])
        done = self._download_tree(name, resolution, directory, only, parallel, None, progress)
        return Downloaded(resolution, str(directory), done)

    def download_tree(
        self,
        name: str,
        ref: int | str,
        directory: str | os.PathLike[str],
        *,
        routing_key: str | None = None,
        only: str | None = None,
        parallel: int = transfer.DEFAULT_PARALLEL,
        cache: HashCache | None = None,
        verify: bool = False,
        progress: TreeProgress | None = None,
    ) -> DownloadedTree:
        """Download the tree `ref` resolves to into `directory`: its manifest first (checked against the version's
        sha256, and with `verify` the version's signature checked first), then every file not already there with
        the right bytes, each checked against the manifest as it arrives (a wrong file is never kept). `only`
        downloads one path. A version pushed through OCI (its document an OCI image manifest) is listed by the files
        route, each listed sha256 one its manifest names. ConflictError for a version that is one blob."""
        resolution = self.resolve(name, ref, routing_key=routing_key)
        if verify:
            self.verify_resolution(resolution)
        if resolution.files is None:
            raise _not_a_tree(name, ref, resolution.version)
        return self._download_tree(name, resolution, Path(directory), only, parallel, cache, progress)

    def _download_tree(
        self,
        name: str,
        resolution: Resolution,
        directory: Path,
        only: str | None,
        parallel: int,
        cache: HashCache | None,
        progress: TreeProgress | None,
    ) -> DownloadedTree:
        entries = self._entries(name, resolution)
        if only is not None:
            entries = [e for e in entries if e.path == only]
            if not entries:
                raise TreeError(
                    f"{name} version {resolution.version} has no file {only!r}",
                    code="NoSuchFile",
                    details={"path": only},
                )
        owned = cache is None
        cache = HashCache.default() if cache is None else cache
        try:
            plan = plan_download(entries, directory, cache=cache)
        finally:
            if owned:
                cache.close()
        pinned = str(resolution.version)  # every file from the version resolved first, even if the alias moves
        total = plan.bytes_to_fetch
        done = [0]

        def fetch(placement: Any) -> None:
            answer = self.resolve_file(name, pinned, placement.entry.path)
            response = self.transport.send("GET", answer["download_url"], sign=False, stream=True)

            def chunks() -> Iterator[bytes]:
                for chunk in response.iter_content(CHUNK):
                    done[0] += len(chunk)
                    if progress:
                        progress("download", done[0], total)
                    yield chunk

            try:
                with response:
                    receive(placement, chunks())
            except (requests.ConnectionError, requests.exceptions.ChunkedEncodingError, requests.Timeout) as lost:
                raise TransportError(
                    f"download of {placement.entry.path} broke off: {lost}", code="ConnectionError"
                ) from lost

        with ThreadPoolExecutor(max(1, parallel)) as pool:
            list(pool.map(fetch, plan.missing))
        return DownloadedTree(
            name, resolution.version, resolution.sha256, directory, len(entries), len(plan.missing), total
        )

    def _entries(self, name: str, resolution: Resolution) -> list[TreeEntry]:
        """The files of the tree `resolution` names: its document read through its download URL and checked against
        its sha256 (a tree manifest parsed; an OCI manifest's files listed by the files route)."""
        manifest = self._bytes(resolution.download_url)
        if resolution.content_type and resolution.content_type != TREE_MEDIA_TYPE:
            return self._listed_entries(name, resolution, manifest)
        return parse_manifest(manifest, sha256=resolution.sha256)

    def _listed_entries(self, name: str, resolution: Resolution, document: bytes) -> list[TreeEntry]:
        """The files of a version whose document is no Arca tree manifest (an OCI manifest pushed under /v2/), as
        the API lists them; each listed sha256 checked to be one the document (checked against the version's sha256)
        names, and every one it names listed."""
        if hashlib.sha256(document).hexdigest() != resolution.sha256:
            raise ChecksumMismatchError(
                f"{name} version {resolution.version}: its manifest's sha256 is not the version's {resolution.sha256}",
                code="ChecksumMismatch",
            )
        named = _oci_digests(document)
        entries = [
            TreeEntry(f.path, f.sha256, f.size, f.content_type or None)
            for f in self.iter_files(name, resolution.version)
        ]
        if named is None or {e.sha256 for e in entries} != named:
            raise TreeError(
                f"{name} version {resolution.version}: its files as listed are not those its manifest "
                f"({resolution.content_type}) names",
                code="InvalidTree",
            )
        return entries

    def _bytes(self, url: str) -> bytes:
        response = self.transport.send("GET", url, sign=False)
        if response.status_code != 200:
            raise ArcaError(f"the tree manifest could not be read (HTTP {response.status_code})", code="BadResponse")
        return bytes(response.content)


def _not_a_tree(name: str, ref: int | str, version: int | str) -> ConflictError:
    return ConflictError(
        f"{name}@{ref} is one blob (version {version}), not a tree of files", code="NotATree", field="ref"
    )


def _oci_digests(document: bytes) -> set[str] | None:
    """The sha256 of each blob an OCI manifest names (its config and layers; an index: its manifests), None if the
    document is no such manifest."""
    try:
        parsed = json.loads(document)
        descriptors = [parsed["config"], *parsed["layers"]] if "config" in parsed else list(parsed["manifests"])
        digests = {str(d["digest"]) for d in descriptors}
    except (ValueError, KeyError, TypeError):
        return None
    if not all(d.startswith("sha256:") for d in digests):
        return None
    return {d.removeprefix("sha256:") for d in digests}


def _file(data: dict[str, Any]) -> TreeFile:
    return TreeFile(data["path"], data["sha256"], int(data["size"]), data.get("content_type") or "")


__all__ = ["DownloadedTree", "LocalFile", "PublishedTree", "TreeCalls", "TreeEntry", "TreeFile", "file_path"]
