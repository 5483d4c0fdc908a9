"""The one way the tests call Arca's API: a door over a transport.

The transport differs, the door is the same. `handlers` (tests.helpers.HandlerApi) sends each request to the
real handlers in this process, as API Gateway would (local.events: the proxy event, the function's role,
Lambda's payload limits) and answers a `Reply`; `http` (tests.e2e.conftest.ArcaHttp) sends it to a running
local server and answers a `requests.Response`. What a client does around the API, the upload dance (ask
where, PUT the bytes to the presigned URL as curl would), publishing and setting LATEST, is written once,
here, for both.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from typing import Any, Generic, TypeVar

import requests

Answer = TypeVar("Answer")
# What curl adds to `-X PUT --data-binary @file` unless a -H overrides it; moto stores an empty object for a
# form-urlencoded PUT, so an upload that forgot its Content-Type must fail in every suite.
CURL_DEFAULT_HEADERS = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "*/*"}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def put_blob(upload: dict[str, Any], data: bytes) -> None:
    """PUT `data` where an upload answer says, with the headers it names, as `curl -X PUT --data-binary` would."""
    assert upload["method"] == "PUT", upload
    headers = {**CURL_DEFAULT_HEADERS, **upload["headers"]}
    put = requests.put(upload["url"], data=data, headers=headers, timeout=60)
    assert put.status_code == 200, put.text


class Door(ABC, Generic[Answer]):
    """Arca's API as the tests call it; a subclass is a transport (how a request travels, what it answers)."""

    @abstractmethod
    def send(self, method: str, path: str, body: Any = None) -> Answer:
        """`method path` with `body` as JSON (none when None), as the caller `arca:local`."""

    @abstractmethod
    def status_of(self, answer: Answer) -> int: ...

    @abstractmethod
    def json_of(self, answer: Answer) -> Any: ...

    def upload(self, name: str, data: bytes) -> str:
        """POST …/uploads, then PUT the bytes unless the registry already holds them. Returns their sha256."""
        digest = sha256(data)
        answer = self.send("POST", f"/artifacts/{name}/uploads", {"sha256": digest, "size": len(data)})
        body = self.json_of(answer)
        assert self.status_of(answer) in (200, 201), body
        if not body["exists"]:
            assert self.status_of(answer) == 201, body
            put_blob(body["upload"], data)
        return digest

    def set_latest(self, name: str, data: bytes, **fields: Any) -> Answer:
        """Upload `data`, then PUT …/latest on it with `fields` (content_type, metadata, …)."""
        digest = self.upload(name, data)
        return self.send("PUT", f"/artifacts/{name}/latest", {"sha256": digest, "size": len(data), **fields})

    def publish(self, name: str, data: bytes | None = None, **fields: Any) -> Answer:
        """Upload `data` and publish it in one step, or (no data) publish LATEST as it stands, with `fields`."""
        if data is None:
            return self.send("POST", f"/artifacts/{name}/versions", fields or None)
        digest = self.upload(name, data)
        return self.send("POST", f"/artifacts/{name}/versions", {"sha256": digest, "size": len(data), **fields})

    def published(self, name: str, data: bytes, **fields: Any) -> int:
        """Publish `data` as a new version (201) and return its number."""
        answer = self.publish(name, data, **fields)
        assert self.status_of(answer) == 201, self.json_of(answer)
        return int(self.json_of(answer)["version"])
