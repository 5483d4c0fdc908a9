"""An in-memory Hub backend (artifacts with versions, aliases, canaries and LATEST) and the two HTTP servers the real
`huggingface_hub` talks to: the `/hf/…` dispatcher, and a stand-in for S3 that serves bytes by their sha256 at the
URL the dispatcher's 302 names (another origin, as a presigned URL is)."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

from arca.protocols.hf import EntryNotFound, FileEntry, RepoNotFound, Request, RevisionNotFound, Target, serve

LATEST = "LATEST"


def tree_digest(files: dict[str, bytes]) -> str:
    """The tree manifest's digest: canonical JSON of the files in the byte order of their UTF-8 paths."""
    rows = [
        {"path": path, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
        for path, data in sorted(files.items(), key=lambda item: item[0].encode())
    ]
    text = json.dumps({"files": rows}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class _Tree:
    files: dict[str, bytes]
    created_at: str
    digest: str = ""

    def __post_init__(self) -> None:
        self.digest = tree_digest(self.files)


@dataclass
class _Alias:
    version: int
    secondary: int | None = None


@dataclass
class _Repo:
    versions: dict[int, _Tree] = field(default_factory=dict)
    deleted: set[int] = field(default_factory=set)
    aliases: dict[str, _Alias] = field(default_factory=dict)
    latest: _Tree | None = None


class FakeHub:
    """Arca's reads over in-memory artifacts. An alias with a secondary is the worst canary there is: each resolve
    answers the other side (whatever the routing key), so a client that resolved twice would mix them."""

    def __init__(self, blob_url: str = "http://blobs.invalid") -> None:
        self.blob_url = blob_url
        self.repos: dict[str, _Repo] = {}
        self.blobs: dict[str, bytes] = {}
        self.resolves: list[tuple[str, int | str, str | None]] = []
        self._flip: dict[tuple[str, str], bool] = {}
        self._lock = threading.Lock()

    # Writing, for the tests.

    def publish(self, repo: str, files: dict[str, bytes], at: str = "2026-11-26T10:00:00.000Z") -> int:
        """A new version of `repo` holding `files` (LATEST follows it, as a publish does)."""
        state = self.repos.setdefault(repo, _Repo())
        number = max(state.versions, default=0) + 1
        state.versions[number] = state.latest = _Tree(dict(files), at)
        self.blobs.update({hashlib.sha256(data).hexdigest(): data for data in files.values()})
        return number

    def set_latest(self, repo: str, files: dict[str, bytes]) -> None:
        """LATEST holds `files`, published as no version."""
        state = self.repos.setdefault(repo, _Repo())
        state.latest = _Tree(dict(files), "2026-11-26T11:00:00.000Z")
        self.blobs.update({hashlib.sha256(data).hexdigest(): data for data in files.values()})

    def set_alias(self, repo: str, alias: str, version: int, secondary: int | None = None) -> None:
        self.repos[repo].aliases[alias] = _Alias(version, secondary)

    def delete_version(self, repo: str, version: int) -> None:
        self.repos[repo].deleted.add(version)

    # The Backend protocol.

    def resolve(self, repo: str, ref: int | str, routing_key: str | None) -> Target:
        with self._lock:
            self.resolves.append((repo, ref, routing_key))
        state = self.repos.get(repo)
        if state is None:
            raise RepoNotFound(f"no artifact {repo}")
        if ref == LATEST:
            if state.latest is None:
                raise RevisionNotFound(f"{repo} has no LATEST")
            newest = max(state.versions, default=None)
            if newest is not None and state.versions[newest].digest == state.latest.digest:
                return self._target(newest, state.versions[newest])
            return self._target(None, state.latest)
        if isinstance(ref, str):
            ref = self._alias(repo, state, ref)
        if ref not in state.versions or ref in state.deleted:
            raise RevisionNotFound(f"{repo} has no version {ref}")
        return self._target(ref, state.versions[ref])

    def files(
        self, repo: str, target: Target, prefix: str, limit: int, token: str | None
    ) -> tuple[list[FileEntry], str | None]:
        tree = self._tree(repo, target)
        paths = sorted((p for p in tree.files if p.startswith(prefix)), key=str.encode)
        start = int(token or 0)
        page = paths[start : start + limit]
        entries = [FileEntry(p, hashlib.sha256(tree.files[p]).hexdigest(), len(tree.files[p])) for p in page]
        return entries, str(start + limit) if start + limit < len(paths) else None

    def file(self, repo: str, target: Target, path: str) -> tuple[FileEntry, str]:
        tree = self._tree(repo, target)
        if path not in tree.files:
            raise EntryNotFound(f"{repo} has no file {path!r}")
        sha256 = hashlib.sha256(tree.files[path]).hexdigest()
        return FileEntry(path, sha256, len(tree.files[path])), f"{self.blob_url}/{sha256}?X-Amz-Signature=fake"

    # Inside.

    def _alias(self, repo: str, state: _Repo, name: str) -> int:
        alias = state.aliases.get(name)
        if alias is None:
            raise RevisionNotFound(f"{repo} has no alias {name}")
        if alias.secondary is None:
            return alias.version
        with self._lock:
            flip = self._flip[(repo, name)] = not self._flip.get((repo, name), False)
        return alias.secondary if flip else alias.version

    def _tree(self, repo: str, target: Target) -> _Tree:
        state = self.repos[repo]
        if target.version is not None:
            return state.versions[target.version]
        assert state.latest is not None and state.latest.digest == target.sha256
        return state.latest

    @staticmethod
    def _target(version: int | None, tree: _Tree) -> Target:
        size = sum(len(data) for data in tree.files.values())
        return Target(version, tree.digest, size, created_at=tree.created_at, updated_at=tree.created_at)


@dataclass
class Servers:
    hub: FakeHub
    endpoint: str  # what the client is given as its endpoint (with the mount path)
    requests: list[tuple[str, str]]  # (method, path with query) the dispatcher received
    blob_requests: list[str]


@contextmanager
def running(hub: FakeHub, mount: str = "/hf") -> Iterator[Servers]:
    """The dispatcher under `mount` on one port, the blob store on another; both stopped at the end."""
    received: list[tuple[str, str]] = []
    fetched: list[str] = []
    blobs = ThreadingHTTPServer(("127.0.0.1", 0), _blob_handler(hub, fetched))
    hub.blob_url = f"http://127.0.0.1:{blobs.server_address[1]}"
    api = ThreadingHTTPServer(("127.0.0.1", 0), _hub_handler(hub, mount, received))
    endpoint = f"http://127.0.0.1:{api.server_address[1]}{mount}"
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in (blobs, api)]
    for thread in threads:
        thread.start()
    try:
        yield Servers(hub, endpoint, received, fetched)
    finally:
        for server in (api, blobs):
            server.shutdown()
            server.server_close()


class _Quiet(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # the tests read what was received instead
        pass


def _hub_handler(hub: FakeHub, mount: str, received: list[tuple[str, str]]) -> type[BaseHTTPRequestHandler]:
    class Handler(_Quiet):
        def _answer(self) -> None:
            received.append((self.command, self.path))
            url = urlsplit(self.path)
            if not url.path.startswith(mount + "/"):
                self.send_error(404)
                return
            host = self.headers.get("Host", "")
            request = Request(
                method=self.command,
                path=url.path[len(mount) :],
                base_url=f"http://{host}{mount}",
                query=dict(parse_qsl(url.query)),
                routing_key=self.headers.get("X-Caller", "anonymous"),
            )
            answer = serve(request, hub)
            self.send_response(answer.status)
            for name, value in answer.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(answer.body)))
            self.end_headers()
            if answer.body:
                self.wfile.write(answer.body)

        do_GET = do_HEAD = do_POST = _answer

    return Handler


def _blob_handler(hub: FakeHub, fetched: list[str]) -> type[BaseHTTPRequestHandler]:
    class Handler(_Quiet):
        def _answer(self) -> None:
            sha256 = urlsplit(self.path).path.strip("/")
            fetched.append(sha256)
            data = hub.blobs.get(sha256)
            if data is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Content-Type", "application/octet-stream")
            self.end_headers()
            if self.command == "GET":
                self.wfile.write(data)

        do_GET = do_HEAD = _answer

    return Handler
