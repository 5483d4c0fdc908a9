"""The Python SDK: `Client`, one method per API operation plus the publish and download workflows.

Content is never held in memory: files are hashed in 1 MiB chunks, uploaded as a streamed body with a
Content-Length straight to the presigned S3 URL, and downloaded chunk by chunk into a temporary file that
replaces the destination only once its sha256 and size are verified.

A publish records the file's name in the version's metadata (`filename`), and a download without a
destination writes to that name, as a browser keeps the name a server suggests.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import json
import mimetypes
import os
import secrets
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, TypeVar
from urllib.parse import quote

import requests
from botocore.credentials import Credentials
from botocore.exceptions import ProfileNotFound
from botocore.session import Session as BotocoreSession

from arca_client._version import __version__
from arca_client.calls.retention import RetentionCalls
from arca_client.config import DEFAULT_ENDPOINT as DEFAULT_ENDPOINT  # re-exported: it was defined here
from arca_client.config import resolve_endpoint
from arca_client.errors import (
    ArcaError,
    ChecksumMismatchError,
    NotFoundError,
    PreconditionFailedError,
    TransportError,
)
from arca_client.models import (
    LATEST,
    Alias,
    AliasRevision,
    ArtifactSummary,
    BlobRef,
    Downloaded,
    Event,
    Link,
    ListEntry,
    Page,
    Promotion,
    PruneResult,
    Published,
    Ref,
    Resolution,
    Rollout,
    UploadTarget,
    Version,
    VersionHit,
)
from arca_client.transport import (
    RetryPolicy,
    Signer,
    Transport,
    encode_query,
    missing_profile,
    region_for,
    should_sign,
)

CHUNK = 1024 * 1024
# The metadata key a publish records the file's name under (the key grammar allows it: [a-z0-9][a-z0-9_.-]*).
FILENAME_KEY = "filename"
# (phase, bytes done, bytes total); phases are "hash", "upload" and "download".
ProgressFn = Callable[[str, int, int], None]
Source = str | os.PathLike[str] | IO[bytes]
T = TypeVar("T")


class _Unset:
    """The default of an argument whose None means "clear it"."""


UNSET = _Unset()


# The caller a local server should record (local mode has no authentication; a deployed API ignores it).
LOCAL_USER_HEADER = "X-Arca-Local-User"
LOCAL_USER_ENV = "ARCA_LOCAL_USER"


class Client(RetentionCalls):
    """A client of one Arca API.

    `endpoint` is a URL or the name of an endpoint in arca's config file; it defaults to $ARCA_ENDPOINT
    (the same), then the config file's current endpoint, then the local server (see `arca_client.config`).
    A configured endpoint brings its region and profile unless they are given here. Requests are
    SigV4-signed (service execute-api, the standard AWS credential chain) unless the endpoint is this
    machine; `sign` or ARCA_SIGN=1/0 forces either way. `local_user` (default $ARCA_LOCAL_USER) names the caller
    to a local server (header X-Arca-Local-User); a deployed API ignores it. Every method raises an `ArcaError`
    subclass on failure.
    """

    def __init__(
        self,
        endpoint: str | None = None,
        *,
        sign: bool | None = None,
        region: str | None = None,
        profile: str | None = None,
        credentials: Credentials | None = None,
        session: requests.Session | None = None,
        retry: RetryPolicy | None = None,
        timeout: float | tuple[float, float] = (10.0, 120.0),
        sleep: Callable[[float], None] = time.sleep,
        jitter: Callable[[float], float] | None = None,
        local_user: str | None = None,
    ) -> None:
        self.target = resolve_endpoint(endpoint)
        self.local_user = local_user or os.environ.get(LOCAL_USER_ENV) or None
        self.endpoint = self.target.url
        region = region or self.target.region
        source = "given with --profile" if profile else f"the configured endpoint {self.target.name!r} names it"
        profile = profile or self.target.profile
        self.signed = should_sign(self.endpoint, sign)
        signer = None
        if self.signed:
            botocore_session = BotocoreSession(profile=profile) if profile else BotocoreSession()
            try:
                signer = Signer(
                    region_for(self.endpoint, region, botocore_session),
                    credentials=credentials,
                    session=botocore_session,
                )
            except ProfileNotFound:
                raise missing_profile(profile, source) from None
        self.session = session or requests.Session()
        extra = {"jitter": jitter} if jitter is not None else {}
        self.transport = Transport(
            session=self.session,
            signer=signer,
            retry=retry or RetryPolicy(),
            timeout=timeout,
            sleep=sleep,
            user_agent=f"arca-client/{__version__}",
            **extra,
        )

    def close(self) -> None:
        self.session.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- plumbing -----------------------------------------------------------------------------

    def _call(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
        idempotent: bool | None = None,
    ) -> tuple[Any, requests.structures.CaseInsensitiveDict[str]]:
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
    ) -> tuple[Any, requests.structures.CaseInsensitiveDict[str]]:
        """A write under one Idempotency-Key for all its attempts: a retry after a lost answer (a timeout, a
        dropped connection, a 503) gets the first answer back instead of making a second change."""
        keyed = {**(headers or {}), "Idempotency-Key": str(uuid.uuid4())}
        return self._call(method, path, body=body, headers=keyed, idempotent=True)

    def _get(self, path: str, query: Mapping[str, Any] | None = None) -> Any:
        return self._call("GET", path, query=query)[0]

    def _pages(
        self, path: str, key: str, parse: Callable[[dict[str, Any]], T], query: Mapping[str, Any]
    ) -> Iterator[T]:
        """Follow next_token to the end, one page at a time (lazily: stop iterating, stop fetching)."""
        token: str | None = None
        while True:
            data = self._get(path, {**query, "next_token": token})
            for item in data.get(key) or []:
                yield parse(item)
            new = data.get("next_token")
            if not new:
                return
            if new == token:
                raise ArcaError(f"GET {path} returned the same next_token twice", code="PaginationLoop")
            token = new

    # ---- artifacts ----------------------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        return dict(self._get("/health"))

    def get_artifact(self, name: str) -> ArtifactSummary:
        """LATEST, the newest version number and counts. NotFoundError if there is no such artifact."""
        return ArtifactSummary.from_dict(self._get(_artifact(name)))

    def list_artifacts(
        self, prefix: str = "", *, delimiter: str | None = "/", limit: int | None = None, next_token: str | None = None
    ) -> Page[ListEntry]:
        """One page of names under `prefix`; with delimiter "/", deeper names come back as prefixes ("a/")."""
        data = self._get(
            "/artifacts", {"prefix": prefix, "delimiter": delimiter, "limit": limit, "next_token": next_token}
        )
        return Page(_entries(data), data.get("next_token"))

    def iter_artifacts(
        self, prefix: str = "", *, delimiter: str | None = "/", page_size: int | None = None
    ) -> Iterator[ListEntry]:
        """Every artifact (and, with a delimiter, every prefix) under `prefix`, across pages."""
        token: str | None = None
        while True:
            page = self.list_artifacts(prefix, delimiter=delimiter, limit=page_size, next_token=token)
            yield from page.items
            if not page.next_token or page.next_token == token:
                return
            token = page.next_token

    def purge(self, name: str, *, force: bool = False) -> None:
        """Delete the artifact, its versions, aliases and content. ConflictError while aliases exist unless `force`.

        A large artifact may take several requests: the API answers 202 while work remains, and the same
        DELETE continues it, so this repeats it until the purge is done.
        """
        while True:
            data, _ = self._call("DELETE", _artifact(name), query={"force": True} if force else None)
            if not (isinstance(data, dict) and data.get("status") == "purging"):
                return

    # ---- links --------------------------------------------------------------------------------

    def link(self, name: str, target: str) -> Link:
        """Make `name` a link to the artifact `target`, or re-point it.

        ConflictError when `name` is an artifact or `target` is a link; NotFoundError when `target` does not
        exist. Safe to repeat (the same target again changes nothing).
        """
        data, _ = self._call("PUT", _artifact(name, "link"), body={"target": target}, idempotent=True)
        return Link.from_dict(data)

    def unlink(self, name: str) -> None:
        """Remove the link `name` (never its target). NotFoundError when `name` is not a link."""
        self._call("DELETE", _artifact(name, "link"))

    # ---- content: upload, LATEST, publish -----------------------------------------------------

    def create_upload(self, name: str, sha256: str, size: int) -> UploadTarget:
        """Where to upload a blob (`exists` when it is stored already). Safe to repeat."""
        data, _ = self._call("POST", _artifact(name, "uploads"), body={"sha256": sha256, "size": size}, idempotent=True)
        return UploadTarget.from_dict(data)

    def upload(self, name: str, source: Source, *, progress: ProgressFn | None = None) -> tuple[BlobRef, bool]:
        """Hash `source` and upload it unless stored already; (blob, whether bytes were sent)."""
        with _opened(source, progress) as (stream, start, blob):
            return blob, self._upload_blob(name, stream, start, blob, progress)

    def _upload_blob(
        self, name: str, stream: IO[bytes], start: int, blob: BlobRef, progress: ProgressFn | None
    ) -> bool:
        target = self.create_upload(name, blob.sha256, blob.size)
        if target.exists:
            return False
        if not target.url:
            raise ArcaError("the upload answer has no URL", code="BadResponse")
        size = blob.size

        def body() -> Any:
            # A fresh, rewound body per attempt: a retried PUT must send every byte again.
            stream.seek(start)
            return _ChunkReader(stream, size, progress) if size else b""

        headers = {**target.headers, "Content-Length": str(size)}
        try:
            response = self.transport.send(
                target.method, target.url, headers=headers, body_factory=body, sign=False, idempotent=True
            )
        except PreconditionFailedError:
            # The URL signs `If-None-Match: *`: the blob's key (its sha256) holds an object already, stored by
            # an earlier attempt whose answer was lost or by another uploader; publishing verifies it.
            if target.headers.get("If-None-Match") != "*":
                raise
            return False
        # S3 stores an object only with a 200. A redirect (307 from an endpoint that does not serve the
        # bucket yet) stored nothing, and following it would resend a body signed for another host.
        if response.status_code != 200:
            status = response.status_code
            response.close()
            raise ArcaError(
                f"the upload was not stored: S3 answered {status} to the presigned PUT; request a new upload",
                code="UploadNotStored",
                status=status,
            )
        return True

    def set_latest(
        self,
        name: str,
        sha256: str,
        size: int,
        *,
        content_type: str | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> Version:
        """Point LATEST at an uploaded blob (creates the artifact). ConflictError if the blob is not uploaded."""
        body = _content(sha256, size, content_type, metadata)
        data, _ = self._write("PUT", _artifact(name, "latest"), body=body)
        return Version.from_dict(data)

    def publish(
        self,
        name: str,
        source: Source,
        *,
        content_type: str | None = None,
        metadata: Mapping[str, str] | None = None,
        filename: str | None = None,
        force: bool = False,
        progress: ProgressFn | None = None,
    ) -> Published:
        """Hash, upload (skipped when the blob is stored), and publish in one step: a new version, or the newest
        one with `deduplicated` when its content is the same (unless `force`).

        `source` is a path or a binary file object (read from its current position; a non-seekable one is
        spooled to a temporary file while it is hashed). `filename` (default: a path's base name; "" for
        none) is recorded in the metadata under "filename" unless `metadata` has that key, and names the file
        a download without a destination writes. `content_type` defaults to a guess from that file name.
        """
        if filename is None and isinstance(source, str | os.PathLike):
            filename = os.path.basename(os.fspath(source))
        if content_type is None and filename:
            content_type = guess_content_type(filename)
        if filename:
            metadata = {FILENAME_KEY: filename, **(metadata or {})}
        with _opened(source, progress) as (stream, start, blob):
            uploaded = self._upload_blob(name, stream, start, blob, progress)
        body = _content(blob.sha256, blob.size, content_type, metadata)
        if force:
            body["force"] = True
        data, _ = self._write("POST", _artifact(name, "versions"), body=body)
        return Published(Version.from_dict(data), deduplicated=bool(data.get("deduplicated")), uploaded=uploaded)

    def publish_latest(self, name: str, *, force: bool = False) -> Published:
        """Snapshot LATEST as a new version (deduplicated like `publish`). NotFoundError if there is no LATEST."""
        data, _ = self._write("POST", _artifact(name, "versions"), body={"force": True} if force else None)
        return Published(Version.from_dict(data), deduplicated=bool(data.get("deduplicated")))

    # ---- versions -----------------------------------------------------------------------------

    def get_version(self, name: str, version: int | str = LATEST) -> Version:
        return Version.from_dict(self._get(_artifact(name, "versions", str(version))))

    def list_versions(
        self,
        name: str,
        *,
        order: str = "desc",
        include_deleted: bool = False,
        limit: int | None = None,
        next_token: str | None = None,
        tags: Mapping[str, str] | None = None,
        sha256: str | None = None,
        created_after: datetime | None = None,
        created_before: datetime | None = None,
    ) -> Page[Version]:
        """One page of versions; the filters (tags, content, creation time) combine with AND."""
        query = {
            "order": order,
            "include_deleted": include_deleted,
            "limit": limit,
            "next_token": next_token,
            **_filters(tags, sha256, created_after, created_before),
        }
        data = self._get(_artifact(name, "versions"), query)
        return Page([Version.from_dict(v) for v in data.get("versions") or []], data.get("next_token"))

    def iter_versions(
        self,
        name: str,
        *,
        order: str = "desc",
        include_deleted: bool = False,
        page_size: int | None = None,
        tags: Mapping[str, str] | None = None,
        sha256: str | None = None,
        created_after: datetime | None = None,
        created_before: datetime | None = None,
    ) -> Iterator[Version]:
        """Every version (matching the filters), newest first by default, fetched a page at a time."""
        query = {
            "order": order,
            "include_deleted": include_deleted,
            "limit": page_size,
            **_filters(tags, sha256, created_after, created_before),
        }
        return self._pages(_artifact(name, "versions"), "versions", Version.from_dict, query)

    # ---- tags and search ----------------------------------------------------------------------

    def tag_version(self, name: str, version: int, tags: Mapping[str, str | None]) -> Version:
        """Merge `tags` into the version's (None removes a key); soft-deleted versions too. Returns the version."""
        data, _ = self._call("PATCH", _artifact(name, "versions", str(version)), body={"tags": dict(tags)})
        return Version.from_dict(data)

    def update_artifact(
        self, name: str, *, tags: Mapping[str, str | None] | None = None, description: str | _Unset | None = UNSET
    ) -> ArtifactSummary:
        """Merge `tags` into the artifact's (None removes a key) and set its description (None clears it)."""
        body: dict[str, Any] = {}
        if tags is not None:
            body["tags"] = dict(tags)
        if not isinstance(description, _Unset):
            body["description"] = description
        data, _ = self._call("PATCH", _artifact(name), body=body)
        return ArtifactSummary.from_dict(data)

    def search_versions(
        self,
        *,
        sha256: str | None = None,
        tag: tuple[str, str] | None = None,
        limit: int | None = None,
        next_token: str | None = None,
    ) -> Page[VersionHit]:
        """One page of every version in the registry holding the content `sha256`, or the tag (key, value)."""
        query = {**_filters(dict([tag]) if tag else None, sha256, None, None), "limit": limit, "next_token": next_token}
        data = self._get("/versions", query)
        return Page([VersionHit.from_dict(v) for v in data.get("versions") or []], data.get("next_token"))

    def iter_search_versions(
        self, *, sha256: str | None = None, tag: tuple[str, str] | None = None, page_size: int | None = None
    ) -> Iterator[VersionHit]:
        """`search_versions` across every page."""
        query = {**_filters(dict([tag]) if tag else None, sha256, None, None), "limit": page_size}
        return self._pages("/versions", "versions", VersionHit.from_dict, query)

    def iter_search_artifacts(self, tag: tuple[str, str], *, page_size: int | None = None) -> Iterator[ListEntry]:
        """Every artifact whose own tags hold the tag (key, value), in name order."""
        query = {**_filters(dict([tag]), None, None, None), "limit": page_size}
        return self._pages("/artifacts", "artifacts", lambda a: ListEntry(str(a["name"])), query)

    def delete_version(self, name: str, version: int) -> Version:
        """Soft-delete (idempotent). ConflictError (code VersionPinnedError, details["aliases"]) while aliased."""
        return Version.from_dict(self._call("DELETE", _artifact(name, "versions", str(version)))[0])

    def restore_version(self, name: str, version: int) -> Version:
        """Undo a soft delete (idempotent)."""
        path = _artifact(name, "versions", str(version), "restore")
        return Version.from_dict(self._call("POST", path, idempotent=True)[0])

    def prune(
        self, name: str, *, keep_last: int, older_than_days: int | None = None, dry_run: bool = False
    ) -> PruneResult:
        """Soft-delete old versions, never the newest `keep_last` nor an aliased one; what it deleted (or would).

        The API prunes a bounded number of versions a request and hands back a `next_token` while more remain:
        this follows it to the end and returns everything done.
        """
        body: dict[str, Any] = {"keep_last": keep_last, "dry_run": dry_run}
        if older_than_days is not None:
            body["older_than_days"] = older_than_days
        data, _ = self._write("POST", _artifact(name, "prune"), body=body)
        merged = dict(data)
        while data.get("next_token"):
            token = data["next_token"]
            data, _ = self._write("POST", _artifact(name, "prune"), body={**body, "next_token": token})
            if data.get("next_token") == token:
                raise ArcaError(f"prune of {name} returned the same next_token twice", code="PaginationLoop")
            merged["deleted"] = [*merged.get("deleted", []), *data.get("deleted", [])]
            merged["skipped"] = [*merged.get("skipped", []), *data.get("skipped", [])]
        merged["next_token"] = None
        return PruneResult.from_dict(merged)

    # ---- aliases ------------------------------------------------------------------------------

    def set_alias(
        self,
        name: str,
        alias: str,
        version: int | str,
        *,
        secondary_version: int | str | None = None,
        secondary_version_weight: int | None = None,
        description: str | None = None,
        reason: str | None = None,
        expected_version: int | str | None = None,
        if_revision: int | None = None,
        create_only: bool = False,
    ) -> Alias:
        """Create or move an alias (a new revision). `secondary_version_weight` is the % routed to the secondary.

        Conditional forms raise PreconditionFailedError when they do not hold: `if_revision` (If-Match),
        `create_only` (If-None-Match: *), `expected_version` (the alias still points at that version).
        """
        body: dict[str, Any] = {"version": version}
        optional = {
            "secondary_version": secondary_version,
            "secondary_version_weight": secondary_version_weight,
            "description": description,
            "reason": reason,
            "expected_version": expected_version,
        }
        body.update({k: v for k, v in optional.items() if v is not None})
        headers: dict[str, str] = {}
        if if_revision is not None:
            headers["If-Match"] = f'"{if_revision}"'
        if create_only:
            headers["If-None-Match"] = "*"
        data, response_headers = self._write("PUT", _alias(name, alias), body=body, headers=headers)
        return Alias.from_dict(data or {}, name=name, alias=alias, etag=response_headers.get("ETag"))

    def get_alias(self, name: str, alias: str) -> Alias:
        data, headers = self._call("GET", _alias(name, alias))
        return Alias.from_dict(data, name=name, alias=alias, etag=headers.get("ETag"))

    def list_aliases(self, name: str, *, limit: int | None = None, next_token: str | None = None) -> Page[Alias]:
        data = self._get(_artifact(name, "aliases"), {"limit": limit, "next_token": next_token})
        return Page([Alias.from_dict(a, name=name) for a in data.get("aliases") or []], data.get("next_token"))

    def iter_aliases(self, name: str, *, page_size: int | None = None) -> Iterator[Alias]:
        return self._pages(
            _artifact(name, "aliases"), "aliases", lambda a: Alias.from_dict(a, name=name), {"limit": page_size}
        )

    def delete_alias(self, name: str, alias: str, *, if_revision: int | None = None) -> None:
        """Delete an alias (the deletion is kept in its history)."""
        headers = {"If-Match": f'"{if_revision}"'} if if_revision is not None else None
        self._call("DELETE", _alias(name, alias), headers=headers)

    def alias_history(
        self, name: str, alias: str, *, limit: int | None = None, next_token: str | None = None
    ) -> Page[AliasRevision]:
        data = self._get(_alias(name, alias, "history"), {"limit": limit, "next_token": next_token})
        return Page([AliasRevision.from_dict(r) for r in data.get("history") or []], data.get("next_token"))

    def iter_alias_history(self, name: str, alias: str, *, page_size: int | None = None) -> Iterator[AliasRevision]:
        """Every revision of the alias, newest first."""
        return self._pages(_alias(name, alias, "history"), "history", AliasRevision.from_dict, {"limit": page_size})

    # ---- events -------------------------------------------------------------------------------

    def list_events(
        self, name: str, *, after: str | None = None, limit: int | None = None, next_token: str | None = None
    ) -> Page[Event]:
        """One page of the artifact's events, oldest first, after the event id `after`."""
        data = self._get(_artifact(name, "events"), {"after": after, "limit": limit, "next_token": next_token})
        return Page([Event.from_dict(e) for e in data.get("events") or []], data.get("next_token"))

    def iter_events(self, name: str, *, after: str | None = None, page_size: int | None = None) -> Iterator[Event]:
        """Every event after `after` (default: from the first), oldest first, each once."""
        return self._pages(_artifact(name, "events"), "events", Event.from_dict, {"after": after, "limit": page_size})

    def follow_events(
        self,
        name: str,
        *,
        after: str | None = None,
        poll: float = 1.0,
        max_poll: float = 15.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> Iterator[Event]:
        """The events after `after`, then each new one as it is committed, forever (stop iterating to stop).

        Polls with `after` = the last id seen, so no event is missed or repeated; an empty poll doubles the
        pause (from `poll` up to `max_poll` seconds), an event brings it back to `poll`.
        """
        pause = poll
        while True:
            came = False
            for event in self.iter_events(name, after=after):
                came = True
                after = event.id
                yield event
            pause = poll if came else min(pause * 2, max_poll)
            sleep(pause)

    def rollback_alias(
        self, name: str, alias: str, *, to_revision: int | None = None, reason: str | None = None
    ) -> Alias:
        """A new revision with the target of `to_revision` (default: the revision before the current one)."""
        body: dict[str, Any] = {}
        if to_revision is not None:
            body["to_revision"] = to_revision
        if reason is not None:
            body["reason"] = reason
        data, headers = self._write("POST", _alias(name, alias, "rollback"), body=body)
        return Alias.from_dict(data or {}, name=name, alias=alias, etag=headers.get("ETag"))

    # ---- rollouts -----------------------------------------------------------------------------

    def start_rollout(
        self,
        name: str,
        alias: str,
        version: int,
        *,
        steps: list[int],
        interval_seconds: int,
        alarms: list[str] | None = None,
        reason: str | None = None,
    ) -> Rollout:
        """Start a progressive rollout: `version` as the alias's canary at each weight of `steps` in turn,
        `interval_seconds` apart, then its primary; any of `alarms` in ALARM before a step rolls it back.

        Not retried after a lost answer: a second start would meet the first rollout (409).
        """
        body: dict[str, Any] = {"version": version, "steps": list(steps), "interval_seconds": interval_seconds}
        if alarms:
            body["alarms"] = list(alarms)
        if reason is not None:
            body["reason"] = reason
        data, _ = self._call("PUT", _alias(name, alias, "rollout"), body=body, idempotent=False)
        return Rollout.from_dict(data or {})

    def get_rollout(self, name: str, alias: str) -> Rollout:
        """The alias's latest rollout (NotFoundError when it never had one)."""
        return Rollout.from_dict(self._get(_alias(name, alias, "rollout")))

    def abort_rollout(self, name: str, alias: str) -> Rollout:
        """Abort the running rollout: the alias keeps its primary and loses the canary."""
        data, _ = self._call("DELETE", _alias(name, alias, "rollout"), idempotent=False)
        return Rollout.from_dict(data or {})

    def watch_rollout(
        self,
        name: str,
        alias: str,
        *,
        poll_seconds: float = 2.0,
        on_change: Callable[[Rollout], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> Rollout:
        """Poll the rollout until it has ended; `on_change` sees each new step or state. Returns the last."""
        last: tuple[str, int] | None = None
        while True:
            rollout = self.get_rollout(name, alias)
            if (rollout.state, rollout.step) != last:
                last = (rollout.state, rollout.step)
                if on_change is not None:
                    on_change(rollout)
            if not rollout.running:
                return rollout
            sleep(poll_seconds)

    def promote(self, name: str, source: str, target: str, *, reason: str | None = None) -> Promotion:
        """Point `target` at the version `source` points at (its primary; a canary on `source` is not copied).

        The write is conditional on `target` being unchanged since it was read (If-Match on its revision, or
        create-only when it does not exist yet), so a concurrent change is a PreconditionFailedError rather
        than a silent overwrite. Nothing is written when `target` already points there without a canary.
        """
        src = self.get_alias(name, source)
        if src.version is None:
            raise ArcaError(f"alias {source!r} points at nothing", code="BadResponse")
        try:
            previous: Alias | None = self.get_alias(name, target)
        except NotFoundError:
            previous = None
        if previous is not None and previous.version == src.version and previous.secondary_version is None:
            return Promotion(source=src, previous=previous, alias=previous, changed=False)
        expected = previous.version if previous is not None and previous.revision is None else None
        alias = self.set_alias(
            name,
            target,
            src.version,
            description=previous.description if previous is not None else None,
            reason=reason or f"promoted from {source} (version {src.version})",
            if_revision=previous.revision if previous is not None else None,
            expected_version=expected,
            create_only=previous is None,
        )
        return Promotion(source=src, previous=previous, alias=alias, changed=True)

    # ---- resolve and download -----------------------------------------------------------------

    def resolve(
        self, name: str, ref: Ref = LATEST, *, routing_key: str | None = None, at: datetime | str | None = None
    ) -> Resolution:
        """One concrete version and a short-lived download URL for a version number, LATEST or an alias.

        With `routing_key` the canary choice is deterministic; `at` resolves an alias as it stood then.
        """
        if isinstance(at, datetime):
            at = (at if at.tzinfo else at.replace(tzinfo=UTC)).astimezone(UTC).isoformat().replace("+00:00", "Z")
        data = self._get(_artifact(name, "resolve", str(ref)), {"routing_key": routing_key, "at": at})
        return Resolution.from_dict(data)

    def download(
        self,
        name: str,
        ref: Ref = LATEST,
        dest: str | os.PathLike[str] | IO[bytes] | None = None,
        *,
        routing_key: str | None = None,
        progress: ProgressFn | None = None,
        overwrite: bool = True,
    ) -> Downloaded:
        """Resolve `ref` and download it to `dest`, verifying size and sha256.

        `dest` is a path, a directory or a binary file object; without one (or in a directory) the file is named
        by `download_filename`. A path is written through a temporary file in the same directory and renamed
        over `dest` only once verified, so a failed download never leaves a partial or wrong file.
        ChecksumMismatchError on mismatch; FileExistsError if the file exists and not `overwrite` (checked
        before the download and again, atomically, when the file is put in place).
        """
        if isinstance(dest, str | os.PathLike):
            _check_destination(dest)  # before any request: a typo in a path fails at once
        resolution = self.resolve(name, ref, routing_key=routing_key)
        return self.download_resolved(resolution, dest, progress=progress, overwrite=overwrite)

    def download_resolved(
        self,
        resolution: Resolution,
        dest: str | os.PathLike[str] | IO[bytes] | None = None,
        *,
        progress: ProgressFn | None = None,
        overwrite: bool = True,
    ) -> Downloaded:
        if dest is not None and not isinstance(dest, str | os.PathLike):
            self._fetch(resolution, dest, progress)
            return Downloaded(resolution, None)
        path = Path(dest) if dest is not None else None
        if dest is not None:
            _check_destination(dest)
        if path is None or path.is_dir():
            path = (path or Path()) / self.download_filename(resolution)
        if not overwrite and path.exists():
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(path))
        partial = path.with_name(f".{path.name}.{secrets.token_hex(4)}.part")
        # os.open with 0o666 lets the umask decide the mode, as for any file the user creates.
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            with os.fdopen(fd, "wb") as out:
                self._fetch(resolution, out, progress)
            if overwrite:
                os.replace(partial, path)
            else:
                _move_no_clobber(partial, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                partial.unlink()
            raise
        return Downloaded(resolution, str(path))

    def download_filename(self, resolution: Resolution) -> str:
        """The file name recorded when the version was published (metadata "filename"), else the last segment
        of the artifact's name. A recorded name that is a path, hidden, or not printable is not used."""
        fallback = resolution.name.rsplit("/", 1)[-1]
        try:
            version = self.get_version(resolution.name, resolution.version)
        except NotFoundError:
            return fallback
        if version.sha256 != resolution.sha256:  # LATEST moved since it was resolved: not its name
            return fallback
        return safe_filename(version.metadata.get(FILENAME_KEY)) or fallback

    def _fetch(self, resolution: Resolution, out: IO[bytes], progress: ProgressFn | None) -> None:
        response = self.transport.send("GET", resolution.download_url, sign=False, stream=True)
        digest = hashlib.sha256()
        done = 0
        total = resolution.size
        if progress:
            progress("download", 0, total)
        try:
            with response:
                for chunk in response.iter_content(CHUNK):
                    digest.update(chunk)
                    out.write(chunk)
                    done += len(chunk)
                    if progress:
                        progress("download", done, total)
        except (requests.ConnectionError, requests.exceptions.ChunkedEncodingError, requests.Timeout) as lost:
            raise TransportError(
                f"download of {resolution.name} version {resolution.version} broke off after {done} bytes: {lost}",
                code="ConnectionError",
            ) from lost
        if done != total or digest.hexdigest() != resolution.sha256:
            raise ChecksumMismatchError(
                f"downloaded {done} bytes with sha256 {digest.hexdigest()}, expected {total} bytes with sha256 "
                f"{resolution.sha256}",
                code="ChecksumMismatch",
            )


class _ChunkReader:
    """A streamed request body: iterates `size` bytes of a file in 1 MiB chunks and reports progress.

    `__len__` lets requests send a Content-Length (S3 refuses chunked uploads to presigned URLs).
    """

    def __init__(self, stream: IO[bytes], size: int, progress: ProgressFn | None) -> None:
        self.stream = stream
        self.size = size
        self.progress = progress

    def __len__(self) -> int:
        return self.size

    def __iter__(self) -> Iterator[bytes]:
        sent = 0
        if self.progress:
            self.progress("upload", 0, self.size)
        while sent < self.size:
            chunk = self.stream.read(min(CHUNK, self.size - sent))
            if not chunk:
                raise ArcaError(f"the file shrank while uploading ({sent} of {self.size} bytes)", code="SourceChanged")
            sent += len(chunk)
            if self.progress:
                self.progress("upload", sent, self.size)
            yield chunk


@contextlib.contextmanager
def _opened(source: Source, progress: ProgressFn | None) -> Iterator[tuple[IO[bytes], int, BlobRef]]:
    """Open `source`, hash it in chunks, and yield (seekable stream, start offset, blob) for the upload."""
    if isinstance(source, str | os.PathLike):
        with open(source, "rb") as stream:
            total = os.fstat(stream.fileno()).st_size
            yield stream, 0, _hash(stream, total, progress)
        return
    if _seekable(source):
        start = source.tell()
        total = source.seek(0, os.SEEK_END) - start
        source.seek(start)
        yield source, start, _hash(source, total, progress)
        return
    # A pipe can be read once: spool it to disk (not memory) while hashing, then upload from the spool.
    with tempfile.TemporaryFile() as spool:
        digest = hashlib.sha256()
        size = 0
        for chunk in iter(lambda: source.read(CHUNK), b""):
            digest.update(chunk)
            spool.write(chunk)
            size += len(chunk)
        yield spool, 0, BlobRef(digest.hexdigest(), size)


def _hash(stream: IO[bytes], total: int | None, progress: ProgressFn | None) -> BlobRef:
    digest = hashlib.sha256()
    size = 0
    for chunk in iter(lambda: stream.read(CHUNK), b""):
        digest.update(chunk)
        size += len(chunk)
        if progress and total:
            progress("hash", size, total)
    return BlobRef(digest.hexdigest(), size)


def _seekable(stream: IO[bytes]) -> bool:
    try:
        return bool(stream.seekable())
    except (AttributeError, ValueError, io.UnsupportedOperation):
        return False


def _content(sha256: str, size: int, content_type: str | None, metadata: Mapping[str, str] | None) -> dict[str, Any]:
    body: dict[str, Any] = {"sha256": sha256, "size": size}
    if content_type is not None:
        body["content_type"] = content_type
    if metadata is not None:
        body["metadata"] = dict(metadata)
    return body


def _artifact(name: str, *suffix: str) -> str:
    # Names keep their slashes in paths (the API reads them from the right); other parts are one segment.
    # ":" is left as is (RFC 3986 allows it in a segment), so a ref sha256:<hex> reaches the API verbatim.
    return "/".join((f"/artifacts/{quote(name, safe='/')}", *(quote(s, safe=":") for s in suffix)))


def guess_content_type(filename: str | os.PathLike[str]) -> str | None:
    """The content type a file name suggests (mimetypes' strict table), or None: unknown, or compressed
    (`.tar.gz` is a gzip stream, not a tar file), which the registry then stores as application/octet-stream."""
    guessed, encoding = mimetypes.guess_type(os.fspath(filename), strict=True)
    return guessed if encoding is None else None


def safe_filename(recorded: str | None) -> str | None:
    """`recorded` if it is a plain file name to write in the current directory, else None.

    The name comes from whoever published the version, so it must not reach elsewhere: no directory parts,
    no "." or "..", no hidden file, no control characters.
    """
    if not recorded or any(c in recorded for c in "/\\") or recorded.startswith("."):
        return None
    if any(ord(c) < 32 or ord(c) == 127 for c in recorded) or len(recorded.encode()) > 255:
        return None
    return recorded


def _check_destination(dest: str | os.PathLike[str]) -> None:
    """FileNotFoundError naming the directory a destination needs, when it is not there: `nodir/` is a
    directory, never a file called nodir, and `nodir/x.zip` fails naming nodir/, not the temporary file."""
    text = os.fspath(dest)
    path = Path(text)
    if text.endswith(("/", os.sep)):
        if not path.is_dir():
            raise FileNotFoundError(errno.ENOENT, "no such directory", text)
        return
    if not path.is_dir() and not path.parent.is_dir():
        raise FileNotFoundError(errno.ENOENT, "no such directory", f"{path.parent}{os.sep}")


def _move_no_clobber(partial: Path, path: Path) -> None:
    """Rename `partial` to `path` unless `path` exists, atomically where the file system has hard links."""
    try:
        os.link(partial, path)
    except FileExistsError:
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(path)) from None
    except OSError:  # no hard links here (some network and FAT file systems): check, then rename
        if path.exists():
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(path)) from None
        os.replace(partial, path)
        return
    partial.unlink()


def _filters(
    tags: Mapping[str, str] | None, sha256: str | None, after: datetime | None, before: datetime | None
) -> dict[str, Any]:
    """Query parameters of the version filters. A tag is sent as `key=value`: keys never contain `=`."""
    return {
        "tag": [f"{k}={v}" for k, v in (tags or {}).items()] or None,
        "sha256": sha256,
        "created_after": None if after is None else _iso(after),
        "created_before": None if before is None else _iso(before),
    }


def _iso(moment: datetime) -> str:
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).isoformat()


def _alias(name: str, alias: str, *suffix: str) -> str:
    return _artifact(name, "aliases", alias, *suffix)


def _entries(data: dict[str, Any]) -> list[ListEntry]:
    """Artifacts and prefixes of one page, merged in name order (as a directory listing shows them)."""
    entries = [
        ListEntry(str(a["name"]), link=a.get("link")) if isinstance(a, dict) else ListEntry(str(a))
        for a in data.get("artifacts") or []
    ]
    entries += [ListEntry(str(p), is_prefix=True) for p in data.get("prefixes") or []]
    return sorted(entries, key=lambda e: (e.name, e.is_prefix))
