"""Aliases: set (conditionally), read, list, delete, their history, rollback and promotion."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from arca_client.calls.http import HttpCalls, alias_path, artifact_path
from arca_client.errors import ArcaError, NotFoundError
from arca_client.models import Alias, AliasRevision, Page, Promotion


class AliasCalls(HttpCalls):
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
        data, response_headers = self._write("PUT", alias_path(name, alias), body=body, headers=headers)
        return Alias.from_dict(data or {}, name=name, alias=alias, etag=response_headers.get("ETag"))

    def get_alias(self, name: str, alias: str) -> Alias:
        data, headers = self._call("GET", alias_path(name, alias))
        return Alias.from_dict(data, name=name, alias=alias, etag=headers.get("ETag"))

    def list_aliases(self, name: str, *, limit: int | None = None, next_token: str | None = None) -> Page[Alias]:
        data = self._get(artifact_path(name, "aliases"), {"limit": limit, "next_token": next_token})
        return Page([Alias.from_dict(a, name=name) for a in data.get("aliases") or []], data.get("next_token"))

    def iter_aliases(self, name: str, *, page_size: int | None = None) -> Iterator[Alias]:
        return self._pages(
            artifact_path(name, "aliases"), "aliases", lambda a: Alias.from_dict(a, name=name), {"limit": page_size}
        )

    def delete_alias(self, name: str, alias: str, *, if_revision: int | None = None) -> None:
        """Delete an alias (the deletion is kept in its history)."""
        headers = {"If-Match": f'"{if_revision}"'} if if_revision is not None else None
        self._call("DELETE", alias_path(name, alias), headers=headers)

    def alias_history(
        self, name: str, alias: str, *, limit: int | None = None, next_token: str | None = None
    ) -> Page[AliasRevision]:
        data = self._get(alias_path(name, alias, "history"), {"limit": limit, "next_token": next_token})
        return Page([AliasRevision.from_dict(r) for r in data.get("history") or []], data.get("next_token"))

    def iter_alias_history(self, name: str, alias: str, *, page_size: int | None = None) -> Iterator[AliasRevision]:
        """Every revision of the alias, newest first."""
        return self._pages(alias_path(name, alias, "history"), "history", AliasRevision.from_dict, {"limit": page_size})

    def rollback_alias(
        self, name: str, alias: str, *, to_revision: int | None = None, reason: str | None = None
    ) -> Alias:
        """A new revision with the target of `to_revision` (default: the revision before the current one)."""
        body: dict[str, Any] = {}
        if to_revision is not None:
            body["to_revision"] = to_revision
        if reason is not None:
            body["reason"] = reason
        data, headers = self._write("POST", alias_path(name, alias, "rollback"), body=body)
        return Alias.from_dict(data or {}, name=name, alias=alias, etag=headers.get("ETag"))

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
