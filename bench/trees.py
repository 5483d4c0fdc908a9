"""What trees of files cost: publishing, resolving and listing them (in process under moto, through the real
handlers), and the CLI's `arca publish NAME DIR` of a directory (local mode).

In process: a tree publish by `files` of 10, 1,000 and 10,000 files (each measured publish a new tree: its first
file's content changes from call to call), a publish by reference (`{tree: sha256}`) of 10,000 files, the second
publish of the 1,000-file tree with one file changed as the CLI sends it (a `POST …/uploads` a distinct content,
answered `exists` but for the changed one, its presigned PUT, then the publish), resolve of the tree, resolve of one
file and a page of the files listing (each warm, the function keeping the parsed manifest, and cold). The files'
contents (256 B each) are put straight into S3 before the rows (uploading 10,000 through the handlers would take
minutes under moto): as setup, neither timed nor counted; so is the tree manifest's upload before the publish by
reference. AWS calls are counted at the botocore level, per operation.

Local mode: the installed `arca` publishes a 1,000-file directory to a local server, then again with one file
changed: wall time, files uploaded, HTTP requests to the API (the server's request log), the client's peak resident
set (VmHWM, read from /proc while it runs).

Checks (the bench fails otherwise): a publish by `files` makes one TransactWriteItems for the version and one per
100 distinct contents counted (decision 98), and puts nothing in S3 but its manifest; the second publish uploads
one file and sends one request a distinct content plus the publish; resolving the tree is one DynamoDB read and no
other call; resolving one file one DynamoDB read and at most two S3 calls; a page of the listing one DynamoDB read
and at most one S3 call (the manifest, on a cold function).
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import logging
import math
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

from bench.counting import COUNTER, Call
from bench.harness import S3_WRITES, BenchFailure, Measurement
from bench.report import ms, table
from bench.world import ARCA_BUCKET, Blob, World, blob, blob_key

FILE_SIZE = 256
COUNT_BATCH = 100  # blob counts a transaction adds a reference to (arca.adapters.store.artifacts.COUNT_BATCH)
ONCE_FROM = 1_000  # trees of this many files and more: one publish, no warm-up (each takes seconds under moto)
T_FILES = 600_000  # content tags (bench.world.blob): file i of a tree is T_FILES + i
T_FRESH = 700_000  # the first file's content of each measured publish, one a call
T_CHANGED = 800_000  # the changed file of the second publish
PAGE = 1_000  # the listing's default page


class _NoBackup:
    """`copy` as moto's DynamoDB backend sees it while a TransactWriteItems runs: the backup it takes of the table
    before each item of the transaction (a deep copy of the whole table, for a rollback) is not taken. Under moto a
    transaction of 100 blob counts over a table of 10,000 items would copy a million items (a 10,000-file publish
    would take most of an hour); once a transaction, still minutes. No transaction of this section may fail: one
    that does fails the bench (without its backup, the table may hold part of it)."""

    def __init__(self) -> None:
        self.skipping = False

    def deepcopy(self, value: Any, memo: Any = None) -> Any:
        from moto.dynamodb.models.table import Table

        if self.skipping and isinstance(value, Table):
            return value
        return copy.deepcopy(value, memo)


@contextlib.contextmanager
def no_transaction_backup() -> Iterator[None]:
    """moto's TransactWriteItems takes no backup of the table (_NoBackup); a transaction that fails is a
    BenchFailure."""
    from moto.dynamodb import models

    shim = _NoBackup()
    original = models.DynamoDBBackend.transact_write_items

    def transact_write_items(backend: Any, transact_items: list[dict[str, Any]]) -> None:
        shim.skipping = True
        try:
            original(backend, transact_items)
        except Exception as error:
            raise BenchFailure(
                f"a TransactWriteItems failed under the trees section, which takes no backup: {error}"
            ) from error
        finally:
            shim.skipping = False

    with (
        mock.patch.object(models, "copy", shim),
        mock.patch.object(models.DynamoDBBackend, "transact_write_items", transact_write_items),
    ):
        yield


def _name(files: int) -> str:
    return f"bench/tree-{files}"


def _path(index: int) -> str:
    return f"d{index // 100:03d}/f{index:05d}.bin"


@dataclass
class Row:
    """One operation's measured calls: AWS calls (a client's presigned PUTs among them), HTTP requests to Arca,
    times."""

    label: str
    key: str
    calls: list[Counter[Call]] = field(default_factory=list)
    requests: list[int] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)

    @property
    def measurement(self) -> Measurement:
        return Measurement(self.seconds, self.calls)

    def cells(self) -> list[str]:
        m = self.measurement
        return [self.label, _span(self.requests), m.describe_calls(), ms(m.median_ms), str(m.n)]


def _span(values: Sequence[int]) -> str:
    low, high = min(values), max(values)
    return str(low) if low == high else f"{low}-{high}"


class _Tree:
    """A tree of `count` files of one artifact, its contents stored: the entries of each publish."""

    def __init__(self, w: World, count: int, fresh: int) -> None:
        self.w, self.count, self.name = w, count, _name(count)
        self.blobs = [blob(FILE_SIZE, T_FILES + i) for i in range(count)]
        self.fresh = [blob(FILE_SIZE, T_FRESH + count * 10 + i) for i in range(fresh)]
        self.first = self.blobs[0]  # the first file's content in the newest version
        for item in (*self.blobs, *self.fresh):
            self.store(item)

    def store(self, item: Blob) -> None:
        """The content as a client's presigned PUT leaves it (straight into S3: setup, not counted)."""
        client = self.w.arca.services.blobs.client
        client.put_object(Bucket=ARCA_BUCKET, Key=blob_key(self.name, item.sha256), Body=item.data)

    def entries(self, first: Blob | None = None, changed: dict[int, Blob] | None = None) -> list[dict[str, Any]]:
        """The `files` of the tree, the first file's content `first`, `changed` files replaced."""
        contents = list(self.blobs)
        if first is not None:
            contents[0] = first
        for index, item in (changed or {}).items():
            contents[index] = item
        return [{"path": _path(i), "sha256": b.sha256, "size": b.size} for i, b in enumerate(contents)]


