"""Typed results of the SDK.

Each result keeps the JSON it was read from in `raw` (the CLI's `--json` prints it unchanged), and reads
fields leniently: a field the server adds later is ignored, a missing optional one is None. That keeps
an older client working against a newer server.

A result that mirrors an answer of the API names the schemas of the API's OpenAPI document it mirrors
(`SCHEMA`), where a field is read from when not from the property of its name (`WIRE`, a dotted path), and
the fields the client adds (`LOCAL`); a test holds every field against the document the API serves, so a
field renamed on the server fails there rather than reading as None here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

T = TypeVar("T")
Ref = int | str  # a version number, "LATEST", or an alias name
LATEST = "LATEST"


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def _target(value: Any) -> int | str | None:
    """A version field: a number, or "LATEST" for what follows the working copy."""
    if value is None or value == LATEST:
        return value  # type: ignore[no-any-return]
    return int(value)


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a listing; `next_token` is None on the last page."""

    SCHEMA: ClassVar[tuple[str, ...]] = ()  # made by the client, not an answer of the API
    items: list[T]
    next_token: str | None


@dataclass(frozen=True)
class BlobRef:
    SCHEMA: ClassVar[tuple[str, ...]] = ("BlobRef",)
    sha256: str
    size: int


@dataclass(frozen=True)
class UploadTarget:
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

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> UploadTarget:
        upload = data.get("upload") or {}
        return cls(
            exists=bool(data.get("exists")),
            sha256=str(data.get("sha256", "")),
            size=int(data.get("size", 0)),
            url=upload.get("url"),
            method=str(upload.get("method", "PUT")),
            headers=dict(upload.get("headers") or {}),
            expires_at=upload.get("expires_at"),
            raw=data,
        )


@dataclass(frozen=True)
class Version:
    """A numbered version, or LATEST (`version == "LATEST"`, with `updated_at` and `newest_version`)."""

    SCHEMA: ClassVar[tuple[str, ...]] = ("Version", "Latest")
    name: str
    version: int | str
    sha256: str | None
    size: int | None
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
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Version:
        return cls(
            name=str(data.get("name", "")),
            version=_target(data.get("version")) or LATEST,
            sha256=data.get("sha256"),
            size=_int(data.get("size")),
            content_type=data.get("content_type"),
            metadata=dict(data.get("metadata") or {}),
            created_at=data.get("created_at"),
            deleted=bool(data.get("deleted")),
            deleted_at=data.get("deleted_at"),
            aliases=list(data.get("aliases") or []),
            updated_at=data.get("updated_at"),
            newest_version=_int(data.get("newest_version")),
            via=data.get("via"),
            tags=dict(data.get("tags") or {}),
            raw=data,
        )


@dataclass(frozen=True)
class Published:
    """The outcome of a publish: the version, whether it is an existing one (same content), whether bytes moved."""

    SCHEMA: ClassVar[tuple[str, ...]] = ()  # made by the client, not an answer of the API
    version: Version
    deduplicated: bool
    uploaded: bool = False


@dataclass(frozen=True)
class Counts:
    SCHEMA: ClassVar[tuple[str, ...]] = ("Counts",)
    versions: int = 0
    deleted_versions: int = 0
    aliases: int = 0


@dataclass(frozen=True)
class ArtifactSummary:
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

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ArtifactSummary:
        counts = data.get("counts") or {}
        return cls(
            name=str(data.get("name", "")),
            latest=Version.from_dict(data.get("latest") or {}),
            newest_version=_int(data.get("newest_version")),
            counts=Counts(
                versions=int(counts.get("versions", 0)),
                deleted_versions=int(counts.get("deleted_versions", 0)),
                aliases=int(counts.get("aliases", 0)),
            ),
            created_at=data.get("created_at"),
            updated_at=data.get("updated_at"),
            link=data.get("link"),
            via=data.get("via"),
            description=data.get("description"),
            tags=dict(data.get("tags") or {}),
            raw=data,
        )


@dataclass(frozen=True)
class VersionHit:
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

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VersionHit:
        return cls(
            name=str(data.get("name", "")),
            version=int(data.get("version", 0)),
            sha256=str(data.get("sha256", "")),
            size=int(data.get("size", 0)),
            content_type=data.get("content_type"),
            created_at=data.get("created_at"),
            deleted=bool(data.get("deleted", False)),
            tags=dict(data.get("tags") or {}),
            raw=data,
        )


@dataclass(frozen=True)
class ListEntry:
    """One row of an artifact listing: an artifact name, or a prefix ending in "/" (with a delimiter)."""

    SCHEMA: ClassVar[tuple[str, ...]] = ("ArtifactEntry",)
    LOCAL: ClassVar[frozenset[str]] = frozenset({"is_prefix"})
    name: str
    is_prefix: bool = False
    link: str | None = None  # the name is a link to this artifact


