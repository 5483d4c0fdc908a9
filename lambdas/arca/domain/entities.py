"""The values the services return, which the API answers as they are: versions, summaries, aliases, pages, …

The aggregates (arca.domain.aggregates: LatestRecord, VersionRecord, AliasRecord, RevisionRecord) keep the state the
services need besides (counters, a multipart layout's name, an alias's copied targets, tombstones); an aggregate's
`entity()` is its answer here. No field of these models is excluded: each is what a caller gets and what the OpenAPI
document shows. The answers only the routes make (liveness, the signing key, a purge's progress, the error body)
are the API's own: arca.api.schemas.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    SerializerFunctionWrapHandler,
    model_serializer,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

VersionRef = int | Literal["LATEST"]


def via_field() -> Any:
    """`via`: on an answer read through a link, the link's name (absent otherwise)."""
    return Field(None, description="the link name this read went through", exclude_if=lambda via: via is None)


def manifest_field() -> Any:
    return Field(
        None,
        description="the signed manifest: canonical JSON of {name, version, sha256, size, created_at}; null for a "
        "version published before the stage signed versions",
    )


def signature_field() -> Any:
    return Field(None, description="base64 of the DER ECDSA SHA-256 signature of `manifest` by the stage's key")


class _Entity(BaseModel):
    # Every model of the package defers building its validator and serializer to its first use (defer_build): a
    # function's cold start builds only the models its request needs, never all of them at import.
    model_config = ConfigDict(frozen=True, defer_build=True)


class Latest(_Entity):
    """The artifact's mutable working copy (sort key LATEST)."""

    # What its item holds besides (counters, marks, tags) is its aggregate: arca.domain.aggregates.LatestRecord.

    name: str
    version: Literal["LATEST"] = "LATEST"
    sha256: str | None = None
    size: int | None = None
    content_type: str | None = None
    metadata: dict[str, str] | None = None
    updated_at: str | None = None
    newest_version: int | None = None
    via: str | None = via_field()
    part_size: int | None = Field(None, exclude_if=lambda size: size is None)
    files: int | None = Field(
        None, description="a tree of files: how many (its content is its tree manifest)", exclude_if=lambda n: n is None
    )


# A version's fields, as its answer (`Version`) and its aggregate (arca.domain.aggregates.VersionRecord) both carry
# them. Pydantic orders a model's fields by its classes, base first (the reverse of the MRO), and the answer's own
# two (`via`, `parts`) sit between them in the contract: so the shared fields come in three parts, and each field of
# the answer's own is declared on a class under the part it follows (`Version`'s MRO puts it right after that part).


class _VersionHead(_Entity):
    name: str
    version: int
    sha256: str
    size: int
    content_type: str
    metadata: dict[str, str]
    created_at: str
    deleted: bool = False
    deleted_at: str | None = None
    aliases: list[str] = Field(default_factory=list, description="aliases that point at this version")


class _VersionMiddle(_Entity):
    tags: dict[str, str] = Field(default_factory=dict, description="mutable labels (PATCH the version)")
    attestations: list[str] = Field(default_factory=list, description="the types of the version's attestations")
    part_size: int | None = Field(
        None, description="multipart content: the size of every part but the last", exclude_if=lambda v: v is None
    )
    part_count: int | None = Field(
        None, description="multipart content: how many parts", exclude_if=lambda v: v is None
    )


class _VersionTail(_Entity):
    files: int | None = Field(
        None, description="a tree of files: how many (its content is its tree manifest)", exclude_if=lambda n: n is None
    )
    manifest: str | None = manifest_field()
    signature: str | None = signature_field()
    expired: bool = Field(
        False, description="expired by retention: only the number is left", exclude_if=lambda e: not e
    )


class VersionFields(_VersionTail, _VersionMiddle, _VersionHead):
    """What a version is: the fields its answer and its aggregate share, in the answer's order."""


class _Via(_VersionHead):
    via: str | None = via_field()


class _Parts(_VersionMiddle):
    parts: list[str] | None = Field(
        None,
        description="multipart content: the sha256 of each part, in order (one version's answer, not listings)",
        exclude_if=lambda v: v is None,
    )


