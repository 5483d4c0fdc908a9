"""Every DynamoDB key and S3 key of Arca is built here (docs/access-patterns.md lists them).

Artifact names start with [a-z0-9], so the partitions that start with `__` (aliases, alias history,
rollouts, events, tags, the name index, the folder rows, the links' reverse index and the consumer leases) can never
be an artifact's own partition, and the `-alias` / `-history` / `-rollout` / `-events` / `-links` / `-tags` /
`-consumers` suffixes
cannot collide with each other because a partition key ends in exactly one.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

from arca.adapters.dynamo import key_fault
from arca.domain.errors import ValidationError
from arca.domain.versions import LATEST, encode_version

Key = dict[str, str]

# Version sort keys are six digits; these bound a Query to versions only (LATEST sorts after them).
FIRST_VERSION_SK = "000000"
LAST_VERSION_SK = "999999"
# The sort-key range of an artifact's versions in its partition (sk BETWEEN these).
VERSIONS = (FIRST_VERSION_SK, LAST_VERSION_SK)
NAMES_PK = "__names"
_DIR_PREFIX = "__dir#"


def artifact_pk(name: str) -> str:
    """The artifact's own partition: its LATEST and its versions."""
    return name


def latest_key(name: str) -> Key:
    return {"pk": artifact_pk(name), "sk": LATEST}


def version_key(name: str, version: int) -> Key:
    return {"pk": artifact_pk(name), "sk": encode_version(version)}


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


def history_time_key(name: str, alias: str, updated_at: str, revision: int) -> Key:
    """A revision's time row: the same partition as its record, sort key `<alias>@<updated_at>#%06d`.

    Stored times are ISO UTC with `Z` and one length, so the rows sort by time (ties by revision). `@` sorts
    after `#`, so an alias's time rows never fall in its `<alias>#` range of records, nor in another alias's
    (alias names hold neither `#` nor `@`).
    """
    return {"pk": history_pk(name), "sk": f"{alias}@{updated_at}#{revision:06d}"}


def history_time_bounds(alias: str, moment: str) -> tuple[str, str]:
    """The sort-key range of `alias`'s time rows written at or before `moment` (`#~` sorts after any number)."""
    return f"{alias}@", f"{alias}@{moment}#~"


def events_pk(name: str) -> str:
    """The artifact's event feed: sort key the event id (arca.domain.events), so a Query reads it in order."""
    return f"__{name}-events"


def event_key(name: str, event_id: str) -> Key:
    return {"pk": events_pk(name), "sk": event_id}


def name_key(name: str) -> Key:
    """The flat name index: one row per artifact in partition `__names`, for listing without a delimiter."""
    return {"pk": NAMES_PK, "sk": name}


def receipt_pk(scope: str) -> str:
    """A caller's idempotency records: partition `__idem#<scope>` (`#` is in no name)."""
    return f"__idem#{scope}"


