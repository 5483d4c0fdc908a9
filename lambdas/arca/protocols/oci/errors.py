"""OCI's errors: the body `{"errors": [{code, message, detail}]}`, the codes, and the status of each.

The codes are those of the OCI Distribution Specification v1.1 ("Error Codes"), with `TAG_INVALID` from the Docker
registry API it grew out of (distribution/distribution answers it, and clients know it). The statuses are those of
the reference registry, except where the specification says otherwise: a chunk out of order is 416, an oversize
manifest 413.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

# code -> (HTTP status, default message)
CODES: dict[str, tuple[int, str]] = {
    "BLOB_UNKNOWN": (404, "blob unknown to registry"),
    "BLOB_UPLOAD_INVALID": (400, "blob upload invalid"),
    "BLOB_UPLOAD_UNKNOWN": (404, "blob upload unknown to registry"),
    "DIGEST_INVALID": (400, "provided digest did not match uploaded content"),
    "MANIFEST_BLOB_UNKNOWN": (400, "manifest references a manifest or blob unknown to registry"),
    "MANIFEST_INVALID": (400, "manifest invalid"),
    "MANIFEST_UNKNOWN": (404, "manifest unknown to registry"),
    "NAME_INVALID": (400, "invalid repository name"),
    "NAME_UNKNOWN": (404, "repository name not known to registry"),
    "SIZE_INVALID": (400, "provided length did not match content length"),
    "TAG_INVALID": (400, "manifest tag did not match URI"),
    "UNAUTHORIZED": (401, "authentication required"),
    "DENIED": (403, "requested access to the resource is denied"),
    "UNSUPPORTED": (405, "the operation is unsupported"),
    "TOOMANYREQUESTS": (429, "too many requests"),
}
ERROR_CONTENT_TYPE = "application/json"


@dataclass(frozen=True)
class ErrorEntry:
    """One entry of an error body."""

    code: str
    message: str
    detail: Any = None

    def to_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.detail is not None:
            entry["detail"] = self.detail
        return entry


@dataclass
class OciError(Exception):
    """An OCI error answer: one or more entries and the status they share (that of the first code, unless given).

    Raise `OciError.of(code, message, detail)`; a refusal with several causes (each unknown blob of a manifest,
    each violated alias rule) is one error of several entries, as the reference registry answers it.
    """

    entries: tuple[ErrorEntry, ...]
    status: int
    headers: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.entries:
            raise ValueError("an OciError needs at least one entry")
        super().__init__(self.entries[0].message)

    @classmethod
    def of(cls, code: str, message: str | None = None, detail: Any = None, *, status: int | None = None) -> OciError:
        default_status, default_message = CODES[code]
        entry = ErrorEntry(code, message or default_message, detail)
        return cls((entry,), status or default_status)

    @classmethod
    def many(cls, entries: list[ErrorEntry], *, status: int | None = None) -> OciError:
        return cls(tuple(entries), status or CODES[entries[0].code][0])

    @property
    def code(self) -> str:
        return self.entries[0].code

    @property
    def message(self) -> str:
        return self.entries[0].message

    def body(self) -> bytes:
        return error_body(list(self.entries))


def entry(code: str, message: str | None = None, detail: Any = None) -> ErrorEntry:
    """An entry with the code's default message when none is given."""
    return ErrorEntry(code, message or CODES[code][1], detail)


def error_body(entries: list[ErrorEntry]) -> bytes:
    return json.dumps({"errors": [e.to_json() for e in entries]}, separators=(",", ":")).encode()


# The refusals that several modules raise, spelled once.


def range_invalid(offset: int, message: str) -> OciError:
    """A chunk that does not start where the upload ends (416); `Range` says where it does."""
    error = OciError.of("BLOB_UPLOAD_INVALID", message, {"offset": offset}, status=416)
    error.headers["Range"] = upload_range(offset)
    return error


def upload_range(offset: int) -> str:
    """The `Range` header of an upload holding `offset` bytes: `0-<last byte>`. An empty upload says `0-0`, as the
    reference registry does (the specification has no spelling for no bytes, and clients read only the end)."""
    return f"0-{max(offset - 1, 0)}"


def too_large(what: str, size: int, limit: int, hint: str = "") -> OciError:
    """A body over a limit: SIZE_INVALID as 413 (Payload Too Large), naming the limit and what to do instead."""
    message = f"the {what} is {size} bytes, over the limit of {limit} bytes"
    return OciError.of("SIZE_INVALID", f"{message}{'; ' + hint if hint else ''}", {"limit": limit}, status=413)
