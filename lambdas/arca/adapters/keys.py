"""Every DynamoDB key and S3 key of Arca is built here (docs/access-patterns.md lists them).

Artifact names start with [a-z0-9], so the partitions that start with `__` (aliases, alias history,
the name index and the folder rows) can never be an artifact's own partition, and `-alias` /
`-history` / `-events` suffixes cannot collide with each other because a partition key ends in exactly one.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

from arca.domain.errors import ValidationError
from arca.domain.versions import LATEST, encode_version

Key = dict[str, str]

# Version sort keys are six digits; these bound a Query to versions only (LATEST sorts after them).
FIRST_VERSION_SK = "000000"
LAST_VERSION_SK = "999999"
NAMES_PK = "__names"
_DIR_PREFIX = "__dir#"


def latest_key(name: str) -> Key:
    return {"pk": name, "sk": LATEST}


def version_key(name: str, version: int) -> Key:
    return {"pk": name, "sk": encode_version(version)}


def artifact_pk(name: str) -> str:
    return name


def alias_pk(name: str) -> str:
    return f"__{name}-alias"


def alias_key(name: str, alias: str) -> Key:
    return {"pk": alias_pk(name), "sk": alias}


def history_pk(name: str) -> str:
    return f"__{name}-history"


def history_key(name: str, alias: str, revision: int) -> Key:
    return {"pk": history_pk(name), "sk": f"{alias}#{revision:06d}"}


def history_prefix(alias: str) -> str:
    return f"{alias}#"


def events_pk(name: str) -> str:
    """The artifact's event feed: sort key the event id (arca.domain.events), so a Query reads it in order."""
    return f"__{name}-events"


def event_key(name: str, event_id: str) -> Key:
    return {"pk": events_pk(name), "sk": event_id}


def name_key(name: str) -> Key:
    """The flat name index: one row per artifact in partition `__names`, for listing without a delimiter."""
    return {"pk": NAMES_PK, "sk": name}


def receipt_key(scope: str, key: str) -> Key:
    """An idempotency record: partition `__idem#<scope>` (the caller), sort key the client's key."""
    return {"pk": f"__idem#{scope}", "sk": key}


def dir_pk(parent: str) -> str:
    """The folder rows (hierarchical keys): partition `__dir#<parent prefix>` holds that folder's children."""
    return f"{_DIR_PREFIX}{parent}"


def dir_keys(name: str) -> list[tuple[Key, bool]]:
    """Folder rows for `a/b/c`: (`__dir#`, `a/`), (`__dir#a/`, `b/`), (`__dir#a/b/`, `c`).

    Returns (key, is_folder) pairs, the artifact's own leaf row last.
    """
    segments = name.split("/")
    rows: list[tuple[Key, bool]] = []
    for depth, segment in enumerate(segments):
        parent = "".join(f"{s}/" for s in segments[:depth])
        is_folder = depth < len(segments) - 1
        rows.append(({"pk": dir_pk(parent), "sk": segment + ("/" if is_folder else "")}, is_folder))
    return rows


def blob_key(name: str, sha256: str) -> str:
    """Content-addressed per artifact. `_blobs` cannot be a name segment, so no artifact's prefix
    contains another's blobs (purging `a` never touches `a/b`)."""
    return f"{blob_prefix(name)}{sha256}"


def blob_prefix(name: str) -> str:
    return f"artifacts/{name}/_blobs/"


def encode_token(last_key: dict[str, Any], scope: str, state: dict[str, int] | None = None) -> str:
    """Opaque pagination token: the last evaluated key, bound to the listing it came from, and optionally
    the counters a paged operation carries from one request to the next (`state`)."""
    raw = json.dumps(
        {"k": last_key, "s": scope, **({"x": state} if state else {})}, separators=(",", ":"), sort_keys=True
    )
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_token(
    token: str, scope: str, *, pk: str | None = None, within: Callable[[str], bool] | None = None
) -> dict[str, Any]:
    """Raises ValidationError(next_token) for anything `encode_token` did not make for this scope.

    The key must also lie in the listing's partition `pk` and sort-key range `within`: the token is not
    secret, so a forged one must never reach another partition (or another alias's history).
    """
    return decode_token_state(token, scope, pk=pk, within=within)[0]


def decode_token_state(
    token: str, scope: str, *, pk: str | None = None, within: Callable[[str], bool] | None = None
) -> tuple[dict[str, Any], dict[str, int]]:
    """`decode_token`, and the token's `state` (non-negative integers; empty when it had none)."""
    try:
        padded = token + "=" * (-len(token) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode()))
        key, state = data["k"], data.get("x", {})
        valid = (
            data["s"] == scope
            and isinstance(key, dict)
            and set(key) == {"pk", "sk"}
            and all(isinstance(v, str) for v in key.values())
            and (pk is None or key["pk"] == pk)
            and (within is None or within(key["sk"]))
            and isinstance(state, dict)
            and all(type(v) is int and v >= 0 for v in state.values())
        )
    except (ValueError, TypeError, KeyError, AttributeError):
        valid = False
    if not valid:
        raise ValidationError("next_token is not a token this listing issued", field="next_token")
    return key, state
