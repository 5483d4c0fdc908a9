"""Resolving an alias without the read side's models: the resolve function's hot path (arca.api.hot).

The same reads, choices and errors as `Reading.resolve` of an alias that is read as it stands (no `at`), through a
link too (`Reading.follow`), and an answer with the fields of `arca.domain.entities.Resolution` as the API shows it,
as a plain mapping: the cold start that serves it imports no pydantic. Tests hold the two answers equal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from arca.adapters import keys
from arca.adapters.s3 import Blobs
from arca.adapters.store.resolving import ResolveStore, TargetContent, latest_content
from arca.domain.errors import LinkedNameError, NotFoundError
from arca.domain.names import validate_alias
from arca.domain.routing import PRIMARY, choose_route
from arca.domain.versions import LATEST

R = TypeVar("R")
# A resolve's answer: the fields of `Resolution` in its order, those it leaves out when None left out.
Answer = dict[str, Any]


class Resolving:
    def __init__(self, store: ResolveStore, blobs: Blobs) -> None:
        self.store = store
        self.blobs = blobs

    def resolve_alias(self, name: str, alias: str, *, routing_key: str | None = None) -> Answer:
        """An alias of `name` (or of the artifact `name` links to) as one concrete version and a download URL."""
        validate_alias(alias, field="ref")
        return follow(name, lambda n: self._resolve(n, alias, routing_key), _via)

    def _resolve(self, name: str, alias: str, routing_key: str | None) -> Answer:
        state = self.store.alias(name, alias)
        if state is None or state["deleted"]:
            raise NotFoundError(f"artifact {name!r} has no alias {alias!r}")
        route = PRIMARY
        if state["secondary_version"] is not None:
            route = choose_route(state["secondary_version_weight"] or 0, name, alias, routing_key)
        version = state["version"] if route == PRIMARY else state["secondary_version"]
        content = state["primary"] if route == PRIMARY else state["secondary"]
        if version == LATEST or content is None:
            content = latest_content(self._content_latest(name))
        assert version is not None
        return self._answer(name, alias, version, content, route, state["revision"])

    def _content_latest(self, name: str) -> dict[str, Any]:
        """As Reading.content_latest: LATEST of an artifact that exists and holds content."""
        latest = self.store.latest(name)
        if latest is not None and latest.get("link"):
            raise LinkedNameError(name, latest["link"])
        if latest is None or latest.get("purged"):
            raise NotFoundError(f"artifact {name!r} does not exist")
        if latest.get("sha256") is None:
            raise NotFoundError(f"artifact {name!r} has no version yet: LATEST holds no content")
        return latest

    def _answer(
        self, name: str, ref: str, version: int | str, target: TargetContent, route: str, revision: int
    ) -> Answer:
        """As Reading._resolved, the answer as `Resolution` serializes it."""
        filename = target["filename"] or f"{name.rsplit('/', 1)[-1]}-{version}"
        key = keys.blob_key(name, target["sha256"])
        if target["parts_sha256"] is not None:
            key = keys.multipart_blob_key(name, target["sha256"], target["parts_sha256"])
        url, expires_at = self.blobs.presign_download(key, content_type=target["content_type"], filename=filename)
        answer: Answer = {
            "name": name,
            "ref": ref,
            "version": version,
            "sha256": target["sha256"],
            "size": target["size"],
            "content_type": target["content_type"],
            "download_url": url,
            "expires_at": expires_at,
            "route": route,
            "alias_revision": revision,
        }
        answer.update({f: target[f] for f in ("part_size", "files") if target[f] is not None})
        answer.update(manifest=target["manifest"], signature=target["signature"])
        return answer


def follow(name: str, read: Callable[[str], R], via: Callable[[R, str], R]) -> R:
    """`read(name)`; when `name` is a link, `read(target)` instead, marked by `via(found, name)`.

    One hop only: a link never points at a link (the link transaction's conditions), so a target that is a link is
    one that was purged and linked since the first read: 404. The first read already reveals a link (LATEST, or the
    probes of VersionStore.version and AliasStore.alias), so following costs one read more than the direct one.
    """
    try:
        return read(name)
    except LinkedNameError as hop:
        if hop.name != name:
            raise
        target = hop.target
    try:
        found = read(target)
    except LinkedNameError:
        raise NotFoundError(f"artifact {target!r}, the target of link {name!r}, does not exist") from None
    return via(found, name)


def _via(found: Answer, link: str) -> Answer:
    """The answer with `via` set to the link's name, in its place among the fields (after `alias_revision`)."""
    fields = list(found.items())
    at = [k for k, _ in fields].index("alias_revision") + 1
    return dict([*fields[:at], ("via", link), *fields[at:]])
