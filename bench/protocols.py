"""What the foreign protocols cost: OCI Distribution under /v2/ and the Hugging Face Hub's read side under /hf/ (in
process under moto, through the real handlers).

Each row replays the HTTP requests a real client sends for one operation, as API Gateway events into the handlers
(no real client runs): oras-py's push of a 2-file artifact (per blob a HEAD, then a monolithic upload, POST
…/blobs/uploads/ and PUT …?digest= with the bytes; then the manifest PUT with a tag), its pull (the manifest GET by
tag, a GET per file's blob answered 307, then the client's GET of the presigned URL), a tags list, and
huggingface_hub's snapshot of a 5-file version (model info, the tree listing, one HEAD per file, then each file's
presigned GET) and `hf_hub_download` of one file (a HEAD, then the presigned GET). AWS calls are counted at the
botocore level, per operation; the presigned GETs do not pass through botocore and are counted apart.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from bench.counting import Call
from bench.harness import BenchFailure, Measurement
from bench.report import ms, table
from bench.world import Blob, World, blob

# The stage of the events the handlers receive here: answers name their Locations under it, as on AWS.
STAGE_PATH = "/local"
OCI_NAME = "bench/oci-app"
HF_NAME = "bench/hf-model"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
LAYER = "application/vnd.oci.image.layer.v1.tar"
CONFIG = b"{}"  # oras-py's empty config: stored by the first push, found by HEAD in every later one
CONFIG_TYPE = "application/vnd.unknown.config.v1+json"
FILE_SIZE = 1024
HF_FILES = 5


def _digest(content: bytes) -> str:
    return "sha256:" + hashlib.sha256(content).hexdigest()


@dataclass
class Row:
    """One operation's iterations: AWS calls, HTTP requests to Arca and presigned GETs by the client, times."""

    label: str
    calls: list[Counter[Call]] = field(default_factory=list)
    requests: list[int] = field(default_factory=list)
    presigned: list[int] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    steps: list[tuple[str, Counter[Call], float]] = field(default_factory=list)

    def cells(self) -> list[str]:
        m = Measurement(self.seconds, self.calls)
        return [self.label, _span(self.requests), _span(self.presigned), m.describe_calls(), ms(m.median_ms), str(m.n)]


def _span(values: list[int]) -> str:
    low, high = min(values), max(values)
    return str(low) if low == high else f"{low}-{high}"


class _Client:
    """The requests of one operation through the handlers: each counted, each status checked."""

    def __init__(self, w: World) -> None:
        import requests

        self._get = requests.get
        self.arca = w.arca
        self.requests = 0
        self.presigned = 0
        self.counted: Counter[Call] | None = None  # the operation's calls so far, while it is measured
        self.steps: list[tuple[str, Counter[Call], float]] = []  # each request: (step, its calls, seconds)

    def call(self, method: str, path: str, *, expect: int | tuple[int, ...], step: str = "", **kwargs: Any) -> Any:
        self.requests += 1
        url = urlsplit(path)
        if url.query:
            kwargs["query"] = {**dict(parse_qsl(url.query)), **kwargs.get("query", {})}
        before = Counter(self.counted or {})
        started = time.perf_counter()
        reply = self.arca.api.call(method, url.path, **kwargs)
        if self.counted is not None:
            self.steps.append((step or f"{method} {path}", self.counted - before, time.perf_counter() - started))
        if reply.status not in (expect if isinstance(expect, tuple) else (expect,)):
            raise BenchFailure(f"Arca {method} {path} answered {reply.status} (expected {expect}): {reply.body}")
        return reply

    def fetch(self, url: str, expected: bytes) -> None:
        """The client's GET of a presigned URL (S3, not Arca): its bytes must be the file's."""
        self.presigned += 1
        got = self._get(url, timeout=30)
        if got.status_code != 200 or got.content != expected:
            raise BenchFailure(f"a presigned GET answered {got.status_code} with other bytes than the file's")


def _measure(w: World, row: Row, operation: Callable[[_Client, int], None], iterations: int) -> Row:
    """One unmeasured warm-up call (index 0), then `iterations` measured ones."""
    for i in range(iterations + 1):
        client = _Client(w)
        with w.arca.counter.counting() as calls:
            client.counted = calls
            started = time.perf_counter()
            operation(client, i)
            seconds = time.perf_counter() - started
        if i:
            row.calls.append(calls)
            row.requests.append(client.requests)
            row.presigned.append(client.presigned)
            row.seconds.append(seconds)
            row.steps += client.steps
    return row


