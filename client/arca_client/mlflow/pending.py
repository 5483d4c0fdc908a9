"""SDK calls of routes the registry plugin needs that the API does not serve yet.

Written against the HTTP API of trees of files as specified (publish a tree, list a version's files, resolve one
file) and against one route proposed here (create an artifact with no version). They belong in `calls/` once the
routes exist; until then they live here, beside the one client of theirs, so that nothing else calls them:

- `PUT /artifacts/{name}` with `{description?, tags?}` and `If-None-Match: *` (proposed): create the artifact with
  no version; 201 with its summary, 412 when it exists.
- `POST /artifacts/{name}/versions` with `{files: [{path, sha256, size, content_type?}], content_type?,
  metadata?, force?}`, each file's bytes uploaded first through `POST …/uploads`.
- `GET /artifacts/{name}/versions/{version}/files?prefix=&limit=&next_token=`: 200 `{files, next_token}`.
- `GET /artifacts/{name}/resolve/{ref}/files/{path}`: 302 to a presigned URL of that file.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from arca_client import transfer
from arca_client.calls.http import LOCAL_USER_HEADER, artifact_path
from arca_client.calls.transfers import CHUNK, guess_content_type
from arca_client.errors import ArcaError, ChecksumMismatchError
from arca_client.models import ArtifactSummary, Published, Version
from arca_client.sdk import Client


@dataclass(frozen=True)
class TreeFile:
    """One file of a version's tree."""

    path: str
    sha256: str
    size: int
    content_type: str | None = None


class TreeClient(Client):
    """`Client` with the calls of trees of files and of artifacts created empty."""

    def create_artifact(
        self, name: str, *, description: str | None = None, tags: Mapping[str, str] | None = None
    ) -> ArtifactSummary:
        """Create `name` with no version. PreconditionFailedError when it exists (nothing is changed then)."""
        body: dict[str, Any] = {}
        if description is not None:
            body["description"] = description
        if tags:
            body["tags"] = dict(tags)
        data, _ = self._write("PUT", artifact_path(name), body=body, headers={"If-None-Match": "*"})
        return ArtifactSummary.from_dict(data)

    def publish_tree(
        self,
        name: str,
        directory: str | os.PathLike[str],
        *,
        metadata: Mapping[str, str] | None = None,
        force: bool = False,
    ) -> Published:
        """Upload every file under `directory` the artifact lacks (content it has is not sent again), then publish
        them as one version whose files are their paths relative to `directory`."""
        root = Path(directory)
        files = []
        uploaded = False
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            blob, sent = self._upload_file(name, path)
            uploaded = uploaded or sent
            entry: dict[str, Any] = {"path": path.relative_to(root).as_posix(), "sha256": blob[0], "size": blob[1]}
            content_type = guess_content_type(path.name)
            if content_type:
                entry["content_type"] = content_type
            files.append(entry)
        body: dict[str, Any] = {"files": files}
        if metadata:
            body["metadata"] = dict(metadata)
        if force:
            body["force"] = True
        data, _ = self._write("POST", artifact_path(name, "versions"), body=body)
        return Published(Version.from_dict(data), deduplicated=bool(data.get("deduplicated")), uploaded=uploaded)

    def _upload_file(self, name: str, path: Path) -> tuple[tuple[str, int], bool]:
        if path.stat().st_size >= transfer.MULTIPART_THRESHOLD:
            with open(path, "rb") as stream:
                size = os.fstat(stream.fileno()).st_size
                report = self.upload_multipart(name, stream, 0, size, source=path)
            return (report.sha256, size), report.parts_sent > 0
        blob, sent = self.upload(name, path)
        return (blob.sha256, blob.size), sent

    def iter_version_files(self, name: str, version: int | str, *, prefix: str = "") -> Iterator[TreeFile]:
        """Every file of the version's tree under `prefix`, in path order, a page at a time."""
        path = artifact_path(name, "versions", str(version), "files")
        return self._pages(path, "files", _tree_file, {"prefix": prefix or None})

    def download_file(self, name: str, ref: int | str, file: TreeFile, dest: str | os.PathLike[str]) -> None:
        """Download one file of the version `ref` to `dest`, checked against the size and sha256 listed; the file
        is put in place only once it is verified."""
        path = "/".join(
            (artifact_path(name, "resolve", str(ref), "files"), *(_segment(s) for s in file.path.split("/")))
        )
        located = self.transport.send("GET", self.endpoint + path, headers=self._local_headers())
        location = located.headers.get("Location")
        located.close()
        if not location:
            raise ArcaError(f"GET {path} answered no Location", code="BadResponse")
        response = self.transport.send("GET", location, sign=False, stream=True)
        target = Path(dest)
        partial = target.with_name(f".{target.name}.part")
        digest = hashlib.sha256()
        done = 0
        try:
            with response, open(partial, "wb") as out:
                for chunk in response.iter_content(CHUNK):
                    digest.update(chunk)
                    out.write(chunk)
                    done += len(chunk)
            if done != file.size or digest.hexdigest() != file.sha256:
                raise ChecksumMismatchError(
                    f"{name}@{ref} file {file.path}: got {done} bytes with sha256 {digest.hexdigest()}, expected "
                    f"{file.size} bytes with sha256 {file.sha256}",
                    code="ChecksumMismatch",
                )
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)  # nothing unverified is left behind

    def _local_headers(self) -> dict[str, str]:
        return {LOCAL_USER_HEADER: self.local_user} if self.local_user else {}


def _tree_file(data: dict[str, Any]) -> TreeFile:
    return TreeFile(str(data["path"]), str(data["sha256"]), int(data["size"]), data.get("content_type"))


def _segment(text: str) -> str:
    return quote(text, safe="")
