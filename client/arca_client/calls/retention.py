"""Retention calls: an artifact's policy, the preview of what it would do, and applying it now."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar
from urllib.parse import quote

from arca_client.calls.http import HttpCalls, paged
from arca_client.decoding import Decoded


@dataclass(frozen=True)
class RetentionDecision(Decoded):
    """What applying the policy now does to one version: `keep` (with every reason), `delete` or `expire`."""

    SCHEMA: ClassVar[tuple[str, ...]] = ("Planned",)
    version: int
    action: str
    reasons: list[str]
    deleted: bool = False
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class RetentionResult:
    """What applying the policy did: the versions soft-deleted and the versions expired."""

    SCHEMA: ClassVar[tuple[str, ...]] = ("Applied",)  # summed by the client over the pages of the answer
    name: str
    deleted: list[int]
    expired: list[int]
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


def _retention(name: str, *suffix: str) -> str:
    return "/".join((f"/artifacts/{quote(name, safe='/')}", "retention", *suffix))


class RetentionCalls(HttpCalls):
    """An artifact's retention policy, the preview of what it would do, and applying it now."""

    def set_retention(
        self,
        name: str,
        *,
        keep_last: int,
        keep_days: int | None = None,
        keep_tags: list[str] | None = None,
        rollback_window: int | None = None,
        expire_after_days: int | None = None,
    ) -> dict[str, Any]:
        """Set the artifact's retention policy (replacing any); returns it as stored."""
        optional = {
            "keep_days": keep_days,
            "keep_tags": keep_tags,
            "rollback_window": rollback_window,
            "expire_after_days": expire_after_days,
        }
        body = {"keep_last": keep_last, **{k: v for k, v in optional.items() if v is not None}}
        data, _ = self._call("PUT", _retention(name), body=body, idempotent=True)
        return dict(data)

    def get_retention(self, name: str) -> dict[str, Any]:
        """The artifact's retention policy; NotFoundError when it has none."""
        return dict(self._get(_retention(name)))

    def delete_retention(self, name: str) -> None:
        self._call("DELETE", _retention(name), idempotent=True)

    def preview_retention(self, name: str, *, page_size: int = 100) -> Iterator[RetentionDecision]:
        """What applying the policy now would do, version by version, newest first (every page, lazily)."""
        return self._pages(_retention(name, "preview"), "versions", RetentionDecision.from_dict, {"limit": page_size})

    def apply_retention(self, name: str) -> RetentionResult:
        """Apply the policy now. The API does a bounded amount a request and hands back a `next_token` while
        versions remain: this follows it to the end (applying is safe to repeat) and returns everything done."""
        deleted: list[int] = []
        expired: list[int] = []
        data: dict[str, Any] = {}

        def fetch(token: str | None) -> Any:
            body = {"next_token": token} if token else None
            return self._call("POST", _retention(name, "apply"), body=body, idempotent=True)[0]

        for data in paged(f"POST {_retention(name, 'apply')}", fetch):
            deleted += data.get("deleted", [])
            expired += data.get("expired", [])
        return RetentionResult(name=name, deleted=deleted, expired=expired, raw=data)
