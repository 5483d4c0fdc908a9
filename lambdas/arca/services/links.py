"""Links: a second name for an artifact (after a rename, or a team's view of shared artifacts).

A link is one hop: it points at an artifact, never at a link, and a name is either an artifact or a link.
Both hold by conditions on the two LATEST items in one transaction (LinkStore.stage_link), not by the
reads here, which only choose the write and its message. Reads follow a link in Reading.follow; writes
under a link name are refused (LinkedNameError, 409 naming the target) where they read the name first.
"""

from __future__ import annotations

from arca.adapters.store.artifacts import ArtifactStore
from arca.adapters.store.change import Change
from arca.adapters.store.links import LinkStore
from arca.domain.entities import Link
from arca.domain.errors import ConflictError, NotFoundError
from arca.services.retry import Policy


class Links:
    def __init__(self, store: LinkStore, artifacts: ArtifactStore, policy: Policy) -> None:
        self.store = store
        self.artifacts = artifacts
        self.policy = policy

    def link(self, name: str, target: str, *, identity: str | None = None) -> tuple[Link, bool]:
        """Make `name` a link to `target` or re-point it; returns (link, created). Same target again: unchanged.

        Raises ConflictError (name is an artifact, target is a link or being purged), NotFoundError (target).
        """
        if name == target:
            raise ConflictError(f"target {target!r} is the link's own name", field="target")

        def attempt() -> tuple[Link, bool]:
            seen = self.artifacts.latest(name)
            if seen is not None and not seen.purged:
                raise ConflictError(f"{name!r} is an artifact; a link needs a free name", field="name")
            if seen is not None and seen.link == target:
                return Link(name=name, link=target, created_at=seen.created_at, updated_at=seen.updated_at), False
            change = Change(target, by=identity, now=self.policy.now())
            written = self.store.stage_link(change, name, target, seen)
            self.store.commit(change)
            return written, seen is None or seen.link is None

        return self.policy.compare_and_set(attempt)

    def unlink(self, name: str, *, identity: str | None = None) -> None:
        """Remove the link `name` (never its target). NotFoundError when `name` is not a link."""

        def attempt() -> None:
            seen = self.artifacts.latest(name)
            if seen is None or not seen.link:
                raise NotFoundError(f"{name!r} is not a link")
            change = Change(seen.link, by=identity, now=self.policy.now())
            self.store.stage_unlink(change, name, seen)
            self.store.commit(change)

        self.policy.compare_and_set(attempt)