class Version(VersionFields, _Parts, _Via):
    # A version as the API answers it (no docstring: it would become the schema's description): its fields, with
    # `via` after `aliases` and `parts` after `part_count`.

    @model_serializer(mode="wrap")
    def _tombstone(self, handler: SerializerFunctionWrapHandler) -> Any:
        """An expired version answers `{version, expired: true}` alone: its content is gone for good."""
        if self.expired:
            return {"version": self.version, "expired": True}
        return handler(self)

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        """The contract of a version answer is its fields: the tombstone's serializer returns "any" to pydantic,
        which would leave the schema empty. (An expired version answers only `version` and `expired`.)"""
        return handler({k: v for k, v in schema.items() if k != "serialization"})


class Published(Version):
    deduplicated: bool = Field(description="true: the newest version already had this content; no version was made")


class Counts(_Entity):
    versions: int
    deleted_versions: int
    aliases: int


class Summary(_Entity):
    name: str
    latest: Latest
    newest_version: int | None
    counts: Counts
    created_at: str | None
    updated_at: str | None
    link: str | None = Field(
        None, description="read through a link: the artifact it points at", exclude_if=lambda link: link is None
    )
    via: str | None = via_field()
    description: str | None = None
    tags: dict[str, str] = Field(default_factory=dict, description="mutable labels (PATCH the artifact)")


class UploadTarget(_Entity):
    url: str
    method: Literal["PUT"] = "PUT"
    headers: dict[str, str] = Field(description="send exactly these headers with the PUT")
    expires_at: str


class PartTarget(_Entity):
    number: int
    url: str
    method: Literal["PUT"] = "PUT"
    headers: dict[str, str] = Field(description="send exactly these headers with the PUT of this part")


class StoredPartInfo(_Entity):
    number: int
    size: int


class MultipartTarget(_Entity):
    """A multipart upload: PUT each part to its URL, then POST …/uploads/{id}/complete."""

    id: str
    sha256: str
    size: int
    part_size: int
    part_count: int
    parts: list[PartTarget] = Field(
        description="URLs for parts S3 does not have yet, lowest numbers first, at most 1,000 an answer "
        "(GET …/uploads/{id} for the next ones and fresh URLs)"
    )
    uploaded: list[StoredPartInfo] = Field(default_factory=list, description="parts S3 already has")
    missing: int = Field(description="how many parts S3 does not have yet")
    expires_at: str = Field(description="when the URLs of this answer expire")


UploadState = Literal["uploading", "verifying", "complete", "failed"]


class Upload(_Entity):
    exists: bool = Field(description="true: the blob is stored already; nothing to upload")
    sha256: str
    size: int
    upload: UploadTarget | MultipartTarget | None = None
    state: UploadState | None = Field(
        None,
        description="a multipart upload's state: `uploading` (parts go up), `verifying` (assembled, its SHA-256 "
        "being checked), `complete` (it may be referenced), `failed` (its bytes are not the declared sha256)",
        exclude_if=lambda state: state is None,
    )
    verified_bytes: int | None = Field(
        None, description="while `verifying`: the bytes hashed so far", exclude_if=lambda hashed: hashed is None
    )


class CompletedUpload(_Entity):
    """A multipart upload assembled. `complete`: its SHA-256 is the declared one, so PUT latest or publish its
    content by `sha256` as any other; `verifying` (202): it is being hashed in the background, follow it with
    GET …/uploads/{id}."""

    id: str
    sha256: str
    size: int
    part_size: int
    part_count: int
    completed_at: str
    state: Literal["verifying", "complete"] = "complete"
    verified_bytes: int = Field(description="the bytes hashed so far (all of them once complete)")


class ArtifactEntry(_Entity):
    name: str
    link: str | None = Field(
        None, description="this name is a link to that artifact", exclude_if=lambda link: link is None
    )


class ArtifactPage(_Entity):
    artifacts: list[ArtifactEntry]
    prefixes: list[str]
    next_token: str | None


class VersionPage(_Entity):
    versions: list[Version]
    next_token: str | None
    via: str | None = via_field()


