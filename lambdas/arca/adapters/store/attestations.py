"""Attestation items: one per document about a version, in the artifact's partition `__<name>-attestations`.

Item `{pk: __<name>-attestations, sk: %06d#<id>, kind: attestation, name, version, id, type, sha256, size,
media_type, created_at, created_by}`. The version item keeps the types of its attestations in the String Set
`attestations` (what version answers show and guarded promotion checks with `contains`) and their number in
`attestation_count` (the per-version cap). docs/access-patterns.md lists the access patterns.
"""

from __future__ import annotations

from typing import Any

from boto3.dynamodb.conditions import Attr

from arca.adapters import keys
from arca.adapters.dynamo import Item, Table, Update, Write
from arca.adapters.store.change import Change as Staged
from arca.adapters.store.conditions import ARTIFACT_IS_LIVE, ITEM_EXISTS, ITEM_NOT_EXIST, below
from arca.adapters.store.feed import Feed
from arca.adapters.store.pages import page
from arca.domain.entities import Attestation
from arca.domain.errors import AttestationLimitError, ConflictError, NotFoundError, RegistryError
from arca.domain.events import AttestationAdded, Change
from arca.domain.models import MAX_ATTESTATIONS

FIELDS = ("id", "type", "sha256", "size", "media_type", "created_at", "created_by")
# The version is live and below the cap; an item written before the counter existed has none.
VERSION_OPEN = ITEM_EXISTS & Attr("deleted").eq(False) & below("attestation_count", MAX_ATTESTATIONS)


def attestation_entity(item: Item) -> Attestation:
    return Attestation(**{f: item.get(f) for f in FIELDS})


class AttestationStore:
    """The attestation items; writes announce themselves through the feed."""

    def __init__(self, table: Table, feed: Feed) -> None:
        self.table = table
        self.feed = feed

    def get(self, name: str, version: int, attestation_id: str) -> Attestation | None:
        item = self.table.get(keys.attestation_key(name, version, attestation_id))
        return None if item is None else attestation_entity(item)

    def page(
        self, name: str, version: int, *, kind: str | None, limit: int, token: str | None
    ) -> tuple[list[Attestation], str | None]:
        """A version's attestations in id order, those of type `kind` only when given (bounded pages)."""
        items, next_token = page(
            self.table,
            keys.attestations_pk(name),
            f"attestations:{name}:{version}:{kind or ''}",
            limit=limit,
            token=token,
            keep=lambda item: kind is None or item.get("type") == kind,
            sk_prefix=keys.attestation_prefix(version),
            consistent=True,
        )
        return [attestation_entity(i) for i in items], next_token

    def commit(self, change: Staged) -> None:
        """Commit a change staged with this store (forwarded to the feed, the one place a change commits)."""
        self.feed.commit(change)

    def stage_add(self, change: Staged, version: int, attestation: Attestation) -> None:
        """Stage the attestation, its type added to the version and counted, and its `attestation.added` event.

        The commit raises AttestationTaken (nothing written) when an attestation with this id exists already,
        NotFoundError (no such version or artifact), ConflictError (the version is deleted, or the artifact being
        purged), AttestationLimitError (MAX_ATTESTATIONS reached).
        """
        name = change.name
        key = keys.attestation_key(name, version, attestation.id)
        item: dict[str, Any] = {
            "kind": "attestation",
            "name": name,
            "version": version,
            **attestation.model_dump(include=set(FIELDS)),
        }
        change.stage(
            Write("attestation", "Put", key, item=item, condition=ITEM_NOT_EXIST),
            refused=AttestationTaken(f"version {version} of {name!r} has the attestation {attestation.id} already"),
        )
        change.stage(
            Write(
                "version",
                "Update",
                keys.version_key(name, version),
                update=Update(add={"attestations": {attestation.type}, "attestation_count": 1}),
                condition=VERSION_OPEN,
            ),
            refused=lambda reason: _version_refusal(reason.item, name, version),
        )
        change.stage(
            Write("latest", "ConditionCheck", keys.latest_key(name), condition=ARTIFACT_IS_LIVE),
            refused=ConflictError(f"artifact {name!r} does not exist or is being purged", field="name"),
        )
        added = AttestationAdded(id=attestation.id, type=attestation.type, sha256=attestation.sha256)
        change.announce(Change(added, version))


class AttestationTaken(ConflictError):
    """The attestation's id is taken already (the same document, attested concurrently): nothing was written, and
    the service answers with the attestation there is."""


def _version_refusal(item: Item | None, name: str, version: int) -> RegistryError:
    if item is None:
        return NotFoundError(f"artifact {name!r} has no version {version}")
    if item.get("deleted"):
        return ConflictError(f"version {version} of {name!r} is deleted; restore it first", field="version")
    return AttestationLimitError(
        f"version {version} of {name!r} has {MAX_ATTESTATIONS} attestations, the most it may have",
        details={"limit": MAX_ATTESTATIONS},
    )