def receipt_key(scope: str, key: str) -> Key:
    """An idempotency record: partition `__idem#<scope>` (the caller), sort key the client's key."""
    return {"pk": receipt_pk(scope), "sk": key}


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
    secret, so a forged one must never reach another partition (or another alias's history), nor hold a key
    value DynamoDB refuses (empty, or over its size limit).
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
            and key_fault(key) is None
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


def rollout_pk(name: str) -> str:
    """Rollouts: partition `__<name>-rollout`, one item per alias (its latest rollout)."""
    return f"__{name}-rollout"


def rollout_key(name: str, alias: str) -> Key:
    return {"pk": rollout_pk(name), "sk": alias}


# Links (symbolic links between names).
#
# A link is stored at its own name's LATEST key (so the GetItem of LATEST that reads start with shows it), with
# a marker in the name's alias partition whose sort key sorts after every alias name (alias names are OCI tags,
# [A-Za-z0-9_][A-Za-z0-9._-]*, and `~` sorts after all of those): a point read of an alias or a version is a
# Query `sk >= key` Limit 1, which in a link's partitions lands on the link record instead of missing.
LINK_SK = "~link"


def link_marker_key(name: str) -> Key:
    return {"pk": alias_pk(name), "sk": LINK_SK}


def links_pk(target: str) -> str:
    """The reverse index: partition `__<target>-links` holds one row per link to `target` (sort key the link)."""
    return f"__{target}-links"


def link_row_key(target: str, link: str) -> Key:
    return {"pk": links_pk(target), "sk": link}


# Consumer leases: partition `__<name>-consumers`, one item per consumer (its id as the sort key; ids hold no
# `#`), so a lease is one item however often it is renewed, and the artifact's leases are one Query.


def consumers_pk(name: str) -> str:
    return f"__{name}-consumers"


def consumer_key(name: str, consumer: str) -> Key:
    return {"pk": consumers_pk(name), "sk": consumer}


# Tags and search (docs/access-patterns.md, "Tags and search").
#
# Tags live on the tagged item (a version, or LATEST for the artifact) as the map `tags`; each tag also has an
# index row in the artifact's partition `__<name>-tags`, carrying the search index's keys, so one Query of the
# index answers "who carries k=v" across the registry, and a purge finds every row by the artifact's name.
# A tag key never contains `=` or `#`, so `<key>=<value>` and `v#<n>#<key>` split one way only.

SEARCH_INDEX = "gsi1"
TIME_INDEX = "gsi2"
INDEX_KEYS = {SEARCH_INDEX: ("gsi1pk", "gsi1sk"), TIME_INDEX: ("gsi2pk", "gsi2sk")}


def tags_pk(name: str) -> str:
    return f"__{name}-tags"


def version_tag_key(name: str, version: int, tag: str) -> Key:
    return {"pk": tags_pk(name), "sk": f"v#{encode_version(version)}#{tag}"}


def artifact_tag_key(name: str, tag: str) -> Key:
    return {"pk": tags_pk(name), "sk": f"a#{tag}"}


def version_tag_search_pk(tag: str, value: str) -> str:
    return f"tag#{tag}={value}"


def artifact_tag_search_pk(tag: str, value: str) -> str:
    return f"atag#{tag}={value}"


def content_search_pk(sha256: str) -> str:
    return f"sha256#{sha256}"


def version_search_sk(name: str, version: int) -> str:
    """`<name>#<n>`: `#` is in no name, so `<name>#` is the prefix of that artifact's versions alone."""
    return f"{name}#{encode_version(version)}"


def search_prefix(name: str) -> str:
    return f"{name}#"


def time_sk(created_at: str, version: int) -> str:
    """Sorts by creation time (the stored ISO form, UTC with `Z`, sorts as text), ties by number."""
    return f"{created_at}#{encode_version(version)}"


def version_index_attributes(name: str, version: int, sha256: str, created_at: str) -> dict[str, str]:
    """The index keys a version item carries: by content (search index) and by creation time (time index)."""
    return {
        "gsi1pk": content_search_pk(sha256),
        "gsi1sk": version_search_sk(name, version),
        "gsi2pk": artifact_pk(name),
        "gsi2sk": time_sk(created_at, version),
    }


def encode_index_token(last_key: dict[str, str], scope: str, *, index: str) -> str:
    """A page token of an index Query: the table's key and the index's sort key. The index partition is left
    out (the listing knows it, and a tag's partition key can be over a kilobyte)."""
    hash_key, _ = INDEX_KEYS[index]
    return encode_token({k: v for k, v in last_key.items() if k != hash_key}, scope)


def decode_index_token(token: str, scope: str, *, index: str, pk: str, within: Callable[[str], bool]) -> dict[str, str]:
    """The start key of the next page of an index Query; ValidationError(next_token) for anything else.

    The index partition is always the listing's own `pk`, and the index sort key must lie `within` the
    listing's range, so a forged token cannot reach another tag's, digest's or artifact's rows.
    """
    hash_key, range_key = INDEX_KEYS[index]
    try:
        padded = token + "=" * (-len(token) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode()))
        key = data["k"]
        valid = (
            data["s"] == scope
            and isinstance(key, dict)
            and set(key) == {"pk", "sk", range_key}
            and all(isinstance(v, str) for v in key.values())
            and key_fault(key) is None
            and within(key[range_key])
        )
    except (ValueError, TypeError, KeyError, AttributeError):
        valid = False
    if not valid:
        raise ValidationError("next_token is not a token this listing issued", field="next_token")
    return {**key, hash_key: pk}