class TreeFile(_Entity):
    """A file of a tree version."""

    path: str
    sha256: str
    size: int
    content_type: str


class FilePage(_Entity):
    """A page of a tree version's files, in path order (the byte order of their UTF-8)."""

    files: list[TreeFile]
    next_token: str | None
    via: str | None = via_field()


class FileResolution(_Entity):
    """One file of a tree version, as resolved: its content and a short-lived download URL."""

    name: str
    ref: str
    version: VersionRef
    path: str
    sha256: str
    size: int
    content_type: str
    download_url: str
    expires_at: str
    tree_sha256: str = Field(description="the tree version's sha256 (its manifest's digest), which lists the file")
    route: Literal["primary", "secondary"]
    alias_revision: int | None = Field(
        None, description="present when `ref` is an alias", exclude_if=lambda revision: revision is None
    )
    via: str | None = via_field()


class Skipped(_Entity):
    version: int
    aliases: list[str]
    consumers: list[str] = Field(
        default_factory=list,
        exclude_if=lambda value: not value,
        description="the consumers whose live leases name it (absent when none)",
    )


class PruneResult(_Entity):
    """What one prune request did. `next_token` is set when versions remain to be examined: send the same
    body again with it, until it is null."""

    name: str
    dry_run: bool
    deleted: list[int]
    skipped: list[Skipped]
    next_token: str | None = None


class Target(_Entity):
    """The content of an alias's target, copied into the alias item (versions are immutable)."""

    sha256: str
    size: int
    content_type: str
    # The file name the version was published from (a download is saved under it); absent in alias items
    # written before it was copied, and then the download is named after the artifact and version.
    filename: str | None = Field(None, exclude_if=lambda name: name is None)
    # Multipart content: its layout (arca.domain.multipart), which names its object; absent for one PUT.
    part_size: int | None = Field(None, exclude_if=lambda size: size is None)
    parts_sha256: str | None = Field(None, exclude_if=lambda layout: layout is None)
    files: int | None = Field(None, exclude_if=lambda n: n is None)  # a tree's count of files
    # The sha256 of a tree's types document (decision 113); absent when every file is served as the default.
    file_types: str | None = Field(None, exclude_if=lambda types: types is None)
    # The version's signed manifest (absent for versions published before signing, and in older alias items).
    manifest: str | None = Field(None, exclude_if=lambda manifest: manifest is None)
    signature: str | None = Field(None, exclude_if=lambda signature: signature is None)


class AliasState(_Entity):
    # An alias's state as the API answers it, the alias item's and each history record's (no docstring: the
    # answers' schemas would inherit it as their description).
    version: VersionRef | None = None
    secondary_version: VersionRef | None = None
    secondary_version_weight: int | None = None
    description: str | None = None
    revision: int
    updated_at: str | None = None
    updated_by: str | None = None
    reason: str | None = None


class Alias(AliasState):
    name: str
    alias: str
    version: VersionRef | None = None
    created_at: str | None = None
    via: str | None = via_field()


AliasAction = Literal["set", "delete", "rollback", "rollout"]


class AliasRevision(AliasState):
    action: AliasAction
    deleted: bool = False


class AliasList(_Entity):
    aliases: list[Alias]
    next_token: str | None = None
    via: str | None = via_field()


class HistoryPage(_Entity):
    history: list[AliasRevision]
    next_token: str | None
    via: str | None = via_field()


RolloutState = Literal["running", "completed", "rolled_back", "aborted", "superseded"]


class VersionConsumers(_Entity):
    """The consumers whose live leases name `version`: `count` of them, the first `consumers` (sorted, at most
    20: `count` says how many more there are)."""

    version: int
    count: int
    consumers: list[str] = Field(description="the first 20 consumer ids, sorted")