def _steps(row: Row) -> list[list[str]]:
    """A row's requests by step, in the order first sent: each request's AWS calls and time."""
    by_step: dict[str, tuple[list[float], list[Counter[Call]]]] = {}
    for step, calls, seconds in row.steps:
        times, counts = by_step.setdefault(step, ([], []))
        times.append(seconds)
        counts.append(calls)
    cells = []
    for step, (times, counts) in by_step.items():
        m = Measurement(times, counts)
        cells.append([step, m.describe_calls(), ms(m.median_ms), str(m.n)])
    return cells


def _oci_files(index: int) -> dict[str, bytes]:
    """The push `index`'s two files (new content each push)."""
    return {
        "model.bin": blob(FILE_SIZE, 91_000 + 2 * index).data,
        "README.md": blob(FILE_SIZE, 91_001 + 2 * index).data,
    }


def _oci_manifest(files: dict[str, bytes]) -> bytes:
    def descriptor(content: bytes, media_type: str, title: str | None = None) -> dict[str, Any]:
        d: dict[str, Any] = {"mediaType": media_type, "digest": _digest(content), "size": len(content)}
        if title is not None:
            d["annotations"] = {"org.opencontainers.image.title": title}
        return d

    document = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": descriptor(CONFIG, CONFIG_TYPE),
        "layers": [descriptor(content, LAYER, title) for title, content in files.items()],
    }
    return json.dumps(document).encode()


def _oci_push(c: _Client, index: int) -> None:
    """oras-py's push: per blob a HEAD (a 404 uploads it: POST a session, PUT the bytes with the digest), then
    the manifest PUT with a tag."""
    files = _oci_files(index)
    for content in (CONFIG, *files.values()):
        digest = _digest(content)
        stored = "HEAD …/blobs/{digest}, stored (the config)" if content == CONFIG else "HEAD …/blobs/{digest}, missing"
        if c.call("HEAD", f"/v2/{OCI_NAME}/blobs/{digest}", expect=(200, 404), step=stored).status == 200:
            continue
        started = c.call("POST", f"/v2/{OCI_NAME}/blobs/uploads/", expect=202, step="POST …/blobs/uploads/")
        c.call(
            "PUT",
            started.headers["Location"].removeprefix(STAGE_PATH),  # API Gateway hands the function the path after it
            expect=201,
            step="PUT …/blobs/uploads/{id}?digest= (the bytes)",
            raw=content,
            headers={"Content-Type": "application/octet-stream"},
            query={"digest": digest},
        )
    c.call(
        "PUT",
        f"/v2/{OCI_NAME}/manifests/v{index}",
        expect=201,
        step="PUT …/manifests/{tag}",
        raw=_oci_manifest(files),
        headers={"Content-Type": OCI_MANIFEST},
    )


def _oci_pull(tag: str, files: dict[str, bytes]) -> Callable[[_Client, int], None]:
    """oras-py's pull: the manifest by tag, then each layer's blob (a 307) and its presigned GET."""

    def pull(c: _Client, _: int) -> None:
        manifest = c.call(
            "GET",
            f"/v2/{OCI_NAME}/manifests/{tag}",
            expect=200,
            step="GET …/manifests/{tag}",
            headers={"Accept": OCI_MANIFEST},
        )
        by_digest = {_digest(content): content for content in files.values()}
        for layer in manifest.body["layers"]:
            reply = c.call("GET", f"/v2/{OCI_NAME}/blobs/{layer['digest']}", expect=307, step="GET …/blobs/{digest}")
            c.fetch(reply.headers["Location"], by_digest[layer["digest"]])

    return pull


def _oci_tags(c: _Client, _: int) -> None:
    c.call("GET", f"/v2/{OCI_NAME}/tags/list", expect=200, step="GET …/tags/list")


def _hf_blobs() -> dict[str, Blob]:
    return {f"part-{i}.bin" if i else "config.json": blob(FILE_SIZE, 92_000 + i) for i in range(HF_FILES)}