# Attestations (documents about a version: provenance, SBOMs, test reports).
#
# One item per attestation in the artifact's partition `__<name>-attestations`, sort key `%06d#<id>` (the
# version, then the attestation's id, the sha256 of its type and its content's sha256; attestations made before
# ids took the type in keep the content's sha256 as theirs), so one Query with the version's prefix reads
# a version's attestations and expiry finds them all. Their bytes live under the version's own S3 prefix, so
# they go with the version and no other version's bytes are ever shared with them.


def attestations_pk(name: str) -> str:
    return f"__{name}-attestations"


def attestation_key(name: str, version: int, attestation_id: str) -> Key:
    return {"pk": attestations_pk(name), "sk": f"{attestation_prefix(version)}{attestation_id}"}


def attestation_prefix(version: int) -> str:
    return f"{encode_version(version)}#"


def attestation_blob_prefix(name: str, version: int) -> str:
    """`_attestations` cannot be a name segment (segments start with [a-z0-9]), as `_blobs`."""
    return f"artifacts/{name}/_attestations/{encode_version(version)}/"


def attestation_blob_key(name: str, version: int, attestation_id: str) -> str:
    return f"{attestation_blob_prefix(name, version)}{attestation_id}"


# Guarded promotion: an alias's policy and its promotions.
#
# The policy is one item per alias in `__<name>-policy` (sort key the alias), kept as a tombstone when removed so
# its revision only grows. Promotions are in `__<name>-promotions`, sort key `<alias>#<id>` with time-ordered ids,
# so one Query with the alias's prefix, backwards, lists an alias's promotions newest first.


def policy_pk(name: str) -> str:
    return f"__{name}-policy"


def policy_key(name: str, alias: str) -> Key:
    return {"pk": policy_pk(name), "sk": alias}


def promotions_pk(name: str) -> str:
    return f"__{name}-promotions"


def promotion_prefix(alias: str) -> str:
    return f"{alias}#"


def promotion_key(name: str, alias: str, promotion_id: str) -> Key:
    return {"pk": promotions_pk(name), "sk": f"{promotion_prefix(alias)}{promotion_id}"}


# Multipart uploads (large content: up to 5 TiB in up to 10,000 parts).
#
# One item per layout of content in the artifact's partition `__<name>-uploads`, sort key the upload's id
# `<sha256>.<parts_sha256>` (the content, then the layout: arca.domain.multipart). The item is the upload's
# session while it runs (S3's UploadId, the part hashes, a TTL) and, once completed, the record of the layout
# that versions of that content point at (their part hashes). Its object has a key of its own beside the
# content's single-PUT blob, so an object assembled from other parts never stands where the true one goes.


def uploads_pk(name: str) -> str:
    return f"__{name}-uploads"


def upload_id(sha256: str, parts_sha256: str) -> str:
    return f"{sha256}.{parts_sha256}"


def upload_key(name: str, upload: str) -> Key:
    return {"pk": uploads_pk(name), "sk": upload}


def upload_prefix(sha256: str) -> str:
    """The sort-key prefix of every layout of one content."""
    return f"{sha256}."


def parse_upload_id(upload: str) -> tuple[str, str]:
    """(sha256, parts_sha256) of an upload id; ValidationError(id) for anything else."""
    sha256, _, layout = upload.partition(".")
    if not (_is_hex64(sha256) and _is_hex64(layout)):
        raise ValidationError("id: is not an upload id (`<sha256>.<parts sha256>`)", field="id")
    return sha256, layout


def _is_hex64(value: str) -> bool:
    return len(value) == 64 and all(c in "0123456789abcdef" for c in value)


def multipart_blob_key(name: str, sha256: str, parts_sha256: str) -> str:
    """Under the artifact's blob prefix (purge removes it with the rest)."""
    return f"{blob_prefix(name)}{upload_id(sha256, parts_sha256)}"


# Retention (docs/access-patterns.md, "Retention").
#
# An artifact's policy is one item in its partition `__<name>-retention`, sort key `policy`, carrying the search
# index's keys `retention` / `<name>`: the sweep finds every artifact with a policy by one Query of that sparse
# index partition. The same partition holds one `expired#%06d` marker per expired version whose clean-up
# (attestations, bytes) is not finished yet, so a crash after the expiry's commit is finished by the next run.
# Each distinct content of an artifact has a reference count in `__<name>-blobs`, sort key its sha256.

RETENTION_SK = "policy"
RETENTION_INDEX_PK = "retention"
EXPIRED_PREFIX = "expired#"