class Rollout(_Entity):
    """A progressive rollout of `version` on an alias (one item per alias: the latest rollout).

    `step` counts the rollout's writes to the alias: 1 is `version` at the first weight, `len(steps)` the last
    weight, and the write that ends it (promotion, rollback, abort) is one more. `weight` is the secondary's
    share after the last write: 100 once promoted, 0 once rolled back or aborted.
    """

    id: str
    name: str
    alias: str
    state: RolloutState
    version: int
    from_version: VersionRef | None = Field(None, description="the alias's primary when the rollout started")
    steps: list[int]
    step: int
    weight: int
    interval_seconds: int
    alarms: list[str] = Field(default_factory=list)
    next_at: str | None = Field(None, description="when the next step runs; null once the rollout has ended")
    started_at: str
    ended_at: str | None = Field(None, exclude_if=lambda value: value is None)
    reason: str | None = None
    started_by: str | None = None
    alarm: str | None = Field(
        None, description="the alarm found in ALARM (rolled_back)", exclude_if=lambda value: value is None
    )
    alias_revision: int = Field(description="the alias revision the rollout wrote last")
    consumers: list[VersionConsumers] | None = Field(
        None,
        description="the rollout's status only: the consumers still on `from_version` and on `version` (live "
        "leases), one entry each",
        exclude_if=lambda value: value is None,
    )
    via: str | None = via_field()

    @property
    def writer(self) -> str:
        """`updated_by` of the alias revisions the rollout writes."""
        return f"rollout:{self.id}"


class Resolution(_Entity):
    name: str
    ref: str
    version: VersionRef
    sha256: str
    size: int
    content_type: str
    download_url: str
    expires_at: str
    route: Literal["primary", "secondary"]
    alias_revision: int | None = Field(
        None, description="present when `ref` is an alias", exclude_if=lambda revision: revision is None
    )
    via: str | None = via_field()
    part_size: int | None = Field(
        None,
        description="multipart content: its part size (GET the version for the part hashes)",
        exclude_if=lambda size: size is None,
    )
    files: int | None = Field(
        None, description="a tree of files: how many (its content is its tree manifest)", exclude_if=lambda n: n is None
    )
    manifest: str | None = manifest_field()
    signature: str | None = signature_field()


class Link(_Entity):
    """A name that leads to another artifact (one hop: a link never points at a link)."""

    name: str
    link: str = Field(description="the artifact this name leads to")
    created_at: str | None = None
    updated_at: str | None = None


class Lease(_Entity):
    """A consumer's lease: `consumer` runs `version` until `expires_at`, unless it renews the lease first."""

    consumer: str = Field(description="who runs the version, e.g. `ecs:prod.payments`")
    version: int
    expires_at: str = Field(description="when the lease lapses; a lapsed lease protects nothing and is not listed")
    by: str | None = Field(None, description="the principal that last wrote the lease")
    labels: dict[str, str] = Field(default_factory=dict)
    updated_at: str | None = Field(None, description="when the version or the labels last changed")


class ConsumerList(_Entity):
    consumers: list[Lease]
    next_token: str | None = None
    via: str | None = via_field()


class VersionHit(_Entity):
    """A search hit: a version that holds the content or the tag searched for (soft-deleted ones included,
    with `deleted` true). GET the version for its metadata and aliases."""

    name: str
    version: int
    sha256: str
    size: int
    content_type: str
    created_at: str
    deleted: bool = Field(False, description="true: the version is soft-deleted (restore it to serve it)")
    tags: dict[str, str] = Field(default_factory=dict, description="the version's tags")


class HitPage(_Entity):
    versions: list[VersionHit]
    next_token: str | None


# Attestations: documents about a version (provenance, SBOMs, test reports), immutable and content-addressed.


class Attestation(_Entity):
    id: str = Field(description="the sha256 of `<type>` and the content's `<sha256>` joined by a newline")
    type: str = Field(description="e.g. slsa-provenance, sbom-spdx, test-report")
    sha256: str
    size: int
    media_type: str
    created_at: str
    created_by: str | None = None
    download_url: str | None = Field(
        None, description="on a single read: a presigned GET of the content", exclude_if=lambda url: url is None
    )
    expires_at: str | None = Field(None, exclude_if=lambda at: at is None)


class AttestationPage(_Entity):
    attestations: list[Attestation]
    next_token: str | None
    via: str | None = via_field()