def _hf_snapshot(files: dict[str, bytes]) -> Callable[[_Client, int], None]:
    """huggingface_hub's `snapshot_download` at an alias: the model info at that revision, the tree at the commit
    it answered, then per file a HEAD at the commit (a 302) and the presigned GET."""

    def snapshot(c: _Client, _: int) -> None:
        info = c.call(
            "GET", f"/hf/api/models/{HF_NAME}/revision/prod", expect=200, step="GET /hf/api/models/…/revision/{alias}"
        )
        commit = info.body["sha"]
        tree = c.call(
            "GET",
            f"/hf/api/models/{HF_NAME}/tree/{commit}",
            expect=200,
            step="GET /hf/api/models/…/tree/{commit}",
            query={"recursive": "true"},
        )
        paths = sorted(e["path"] for e in tree.body if e["type"] == "file")
        if paths != sorted(files):
            raise BenchFailure(f"the Hub tree listed {paths}, expected {sorted(files)}")
        for path in paths:
            head = c.call(
                "HEAD", f"/hf/{HF_NAME}/resolve/{commit}/{path}", expect=302, step="HEAD /hf/…/resolve/{commit}/{file}"
            )
            c.fetch(head.headers["Location"], files[path])

    return snapshot


def _hf_download(path: str, content: bytes) -> Callable[[_Client, int], None]:
    """huggingface_hub's `hf_hub_download` of one file at an alias: a HEAD (a 302), then the presigned GET."""

    def download(c: _Client, _: int) -> None:
        head = c.call(
            "HEAD", f"/hf/{HF_NAME}/resolve/prod/{path}", expect=302, step="HEAD /hf/…/resolve/{alias}/{file}"
        )
        c.fetch(head.headers["Location"], content)

    return download


def section(w: World, iterations: int) -> str:
    """The `## Protocols` section."""
    a = w.arca
    n = max(1, iterations)
    push = _measure(
        w, Row("OCI push, 2 files (oras-py: HEAD, POST, PUT a blob; PUT the manifest by tag)"), _oci_push, n
    )
    pulled = _oci_files(n)  # the last push, tag v{n}
    pull = _measure(w, Row("OCI pull by tag (manifest GET, 2 blob GETs answered 307)"), _oci_pull(f"v{n}", pulled), n)
    tags = _measure(w, Row(f"OCI tags list ({n + 1} tags)"), _oci_tags, n)

    blobs = _hf_blobs()
    for item in blobs.values():
        a.ensure_uploaded(HF_NAME, item)
    entries = [{"path": p, "sha256": b.sha256, "size": b.size} for p, b in blobs.items()]
    files = {p: b.data for p, b in blobs.items()}
    a.call("POST", f"/artifacts/{HF_NAME}/versions", {"files": entries}, expect=201)
    a.call("PUT", f"/artifacts/{HF_NAME}/aliases/prod", {"version": 1}, expect=201)
    snapshot = _measure(
        w, Row(f"HF snapshot_download, {HF_FILES} files (model info, tree, a HEAD per file)"), _hf_snapshot(files), n
    )
    download = _measure(
        w, Row("HF hf_hub_download, 1 file (a HEAD)"), _hf_download("config.json", files["config.json"]), n
    )

    headers = ["operation", "HTTP requests to Arca", "presigned GETs", "AWS calls", "median ms", "n"]
    rows = [r.cells() for r in (push, pull, tags, snapshot, download)]
    steps = [[row.label.split(" (")[0], *cells] for row in (push, pull, snapshot, download) for cells in _steps(row)]
    by_request = table(["operation", "request", "AWS calls", "median ms", "n"], steps)
    note = (
        "Each row replays a real client's requests through the handlers (API Gateway events, in process under moto), "
        f"{FILE_SIZE} B files; AWS calls counted at the botocore level; the presigned GETs (the client's, to S3) "
        "are not among them. A push's empty config is stored by the first push and found by HEAD afterwards. The "
        "second table gives each request's calls (n: the requests of that step over the row's operations)."
    )
    return "\n".join(["## Protocols", "", table(headers, rows), "", by_request, "", note])


def main() -> None:
    """`python -m bench.protocols`: this section alone."""
    from bench.__main__ import _Discard
    from bench.cases import Config
    from bench.world import world

    cfg = Config()
    with world() as w, contextlib.redirect_stdout(_Discard()):  # type: ignore[type-var]
        text = section(w, cfg.protocol_iterations)
    print(text)


if __name__ == "__main__":
    main()
