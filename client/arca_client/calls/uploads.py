"""Multipart uploads (content up to 5 TiB) and the parallel, resumable transfers built on them."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, ClassVar

from arca_client import transfer
from arca_client import verify as signing
from arca_client.calls.http import HttpCalls, artifact_path
from arca_client.decoding import Decoded
from arca_client.errors import ArcaError, ConflictError
from arca_client.models import Resolution

ProgressFn = Callable[[str, int, int], None]
_path = artifact_path
# How often a background check of multipart content is looked at, at most, and how long it may make no progress
# before it is asked to go on again (its progress is saved: it resumes, never restarts).
VERIFY_POLL_SECONDS = 5.0
VERIFY_STALL_SECONDS = 120.0


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
    state: str | None = None  # uploading, verifying (assembled, its sha256 being checked), complete, failed
    verified_bytes: int | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


class UploadCalls(HttpCalls):
    """Multipart uploads and the transfer engine (arca_client.transfer) of large content."""

    def create_multipart_upload(self, name: str, layout: transfer.Layout) -> MultipartTarget:
        """Start (or rejoin: the same layout is the same upload) a multipart upload. Safe to repeat."""
        body = {"sha256": layout.sha256, "size": layout.size, "part_size": layout.part_size, "parts": layout.parts}
        data, _ = self._call("POST", _path(name, "uploads"), body=body, idempotent=True)
        target = MultipartTarget.from_dict(data)
        if not target.id:  # assembled already (`verifying`, `complete`): the answer carries no upload, its id is known
            parts = hashlib.sha256(b"".join(bytes.fromhex(p) for p in layout.parts)).hexdigest()
            target = dataclasses.replace(target, id=f"{layout.sha256}.{parts}")
        return target

    def get_upload(self, name: str, upload_id: str) -> MultipartTarget:
        """The upload's state: the parts S3 has and fresh URLs for the others, or how far its check got."""
        data, _ = self._call("GET", _path(name, "uploads", upload_id))
        return MultipartTarget.from_dict(data)

    def complete_upload(
        self,
        name: str,
        upload_id: str,
        *,
        wait: bool = True,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> dict[str, Any]:
        """Assemble the upload and have its sha256 checked (idempotent). Content the registry hashes in the
        background answers `verifying`: with `wait`, it is followed (GET …/uploads/{id}) until `complete`, and asked
        again when it stalls. ConflictError when its parts do not make the declared content (`failed`)."""
        path = _path(name, "uploads", upload_id)
        data, _ = self._call("POST", f"{path}/complete", idempotent=True)
        pause, moved_at, hashed = 0.5, clock(), -1
        while wait and data.get("state") == "verifying":
            sleep(pause)
            pause = min(pause * 2, VERIFY_POLL_SECONDS)
            status = self.get_upload(name, upload_id)
            if status.state == "complete":
                return {**data, "state": "complete", "verified_bytes": data.get("size")}
            if status.state == "failed":
                raise ConflictError(f"the upload {upload_id} failed its sha256 check", code="UploadFailed")
            if (status.verified_bytes or 0) > hashed:
                moved_at, hashed = clock(), status.verified_bytes or 0
            elif clock() - moved_at > VERIFY_STALL_SECONDS:  # the background stopped: start it again from its state
                data, _ = self._call("POST", f"{path}/complete", idempotent=True)
                moved_at = clock()
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
        checked before the file is put in place. The part hashes must be the ones the version's signed manifest
        names (when it names them): after `verify_resolution`, every range is checked against signed hashes."""
        version = self._call("GET", _path(resolution.name, "versions", str(resolution.version)))[0]
        if version.get("sha256") != resolution.sha256 or not version.get("parts"):
            raise ArcaError(f"version {resolution.version} has no part hashes to download by", code="BadResponse")
        signing.check_parts(resolution.raw, int(version["part_size"]), list(version["parts"]))
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
