"""Artifacts: the summary, the listing, the description and tags, links, and purge."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from arca_client.calls.http import HttpCalls, artifact_path, paged
from arca_client.models import ArtifactSummary, Link, ListEntry, Page, Purged


class _Unset:
    """The default of an argument whose None means "clear it"."""


UNSET = _Unset()


class ArtifactCalls(HttpCalls):
    def health(self) -> dict[str, Any]:
        return dict(self._get("/health"))

    def get_artifact(self, name: str) -> ArtifactSummary:
        """LATEST, the newest version number and counts. NotFoundError if there is no such artifact."""
        return ArtifactSummary.from_dict(self._get(artifact_path(name)))

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
        query = {"prefix": prefix, "delimiter": delimiter, "limit": page_size}
        for data in paged("GET /artifacts", lambda token: self._get("/artifacts", {**query, "next_token": token})):
            yield from _entries(data)

    def purge(self, name: str, *, force: bool = False) -> Purged:
        """Delete the artifact, its versions, aliases and content. ConflictError while aliases or live consumer
        leases exist unless `force`, which releases the leases: the answer counts and names them.

        A large artifact may take several requests: the API answers 202 while work remains, and the same
        DELETE continues it, so this repeats it until the purge is done.
        """
        count = 0
        released: list[str] = []
        while True:
            data, headers = self._call("DELETE", artifact_path(name), query={"force": True} if force else None)
            count += int(headers.get("Arca-Released-Leases") or 0)
            released.extend(c for c in (headers.get("Arca-Released-Consumers") or "").split(",") if c)
            if not (isinstance(data, dict) and data.get("status") == "purging"):
                return Purged(name, released_count=count, released_consumers=sorted(set(released)))

    def create_artifact(
        self, name: str, description: str | None = None, tags: Mapping[str, str] | None = None
    ) -> ArtifactSummary:
        """Create `name` with no version yet, with its description and tags; its first publish is version 1.
        ConflictError (field name) when it exists; safe to retry (one Idempotency-Key for every attempt)."""
        body: dict[str, Any] = {}
        if description is not None:
            body["description"] = description
        if tags:
            body["tags"] = dict(tags)
        data, _ = self._write("PUT", artifact_path(name), body=body)
        return ArtifactSummary.from_dict(data)

    def update_artifact(
        self, name: str, *, tags: Mapping[str, str | None] | None = None, description: str | _Unset | None = UNSET
    ) -> ArtifactSummary:
        """Merge `tags` into the artifact's (None removes a key) and set its description (None clears it)."""
        body: dict[str, Any] = {}
        if tags is not None:
            body["tags"] = dict(tags)
        if not isinstance(description, _Unset):
            body["description"] = description
        data, _ = self._call("PATCH", artifact_path(name), body=body)
        return ArtifactSummary.from_dict(data)

    def link(self, name: str, target: str) -> Link:
        """Make `name` a link to the artifact `target`, or re-point it.

        ConflictError when `name` is an artifact or `target` is a link; NotFoundError when `target` does not
        exist. Safe to repeat (the same target again changes nothing).
        """
        data, _ = self._call("PUT", artifact_path(name, "link"), body={"target": target}, idempotent=True)
        return Link.from_dict(data)

    def unlink(self, name: str) -> None:
        """Remove the link `name` (never its target). NotFoundError when `name` is not a link."""
        self._call("DELETE", artifact_path(name, "link"))


def _entries(data: dict[str, Any]) -> list[ListEntry]:
    """Artifacts and prefixes of one page, merged in name order (as a directory listing shows them)."""
    entries = [
        ListEntry.from_dict(a) if isinstance(a, dict) else ListEntry(str(a)) for a in data.get("artifacts") or []
    ]
    entries += [ListEntry(str(p), is_prefix=True) for p in data.get("prefixes") or []]
    return sorted(entries, key=lambda e: (e.name, e.is_prefix))