def retention_pk(name: str) -> str:
    return f"__{name}-retention"


def retention_policy_key(name: str) -> Key:
    return {"pk": retention_pk(name), "sk": RETENTION_SK}


def retention_index_attributes(name: str) -> dict[str, str]:
    """The sparse index entry of a policy: partition `retention`, sort key the artifact's name."""
    return {"gsi1pk": RETENTION_INDEX_PK, "gsi1sk": name}


def expired_marker_key(name: str, version: int) -> Key:
    return {"pk": retention_pk(name), "sk": f"{EXPIRED_PREFIX}{encode_version(version)}"}


def blobs_pk(name: str) -> str:
    return f"__{name}-blobs"


def blob_count_key(name: str, sha256: str) -> Key:
    """The reference count of one content of `name`: how many version items and LATEST hold that sha256."""
    return {"pk": blobs_pk(name), "sk": sha256}


# The scheduled sweep's progress: `__retention-` with the suffix `-sweep` is no artifact's partition (`retention` is a
# reserved word, and no partition of a name ends in `-sweep`).
SWEEP_PK = "__retention-sweep"


def sweep_key() -> Key:
    """The scheduled sweep's progress: one item (where the current pass goes on, when it started)."""
    return {"pk": SWEEP_PK, "sk": "cursor"}


# Every partition of the base table, by what it holds: those of one artifact's name, and the others (each built
# from something that is not a name). The partition-collision tests walk these, and a test fails for a builder
# left out of them.
# OCI upload sessions (decision 105): one item per session in the artifact's partition `__<name>-ocisessions`, sort
# key the session's id; its bytes so far are one staging object beside the artifact's blobs (an `oci-upload.` key,
# never a sha256, so no content's collection lists it), tagged as an upload so the bucket's lifecycle removes it
# when the session is abandoned.


def oci_sessions_pk(name: str) -> str:
    return f"__{name}-ocisessions"  # no other suffix ends with `-ocisessions`, nor it with one


def oci_session_key(name: str, session: str) -> Key:
    return {"pk": oci_sessions_pk(name), "sk": session}


def oci_staging_key(name: str, session: str) -> str:
    return f"{blob_prefix(name)}oci-upload.{session}"


# OCI referrers pushed before their subject (decision 112): one item per (subject, referrer) in the artifact's
# partition `__<name>-ocireferrers`, sort key `<subject hex>.<referrer hex>` (a Query by the subject's prefix lists
# them); the referrer's bytes are the artifact's content at its digest, as any attached manifest's.


def oci_referrers_pk(name: str) -> str:
    return f"__{name}-ocireferrers"  # no other suffix ends with `-ocireferrers`, nor it with one


def oci_pending_referrer_key(name: str, subject_sha256: str, referrer_sha256: str) -> Key:
    return {"pk": oci_referrers_pk(name), "sk": f"{subject_sha256}.{referrer_sha256}"}


def oci_pending_referrers_prefix(subject_sha256: str) -> str:
    return f"{subject_sha256}."


NAME_PARTITIONS: dict[str, Callable[[str], str]] = {
    "artifact": artifact_pk,
    "aliases": alias_pk,
    "history": history_pk,
    "events": events_pk,
    "rollouts": rollout_pk,
    "links to it": links_pk,
    "consumer leases": consumers_pk,
    "tags": tags_pk,
    "attestations": attestations_pk,
    "policies": policy_pk,
    "promotions": promotions_pk,
    "uploads": uploads_pk,
    "retention": retention_pk,
    "content counts": blobs_pk,
    "OCI upload sessions": oci_sessions_pk,
    "OCI referrers before their subject": oci_referrers_pk,
}
OTHER_PARTITIONS: dict[str, Callable[[str], str]] = {
    "names": lambda _: NAMES_PK,
    "idempotency records (by caller)": receipt_pk,
    "folders (by parent prefix)": dir_pk,
    "sweep": lambda _: SWEEP_PK,
}
# The search index's partitions (gsi1pk), by what they find; the time index (gsi2pk) is partitioned by name.
INDEX_PARTITIONS: dict[str, Callable[[str, str], str]] = {
    "content": lambda sha256, _: content_search_pk(sha256),
    "version tags": version_tag_search_pk,
    "artifact tags": artifact_tag_search_pk,
    "retention policies": lambda *_: RETENTION_INDEX_PK,
}
