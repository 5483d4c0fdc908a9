"""Multipart uploads (content up to 5 TiB) and the parallel, resumable transfers built on them."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, ClassVar

from arca_client import transfer
from arca_client.calls.http import HttpCalls, artifact_path
from arca_client.decoding import Decoded
from arca_client.errors import ArcaError
from arca_client.models import Resolution

ProgressFn = Callable[[str, int, int], None]
_path = artifact_path


@dataclass(frozen=True)
class MultipartTarget(Decoded):
    """A multipart upload as the API answers it: `exists`, or an id, URLs for missing parts, and the count."""

    SCHEMA: ClassVar[tuple[str, ...]] = ("Upload",)
    WIRE: ClassVar[dict[str, str]] = {
        "id": "upload.id",
        "parts": "upload.parts",
        "uploaded": "upload.uploaded",
        "missing": "upload.missing",
    }
    exists: bool
    id: str = ""
    parts: list[dict[str, Any]] = field(default_factory=list)
    uploaded: list[dict[str, Any]] = field(default_factory=list)
    missing: int = 0
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


class UploadCalls(HttpCalls):
    """Multipart uploads and the transfer engine (arca_client.transfer) of large content."""

    def create_multipart_upload(self, name: str, layout: transfer.Layout) -> MultipartTarget:
        """Start (or rejoin: the same layout is the same upload) a multipart upload. Safe to repeat."""
        body = {"sha256": layout.sha256, "size": layout.size, "part_size": layout.part_size, "parts": layout.parts}
        data, _ = self._call("POST", _path(name, "uploads"), body=body, idempotent=True)
        return MultipartTarget.from_dict(data)

    def get_upload(self, name: str, upload_id: str) -> MultipartTarget:
        """The parts S3 has and fresh URLs for the others."""
        data, _ = self._call("GET", _path(name, "uploads", upload_id))
        return MultipartTarget.from_dict(data)

    def complete_upload(self, name: str, upload_id: str) -> dict[str, Any]:
        """Assemble the upload (idempotent)."""
        data, _ = self._call("POST", _path(name, "uploads", upload_id, "complete"), idempotent=True)
        return dict(data)

    def abort_upload(self, name: str, upload_id: str) -> None:
        self._call("DELETE", _path(name, "uploads", upload_id))

    def upload_multipart(
        self,
        name: str,
        stream: IO[bytes],
        start: int,
        size: int,
        *,
        part_size: int | None = None,
        parallel: int = transfer.DEFAULT_PARALLEL,
        progress: ProgressFn | None = None,
        source: str | os.PathLike[str] | None = None,
    ) -> transfer.UploadReport:
        """Hash `size` bytes of `stream` from `start` into parts (once; cached under the user's cache directory
        for a file `source`, so a rerun after a kill does not hash again), then upload the parts S3 lacks,
        `parallel` at a time, and complete. A rerun resumes: S3 keeps the parts it has."""
        reader = transfer.Reader(stream, start)
        chosen = transfer.choose_part_size(size, part_size)
        cache = transfer.StateCache()
        layout = cache.layout(source, chosen) if source is not None else None
        if layout is None:
            layout = transfer.hash_layout(reader, size, chosen, progress)
            if source is not None:
                cache.save_layout(source, layout)
        return transfer.upload(self, name, layout, reader, parallel=parallel, progress=progress)

    def download_parallel(
        self,
        resolution: Resolution,
        path: Path,
        *,
        parallel: int = transfer.DEFAULT_PARALLEL,
        progress: ProgressFn | None = None,
        overwrite: bool = True,
    ) -> transfer.DownloadReport:
        """Download multipart content in part-aligned ranges, `parallel` at a time, each part checked against
        the version's part hashes as it arrives, into a partial file that a rerun resumes; the whole sha256 is
        checked before the file is put in place."""
        version = self._call("GET", _path(resolution.name, "versions", str(resolution.version)))[0]
        if version.get("sha256") != resolution.sha256 or not version.get("parts"):
            raise ArcaError(f"version {resolution.version} has no part hashes to download by", code="BadResponse")
        return transfer.download(
            self,
            resolution,
            part_size=int(version["part_size"]),
            parts=list(version["parts"]),
            path=path,
            parallel=parallel,
            progress=progress,
            overwrite=overwrite,
        )
