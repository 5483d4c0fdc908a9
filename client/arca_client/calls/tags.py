"""Tags and registry-wide search: tag a version, find versions by content or tag, artifacts by tag."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from arca_client.calls.http import HttpCalls, artifact_path
from arca_client.calls.versions import filters
from arca_client.models import ListEntry, Page, Version, VersionHit


class TagCalls(HttpCalls):
    def tag_version(self, name: str, version: int, tags: Mapping[str, str | None]) -> Version:
        """Merge `tags` into the version's (None removes a key); soft-deleted versions too. Returns the version."""
        data, _ = self._call("PATCH", artifact_path(name, "versions", str(version)), body={"tags": dict(tags)})
        return Version.from_dict(data)

    def search_versions(
        self,
        *,
        sha256: str | None = None,
        tag: tuple[str, str] | None = None,
        limit: int | None = None,
        next_token: str | None = None,
    ) -> Page[VersionHit]:
        """One page of every version in the registry holding the content `sha256`, or the tag (key, value)."""
        query = {**filters(dict([tag]) if tag else None, sha256, None, None), "limit": limit, "next_token": next_token}
        data = self._get("/versions", query)
        return Page([VersionHit.from_dict(v) for v in data.get("versions") or []], data.get("next_token"))

    def iter_search_versions(
        self, *, sha256: str | None = None, tag: tuple[str, str] | None = None, page_size: int | None = None
    ) -> Iterator[VersionHit]:
        """`search_versions` across every page."""
        query = {**filters(dict([tag]) if tag else None, sha256, None, None), "limit": page_size}
        return self._pages("/versions", "versions", VersionHit.from_dict, query)

    def iter_search_artifacts(self, tag: tuple[str, str], *, page_size: int | None = None) -> Iterator[ListEntry]:
        """Every artifact whose own tags hold the tag (key, value), in name order."""
        query = {**filters(dict([tag]), None, None, None), "limit": page_size}
        return self._pages("/artifacts", "artifacts", ListEntry.from_dict, query)
