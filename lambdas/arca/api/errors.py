"""The one table from error class to HTTP status, and the spec's error body: shared by the Powertools apps
(arca.api.app) and the resolve function's hot path (arca.api.hot), so both answer an error alike."""

from __future__ import annotations

from typing import Any

from arca.domain.errors import (
    ConflictError,
    IdempotencyKeyReusedError,
    MethodNotAllowed,
    NotFoundError,
    NotYetImplementedError,
    PayloadTooLargeError,
    PolicyViolation,
    PreconditionFailedError,
    RegistryError,
    ThrottledError,
    UnsupportedMediaTypeError,
    ValidationError,
)

# The one content type of the API's bodies, its errors' among them.
JSON = "application/json"

# The one table from error class to HTTP status; subclasses inherit their base's status (MRO lookup).
STATUS: dict[type[RegistryError], int] = {
    ValidationError: 400,
    PolicyViolation: 403,
    NotFoundError: 404,
    ConflictError: 409,
    PreconditionFailedError: 412,
    IdempotencyKeyReusedError: 422,
    PayloadTooLargeError: 413,
    MethodNotAllowed: 405,
    UnsupportedMediaTypeError: 415,
    ThrottledError: 503,
    NotYetImplementedError: 501,
}


def status_of(error: RegistryError) -> int:
    return next((STATUS[c] for c in type(error).__mro__ if c in STATUS), 500)


def error_body(error: RegistryError, request_id: str) -> dict[str, Any]:
    """The spec's error shape: `{"error": {code, message, request_id, field?, …details}}`."""
    body: dict[str, Any] = {"code": error.code, "message": error.message, "request_id": request_id}
    if error.field:
        body["field"] = error.field
    body.update(error.details)
    return {"error": body}
