"""What changed between two versions, computed from the two version answers alone (no request of its own).

Compared: size, sha256, content type, each metadata key, each tag, and the attestations when an answer carries
them. Each change is `{"field", "from", "to"}`; a key present on one side only has None on the other.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

FIELDS = ("size", "sha256", "content_type")
MAPPINGS = ("metadata", "tags")


def version_diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The changes from `before` to `after` (two version answers of the API), in a stable order."""
    changes: list[dict[str, Any]] = []
    for field in FIELDS:
        if before.get(field) != after.get(field):
            changes.append({"field": field, "from": before.get(field), "to": after.get(field)})
    for group in MAPPINGS:
        old, new = dict(before.get(group) or {}), dict(after.get(group) or {})
        for key in sorted(old.keys() | new.keys()):
            if old.get(key) != new.get(key):
                changes.append({"field": f"{group}.{key}", "from": old.get(key), "to": new.get(key)})
    old_att, new_att = before.get("attestations"), after.get("attestations")
    if (old_att or new_att) and _canonical(old_att) != _canonical(new_att):
        changes.append({"field": "attestations", "from": old_att, "to": new_att})
    return changes


def _canonical(value: Any) -> str:
    return json.dumps(value or [], sort_keys=True, default=str)
