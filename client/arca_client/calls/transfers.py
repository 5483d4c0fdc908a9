"""Content: uploads, LATEST, publish, resolve and download.

Content is never held in memory: files are hashed in 1 MiB chunks, uploaded as a streamed body with a
Content-Length straight to the presigned S3 URL, and downloaded chunk by chunk into a temporary file that
replaces the destination only once its sha256 and size are verified.

A publish records the file's name in the version's metadata (`filename`), and a download without a
destination writes to that name, as a browser keeps the name a server suggests.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import mimetypes
import os
import secrets
import tempfile
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import IO, Any

import requests

from arca_client import transfer
from arca_client import verify as signing
from arca_client.calls.http import artifact_path, iso
from arca_client.calls.uploads import UploadCalls
from arca_client.calls.versions import VersionCalls
from arca_client.errors import (
    ArcaError,
    ChecksumMismatchError,
    ConflictError,
    NotFoundError,
    PreconditionFailedError,
    TransportError,
)
from arca_client.models import LATEST, BlobRef, Downloaded, Published, Ref, Resolution, UploadTarget, Version

CHUNK = 1024 * 1024
# The metadata key a publish records the file's name under (the key grammar allows it: [a-z0-9][a-z0-9_.-]*).
FILENAME_KEY = "filename"
# (phase, bytes done, bytes total); phases are "hash", "upload" and "download".
ProgressFn = Callable[[str, int, int], None]
Source = str | os.PathLike[str] | IO[bytes]


class TransferCalls(UploadCalls, VersionCalls):
    def create_upload(self, name: str, sha256: str, size: int) -> UploadTarget:
        """Where to upload a blob (`exists` when it is stored already). Safe to repeat."""
        data, _ = self._call(
            "POST", artifact_path(name, "uploads"), body={"sha256": sha256, "size": size}, idempotent=True
        )
        return UploadTarget.from_dict(data)

    def upload(self, name: str, source: Source, *, progress: ProgressFn | None = None) -> tuple[BlobRef, bool]:
        """Hash `source` and upload it unless stored already; (blob, whether bytes were sent)."""
        with _opened(source, progress) as (stream, start, blob):
            return blob, self._upload_blob(name, stream, start, blob, progress)

    def _upload_blob(
        self, name: str, stream: IO[bytes], start: int, blob: BlobRef, progress: ProgressFn | None
    ) -> bool:
        target = self.create_upload(name, blob.sha256, blob.size)
        if target.exists:
            return False
        if not target.url:
            raise ArcaError("the upload answer has no URL", code="BadResponse")
        size = blob.size

        def body() -> Any:
            # A fresh, rewound body per attempt: a retried PUT must send every byte again.
            stream.seek(start)
            return _ChunkReader(stream, size, progress) if size else b""

        headers = {**target.headers, "Content-Length": str(size)}
        try:
            response = self.transport.send(
                target.method, target.url, headers=headers, body_factory=body, sign=False, idempotent=True
            )
        except PreconditionFailedError:
            # The URL signs `If-None-Match: *`: the blob's key (its sha256) holds an object already, stored by
            # an earlier attempt whose answer was lost or by another uploader; publishing verifies it.
            if target.headers.get("If-None-Match") != "*":
                raise
            return False
        # S3 stores an object only with a 200. A redirect (307 from an endpoint that does not serve the
        # bucket yet) stored nothing, and following it would resend a body signed for another host.
        if response.status_code != 200:
            status = response.status_code
            response.close()
            raise ArcaError(
                f"the upload was not stored: S3 answered {status} to the presigned PUT; request a new upload",
                code="UploadNotStored",
                status=status,
            )
        return True

    def set_latest(
        self,
        name: str,
        sha256: str,
        size: int,
        *,
        content_type: str | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> Version:
        """Point LATEST at an uploaded blob (creates the artifact). ConflictError if the blob is not uploaded."""
        body = _content(sha256, size, content_type, metadata)
        data, _ = self._write("PUT", artifact_path(name, "latest"), body=body)
        return Version.from_dict(data)

    def publish(
        self,
        name: str,
        source: Source,
        *,
        content_type: str | None = None,
        metadata: Mapping[str, str] | None = None,
        filename: str | None = None,
        force: bool = False,
        progress: ProgressFn | None = None,
        part_size: int | None = None,
        parallel: int = transfer.DEFAULT_PARALLEL,
    ) -> Published:
        """Hash, upload (skipped when the blob is stored), and publish in one step: a new version, or the newest
        one with `deduplicated` when its content is the same (unless `force`).

        Content of 64 MiB or more (or any, with `part_size`) goes up in parts, `parallel` at a time, and a rerun
        after an interruption sends only the parts S3 does not have (arca_client.transfer); `part_size=0` keeps
        one PUT (up to 5 GiB).

        `source` is a path or a binary file object (read from its current position; a non-seekable one is
        spooled to a temporary file while it is hashed). `filename` (default: a path's base name; "" for
        none) is recorded in the metadata under "filename" unless `metadata` has that key, and names the file
        a download without a destination writes. `content_type` defaults to a guess from that file name.
        """
        if filename is None and isinstance(source, str | os.PathLike):
            filename = os.path.basename(os.fspath(source))
        if content_type is None and filename:
            content_type = guess_content_type(filename)
        if filename:
            metadata = {FILENAME_KEY: filename, **(metadata or {})}
        blob, uploaded, report = self._send(name, source, part_size, parallel, progress)
        body = _content(blob.sha256, blob.size, content_type, metadata)
        if force:
            body["force"] = True
        try:
            data, _ = self._write("POST", artifact_path(name, "versions"), body=body)
        except ConflictError as gone:
            # Retention removed the stored bytes between the upload's `exists` and this publish: send them again, once.
            if gone.field != "sha256" or "state" in gone.details or "collecting" in gone.details:
                raise
            _, again, report = self._send(name, source, part_size, parallel, progress)
            uploaded = uploaded or again
            data, _ = self._write("POST", artifact_path(name, "versions"), body=body)
        deduplicated = bool(data.get("deduplicated"))
        return Published(Version.from_dict(data), deduplicated=deduplicated, uploaded=uploaded, transfer=report)

    def upload_content(
        self,
        name: str,
        source: Source,
        *,
        parallel: int = transfer.DEFAULT_PARALLEL,
        progress: ProgressFn | None = None,
    ) -> tuple[BlobRef, bool]:
        """Upload content for `name` as `publish` does (one presigned PUT, in parts from MULTIPART_THRESHOLD up),
        unless the registry holds it; unpublished, it is found by its sha256 (a publish or a manifest naming it
        keeps it). (what it is, whether bytes were sent)."""
        blob, sent, _ = self._send(name, source, None, parallel, progress)
        return blob, sent

    def _send(
        self, name: str, source: Source, part_size: int | None, parallel: int, progress: ProgressFn | None
    ) -> tuple[BlobRef, bool, transfer.UploadReport | None]:
        """Upload the content unless the registry holds it: (what it is, whether bytes were sent, the parts' report)."""
        if _in_parts(source, part_size):
            blob, report = self._upload_parts(name, source, part_size, parallel, progress)
            return blob, report.parts_sent > 0, report
        with _opened(source, progress) as (stream, start, blob):
            return blob, self._upload_blob(name, stream, start, blob, progress), None

    def _upload_parts(
        self, name: str, source: Source, part_size: int | None, parallel: int, progress: ProgressFn | None
    ) -> tuple[BlobRef, transfer.UploadReport]:
        if isinstance(source, str | os.PathLike):
            with open(source, "rb") as stream:
                size = os.fstat(stream.fileno()).st_size
                report = self.upload_multipart(
                    name, stream, 0, size, part_size=part_size, parallel=parallel, progress=progress, source=source
                )
            return BlobRef(report.sha256, size), report
        with _opened(source, None) as (stream, start, blob):
            report = self.upload_multipart(
                name, stream, start, blob.size, part_size=part_size, parallel=parallel, progress=progress
            )
        return blob, report

    def publish_latest(self, name: str, *, force: bool = False) -> Published:
        """Snapshot LATEST as a new version (deduplicated like `publish`). NotFoundError if there is no LATEST."""
        data, _ = self._write("POST", artifact_path(name, "versions"), body={"force": True} if force else None)
        return Published(Version.from_dict(data), deduplicated=bool(data.get("deduplicated")))

    def resolve(
        self, name: str, ref: Ref = LATEST, *, routing_key: str | None = None, at: datetime | str | None = None
    ) -> Resolution:
        """One concrete version and a short-lived download URL for a version number, LATEST or an alias.

        With `routing_key` the canary choice is deterministic; `at` resolves an alias as it stood then.
        """
        if isinstance(at, datetime):
            at = iso(at)
        data = self._get(artifact_path(name, "resolve", str(ref)), {"routing_key": routing_key, "at": at})
        return Resolution.from_dict(data)

    def download(
        self,
        name: str,
        ref: Ref = LATEST,
        dest: str | os.PathLike[str] | IO[bytes] | None = None,
        *,
        routing_key: str | None = None,
        progress: ProgressFn | None = None,
        overwrite: bool = True,
        parallel: int = transfer.DEFAULT_PARALLEL,
        verify: bool = False,
    ) -> Downloaded:
        """Resolve `ref` and download it to `dest`, verifying size and sha256.

        Multipart content saved to a path comes down in part-aligned ranges, `parallel` at a time, each part
        checked as it arrives, into a partial file beside `dest` that a rerun resumes.

        With `verify`, the version's signature is checked first against the endpoint's pinned key (pinned on
        first use) and its signed manifest must name the bytes (`verify_resolution`): a VerificationError, and
        nothing downloaded, when it does not.

        `dest` is a path, a directory or a binary file object; without one (or in a directory) the file is named
        by `download_filename`. A path is written through a temporary file in the same directory and renamed
        over `dest` only once verified, so a failed download never leaves a partial or wrong file.
        ChecksumMismatchError on mismatch; FileExistsError if the file exists and not `overwrite` (checked
        before the download and again, atomically, when the file is put in place).
        """
        if isinstance(dest, str | os.PathLike):
            check_destination(dest)  # before any request: a typo in a path fails at once
        resolution = self.resolve(name, ref, routing_key=routing_key)
        if verify:
            self.verify_resolution(resolution)
        return self.download_resolved(resolution, dest, progress=progress, overwrite=overwrite, parallel=parallel)

    def signing_key(self) -> str:
        """The stage's public key (PEM), as the endpoint answers now (not the pinned one)."""
        data = self._get("/signing-key")
        if data.get("algorithm") != signing.ALGORITHM:
            raise signing.VerificationError(
                f"unknown signing algorithm {data.get('algorithm')!r}", code="BadSigningKey"
            )
        return str(data["public_key_pem"])

    def verify_resolution(self, resolution: Resolution, *, pins: Path | None = None) -> dict[str, Any]:
        """Check a resolve answer's signature against the endpoint's pinned key (pinning it on first use), and
        that its manifest names the answer's content; the manifest's fields. Raises UnsignedVersionError,
        SignatureError or SigningKeyChangedError (all `arca_client.verify.VerificationError`)."""
        pinned = signing.pin(self.endpoint, self.signing_key(), pins)
        return signing.check(resolution.raw, pinned)

    def download_resolved(
        self,
        resolution: Resolution,
        dest: str | os.PathLike[str] | IO[bytes] | None = None,
        *,
        progress: ProgressFn | None = None,
        overwrite: bool = True,
        parallel: int = transfer.DEFAULT_PARALLEL,
    ) -> Downloaded:
        if dest is not None and not isinstance(dest, str | os.PathLike):
            self._fetch(resolution, dest, progress)
            return Downloaded(resolution, None)
        path = Path(dest) if dest is not None else None
        if dest is not None:
            check_destination(dest)
        if path is None or path.is_dir():
            path = (path or Path()) / self.download_filename(resolution)
        if not overwrite and path.exists():
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(path))
        if resolution.raw.get("part_size") and isinstance(resolution.version, int):
            report = self.download_parallel(resolution, path, parallel=parallel, progress=progress, overwrite=overwrite)
            return Downloaded(resolution, str(path), transfer=report)
        partial = path.with_name(f".{path.name}.{secrets.token_hex(4)}.part")
        # os.open with 0o666 lets the umask decide the mode, as for any file the user creates.
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            with os.fdopen(fd, "wb") as out:
                self._fetch(resolution, out, progress)
            if overwrite:
                os.replace(partial, path)
            else:
                _move_no_clobber(partial, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                partial.unlink()
            raise
        return Downloaded(resolution, str(path))

    def download_filename(self, resolution: Resolution) -> str:
        """The file name recorded when the version was published (metadata "filename"), else the last segment
        of the artifact's name. A recorded name that is a path, hidden, or not printable is not used."""
        fallback = resolution.name.rsplit("/", 1)[-1]
        try:
            version = self.get_version(resolution.name, resolution.version)
        except NotFoundError:
            return fallback
        if version.sha256 != resolution.sha256:  # LATEST moved since it was resolved: not its name
            return fallback
        return safe_filename(version.metadata.get(FILENAME_KEY)) or fallback

    def _fetch(self, resolution: Resolution, out: IO[bytes], progress: ProgressFn | None) -> None:
        response = self.transport.send("GET", resolution.download_url, sign=False, stream=True)
        digest = hashlib.sha256()
        done = 0
        total = resolution.size
        if progress:
            progress("download", 0, total)
        try:
            with response:
                for chunk in response.iter_content(CHUNK):
                    digest.update(chunk)
                    out.write(chunk)
                    done += len(chunk)
                    if progress:
                        progress("download", done, total)
        except (requests.ConnectionError, requests.exceptions.ChunkedEncodingError, requests.Timeout) as lost:
            raise TransportError(
                f"download of {resolution.name} version {resolution.version} broke off after {done} bytes: {lost}",
                code="ConnectionError",
            ) from lost
        if done != total or digest.hexdigest() != resolution.sha256:
            raise ChecksumMismatchError(
                f"downloaded {done} bytes with sha256 {digest.hexdigest()}, expected {total} bytes with sha256 "
                f"{resolution.sha256}",
                code="ChecksumMismatch",
            )


class _ChunkReader:
    """A streamed request body: iterates `size` bytes of a file in 1 MiB chunks and reports progress.

    `__len__` lets requests send a Content-Length (S3 refuses chunked uploads to presigned URLs).
    """

    def __init__(self, stream: IO[bytes], size: int, progress: ProgressFn | None) -> None:
        self.stream = stream
        self.size = size
        self.progress = progress

    def __len__(self) -> int:
        return self.size

    def __iter__(self) -> Iterator[bytes]:
        sent = 0
        if self.progress:
            self.progress("upload", 0, self.size)
        while sent < self.size:
            chunk = self.stream.read(min(CHUNK, self.size - sent))
            if not chunk:
                raise ArcaError(f"the file shrank while uploading ({sent} of {self.size} bytes)", code="SourceChanged")
            sent += len(chunk)
            if self.progress:
                self.progress("upload", sent, self.size)
            yield chunk


@contextlib.contextmanager
def _opened(source: Source, progress: ProgressFn | None) -> Iterator[tuple[IO[bytes], int, BlobRef]]:
    """Open `source`, hash it in chunks, and yield (seekable stream, start offset, blob) for the upload."""
    if isinstance(source, str | os.PathLike):
        with open(source, "rb") as stream:
            total = os.fstat(stream.fileno()).st_size
            yield stream, 0, _hash(stream, total, progress)
        return
    if _seekable(source):
        start = source.tell()
        total = source.seek(0, os.SEEK_END) - start
        source.seek(start)
        yield source, start, _hash(source, total, progress)
        return
    # A pipe can be read once: spool it to disk (not memory) while hashing, then upload from the spool.
    with tempfile.TemporaryFile() as spool:
        digest = hashlib.sha256()
        size = 0
        for chunk in iter(lambda: source.read(CHUNK), b""):
            digest.update(chunk)
            spool.write(chunk)
            size += len(chunk)
        yield spool, 0, BlobRef(digest.hexdigest(), size)


def _in_parts(source: Source, part_size: int | None) -> bool:
    """Whether to upload in parts: as asked (`part_size`; 0 asks for one PUT), else from MULTIPART_THRESHOLD up
    (a pipe, whose size is unknown before it is read, goes in one PUT unless asked)."""
    if part_size is not None:
        return part_size > 0
    if isinstance(source, str | os.PathLike):
        return os.path.getsize(source) >= transfer.MULTIPART_THRESHOLD
    if _seekable(source):
        start = source.tell()
        end = source.seek(0, os.SEEK_END)
        source.seek(start)
        return end - start >= transfer.MULTIPART_THRESHOLD
    return False


def _hash(stream: IO[bytes], total: int | None, progress: ProgressFn | None) -> BlobRef:
    digest = hashlib.sha256()
    size = 0
    for chunk in iter(lambda: stream.read(CHUNK), b""):
        digest.update(chunk)
        size += len(chunk)
        if progress and total:
            progress("hash", size, total)
    return BlobRef(digest.hexdigest(), size)


def _seekable(stream: IO[bytes]) -> bool:
    try:
        return bool(stream.seekable())
    except (AttributeError, ValueError, io.UnsupportedOperation):
        return False


def _content(sha256: str, size: int, content_type: str | None, metadata: Mapping[str, str] | None) -> dict[str, Any]:
    body: dict[str, Any] = {"sha256": sha256, "size": size}
    if content_type is not None:
        body["content_type"] = content_type
    if metadata is not None:
        body["metadata"] = dict(metadata)
    return body


def guess_content_type(filename: str | os.PathLike[str]) -> str | None:
    """The content type a file name suggests (mimetypes' strict table), or None: unknown, or compressed
    (`.tar.gz` is a gzip stream, not a tar file), which the registry then stores as application/octet-stream."""
    guessed, encoding = mimetypes.guess_type(os.fspath(filename), strict=True)
    return guessed if encoding is None else None


def safe_filename(recorded: str | None) -> str | None:
    """`recorded` if it is a plain file name to write in the current directory, else None.

    The name comes from whoever published the version, so it must not reach elsewhere: no directory parts,
    no "." or "..", no hidden file, no control characters.
    """
    if not recorded or any(c in recorded for c in "/\\") or recorded.startswith("."):
        return None
    if any(ord(c) < 32 or ord(c) == 127 for c in recorded) or len(recorded.encode()) > 255:
        return None
    return recorded


def check_destination(dest: str | os.PathLike[str]) -> None:
    """FileNotFoundError naming the directory a destination needs, when it is not there: `nodir/` is a
    directory, never a file called nodir, and `nodir/x.zip` fails naming nodir/, not the temporary file."""
    text = os.fspath(dest)
    path = Path(text)
    if text.endswith(("/", os.sep)):
        if not path.is_dir():
            raise FileNotFoundError(errno.ENOENT, "no such directory", text)
        return
    if not path.is_dir() and not path.parent.is_dir():
        raise FileNotFoundError(errno.ENOENT, "no such directory", f"{path.parent}{os.sep}")


def _move_no_clobber(partial: Path, path: Path) -> None:
    """Rename `partial` to `path` unless `path` exists, atomically where the file system has hard links."""
    try:
        os.link(partial, path)
    except FileExistsError:
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(path)) from None
    except OSError:  # no hard links here (some network and FAT file systems): check, then rename
        if path.exists():
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(path)) from None
        os.replace(partial, path)
        return
    partial.unlink()
