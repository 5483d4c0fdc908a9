"""The name a download is saved under, and the Content-Disposition header that carries it (pure; no I/O).

A version records the file it was published from in its metadata (`filename`, set by the CLI and SDK). That name
comes from whoever published, so it is used only when it is a plain file name; the header quotes it per RFC 6266
with an ASCII fallback and the exact name percent-encoded as UTF-8 (RFC 8187, formerly 5987).
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import quote

FILENAME_KEY = "filename"
_MAX_BYTES = 255


def recorded_filename(metadata: Mapping[str, str] | None) -> str | None:
    """The metadata's `filename` if it is a plain file name (no directory, not hidden, printable), else None."""
    name = (metadata or {}).get(FILENAME_KEY)
    if not name or any(c in name for c in "/\\") or name.startswith(".") or len(name.encode()) > _MAX_BYTES:
        return None
    if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in name):
        return None
    return name


def content_disposition(filename: str) -> str:
    """`attachment; filename="<ASCII>"; filename*=UTF-8''<percent-encoded>` (the second only when they differ)."""
    fallback = "".join(c if 32 <= ord(c) < 127 and c not in '"\\%' else "_" for c in filename)
    header = f'attachment; filename="{fallback}"'
    encoded = quote(filename, safe="!#$&+-.^_`|~")
    if encoded != fallback:
        header += f"; filename*=UTF-8''{encoded}"
    return header
