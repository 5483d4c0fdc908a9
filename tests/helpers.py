"""Test helpers shared by the integration and end-to-end suites."""

from __future__ import annotations

import hashlib
import importlib
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import requests

from local.events import api_event, lambda_context, response_body, response_headers

FAKE_AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
    "POWERTOOLS_TRACE_DISABLED": "true",
    "POWERTOOLS_METRICS_NAMESPACE": "Arca",
    "POWERTOOLS_SERVICE_NAME": "arca-test",
    "POWERTOOLS_DEV": "false",
}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class Reply:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def error(self) -> dict[str, Any]:
        return self.body["error"]  # type: ignore[no-any-return]


class HandlerApi:
    """Calls the real handlers with the API Gateway proxy events the deployed API would send."""

    def call(
        self,
        method: str,
        path: str,
        json_body: Any = None,
        *,
        raw: bytes | str | None = None,
        headers: dict[str, str] | None = None,
        query: dict[str, str] | None = None,
    ) -> Reply:
        body = raw if raw is not None else (None if json_body is None else json.dumps(json_body))
        event, function = api_event(
            method,
            path,
            body=body,
            headers={"Content-Type": "application/json", **(headers or {})},
            query={k: [v] for k, v in (query or {}).items()},
        )
        module = importlib.import_module(f"arca.handlers.{function or 'resolve'}")
        response = module.handler(event, lambda_context(function or "resolve"))
        data = response_body(response)
        return Reply(response["statusCode"], json.loads(data) if data else None, response_headers(response))

    def upload(self, name: str, data: bytes) -> str:
        """POST …/uploads then PUT the bytes to the presigned URL with the headers it names."""
        digest = sha256(data)
        reply = self.call("POST", f"/artifacts/{name}/uploads", {"sha256": digest, "size": len(data)})
        assert reply.status in (200, 201), reply.body
        if not reply.body["exists"]:
            upload = reply.body["upload"]
            put = requests.put(upload["url"], data=data, headers=upload["headers"], timeout=30)
            assert put.status_code == 200, put.text
        return digest

    def set_latest(self, name: str, data: bytes, **extra: Any) -> Reply:
        digest = self.upload(name, data)
        return self.call("PUT", f"/artifacts/{name}/latest", {"sha256": digest, "size": len(data), **extra})

    def publish(self, name: str, data: bytes | None = None, **extra: Any) -> Reply:
        if data is None:
            return self.call("POST", f"/artifacts/{name}/versions", extra or None)
        digest = self.upload(name, data)
        return self.call("POST", f"/artifacts/{name}/versions", {"sha256": digest, "size": len(data), **extra})


def path_quote(name: str) -> str:
    return quote(name, safe="/")
