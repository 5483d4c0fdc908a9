"""Typed results of the SDK.

Each result keeps the JSON it was read from in `raw` (the CLI's `--json` prints it unchanged), and is read by
`decoding.decode` from the types of its fields, leniently: a field the server adds later is ignored, a missing
optional one is None. That keeps an older client working against a newer server.

A result that mirrors an answer of the API names the schemas of the API's OpenAPI document it mirrors
(`SCHEMA`), where a field is read from when not from the property of its name (`WIRE`, a dotted path), and
the fields the client adds (`LOCAL`); a test holds every field against the document the API serves, so a
field renamed on the server fails there rather than reading as None here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Self, TypeVar

from arca_client.decoding import Decoded, decode

T = TypeVar("T")
Ref = int | str  # a version number, "LATEST", or an alias name
LATEST = "LATEST"


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a listing; `next_token` is None on the last page."""

    SCHEMA: ClassVar[tuple[str, ...]] = ()  # made by the client, not an answer of the API
    items: list[T]
    next_token: str | None


@dataclass(frozen=True)
class BlobRef:
    SCHEMA: ClassVar[tuple[str, ...]] = ("UploadBody",)  # the body of POST …/uploads
    sha256: str
    size: int


@dataclass(frozen=True)
class UploadTarget(Decoded):
    """Where to upload a blob: nothing to do when `exists`, else a presigned PUT with the headers to send."""

    SCHEMA: ClassVar[tuple[str, ...]] = ("Upload",)
    WIRE: ClassVar[dict[str, str]] = {
        "url": "upload.url",
        "method": "upload.method",
        "headers": "upload.headers",
        "expires_at": "upload.expires_at",
    }
    exists: bool
    sha256: str
    size: int
    url: str | None = None
    method: str = "PUT"
    headers: dict[str, str] = field(default_factory=dict)
    expires_at: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class Version(Decoded):
    """A numbered version, or LATEST (`version == "LATEST"`, with `updated_at` and `newest_version`)."""

    SCHEMA: ClassVar[tuple[str, ...]] = ("Version", "Latest")
    name: str
    version: int | str = LATEST  # an answer without a number is LATEST's
    sha256: str | None = None
    size: int | None = None
    content_type: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    created_at: str | None = None
    deleted: bool = False
    deleted_at: str | None = None
    aliases: list[str] = field(default_factory=list)
    updated_at: str | None = None
    newest_version: int | None = None
    via: str | None = None  # read through this link name
    tags: dict[str, str] = field(default_factory=dict)
    files: int | None = None  # a tree of files: how many (None: one blob)
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class Published:
    """The outcome of a publish: the version, whether it is an existing one (same content), whether bytes moved."""

    SCHEMA: ClassVar[tuple[str, ...]] = ()  # made by the client, not an answer of the API
    version: Version
    deduplicated: bool
    uploaded: bool = False
    transfer: Any = None  # content sent in parts: what the transfer did (arca_client.transfer.UploadReport)


@dataclass(frozen=True)
class Counts:
    SCHEMA: ClassVar[tuple[str, ...]] = ("Counts",)
    versions: int = 0
    deleted_versions: int = 0
    aliases: int = 0


@dataclass(frozen=True)
class ArtifactSummary(Decoded):
    SCHEMA: ClassVar[tuple[str, ...]] = ("Summary",)
    name: str
    latest: Version
    newest_version: int | None
    counts: Counts
    created_at: str | None = None
    updated_at: str | None = None
    link: str | None = None  # `name` is a link to this artifact (the summary is the target's)
    via: str | None = None
    description: str | None = None
    tags: dict[str, str] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class VersionHit(Decoded):
    """A registry-wide search hit: a version holding the content or tag searched for, with its tags (soft-deleted
    ones included, `deleted` true)."""

    SCHEMA: ClassVar[tuple[str, ...]] = ("VersionHit",)
    name: str
    version: int
    sha256: str
    size: int
    content_type: str | None = None
    created_at: str | None = None
    deleted: bool = False
    tags: dict[str, str] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class ListEntry(Decoded):
    """One row of an artifact listing: an artifact name, or a prefix ending in "/" (with a delimiter)."""

    SCHEMA: ClassVar[tuple[str, ...]] = ("ArtifactEntry",)
    LOCAL: ClassVar[frozenset[str]] = frozenset({"is_prefix"})
    name: str
    is_prefix: bool = False
    link: str | None = None  # the name is a link to this artifact


@dataclass(frozen=True)
class Alias(Decoded):
    """An alias as it stands: its target, optional canary (secondary and weight %), and revision."""

    SCHEMA: ClassVar[tuple[str, ...]] = ("Alias",)
    name: str
    alias: str
    version: int | str | None
    secondary_version: int | str | None = None
    secondary_version_weight: int | None = None
    description: str | None = None
    revision: int | None = None
    created_at: str | None = None
    updated_at: str | None = None
    updated_by: str | None = None
    reason: str | None = None
    via: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, *, etag: str | None = None, **given: Any) -> Self:
        """`given` may hold the artifact and alias the call named; a write answered without a body has its
        revision in the ETag."""
        return decode(cls, data, revision=_revision_from_etag(etag), **given)


def _revision_from_etag(etag: str | None) -> int | None:
    text = (etag or "").removeprefix("W/").strip('"')
    return int(text) if text.isdigit() else None


@dataclass(frozen=True)
class Promotion:
    """What `promote` did: `alias` now points where `source` pointed; `previous` is None if it was created."""

    SCHEMA: ClassVar[tuple[str, ...]] = ()  # made by the client, not an answer of the API
    source: Alias
    previous: Alias | None
    alias: Alias
    changed: bool


