"""The items a resolve of an alias reads, as plain mappings: the resolve function's hot path (arca.services.resolving)
reads them without the aggregates' models (arca.domain.aggregates), so its cold start imports no pydantic.

The same reads as the stores' own (`AliasStore.alias`, `ArtifactStore.latest`), with the same link probes; the values
are converted as the stores' mappers (arca.adapters.store.records) convert them.
"""

from __future__ import annotations

from typing import Any

from arca.adapters import keys
from arca.adapters.dynamo import Item, Table
from arca.adapters.store.pages import first_at
from arca.domain.downloads import recorded_filename
from arca.domain.errors import LinkedNameError
from arca.domain.versions import LATEST

# An alias's state as the hot path reads it: its targets' versions, the canary's weight, its revision, and the
# content of each target copied onto the item (None on an item written before the copy, or for LATEST).
AliasState = dict[str, Any]
# A target's content, as `arca.domain.entities.Target` holds it (its fields, in its order; None where absent).
TargetContent = dict[str, Any]
TARGET_FIELDS = (
    "sha256",
    "size",
    "content_type",
    "filename",
    "part_size",
    "parts_sha256",
    "files",
    "file_types",
    "manifest",
    "signature",
)


class ResolveStore:
    def __init__(self, table: Table) -> None:
        self.table = table

    def alias(self, name: str, alias: str) -> AliasState | None:
        """The alias's state, a deletion's tombstone included (`deleted`); None when there is no such alias;
        LinkedNameError when `name` is a link. One Query of limit 1, as AliasStore.alias."""
        item = first_at(self.table, keys.alias_key(name, alias))
        if item is not None and item["sk"] == keys.LINK_SK:
            raise LinkedNameError(name, item["link"])
        if item is None or item["sk"] != alias:
            return None
        return {
            "version": _version(item.get("version")),
            "secondary_version": _version(item.get("secondary_version")),
            "secondary_version_weight": _number(item.get("secondary_version_weight")),
            "revision": int(item["revision"]),
            "primary": _content(item.get("primary")),
            "secondary": _content(item.get("secondary")),
            "deleted": bool(item.get("deleted")),
        }

    def latest(self, name: str) -> Item | None:
        """LATEST's item as stored (tombstones and marks included), as ArtifactStore.latest reads it."""
        return self.table.get(keys.latest_key(name))


def latest_content(item: Item) -> TargetContent:
    """The content LATEST holds, as `arca.domain.aggregates.target_of` copies it."""
    return {
        "sha256": str(item.get("sha256")),
        "size": int(item.get("size") or 0),
        "content_type": str(item.get("content_type")),
        "filename": recorded_filename(item.get("metadata")),
        "part_size": _number(item.get("part_size")),
        "parts_sha256": item.get("parts_sha256"),
        "files": _number(item.get("files")),
        "file_types": item.get("file_types"),
        "manifest": item.get("manifest"),
        "signature": item.get("signature"),
    }


def _content(value: Any) -> TargetContent | None:
    if value is None:
        return None
    found = {f: value.get(f) for f in TARGET_FIELDS}
    found.update(size=int(found["size"]), part_size=_number(found["part_size"]), files=_number(found["files"]))
    return found


def _version(value: Any) -> int | str | None:
    return value if value is None or value == LATEST else int(value)


def _number(value: Any) -> int | None:
    return None if value is None else int(value)