def _measure(row: Row, step: Callable[[int], int], n: int, warmup: int, setup: Callable[[], None] | None) -> Row:
    """`warmup` unmeasured calls, then `n` measured: each returns its HTTP requests to Arca."""
    for index in range(warmup + n):
        if setup is not None:
            setup()
        with COUNTER.counting() as calls:
            started = time.perf_counter()
            requests = step(index)
            seconds = time.perf_counter() - started
        if index >= warmup:
            row.calls.append(calls)
            row.requests.append(requests)
            row.seconds.append(seconds)
    return row


def publish_check(files: int) -> Callable[[Counter[Call]], str | None]:
    """A tree publish of `files` distinct contents, by `files` or by reference: one TransactWriteItems for the version
    and one per 100 contents counted; nothing put in S3 but the manifest (by `files`; by reference it is there)."""

    def check(counted: Counter[Call]) -> str | None:
        problems = []
        transactions = counted[("DynamoDB", "TransactWriteItems")]
        expected = 1 + math.ceil(files / COUNT_BATCH)
        if transactions != expected:
            problems.append(f"a publish of {files} files must make {expected} TransactWriteItems, made {transactions}")
        writes = {op: n for (service, op), n in counted.items() if service == "S3" and op.split(" ")[0] in S3_WRITES}
        if sum(writes.values()) > 1 or set(writes) - {"PutObject"}:
            problems.append(f"a tree publish puts at most its manifest in S3, made {writes}")
        return "; ".join(problems) or None

    return check


