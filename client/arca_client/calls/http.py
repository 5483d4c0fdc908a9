"""The HTTP core every call goes through: JSON in and out, one Idempotency-Key per logical write, and the one
paging loop (bounded, refusing a token it has followed already)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any, TypeVar
from urllib.parse import quote

import requests

from arca_client.errors import ArcaError
from arca_client.transport import Transport, encode_query

T = TypeVar("T")
Headers = requests.structures.CaseInsensitiveDict[str]

# The caller a local server should record (local mode has no authentication; a deployed API ignores it).
LOCAL_USER_HEADER = "X-Arca-Local-User"
# How many pages one listing may take before the client gives up: far beyond any real listing (a million
# versions at the API's default page size), so only a server that hands out new tokens forever reaches it.
MAX_PAGES = 100_000


class HttpCalls:
    """The plumbing of `Client`: what a call needs from the client is its endpoint, transport and caller."""

    endpoint: str
    transport: Transport
    local_user: str | None

    def _call(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
        idempotent: bool | None = None,
    ) -> tuple[Any, Headers]:
        """One API call: JSON in, JSON out (None for an empty answer), with the response headers."""
        url = self.endpoint + path
        encoded = encode_query(query)
        if encoded:
            url += "?" + encoded
        send_headers = {"Accept": "application/json", **(headers or {})}
        if self.local_user:
            send_headers[LOCAL_USER_HEADER] = self.local_user
        data = None
        if body is not None:
            data = json.dumps(body, separators=(",", ":")).encode()
            send_headers["Content-Type"] = "application/json"
        response = self.transport.send(method, url, headers=send_headers, body=data, idempotent=idempotent)
        if not response.content:
            return None, response.headers
        try:
            return response.json(), response.headers
        except ValueError:
            raise ArcaError(
                f"{method} {path}: the answer is not JSON (HTTP {response.status_code})",
                code="BadResponse",
                status=response.status_code,
            ) from None

    def _write(
        self, method: str, path: str, *, body: Any = None, headers: Mapping[str, str] | None = None
    ) -> tuple[Any, Headers]:
        """A write under one Idempotency-Key for all its attempts: a retry after a lost answer (a timeout, a
        dropped connection, a 503) gets the first answer back instead of making a second change."""
        keyed = {**(headers or {}), "Idempotency-Key": str(uuid.uuid4())}
        return self._call(method, path, body=body, headers=keyed, idempotent=True)

    def _get(self, path: str, query: Mapping[str, Any] | None = None) -> Any:
        return self._call("GET", path, query=query)[0]

    def _pages(
        self, path: str, key: str, parse: Callable[[dict[str, Any]], T], query: Mapping[str, Any]
    ) -> Iterator[T]:
        """Every item under `key` of a GET listing, across pages, lazily (stop iterating, stop fetching)."""
        for data in paged(f"GET {path}", lambda token: self._get(path, {**query, "next_token": token})):
            for item in data.get(key) or []:
                yield parse(item)


def paged(what: str, fetch: Callable[[str | None], Any], *, max_pages: int = MAX_PAGES) -> Iterator[dict[str, Any]]:
    """The pages of a listing (or of a write that works in pages), following next_token to the end.

    `fetch(token)` answers one page (token None for the first). A token seen before, on any earlier page, is
    a PaginationLoop error rather than an endless loop, and more than `max_pages` pages a PaginationLimit.
    """
    seen: set[str] = set()
    token: str | None = None
    for _ in range(max_pages):
        data = fetch(token) or {}
        yield data
        token = data.get("next_token")
        if not token:
            return
        if token in seen:
            raise ArcaError(f"{what} returned the same next_token twice", code="PaginationLoop")
        seen.add(token)
    raise ArcaError(f"{what} still had a next_token after {max_pages} pages", code="PaginationLimit")


def iso(moment: datetime) -> str:
    """ISO 8601 in UTC with a `Z`; a time without a zone is taken as UTC."""
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).isoformat().replace("+00:00", "Z")


def artifact_path(name: str, *suffix: str) -> str:
    # Names keep their slashes in paths (the API reads them from the right); other parts are one segment.
    # ":" is left as is (RFC 3986 allows it in a segment), so a ref sha256:<hex> reaches the API verbatim.
    return "/".join((f"/artifacts/{quote(name, safe='/')}", *(quote(s, safe=":") for s in suffix)))


def alias_path(name: str, alias: str, *suffix: str) -> str:
    return artifact_path(name, "aliases", alias, *suffix)
