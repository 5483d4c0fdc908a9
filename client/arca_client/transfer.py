"""The transfer engine of large content: one pass of hashing into parts, parallel part uploads that resume from the
parts S3 holds, and parallel ranged downloads that check each part as it arrives and resume a partial file.

Memory stays flat whatever the size: every body is streamed in CHUNK-sized pieces, read with positional reads
(`os.pread`) so that parallel workers share one file without seeking it, and written with `os.pwrite`.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import requests

from arca_client.errors import ArcaError, ChecksumMismatchError, TransportError

MIB = 1024**2
CHUNK = MIB
# Content this large or larger goes up in parts (a single PUT stays possible up to 5 GiB with --part-size 0).
MULTIPART_THRESHOLD = 64 * MIB
DEFAULT_PART_SIZE = 8 * MIB
MIN_PART_SIZE = 5 * MIB
MAX_PART_SIZE = 5 * 1024**3
MAX_PARTS = 10_000
DEFAULT_PARALLEL = 8
# Rounds of part uploads in a row that move nothing before the upload gives up.
MAX_IDLE_ROUNDS = 3
# Test hooks: a process with the first variable stops after sending that many parts (or receiving, for a download)
# and waits to be killed, so that a test can kill a transfer exactly half-way; with the second, every part waits that
# many seconds before it moves, so that a test can press Ctrl-C while parts are queued and in flight.
STALL_ENV = "ARCA_TEST_STALL_AFTER_PARTS"
PACE_ENV = "ARCA_TEST_SECONDS_PER_PART"
ProgressFn = Callable[[str, int, int], None]


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a transfer: the parts not yet started were cancelled and those in flight dropped. What was
    done stays (parts in S3, or checked parts in the partial file), so the same command resumes from `percent`."""

    def __init__(self, done: int, total: int) -> None:
        self.percent = done * 100 // total if total else 100
        super().__init__(f"interrupted at {self.percent} %; run the same command again to resume")


class _Cancelled(Exception):
    """Raised inside a worker whose transfer was cancelled: its request is dropped mid-body."""


class _Cancel:
    """The flag a transfer's workers check between chunks (and while paced), set by Ctrl-C in the main thread."""

    def __init__(self) -> None:
        self.event = threading.Event()
        pace = os.environ.get(PACE_ENV)
        self.pace = float(pace) if pace else 0.0

    def check(self) -> None:
        if self.event.is_set():
            raise _Cancelled

    def paced(self) -> None:
        if self.pace:
            self.event.wait(self.pace)
        self.check()


def _run(
    parallel: int, work: Callable[[Any], Any], items: list[Any], cancel: _Cancel, done: Callable[[Any], None]
) -> None:
    """`work(item)` for every item, `parallel` at a time, `done(future)` as each ends. On Ctrl-C (or an error `done`
    raises) the queue is cancelled and the workers in flight stop at their next chunk, so the process ends at
    once instead of after every queued part."""
    pool = ThreadPoolExecutor(max_workers=max(1, parallel))
    try:
        for future in as_completed([pool.submit(work, item) for item in items]):
            done(future)
    except BaseException:
        cancel.event.set()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=True)