def reads_check(s3_at_most: int) -> Callable[[Counter[Call]], str | None]:
    """One DynamoDB read (a Query of Limit 1, or a GetItem) and at most `s3_at_most` S3 calls, nothing else."""

    def check(counted: Counter[Call]) -> str | None:
        dynamodb = sum(n for (service, _), n in counted.items() if service == "DynamoDB")
        s3 = sum(n for (service, _), n in counted.items() if service == "S3")
        other = {call: n for call, n in counted.items() if call[0] not in ("DynamoDB", "S3")}
        if dynamodb != 1 or s3 > s3_at_most or other:
            return f"expected 1 DynamoDB read and at most {s3_at_most} S3 calls, made {dict(counted)}"
        return None

    return check


def _checked(row: Row, check: Callable[[Counter[Call]], str | None]) -> Row:
    for counted in row.calls:
        if problem := check(counted):
            raise BenchFailure(f"{row.label}: {problem}")
    return row


def in_process(w: World, sizes: Sequence[int], iterations: int) -> dict[str, Row]:
    """The in-process rows, by key: `publish.N`, `publish.tree`, `republish`, `resolve.tree`, `resolve.file`,
    `resolve.file.cold`, `list.page`, `list.page.cold`."""
    a = w.arca
    n = max(1, iterations)
    rows: dict[str, Row] = {}
    trees: dict[int, _Tree] = {}
    for count in sorted(sizes):
        once = count >= ONCE_FROM
        tree = trees[count] = _Tree(w, count, (1 if once else n + 1) + 1)  # the last: by reference

        def publish(index: int, tree: _Tree = tree) -> int:
            body = {"files": tree.entries(first=tree.fresh[index])}
            reply = a.call("POST", f"/artifacts/{tree.name}/versions", body, expect=201)
            if reply["deduplicated"] or reply["files"] != tree.count:
                raise BenchFailure(f"a publish of {tree.count} files answered {reply['files']} files, {reply}")
            tree.first = tree.fresh[index]
            return 1

        label = f"publish by files, {count:,} files" + (" (once: the artifact's first version)" if once else "")
        row = _measure(Row(label, f"publish.{count}"), publish, 1 if once else n, 0 if once else 1, None)
        rows[row.key] = _checked(row, publish_check(count))

    largest = trees[max(sizes)]
    rows["publish.tree"] = _by_reference(w, largest)
    middle = trees[sorted(sizes)[len(sizes) // 2]]
    rows["republish"] = _republish(w, middle)

    # Reads of the largest tree's newest version: resolve it, one file, a page of its files.
    name, version = largest.name, a.call("GET", f"/artifacts/{largest.name}/resolve/LATEST")["version"]
    middle_path = _path(largest.count // 2)

    def forget() -> None:  # the function's parsed manifests: a cold function reads the manifest again
        a.services.reading._trees.clear()

    def resolve(_: int) -> int:
        a.call("GET", f"/artifacts/{name}/resolve/{version}")
        return 1

    def resolve_file(_: int) -> int:
        a.call("GET", f"/artifacts/{name}/resolve/{version}/files/{middle_path}", expect=302)
        return 1

    def page(_: int) -> int:
        listed = a.call("GET", f"/artifacts/{name}/versions/{version}/files")
        if len(listed["files"]) != min(PAGE, largest.count):
            raise BenchFailure(f"a page of the files listed {len(listed['files'])} files")
        return 1

    counted, paged = f"{largest.count:,} files", min(PAGE, largest.count)
    reads = [
        ("resolve.tree", f"resolve the tree ({counted})", resolve, None, reads_check(0)),
        ("resolve.file", "resolve one file (302), the manifest kept", resolve_file, None, reads_check(1)),
        ("resolve.file.cold", "resolve one file (302), cold: the manifest read", resolve_file, forget, reads_check(2)),
        ("list.page", f"list a page of files ({paged:,} of {counted}), the manifest kept", page, None, reads_check(0)),
        ("list.page.cold", "list a page of files, cold: the manifest read", page, forget, reads_check(1)),
    ]
    for key, label, step, setup, check in reads:
        rows[key] = _checked(_measure(Row(label, key), step, n, 1, setup), check)
    return rows


def _by_reference(w: World, tree: _Tree) -> Row:
    """`{tree: sha256}` of the tree with its first file changed, its manifest uploaded first (setup)."""
    from arca_client.trees import TreeEntry, canonical_manifest

    a = w.arca
    files = tree.entries(first=tree.fresh[-1])
    document = canonical_manifest(TreeEntry(f["path"], f["sha256"], f["size"]) for f in files)
    manifest = Blob(document, hashlib.sha256(document).hexdigest())
    a.upload(tree.name, manifest)

    def publish(_: int) -> int:
        reply = a.call("POST", f"/artifacts/{tree.name}/versions", {"tree": manifest.sha256}, expect=201)
        if reply["deduplicated"] or reply["sha256"] != manifest.sha256:
            raise BenchFailure(f"the publish by reference answered {reply}")
        tree.first = tree.fresh[-1]
        return 1

    label = f"publish by reference ({{tree: sha256}}), {tree.count:,} files" + (
        " (once)" if tree.count >= ONCE_FROM else ""
    )
    row = _measure(Row(label, "publish.tree"), publish, 1, 0, None)
    return _checked(row, publish_check(tree.count))


def _republish(w: World, tree: _Tree) -> Row:
    """The CLI's second publish of the tree with one file changed: a resolve of LATEST and a presigned GET of its
    tree manifest (the contents it already holds), a `POST …/uploads` of the changed content and its presigned
    PUT, then `POST …/versions`, which checks every content it names."""
    a = w.arca
    changed = blob(FILE_SIZE, T_CHANGED + tree.count)
    contents = [tree.first, *tree.blobs[1:]]  # the newest version's, one file changed
    contents[tree.count // 2] = changed

    def republish(_: int) -> int:
        newest = a.call("GET", f"/artifacts/{tree.name}/resolve/LATEST")
        held = {entry["sha256"] for entry in json.loads(a.fetch(newest["download_url"]))["files"]}
        for item in contents:
            if item.sha256 not in held:
                a.upload(tree.name, item)
        body = {"files": tree.entries(first=tree.first, changed={tree.count // 2: changed})}
        reply = a.call("POST", f"/artifacts/{tree.name}/versions", body, expect=201)
        if reply["deduplicated"]:
            raise BenchFailure("the second publish with one file changed was deduplicated")
        return 3

    row = _measure(
        Row(f"second publish, 1 of {tree.count:,} files changed (as the CLI)", "republish"), republish, 1, 0, None
    )

    def check(counted: Counter[Call]) -> str | None:
        sent = counted[("S3", "PutObject (presigned, by client)")]
        return None if sent == 1 else f"the second publish must upload 1 file, uploaded {sent}"

    _checked(row, check)
    if row.requests != [3]:
        raise BenchFailure(f"{row.label}: {row.requests[0]} requests (expected 3: resolve, one upload, publish)")
    return row


# ---- the CLI against a local server -------------------------------------------------------------------------


@dataclass
class ClientRun:
    label: str
    seconds: float
    files_uploaded: int
    requests: int
    peak_rss_mib: float
    by_reference: bool

    def cells(self) -> list[str]:
        return [
            self.label,
            f"{self.seconds:.2f}",
            str(self.files_uploaded),
            str(self.requests),
            f"{self.peak_rss_mib:.0f}",
        ]


class _RequestLog(logging.Handler):
    """The local server's request log (logger `arca.local`, a line a request): counted."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.requests = 0

    def emit(self, record: logging.LogRecord) -> None:
        if record.msg == "%s %s %s %.0f ms":
            self.requests += 1


@contextlib.contextmanager
def _request_log() -> Iterator[_RequestLog]:
    logger = logging.getLogger("arca.local")
    handler, level = _RequestLog(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def client_runs(files: int) -> list[ClientRun]:
    """`arca publish NAME DIR` of a directory of `files` files, then again with one file changed (the hash cache
    kept between them, as on one machine); the second must upload exactly one file."""
    from bench.transfers import _arca, _env
    from local.server import running_arca

    name = f"bench/cli-tree-{files}"
    runs = []
    with tempfile.TemporaryDirectory(prefix="arca-bench-tree-") as scratch, running_arca(port=0) as url:
        work = Path(scratch)
        top = work / "tree"
        for i in range(files):
            target = top / _path(i)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(blob(FILE_SIZE, T_FILES + i).data)
        env = _env(url, work / "cache")
        for label, change in ((f"arca publish NAME DIR, {files:,} files", None), ("again, 1 file changed", files // 2)):
            if change is not None:
                (top / _path(change)).write_bytes(blob(FILE_SIZE, T_CHANGED + files).data)
            with _request_log() as log:
                run = _arca(env, work, "publish", name, "tree")
            answer = run.answer
            runs.append(
                ClientRun(
                    label, run.seconds, answer["files_uploaded"], log.requests, run.peak_rss_mib, answer["by_reference"]
                )
            )
    if runs[-1].requests > 4:  # resolve, one upload, publish (and the client's configuration read, if any)
        raise BenchFailure(
            f"the second `arca publish` of a directory with 1 file changed made {runs[-1].requests} requests"
        )
    if runs[-1].files_uploaded != 1:
        raise BenchFailure(
            f"the second `arca publish` of a directory with 1 file changed uploaded {runs[-1].files_uploaded} files"
        )
    return runs


def section(
    w: World, sizes: Sequence[int], iterations: int, client_files: int
) -> tuple[str, dict[str, Row], list[ClientRun]]:
    """The `## Trees` section, its in-process rows by key and the CLI's runs."""
    with no_transaction_backup():
        rows = in_process(w, sizes, iterations)
    headers = ["tree operation", "HTTP requests to Arca", "AWS calls", "median ms", "n"]
    lines = ["## Trees", "", table(headers, [row.cells() for row in rows.values()])]
    runs = client_runs(client_files) if client_files else []
    if runs:
        client_headers = [
            "CLI (local mode)",
            "wall s",
            "files uploaded",
            "HTTP requests to Arca",
            "client peak RSS MiB",
        ]
        lines += ["", table(client_headers, [run.cells() for run in runs])]
    lines += [
        "",
        f"Note: {FILE_SIZE} B files, their contents put into S3 before the rows (setup: neither timed nor counted, "
        "nor the manifest's upload before the publish by reference). Each publish by files makes a new tree (its "
        "first file's content changes); trees of 1,000 files and more are published once, as the artifact's first "
        "version. Under moto, S3 keeps no checksum: each file's content is read back and hashed (a GetObject a "
        "file that AWS does not make). The second publish replays the CLI's requests: a resolve of LATEST and its "
        "manifest's presigned GET, the changed content's POST …/uploads and presigned PUT, "
        "the publish. Cold rows forget the function's parsed manifests first. The CLI rows run the installed "
        "`arca` as a process against a local server (DynamoDB Local, moto's S3 server); requests from the server's "
        "log, peak RSS from /proc.",
    ]
    return "\n".join(lines), rows, runs


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m bench.trees`: this section alone."""
    import argparse

    from bench.__main__ import _Discard
    from bench.cases import Config
    from bench.world import world

    default = Config()
    parser = argparse.ArgumentParser(prog="python -m bench.trees", description=__doc__)
    parser.add_argument("--files", type=int, nargs="+", default=list(default.tree_files), help="the trees' sizes")
    parser.add_argument("-n", "--iterations", type=int, default=default.tree_iterations, help="calls per read row")
    parser.add_argument("--client-files", type=int, default=default.tree_client_files, help="0 skips the CLI rows")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    with world() as w, contextlib.redirect_stdout(_Discard()):  # type: ignore[type-var]
        text, _, _ = section(w, args.files, args.iterations, args.client_files)
    print(text)
    print(f"\nRun time {time.perf_counter() - started:.1f} s.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