@dataclass(frozen=True)
class Alias:
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
    def from_dict(cls, data: dict[str, Any], *, name: str = "", alias: str = "", etag: str | None = None) -> Alias:
        revision = _int(data.get("revision"))
        if revision is None and etag:
            revision = _revision_from_etag(etag)
        return cls(
            name=str(data.get("name") or name),
            alias=str(data.get("alias") or alias),
            version=_target(data.get("version")),
            secondary_version=_target(data.get("secondary_version")),
            secondary_version_weight=_int(data.get("secondary_version_weight")),
            description=data.get("description"),
            revision=revision,
            created_at=data.get("created_at"),
            updated_at=data.get("updated_at"),
            updated_by=data.get("updated_by"),
            reason=data.get("reason"),
            via=data.get("via"),
            raw=data,
        )


@dataclass(frozen=True)
class Promotion:
    """What `promote` did: `alias` now points where `source` pointed; `previous` is None if it was created."""

    SCHEMA: ClassVar[tuple[str, ...]] = ()  # made by the client, not an answer of the API
    source: Alias
    previous: Alias | None
    alias: Alias
    changed: bool


@dataclass(frozen=True)
class AliasRevision:
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

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AliasRevision:
        return cls(
            revision=_int(data.get("revision")),
            version=_target(data.get("version")),
            action=data.get("action"),
            secondary_version=_target(data.get("secondary_version")),
            secondary_version_weight=_int(data.get("secondary_version_weight")),
            updated_at=data.get("updated_at"),
            updated_by=data.get("updated_by"),
            reason=data.get("reason"),
            description=data.get("description"),
            deleted=bool(data.get("deleted")) or data.get("action") == "delete",
            raw=data,
        )


@dataclass(frozen=True)
class Resolution:
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
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Resolution:
        return cls(
            name=str(data.get("name", "")),
            ref=str(data.get("ref", "")),
            version=_target(data["version"]) or LATEST,
            sha256=str(data["sha256"]),
            size=int(data["size"]),
            download_url=str(data["download_url"]),
            content_type=data.get("content_type"),
            expires_at=data.get("expires_at"),
            route=str(data.get("route") or "primary"),
            alias_revision=_int(data.get("alias_revision")),
            via=data.get("via"),
            raw=data,
        )


@dataclass(frozen=True)
class Downloaded:
    SCHEMA: ClassVar[tuple[str, ...]] = ()  # made by the client, not an answer of the API
    resolution: Resolution
    path: str | None  # None when written to a file object


@dataclass(frozen=True)
class PruneResult:
    SCHEMA: ClassVar[tuple[str, ...]] = ("PruneResult",)
    name: str
    dry_run: bool
    deleted: list[int]
    skipped: list[dict[str, Any]]  # {"version": n, "aliases": [...]}: pinned, so kept
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PruneResult:
        return cls(
            name=str(data.get("name", "")),
            dry_run=bool(data.get("dry_run")),
            deleted=[int(v) for v in data.get("deleted") or []],
            skipped=list(data.get("skipped") or []),
            raw=data,
        )


def _revision_from_etag(etag: str) -> int | None:
    text = etag.removeprefix("W/").strip('"')
    return int(text) if text.isdigit() else None


@dataclass(frozen=True)
class Rollout:
    """A progressive rollout of `version` on an alias. `state` is running, completed, rolled_back, aborted or
    superseded; `step` counts the rollout's writes to the alias, `weight` is the canary's share after the last."""

    SCHEMA: ClassVar[tuple[str, ...]] = ("Rollout",)
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
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def running(self) -> bool:
        return self.state == "running"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rollout:
        return cls(
            name=str(data.get("name") or ""),
            alias=str(data.get("alias") or ""),
            id=str(data.get("id") or ""),
            state=str(data.get("state") or ""),
            version=int(data.get("version") or 0),
            steps=[int(w) for w in data.get("steps") or []],
            step=int(data.get("step") or 0),
            weight=int(data.get("weight") or 0),
            interval_seconds=int(data.get("interval_seconds") or 0),
            alarms=[str(a) for a in data.get("alarms") or []],
            from_version=_target(data.get("from_version")),
            next_at=data.get("next_at"),
            started_at=data.get("started_at"),
            ended_at=data.get("ended_at"),
            reason=data.get("reason"),
            alarm=data.get("alarm"),
            alias_revision=_int(data.get("alias_revision")),
            raw=data,
        )


@dataclass(frozen=True)
class Link:
    """A name that leads to another artifact: reads under `name` answer for `link` (with `via`)."""

    SCHEMA: ClassVar[tuple[str, ...]] = ("Link",)
    name: str
    link: str
    created_at: str | None = None
    updated_at: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Link:
        return cls(
            name=str(data.get("name", "")),
            link=str(data.get("link", "")),
            created_at=data.get("created_at"),
            updated_at=data.get("updated_at"),
            raw=data,
        )


# Events.


@dataclass(frozen=True)
class Event:
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

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Event:
        return cls(
            id=str(data["id"]),
            type=str(data.get("type", "")),
            at=data.get("at"),
            name=str(data.get("name", "")),
            by=data.get("by"),
            version=_target(data.get("version")),
            alias=data.get("alias"),
            detail=dict(data.get("detail") or {}),
            raw=data,
        )
