"""Ranged GETs of local S3 that read the range, not the whole object.

moto answers a GetObject by reading the key's whole value (`FakeKey.value`: a copy of its buffer, taken under the
key's lock) and then cuts the requested range out of it. A client downloading a large object in parts (Arca's
`download --parallel N`: one ranged GET per part) so made moto read the whole object once per part, one part at a
time: a 1 GiB download took five times its upload, and more parallel parts did not make it faster.

`install()` changes that for a GET with one byte range (`Range: bytes=a-b`, `a-` or `-n`), in this process (moto's
server in local mode and the in-process `mock_aws` of the tests alike): the request's key is handed to moto's
GetObject behind a thin proxy whose `value` reads nothing yet, and moto's own range handling (status 206,
`Content-Range`, 416 past the end, checksum headers left out) slices it, which reads just those bytes from the
key's buffer. Everything else moto decides as before; should any path of moto use the value whole (a range it
answers as a plain 200, `partNumber`), it is read whole then, as moto would. Requests without a range are
untouched.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from local.patching import once

# One range, as moto serves it; several ranges (a comma) or a malformed header are answered by moto whole.
_ONE_RANGE = re.compile(r"\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*")


def single_range(header: str | None) -> bool:
    """Whether `header` asks for one byte range (the only ranges read in place)."""
    found = _ONE_RANGE.fullmatch(header or "")
    return found is not None and any(found.groups())


class StoredBytes:
    """A key's bytes, read on demand: `len()` is the object's size, a slice reads that span of the key's buffer."""

    def __init__(self, key: Any) -> None:
        self.key = key

    def __len__(self) -> int:
        return int(self.key.size)

    def __bool__(self) -> bool:
        return len(self) > 0

    def __getitem__(self, span: slice) -> bytes:
        if not isinstance(span, slice):
            raise TypeError("StoredBytes are read by slices")
        start, stop, step = span.indices(len(self))
        if step != 1:
            raise ValueError("StoredBytes are read by contiguous slices")
        return read_span(self.key, start, max(0, stop - start))

    def whole(self) -> bytes:
        return self[:]


def read_span(key: Any, start: int, length: int) -> bytes:
    """`length` bytes of `key` from `start`. moto keeps a key's bytes in a SpooledTemporaryFile (in memory up to a
    few MiB, then on disk); reading it moves its position, so it is read under the key's own lock, as moto reads
    it."""
    buffer = key._value_buffer
    with key.lock:
        buffer.seek(start)
        return bytes(buffer.read(length))


class _KeyReadOnDemand:
    """The FakeKey moto's GetObject reads, with `value` not read yet; every other attribute is the key's."""

    def __init__(self, key: Any) -> None:
        self._key = key

    @property
    def value(self) -> StoredBytes:
        return StoredBytes(self._key)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._key, name)


def _ranged(handler: Callable[..., Any]) -> Callable[..., Any]:
    def key_response(self: Any, request: Any, full_url: str, headers: Any) -> Any:
        if request.method != "GET" or not single_range(request.headers.get("range")):
            return handler(self, request, full_url, headers)
        get_key = self._get_key

        def key_read_on_demand(*args: Any, **kwargs: Any) -> tuple[Any, bool]:
            key, not_modified = get_key(*args, **kwargs)
            return _KeyReadOnDemand(key), not_modified

        self._get_key = key_read_on_demand  # this request's instance only (moto makes one per request)
        status, answer_headers, body = handler(self, request, full_url, headers)
        if isinstance(body, StoredBytes):  # a path of moto that answers the whole object after all
            body = body.whole()
        return status, answer_headers, body

    key_response.__wrapped__ = handler  # type: ignore[attr-defined]
    return key_response


@once
def install() -> None:
    """Serve single-range GETs of this process's moto S3 from the range, as the module docstring says. Idempotent."""
    from moto.s3.responses import S3Response

    S3Response.key_response = _ranged(S3Response.key_response)  # type: ignore[method-assign]
