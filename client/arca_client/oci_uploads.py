"""OCI blob uploads that `arca proxy` answers itself, so a blob of any size reaches Arca.

One request's body is bounded (about 4.4 MiB through Lambda), so a larger blob cannot go through `/v2/` to the API.
The proxy keeps the upload sessions here instead: `POST /v2/<name>/blobs/uploads/` opens one (or, with `?digest=`
and a body, uploads the blob whole), `PATCH` appends a chunk (`Content-Range`, when given, must start where the
upload ends: 416 otherwise), `GET` says how far it is (`Range`), `DELETE` cancels, and `PUT …?digest=` closes it.
The bytes are spooled to a temporary file and hashed as they arrive; on closing, the digest is checked here
(`DIGEST_INVALID` 400 when it is not the bytes') and the content is uploaded for the artifact `name` as `arca
publish` uploads it (one presigned PUT to S3, in parts from 64 MiB up), where the registry's blob HEAD and a
manifest push find it by digest. The answers are the registry's: 201 with `Location` and `Docker-Content-Digest`,
202 with `Location`, `Range` and `Docker-Upload-UUID`, errors in OCI's shape. Session ids are the proxy's own.
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
import threading
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import IO, Any
from urllib.parse import parse_qs, urlsplit

from arca_client.errors import ArcaError

# `/v2/<name>/blobs/uploads/` (upload id empty) or `/v2/<name>/blobs/uploads/<id>`.
UPLOADS_PATH = re.compile(r"/v2/(?P<name>[^?#]+?)/blobs/uploads/?(?P<id>[^/?#]*)")
_CONTENT_RANGE = re.compile(r"(?:bytes[ =])?([0-9]+)-([0-9]+)(?:/(?:[0-9]+|\*))?")
_SHA256 = re.compile(r"sha256:[0-9a-f]{64}")
_API_VERSION = ("Docker-Distribution-API-Version", "registry/2.0")
_STATUS_CODES = {401: "UNAUTHORIZED", 403: "DENIED", 404: "NAME_UNKNOWN", 429: "TOOMANYREQUESTS"}


@dataclass
class Answer:
    """What the proxy answers: a status, headers and a (small) body."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


class OciRefusal(Exception):
    """A refusal in OCI's error shape."""

    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers or {}

    def answer(self) -> Answer:
        body = json.dumps({"errors": [{"code": self.code, "message": self.message, "detail": {}}]}).encode()
        headers = {"Content-Type": "application/json", **self.headers}
        return Answer(self.status, headers, body)


def upload_range(size: int) -> str:
    """`Range` of an upload holding `size` bytes, as the registry spells it (`0-0` when empty)."""
    return f"0-{max(size - 1, 0)}"


class _Session:
    def __init__(self, name: str, upload_id: str) -> None:
        self.name, self.id = name, upload_id
        self.file: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 -- closed when the session ends
        self.hash = hashlib.sha256()
        self.size = 0
        self.lock = threading.Lock()

    def append(self, chunks: Iterable[bytes]) -> None:
        for chunk in chunks:
            self.file.write(chunk)
            self.hash.update(chunk)
            self.size += len(chunk)

    def close(self) -> None:
        self.file.close()


