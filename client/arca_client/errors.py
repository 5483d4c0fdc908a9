"""Exceptions of the SDK: one base class carrying the API's error code, subclasses chosen by HTTP status.

The API answers errors as `{"error": {"code", "message", "request_id", "field"?, ...details}}` (API Gateway's
own refusals are templated into the same shape); S3 answers XML. Both become an `ArcaError`; callers catch
a subclass by meaning (`NotFoundError`) and read `.code` when they need the exact reason.
"""

from __future__ import annotations

import json
import re
from typing import Any


class ArcaError(Exception):
    """Base of every error the SDK raises.

    `code` is the API's stable error code (e.g. `VersionPinnedError`) or a client-side one
    (`ConnectionError`, `ChecksumMismatch`, ...); `status` is the HTTP status (None when no response came);
    `details` holds any extra fields of the error body (e.g. `aliases` for a pinned version).
    """

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        status: int | None = None,
        field: str | None = None,
        request_id: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or type(self).__name__
        self.status = status
        self.field = field
        self.request_id = request_id
        self.details = details or {}

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, status={self.status!r}, message={self.message!r})"


class ValidationError(ArcaError):
    """400: bad input; `field` names it. Nothing was written."""


class AccessDeniedError(ArcaError):
    """401/403: the caller is not signed, not allowed, or signed with the wrong region or clock."""


class NotFoundError(ArcaError):
    """404: no such artifact, version, alias or route."""


class ConflictError(ArcaError):
    """409: the request does not fit the current state (pinned version, aliases present, contention)."""


class PreconditionFailedError(ArcaError):
    """412: If-Match / If-None-Match / expected_version did not hold; re-read and decide again."""


class PayloadTooLargeError(ArcaError):
    """413: over the size limit of one upload."""


class ThrottledError(ArcaError):
    """429/503: still throttled after the SDK's retries."""


class ServerError(ArcaError):
    """5xx other than 503."""


class TransportError(ArcaError):
    """No response: connection refused, reset or timed out (after retries where that was safe)."""


class ChecksumMismatchError(ArcaError):
    """Downloaded bytes do not match the sha256 or size the registry promised; the file was not kept."""


class CredentialsError(ArcaError):
    """Signing was required but the AWS credential chain found no credentials (or no region)."""


_BY_STATUS: dict[int, type[ArcaError]] = {
    400: ValidationError,
    401: AccessDeniedError,
    403: AccessDeniedError,
    404: NotFoundError,
    409: ConflictError,
    412: PreconditionFailedError,
    413: PayloadTooLargeError,
    429: ThrottledError,
    503: ThrottledError,
}
_XML_FIELD = re.compile(r"<(Code|Message|RequestId)>([^<]*)</\1>")


def error_class(status: int) -> type[ArcaError]:
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    return ServerError if status >= 500 else ArcaError


def from_response(status: int, body: bytes, headers: dict[str, str] | None = None) -> ArcaError:
    """The exception for an error response: the spec's JSON shape, S3's XML, or whatever came back.

    Never raises itself: a body it cannot read still gives the status's class with a generic code.
    """
    headers = {k.lower(): v for k, v in (headers or {}).items()}
    request_id = headers.get("x-amzn-requestid") or headers.get("x-amz-request-id")
    code: str | None = None
    message = ""
    field: str | None = None
    details: dict[str, Any] = {}
    try:
        data = json.loads(body) if body else None
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        error = dict(data["error"])
        code = _str(error.pop("code", None))
        message = _str(error.pop("message", None)) or ""
        field = _str(error.pop("field", None))
        request_id = _str(error.pop("request_id", None)) or request_id
        details = error
    elif isinstance(data, dict) and "message" in data:
        # API Gateway's default shape, should an error escape the gateway responses' template.
        code = headers.get("x-amzn-errortype", "").split(":")[0] or None
        message = _str(data["message"]) or ""
    else:
        xml = dict(_XML_FIELD.findall(body[:4096].decode("utf-8", "replace")))
        code = xml.get("Code")
        message = xml.get("Message", "")
        request_id = xml.get("RequestId") or request_id
    cls = error_class(status)
    if not message:
        message = f"HTTP {status}"
    return cls(
        message, code=code or f"HTTP{status}", status=status, field=field, request_id=request_id, details=details
    )


def _str(value: object) -> str | None:
    return None if value is None else str(value)