@dataclass(frozen=True)
class AliasRevision(Decoded):
    """One entry of an alias's history, newest first. `action` is set, rollback or delete; a deletion has
    `deleted` set and no target."""

    SCHEMA: ClassVar[tuple[str, ...]] = ("AliasRevision",)
    revision: int | None
    version: int | str | None
    action: str | None = None
    secondary_version: int | str | None = None
    secondary_version_weight: int | None = None
    updated_at: str | None = None
    updated_by: str | None = None
    reason: str | None = None
    description: str | None = None
    deleted: bool = False
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.action == "delete":  # a deletion is deleted, whether or not the answer says so
            object.__setattr__(self, "deleted", True)


@dataclass(frozen=True)
class Resolution(Decoded):
    """A ref turned into one concrete version and a short-lived download URL."""

    SCHEMA: ClassVar[tuple[str, ...]] = ("Resolution",)
    name: str
    ref: str
    version: int | str  # "LATEST" when the ref is LATEST (or an alias pointing at it): the working copy
    sha256: str
    size: int
    download_url: str
    content_type: str | None = None
    expires_at: str | None = None
    route: str = "primary"
    alias_revision: int | None = None
    via: str | None = None
    files: int | None = None  # a tree of files: how many (None: one blob)
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class Lease(Decoded):
    """A consumer's lease: `consumer` runs `version` until `expires_at` (unless renewed)."""

    SCHEMA: ClassVar[tuple[str, ...]] = ("Lease",)
    consumer: str
    version: int
    expires_at: str
    by: str | None = None
    # a list of strings or a map of strings, as the lease was written
    labels: list[str] | dict[str, str] | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class Downloaded:
    SCHEMA: ClassVar[tuple[str, ...]] = ()  # made by the client, not an answer of the API
    resolution: Resolution
    path: str | None  # None when written to a file object
    transfer: Any = None  # multipart content fetched in parts: what moved (arca_client.transfer.DownloadReport)


@dataclass(frozen=True)
class PruneResult(Decoded):
    SCHEMA: ClassVar[tuple[str, ...]] = ("PruneResult",)
    name: str
    dry_run: bool
    deleted: list[int]
    skipped: list[dict[str, Any]]  # {"version": n, "aliases": [...]}: pinned, so kept
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class VersionConsumers(Decoded):
    """The consumers whose live leases name `version`: `count` of them, `consumers` the first ones (sorted; the
    API names at most 20, `count` says how many there are)."""

    SCHEMA: ClassVar[tuple[str, ...]] = ("VersionConsumers",)
    version: int
    count: int
    consumers: list[str] = field(default_factory=list)

    @property
    def more(self) -> int:
        """How many consumers on the version are counted but not named."""
        return max(self.count - len(self.consumers), 0)


@dataclass(frozen=True)
class Purged:
    """What a purge did beyond removing the artifact: the live consumer leases it released (a forced purge's),
    counted, and the first consumers named (sorted)."""

    SCHEMA: ClassVar[tuple[str, ...]] = ()  # made by the client from the purge answers' headers
    name: str
    released_count: int = 0
    released_consumers: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Rollout(Decoded):
    """A progressive rollout of `version` on an alias. `state` is running, completed, rolled_back, aborted or
    superseded; `step` counts the rollout's writes to the alias, `weight` is the canary's share after the last."""

    SCHEMA: ClassVar[tuple[str, ...]] = ("Rollout",)
    LOCAL: ClassVar[frozenset[str]] = frozenset({"warnings"})
    name: str
    alias: str
    id: str
    state: str
    version: int
    steps: list[int]
    step: int
    weight: int
    interval_seconds: int
    alarms: list[str] = field(default_factory=list)
    from_version: int | str | None = None
    next_at: str | None = None
    started_at: str | None = None
    ended_at: str | None = None
    reason: str | None = None
    alarm: str | None = None
    alias_revision: int | None = None
    # The status's alone: the consumers still on `from_version` and on `version` (live leases).
    consumers: list[VersionConsumers] | None = None
    # What the start's answer warned of (its `Warning` header): an alarm that does not exist.
    warnings: list[str] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def running(self) -> bool:
        return self.state == "running"


@dataclass(frozen=True)
class Link(Decoded):
    """A name that leads to another artifact: reads under `name` answer for `link` (with `via`)."""

    SCHEMA: ClassVar[tuple[str, ...]] = ("Link",)
    name: str
    link: str
    created_at: str | None = None
    updated_at: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


# Events.


@dataclass(frozen=True)
class Event(Decoded):
    """One committed change of an artifact. `id` sorts in commit order within the artifact: pass the last one
    seen as `after` to read on."""

    SCHEMA: ClassVar[tuple[str, ...]] = ("Event",)
    id: str
    type: str
    at: str | None
    name: str
    by: str | None = None
    version: int | str | None = None
    alias: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def action(self) -> str:
        """The type as a person reads it: an aborted rollout is `rollout.aborted` (the feed records it as
        `rollout.rolled_back` with `detail.state` aborted)."""
        if self.type == "rollout.rolled_back" and self.detail.get("state") == "aborted":
            return "rollout.aborted"
        return self.type

    @property
    def actor(self) -> str | None:
        """Who acted: the approver of an approval or a rejection (its `detail.by`), else the event's `by`."""
        if self.type in ("promotion.approved", "promotion.rejected") and self.detail.get("by"):
            return str(self.detail["by"])
        return self.by