class Uploads:
    """The proxy's OCI upload sessions; `store(name, file)` uploads verified content for the artifact `name`."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self._sessions: dict[str, _Session] = {}
        self._lock = threading.Lock()

    @staticmethod
    def matches(method: str, target: str) -> bool:
        """Whether the request is one of the blob upload requests answered here."""
        parts = urlsplit(target)
        found = UPLOADS_PATH.fullmatch(parts.path)
        if found is None or method not in ("POST", "PATCH", "PUT", "GET", "DELETE"):
            return False
        if not found["id"]:
            return method == "POST" and "mount" not in parse_qs(parts.query)  # a cross-repository mount: the API's
        return method != "POST"

    def handle(self, method: str, target: str, headers: Any, body: Iterable[bytes], length: int | None) -> Answer:
        """Answer one upload request (`matches` it); `body` is its chunks, `length` its Content-Length if known."""
        try:
            answer = self._handle(method, target, headers, body, length)
        except OciRefusal as refused:
            answer = refused.answer()
        answer.headers.setdefault("Content-Length", str(len(answer.body)))
        answer.headers[_API_VERSION[0]] = _API_VERSION[1]
        return answer

    def close(self) -> None:
        with self._lock:
            sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            session.close()

    def _handle(self, method: str, target: str, headers: Any, body: Iterable[bytes], length: int | None) -> Answer:
        parts = urlsplit(target)
        found = UPLOADS_PATH.fullmatch(parts.path)
        assert found is not None
        name, upload_id = found["name"], found["id"]
        digest = parse_qs(parts.query).get("digest", [None])[0]
        if not upload_id:  # POST: a session, or the whole blob with ?digest=
            session = _Session(name, uuid.uuid4().hex)
            if digest is None:
                _drain(body)
                with self._lock:
                    self._sessions[session.id] = session
                return Answer(202, self._progress(session))
            try:
                session.append(body)
                return self._finish(session, digest)
            finally:
                session.close()
        session = self._session(name, upload_id)
        with session.lock:
            if method == "GET":
                return Answer(204, self._progress(session))
            if method == "DELETE":
                self._end(session)
                return Answer(204)
            start = _content_range(headers.get("Content-Range"), length)
            if start is not None and start != session.size:
                raise OciRefusal(
                    416,
                    "BLOB_UPLOAD_INVALID",
                    f"the chunk starts at byte {start} but the upload holds {session.size} bytes",
                    {"Range": upload_range(session.size), "Location": _location(session)},
                )
            session.append(body)
            if method == "PATCH":
                return Answer(202, self._progress(session))
            if digest is None:
                raise OciRefusal(
                    400, "DIGEST_INVALID", "the closing PUT of an upload names the blob's digest: ?digest=<digest>"
                )
            try:
                return self._finish(session, digest)
            finally:
                self._end(session)

    def _session(self, name: str, upload_id: str) -> _Session:
        with self._lock:
            session = self._sessions.get(upload_id)
        if session is None or session.name != name:
            raise OciRefusal(404, "BLOB_UPLOAD_UNKNOWN", f"no upload session {upload_id!r} of {name!r}")
        return session

    def _end(self, session: _Session) -> None:
        with self._lock:
            self._sessions.pop(session.id, None)
        session.close()

    def _finish(self, session: _Session, digest: str) -> Answer:
        if not _SHA256.fullmatch(digest):
            raise OciRefusal(400, "DIGEST_INVALID", f"{digest!r} is not a sha256 digest (sha256:<64 hex digits>)")
        actual = "sha256:" + session.hash.hexdigest()
        if actual != digest:
            raise OciRefusal(400, "DIGEST_INVALID", f"the uploaded bytes are {actual}, not {digest}")
        session.file.seek(0)
        try:
            self.client.upload_content(session.name, session.file)
        except ArcaError as error:
            status = error.status if error.status and 400 <= error.status < 600 else 502
            raise OciRefusal(status, _STATUS_CODES.get(status, "UNKNOWN"), error.message) from None
        location = f"/v2/{session.name}/blobs/{digest}"
        return Answer(201, {"Location": location, "Docker-Content-Digest": digest})

    @staticmethod
    def _progress(session: _Session) -> dict[str, str]:
        return {"Location": _location(session), "Range": upload_range(session.size), "Docker-Upload-UUID": session.id}


def _location(session: _Session) -> str:
    return f"/v2/{session.name}/blobs/uploads/{session.id}"


def _drain(body: Iterable[bytes]) -> None:
    for _ in body:
        pass


def _content_range(value: str | None, length: int | None) -> int | None:
    """Where a chunk starts, from `Content-Range: <start>-<end>` (inclusive); None when absent. A malformed range,
    or one whose length is not the body's, is 416."""
    if value is None or not value.strip():
        return None
    match = _CONTENT_RANGE.fullmatch(value.strip())
    if not match or int(match[2]) < int(match[1]):
        raise OciRefusal(416, "BLOB_UPLOAD_INVALID", f"Content-Range {value!r} must be <start>-<end>")
    start, end = int(match[1]), int(match[2])
    if length is not None and end - start + 1 != length:
        raise OciRefusal(
            416, "BLOB_UPLOAD_INVALID", f"Content-Range {value!r} is {end - start + 1} bytes but the body is {length}"
        )
    return start