def choose_part_size(size: int, requested: int | None = None) -> int:
    """`requested` if given (checked against S3's rules), else 8 MiB, or the smallest MiB multiple that keeps the
    content within 10,000 parts."""
    if requested is not None:
        if requested > MAX_PART_SIZE or (requested < MIN_PART_SIZE and requested < size):
            raise ArcaError(
                f"--part-size must be from 5 MiB to 5 GiB (an only part may be smaller), not {requested}",
                code="ValidationError",
            )
        if -(-size // requested) > MAX_PARTS:
            raise ArcaError(f"--part-size {requested} makes more than {MAX_PARTS} parts", code="ValidationError")
        return requested
    needed = -(-size // MAX_PARTS)
    return max(DEFAULT_PART_SIZE, -(-needed // MIB) * MIB)


@dataclass(frozen=True)
class Layout:
    """Content cut into parts: its sha256 and size, and the sha256 of each `part_size` part."""

    sha256: str
    size: int
    part_size: int
    parts: list[str]

    def span(self, number: int) -> tuple[int, int]:
        """(offset, length) of part `number` (1-based)."""
        offset = (number - 1) * self.part_size
        return offset, min(self.part_size, self.size - offset)


class Reader:
    """Positional reads of a stream from offset `start`: `os.pread` on its file descriptor (parallel readers need
    no lock), else a locked seek and read (an in-memory stream)."""

    def __init__(self, stream: IO[bytes], start: int = 0) -> None:
        self.stream = stream
        self.start = start
        self.lock = threading.Lock()
        try:
            self.fd: int | None = stream.fileno()
        except (AttributeError, OSError, ValueError):
            self.fd = None

    def read_at(self, offset: int, length: int) -> bytes:
        if self.fd is not None:
            return os.pread(self.fd, length, self.start + offset)
        with self.lock:
            self.stream.seek(self.start + offset)
            return self.stream.read(length)

    def chunks(self, offset: int, length: int) -> Iterator[bytes]:
        done = 0
        while done < length:
            chunk = self.read_at(offset + done, min(CHUNK, length - done))
            if not chunk:
                raise ArcaError(f"the file shrank while uploading (at byte {offset + done})", code="SourceChanged")
            done += len(chunk)
            yield chunk


def hash_layout(reader: Reader, size: int, part_size: int, progress: ProgressFn | None = None) -> Layout:
    """Read the content once, computing its sha256 and every part's."""
    whole = hashlib.sha256()
    parts: list[str] = []
    offset = 0
    while offset < size:
        part = hashlib.sha256()
        for chunk in reader.chunks(offset, min(part_size, size - offset)):
            whole.update(chunk)
            part.update(chunk)
            if progress:
                progress("hash", offset + len(chunk), size)
            offset += len(chunk)
        parts.append(part.hexdigest())
    return Layout(whole.hexdigest(), size, part_size, parts)


class StateCache:
    """Part hashes of files already cut, under the user's cache directory ($ARCA_CACHE_DIR, else
    $XDG_CACHE_HOME/arca, else ~/.cache/arca), keyed by the file's identity (path, size, modification time,
    inode) and the part size: a rerun after a kill does not hash a 100 GB file again."""

    def __init__(self, environ: dict[str, str] | None = None) -> None:
        env = dict(os.environ if environ is None else environ)
        base = env.get("ARCA_CACHE_DIR") or os.path.join(
            env.get("XDG_CACHE_HOME") or os.path.join(env.get("HOME") or str(Path.home()), ".cache"), "arca"
        )
        self.dir = Path(base) / "layouts"

    def _file(self, source: str | os.PathLike[str], part_size: int) -> tuple[Path, dict[str, Any]]:
        stat = os.stat(source)
        identity = {
            "path": os.path.realpath(source),
            "size": stat.st_size,
            "mtime_ns": stat.st_mtime_ns,
            "inode": stat.st_ino,
            "part_size": part_size,
        }
        key = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
        return self.dir / f"{key}.json", identity

    def layout(self, source: str | os.PathLike[str], part_size: int) -> Layout | None:
        path, identity = self._file(source, part_size)
        try:
            saved = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        if saved.get("identity") != identity:
            return None
        return Layout(saved["sha256"], saved["size"], saved["part_size"], list(saved["parts"]))

    def save_layout(self, source: str | os.PathLike[str], layout: Layout) -> None:
        path, identity = self._file(source, layout.part_size)
        path.parent.mkdir(parents=True, exist_ok=True)
        scratch = path.with_suffix(f".{os.getpid()}.tmp")
        scratch.write_text(json.dumps({"identity": identity, **layout.__dict__}))
        os.replace(scratch, path)


class Meter:
    """One progress line for many parallel parts: bytes per part, so a part sent again is not counted twice; and
    the bytes of the parts finished, which an interruption keeps."""

    def __init__(self, phase: str, total: int, progress: ProgressFn | None, base: int = 0) -> None:
        self.phase = phase
        self.total = total
        self.progress = progress
        self.base = base
        self.parts: dict[int, int] = {}
        self.finished: dict[int, int] = {}
        self.lock = threading.Lock()
        if progress:
            progress(phase, base, total)

    def finish(self, number: int, length: int) -> None:
        with self.lock:
            self.finished[number] = length

    def interrupted(self) -> Interrupted:
        with self.lock:
            return Interrupted(self.base + sum(self.finished.values()), self.total)

    def set(self, number: int, done: int) -> None:
        with self.lock:
            self.parts[number] = done
            moved = self.base + sum(self.parts.values())
        if self.progress:
            self.progress(self.phase, min(moved, self.total), self.total)


class _Stall:
    """The test hook STALL_ENV: after that many parts, wait (to be killed)."""

    def __init__(self) -> None:
        limit = os.environ.get(STALL_ENV)
        self.limit = int(limit) if limit else None
        self.count = 0
        self.lock = threading.Lock()

    def tick(self, cancel: _Cancel) -> None:
        if self.limit is None:
            return
        with self.lock:
            self.count += 1
            stop = self.count >= self.limit
        while stop and not cancel.event.is_set():
            time.sleep(0.1)


@dataclass
class UploadReport:
    """What an upload did: the upload's id, bytes sent in this run, bytes S3 already had, API calls made."""

    upload_id: str | None
    sha256: str = ""
    sent: int = 0
    resumed: int = 0
    calls: int = 0
    parts_sent: int = 0


def upload(
    client: Any, name: str, layout: Layout, reader: Reader, *, parallel: int, progress: ProgressFn | None
) -> UploadReport:
    """Upload the parts S3 lacks, `parallel` at a time, round after round (each round's URLs are fresh), then
    complete. A part that fails is sent again in the next round; MAX_IDLE_ROUNDS rounds that move nothing fail."""
    target = client.create_multipart_upload(name, layout)
    report = UploadReport(upload_id=target.id or None, sha256=layout.sha256, calls=1)
    if target.exists:
        return report
    report.resumed = sum(int(p["size"]) for p in target.uploaded)
    meter = Meter("upload", layout.size, progress, base=report.resumed)
    stall = _Stall()
    idle = 0
    _widen_pool(client, parallel)
    try:
        while target.missing:
            sent, failures = _upload_round(client, layout, reader, target.parts, parallel, meter, stall)
            report.sent += sum(layout.span(n)[1] for n in sent)
            report.parts_sent += len(sent)
            idle = 0 if sent else idle + 1
            if idle >= MAX_IDLE_ROUNDS:
                raise failures[0] if failures else ArcaError("the upload made no progress", code="UploadStalled")
            if not failures and len(target.parts) >= target.missing:
                break  # every missing part was in this round and went in: completion checks them all
            target = client.get_upload(name, report.upload_id)
            report.calls += 1
            if target.exists:
                return report
    except KeyboardInterrupt:
        raise meter.interrupted() from None
    client.complete_upload(name, report.upload_id)
    report.calls += 1
    return report


def _upload_round(
    client: Any,
    layout: Layout,
    reader: Reader,
    targets: list[dict[str, Any]],
    parallel: int,
    meter: Meter,
    stall: _Stall,
) -> tuple[list[int], list[ArcaError]]:
    sent: list[int] = []
    failures: list[ArcaError] = []
    cancel = _Cancel()

    def put(target: dict[str, Any]) -> int:
        number = int(target["number"])
        offset, length = layout.span(number)
        cancel.paced()

        def body() -> _Body:
            return _Body(reader.chunks(offset, length), length, lambda done: meter.set(number, done), cancel)

        headers = {**target["headers"], "Content-Length": str(length)}
        client.transport.send("PUT", target["url"], headers=headers, body_factory=body, sign=False, idempotent=True)
        meter.finish(number, length)
        stall.tick(cancel)
        return number

    def done(future: Any) -> None:
        try:
            sent.append(future.result())
        except ArcaError as failed:
            failures.append(failed)

    _run(parallel, put, targets, cancel, done)
    return sent, failures


class _Body:
    """A streamed request body of known length (S3 refuses chunked uploads), reporting bytes as they go."""

    def __init__(self, chunks: Iterator[bytes], length: int, report: Callable[[int], None], cancel: _Cancel) -> None:
        self.chunks = chunks
        self.length = length
        self.report = report
        self.cancel = cancel

    def __len__(self) -> int:
        return self.length

    def __iter__(self) -> Iterator[bytes]:
        done = 0
        self.report(0)
        for chunk in self.chunks:
            self.cancel.check()  # Ctrl-C: the request breaks off here, mid-body, and S3 keeps nothing of it
            done += len(chunk)
            self.report(done)
            yield chunk


def _widen_pool(client: Any, parallel: int) -> None:
    """requests keeps 10 connections per host: more parallel parts than that would wait for one."""
    if parallel > 10:
        adapter = requests.adapters.HTTPAdapter(pool_connections=parallel, pool_maxsize=parallel)
        client.session.mount("http://", adapter)
        client.session.mount("https://", adapter)


@dataclass
class DownloadReport:
    path: str
    received: int = 0
    resumed: int = 0
    parts_received: int = 0
    failures: list[str] = field(default_factory=list)


class _Partial:
    """A partial download that survives the process: `.<name>.arca-partial` beside the destination, and a journal
    `.<name>.arca-partial.json` whose first line names the content and each further line a part that was
    written, flushed to disk and checked. A journal of other content starts over."""

    def __init__(self, path: Path, sha256: str, size: int, part_size: int) -> None:
        self.data = path.with_name(f".{path.name}.arca-partial")
        self.journal = path.with_name(f".{path.name}.arca-partial.json")
        self.header = {"sha256": sha256, "size": size, "part_size": part_size}
        self.done = self._load()
        self.lock = threading.Lock()
        flags = os.O_RDWR | os.O_CREAT
        self.fd = os.open(self.data, flags, 0o666)
        os.ftruncate(self.fd, size)
        if not self.done:
            with open(self.journal, "w") as journal:
                journal.write(json.dumps(self.header) + "\n")

    def _load(self) -> set[int]:
        try:
            lines = self.journal.read_text().splitlines()
        except OSError:
            return set()
        if not lines or not self.data.exists():
            return set()
        try:
            if json.loads(lines[0]) != self.header:
                return set()
            return {int(line) for line in lines[1:] if line.strip().isdigit()}
        except ValueError:
            return set()

    def record(self, number: int) -> None:
        os.fdatasync(self.fd)  # the bytes are on disk before the journal says so
        with self.lock, open(self.journal, "a") as journal:
            journal.write(f"{number}\n")
            self.done.add(number)

    def close(self) -> None:
        os.close(self.fd)

    def discard(self) -> None:
        for path in (self.data, self.journal):
            path.unlink(missing_ok=True)


def download(
    client: Any,
    resolution: Any,
    *,
    part_size: int,
    parts: list[str],
    path: Path,
    parallel: int,
    progress: ProgressFn | None,
    overwrite: bool,
) -> DownloadReport:
    """Fetch every part not yet in the partial file as a ranged GET, check it, write it in place; then check
    the whole sha256 and move the file into place."""
    layout = Layout(resolution.sha256, resolution.size, part_size, parts)
    partial = _Partial(path, layout.sha256, layout.size, part_size)
    report = DownloadReport(path=str(path), resumed=sum(layout.span(n)[1] for n in partial.done))
    meter = Meter("download", layout.size, progress, base=report.resumed)
    stall = _Stall()
    url = _Url(client, resolution)
    cancel = _Cancel()
    _widen_pool(client, parallel)

    def fetch(number: int) -> int:
        cancel.paced()
        return _fetch_part(client, url, layout, number, partial, meter, cancel)

    def done(future: Any) -> None:
        report.received += future.result()
        report.parts_received += 1
        stall.tick(cancel)

    try:
        wanted = [n for n in range(1, len(parts) + 1) if n not in partial.done]
        try:
            _run(parallel, fetch, wanted, cancel, done)
        except KeyboardInterrupt:
            # What the journal holds is kept: checked parts, on disk. The rest is fetched by the next run.
            raise Interrupted(sum(layout.span(n)[1] for n in partial.done), layout.size) from None
        _check_whole(partial, layout, progress)
    finally:
        partial.close()
    if not overwrite and path.exists():
        raise FileExistsError(f"{path} exists")
    os.replace(partial.data, path)
    partial.journal.unlink(missing_ok=True)
    return report


class _Url:
    """The download URL, resolved again (by version number, same content) once it has expired: a large download
    outlasts a presigned URL."""

    def __init__(self, client: Any, resolution: Any) -> None:
        self.client = client
        self.resolution = resolution
        self.current = str(resolution.download_url)
        self.lock = threading.Lock()

    def renew(self, stale: str) -> None:
        with self.lock:
            if self.current != stale:
                return
            fresh = self.client.resolve(self.resolution.name, self.resolution.version)
            if fresh.sha256 != self.resolution.sha256:
                raise ArcaError(f"version {self.resolution.version} changed content", code="ContentChanged")
            self.current = fresh.download_url


def _fetch_part(
    client: Any, url: _Url, layout: Layout, number: int, partial: _Partial, meter: Meter, cancel: _Cancel
) -> int:
    offset, length = layout.span(number)
    headers = {"Range": f"bytes={offset}-{offset + length - 1}"}
    used = url.current
    try:
        response = client.transport.send("GET", used, headers=headers, sign=False, stream=True)
    except ArcaError as refused:
        if refused.status != 403:
            raise
        url.renew(used)
        response = client.transport.send("GET", url.current, headers=headers, sign=False, stream=True)
    digest = hashlib.sha256()
    done = 0
    try:
        with response:
            for chunk in response.iter_content(CHUNK):
                cancel.check()  # Ctrl-C: this part is dropped (never journaled), the next run fetches it again
                if done + len(chunk) > length:
                    break
                os.pwrite(partial.fd, chunk, offset + done)
                digest.update(chunk)
                done += len(chunk)
                meter.set(number, done)
    except (requests.ConnectionError, requests.exceptions.ChunkedEncodingError, requests.Timeout) as lost:
        raise TransportError(f"part {number} broke off after {done} bytes: {lost}", code="ConnectionError") from lost
    if done != length or digest.hexdigest() != layout.parts[number - 1]:
        raise ChecksumMismatchError(
            f"part {number}: received {done} bytes with sha256 {digest.hexdigest()}, expected {length} bytes with "
            f"sha256 {layout.parts[number - 1]}",
            code="ChecksumMismatch",
        )
    partial.record(number)
    return length


def _check_whole(partial: _Partial, layout: Layout, progress: ProgressFn | None) -> None:
    """The whole file's sha256 (S3 has none for multipart content: this is the client's own check)."""
    digest = hashlib.sha256()
    offset = 0
    while offset < layout.size:
        chunk = os.pread(partial.fd, min(CHUNK, layout.size - offset), offset)
        if not chunk:
            break
        digest.update(chunk)
        offset += len(chunk)
        if progress:
            progress("verify", offset, layout.size)
    if offset != layout.size or digest.hexdigest() != layout.sha256:
        partial.discard()
        raise ChecksumMismatchError(
            f"the downloaded file has sha256 {digest.hexdigest()}, expected {layout.sha256}", code="ChecksumMismatch"
        )
