"""Versions: read, list with filters, soft-delete, restore and prune."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

from arca_client.calls.http import HttpCalls, artifact_path, iso, paged
from arca_client.models import LATEST, Page, PruneResult, Version


class VersionCalls(HttpCalls):
    def get_version(self, name: str, version: int | str = LATEST) -> Version:
        return Version.from_dict(self._get(artifact_path(name, "versions", str(version))))

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
            **filters(tags, sha256, created_after, created_before),
        }
        data = self._get(artifact_path(name, "versions"), query)
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
            **filters(tags, sha256, created_after, created_before),
        }
        return self._pages(artifact_path(name, "versions"), "versions", Version.from_dict, query)

    def delete_version(self, name: str, version: int) -> Version:
        """Soft-delete (idempotent). ConflictError (code VersionPinnedError, details["aliases"]) while aliased."""
        return Version.from_dict(self._call("DELETE", artifact_path(name, "versions", str(version)))[0])

    def restore_version(self, name: str, version: int) -> Version:
        """Undo a soft delete (idempotent)."""
        path = artifact_path(name, "versions", str(version), "restore")
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
        path = artifact_path(name, "prune")

        def step(token: str | None) -> Any:
            return self._write("POST", path, body={**body, "next_token": token} if token else body)[0]

        first: dict[str, Any] = {}
        deleted: list[Any] = []
        skipped: list[Any] = []
        for data in paged(f"prune of {name}", step):
            first = first or dict(data)
            deleted += data.get("deleted") or []
            skipped += data.get("skipped") or []
        return PruneResult.from_dict({**first, "deleted": deleted, "skipped": skipped, "next_token": None})


def filters(
    tags: Mapping[str, str] | None, sha256: str | None, after: datetime | None, before: datetime | None
) -> dict[str, Any]:
    """Query parameters of the version filters. A tag is sent as `key=value`: keys never contain `=`."""
    return {
        "tag": [f"{k}={v}" for k, v in (tags or {}).items()] or None,
        "sha256": sha256,
        "created_after": None if after is None else iso(after),
        "created_before": None if before is None else iso(before),
    }
