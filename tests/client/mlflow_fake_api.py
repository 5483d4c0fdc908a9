"""A stand-in for the routes of Arca's API the MLflow plugin uses (an artifact created with no version, trees of files
among them), shaped as the API serves them: enough to run MLflow's own register and load flows through the plugin
without a server. One-segment names only; no policies, no canaries."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

NOW = "2026-11-26T10:00:00.000Z"


@dataclass
class _Artifact:
    name: str
    description: str | None = None
    tags: dict[str, str] = field(default_factory=dict)
    versions: dict[int, dict[str, Any]] = field(default_factory=dict)
    files: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    aliases: dict[str, int] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        newest = max(self.versions, default=None)
        return {
            "name": self.name,
            "latest": {"name": self.name, "version": "LATEST"},
            "newest_version": newest,
            "counts": {"versions": len(self.versions), "deleted_versions": 0, "aliases": len(self.aliases)},
            "created_at": NOW,
            "updated_at": NOW,
            "description": self.description,
            "tags": self.tags,
        }

    def version(self, number: int) -> dict[str, Any]:
        aliases = sorted(a for a, v in self.aliases.items() if v == number)
        return {**self.versions[number], "aliases": aliases}


class FakeApi:
    def __init__(self) -> None:
        self.artifacts: dict[str, _Artifact] = {}
        self.blobs: dict[str, bytes] = {}
        self.url = ""
        self.lock = threading.Lock()
        self.requests: list[tuple[str, str]] = []

    def answer(self, method: str, path: str, query: dict[str, str], body: Any, headers: dict[str, str]) -> tuple:
        parts = [unquote(p) for p in path.strip("/").split("/")]
        if parts[0] == "blobs":
            return self._blob(method, parts[1], body)
        name, rest = parts[1], parts[2:]
        artifact = self.artifacts.get(name)
        if method == "PUT" and not rest:
            if artifact is not None:
                error = {"code": "ConflictError", "message": f"{name} exists already", "field": "name", "exists": True}
                return 409, {"error": error}
            self.artifacts[name] = _Artifact(name, body.get("description"), dict(body.get("tags") or {}))
            return 201, self.artifacts[name].summary()
        if method == "POST" and rest == ["uploads"]:
            exists = body["sha256"] in self.blobs
            upload = {"url": f"{self.url}/blobs/{body['sha256']}", "method": "PUT", "headers": {}, "expires_at": NOW}
            return (200 if exists else 201), {"exists": exists, **body, "upload": None if exists else upload}
        if method == "POST" and rest == ["versions"]:
            artifact = self.artifacts.setdefault(name, _Artifact(name))
            return self._publish(artifact, body)
        if artifact is None:
            return 404, {"error": {"code": "NotFoundError", "message": f"no artifact {name}"}}
        return self._on(artifact, method, rest, query, body)

    def _on(self, artifact: _Artifact, method: str, rest: list[str], query: dict[str, str], body: Any) -> tuple:
        if method == "GET" and not rest:
            return 200, artifact.summary()
        if method == "PATCH" and not rest:
            if "description" in body:
                artifact.description = body["description"]
            _merge(artifact.tags, body.get("tags") or {})
            return 200, artifact.summary()
        if method == "GET" and rest == ["versions"]:
            numbers = sorted(artifact.versions, reverse=query.get("order", "desc") == "desc")
            limit = int(query.get("limit") or 100)
            return 200, {"versions": [artifact.version(n) for n in numbers[:limit]], "next_token": None}
        if rest[:1] == ["versions"] and len(rest) >= 2:
            number = int(rest[1])
            if number not in artifact.versions:
                return 404, {"error": {"code": "NotFoundError", "message": f"no version {number}"}}
            if method == "PATCH":
                _merge(artifact.versions[number]["tags"], body["tags"])
            if rest[2:] == ["files"]:
                listed = [f for f in artifact.files[number] if f["path"].startswith(query.get("prefix", ""))]
                return 200, {"files": listed, "next_token": None}
            return 200, artifact.version(number)
        if rest[:1] == ["resolve"] and rest[2:3] == ["files"]:
            path = "/".join(rest[3:])
            found = [f for f in artifact.files[int(rest[1])] if f["path"] == path]
            if not found:
                return 404, {"error": {"code": "NotFoundError", "message": f"no file {path}"}}
            located = f"{self.url}/blobs/{found[0]['sha256']}"
            return 302, {
                **found[0],
                "name": artifact.name,
                "ref": rest[1],
                "download_url": located,
                "Location": located,
            }
        if rest[:1] == ["resolve"]:
            if rest[1] == "LATEST" and not artifact.versions:
                return 404, {"error": {"code": "NotFoundError", "message": f"{artifact.name} has no version yet"}}
            number = max(artifact.versions) if rest[1] == "LATEST" else artifact.aliases.get(rest[1], 0)
            version = artifact.versions[int(rest[1]) if rest[1].isdigit() else number]
            located = f"{self.url}/blobs/{version['sha256']}"
            return 200, {**version, "ref": rest[1], "download_url": located, "route": "primary"}
        if rest[:1] == ["aliases"] and method == "GET" and len(rest) == 1:
            listed = [{"name": artifact.name, "alias": a, "version": v} for a, v in sorted(artifact.aliases.items())]
            return 200, {"aliases": listed, "next_token": None}
        if rest[:1] == ["aliases"] and method == "PUT":
            artifact.aliases[rest[1]] = int(body["version"])
            return 200, {"name": artifact.name, "alias": rest[1], "version": body["version"], "revision": 1}
        return 405, {"error": {"code": "MethodNotAllowed", "message": f"{method} /{'/'.join(rest)}"}}

    def _publish(self, artifact: _Artifact, body: dict[str, Any]) -> tuple:
        missing = [f["path"] for f in body["files"] if f["sha256"] not in self.blobs]
        if missing:
            return 400, {"error": {"code": "ValidationError", "message": f"not uploaded: {missing[0]}"}}
        files = sorted(body["files"], key=lambda f: f["path"].encode())
        manifest = json.dumps(
            {"files": [{k: f[k] for k in ("path", "sha256", "size")} for f in files]},
            sort_keys=True,
            separators=(",", ":"),
        )
        number = max(artifact.versions, default=0) + 1
        self.blobs[hashlib.sha256(manifest.encode()).hexdigest()] = manifest.encode()  # its document, as content
        artifact.files[number] = files
        artifact.versions[number] = {
            "name": artifact.name,
            "version": number,
            "sha256": hashlib.sha256(manifest.encode()).hexdigest(),
            "size": sum(f["size"] for f in files),
            "files": len(files),
            "content_type": "application/vnd.arca.tree+json",
            "metadata": dict(body.get("metadata") or {}),
            "created_at": NOW,
            "tags": {},
        }
        return 201, {**artifact.version(number), "deduplicated": False}

    def _blob(self, method: str, sha256: str, body: Any) -> tuple:
        if method == "PUT":
            assert hashlib.sha256(body).hexdigest() == sha256
            self.blobs[sha256] = body
            return 200, b""
        return 200, self.blobs[sha256]


def _merge(tags: dict[str, str], patch: dict[str, str | None]) -> None:
    for key, value in patch.items():
        if value is None:
            tags.pop(key, None)
        else:
            tags[key] = value


@contextmanager
def serving(api: FakeApi) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            url = urlsplit(self.path)
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body: Any = raw if url.path.startswith("/blobs/") else (json.loads(raw) if raw else {})
            with api.lock:
                api.requests.append((self.command, self.path))
                status, answer = api.answer(self.command, url.path, dict(parse_qsl(url.query)), body, {})
            payload = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
            self.send_response(status)
            if status == 302:
                self.send_header("Location", answer.pop("Location"))
                payload = json.dumps(answer).encode()  # the body is the resolution, as the API's
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_PUT = do_POST = do_PATCH = do_DELETE = _answer

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    api.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield api.url
    finally:
        server.shutdown()
        server.server_close()
