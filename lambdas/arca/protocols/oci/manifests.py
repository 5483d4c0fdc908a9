"""Manifests and image indexes: media types, validation, and the files a manifest names.

A manifest is stored as the client sent it (its digest is of those bytes), so validation only reads it: strict JSON
(no duplicate keys, no NaN), `schemaVersion` 2, well-formed descriptors. Descriptors of media types this module does
not know are accepted (the image specification forbids an error on an unknown descriptor media type); a manifest
of an unknown *manifest* media type is MANIFEST_INVALID, since Arca must read its config and layers, and so is a
Docker schema 1 manifest (signed, rewritten on pull: the reference registry refuses it too).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr
from pydantic import ValidationError as PydanticValidationError

from arca.protocols.oci.errors import OciError, entry, too_large
from arca.protocols.oci.grammar import Digest

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
DOCKER_MANIFEST_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
DOCKER_SCHEMA1 = frozenset(
    {
        "application/vnd.docker.distribution.manifest.v1+json",
        "application/vnd.docker.distribution.manifest.v1+prettyjws",
    }
)
IMAGE_MANIFESTS = frozenset({OCI_MANIFEST, DOCKER_MANIFEST})
INDEXES = frozenset({OCI_INDEX, DOCKER_MANIFEST_LIST})
MANIFEST_TYPES = IMAGE_MANIFESTS | INDEXES
EMPTY_MEDIA_TYPE = "application/vnd.oci.empty.v1+json"
TITLE = "org.opencontainers.image.title"
# Content types that say nothing about which manifest a body is: the body's `mediaType` decides.
GENERIC_CONTENT_TYPES = frozenset({"", "application/json", "application/octet-stream"})

# Clients and registries support manifests of at least 4 MB (distribution-spec, "Pushing Manifests").
MAX_MANIFEST_BYTES = 4 * 1024 * 1024
MAX_FILES = 10_000  # a tree's limit
MAX_PATH_BYTES = 1024  # a tree path's limit (DynamoDB's sort key)

# The image specification's media type pattern (schema/defs-descriptor.json).
MEDIA_TYPE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$"
MediaType = Annotated[StrictStr, Field(pattern=MEDIA_TYPE_PATTERN)]
Sha256Digest = Annotated[StrictStr, Field(pattern=r"^sha256:[a-f0-9]{64}$")]
Annotations = dict[StrictStr, StrictStr]


class _Model(BaseModel):
    # Unknown fields are kept: a manifest is stored as sent, and new fields of the specifications must not fail.
    model_config = ConfigDict(extra="allow", strict=True, frozen=True, populate_by_name=True)


class Descriptor(_Model):
    """A descriptor (image-spec descriptor.md): what it points at, by digest and size."""

    media_type: MediaType = Field(alias="mediaType")
    digest: Sha256Digest
    size: Annotated[StrictInt, Field(ge=0)]
    urls: list[StrictStr] | None = None
    annotations: Annotations | None = None
    data: StrictStr | None = None
    artifact_type: MediaType | None = Field(None, alias="artifactType")
    platform: dict[StrictStr, Any] | None = None

    @property
    def ref(self) -> Digest:
        return Digest(self.digest.removeprefix("sha256:"))

    @property
    def title(self) -> str | None:
        return (self.annotations or {}).get(TITLE)


class _ImageManifestModel(_Model):
    schema_version: Literal[2] = Field(alias="schemaVersion")
    media_type: MediaType | None = Field(None, alias="mediaType")
    artifact_type: MediaType | None = Field(None, alias="artifactType")
    config: Descriptor
    layers: list[Descriptor]
    subject: Descriptor | None = None
    annotations: Annotations | None = None


class _IndexModel(_Model):
    schema_version: Literal[2] = Field(alias="schemaVersion")
    media_type: MediaType | None = Field(None, alias="mediaType")
    artifact_type: MediaType | None = Field(None, alias="artifactType")
    manifests: list[Descriptor]
    subject: Descriptor | None = None
    annotations: Annotations | None = None


@dataclass(frozen=True)
class File:
    """A file of the tree a manifest is: a path and the blob (or child manifest) it holds."""

    path: str
    digest: Digest
    size: int
    media_type: str


@dataclass(frozen=True)
class Manifest:
    """A validated manifest or index, with its exact bytes and their digest."""

    media_type: str
    body: bytes
    digest: Digest
    config: Descriptor | None = None
    layers: tuple[Descriptor, ...] = ()
    manifests: tuple[Descriptor, ...] = ()
    subject: Descriptor | None = None
    artifact_type: str | None = None
    annotations: dict[str, str] = field(default_factory=dict)

    @property
    def is_index(self) -> bool:
        return self.media_type in INDEXES

    @property
    def size(self) -> int:
        return len(self.body)

    @property
    def effective_artifact_type(self) -> str | None:
        """The `artifactType` a referrers list shows: the manifest's, else its config's media type (an index has
        none of its own)."""
        if self.artifact_type:
            return self.artifact_type
        return self.config.media_type if self.config is not None else None

    def blobs(self) -> tuple[Descriptor, ...]:
        """The descriptors that must be stored blobs: the config and the layers (an index names none)."""
        return () if self.config is None else (self.config, *self.layers)

    def children(self) -> tuple[Descriptor, ...]:
        """The manifests an index names, which must be stored manifests of the same repository."""
        return self.manifests

    def files(self) -> list[File]:
        """The files of the tree this manifest is, in the order it lists them.

        Each is named by its `org.opencontainers.image.title` annotation, else `blobs/sha256/<hex>`; a blob listed
        twice is one file, named where it is first listed. Names must be tree paths, unique, none the folder of
        another: MANIFEST_INVALID naming the descriptor otherwise.
        """
        files: dict[Digest, File] = {}
        where: dict[str, str] = {}
        for place, descriptor in self._places():
            if descriptor.ref in files:
                continue
            path = descriptor.title or f"blobs/sha256/{descriptor.ref.hex}"
            if problem := path_problem(path):
                raise _invalid(f"{place}: title {path!r} is not a file path: {problem}", place)
            if path in where:
                raise _invalid(f"{place} and {where[path]} are different blobs with the same name {path!r}", place)
            where[path] = place
            files[descriptor.ref] = File(path, descriptor.ref, descriptor.size, descriptor.media_type)
        if len(files) > MAX_FILES:
            raise _invalid(f"the manifest names {len(files)} files, over the limit of {MAX_FILES}", "layers")
        _refuse_folder_conflicts(where)
        return list(files.values())

    def _places(self) -> list[tuple[str, Descriptor]]:
        if self.config is None:
            return [(f"manifests[{i}]", d) for i, d in enumerate(self.manifests)]
        return [("config", self.config), *((f"layers[{i}]", d) for i, d in enumerate(self.layers))]


def parse_manifest(body: bytes, content_type: str | None) -> Manifest:
    """Validate a pushed manifest; MANIFEST_INVALID (400) naming the field, or SIZE_INVALID (413) over 4 MiB.

    The media type is the body's `mediaType`; a `Content-Type` naming another manifest type is refused. Without a
    `mediaType`, the `Content-Type` says which manifest this is.
    """
    if len(body) > MAX_MANIFEST_BYTES:
        raise too_large("manifest", len(body), MAX_MANIFEST_BYTES)
    document = _strict_json(body)
    media_type = _media_type(document, content_type)
    model: type[_ImageManifestModel | _IndexModel] = _IndexModel if media_type in INDEXES else _ImageManifestModel
    try:
        parsed = model.model_validate(document)
    except PydanticValidationError as error:
        raise _from_pydantic(error) from None
    common: dict[str, Any] = {
        "media_type": media_type,
        "body": body,
        "digest": Digest.of(body),
        "subject": parsed.subject,
        "artifact_type": parsed.artifact_type,
        "annotations": dict(parsed.annotations or {}),
    }
    if isinstance(parsed, _IndexModel):
        return Manifest(manifests=tuple(parsed.manifests), **common)
    return Manifest(config=parsed.config, layers=tuple(parsed.layers), **common)


def _strict_json(body: bytes) -> dict[str, Any]:
    def refuse_constant(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in pairs]
        if len(set(keys)) != len(keys):
            raise ValueError(f"duplicate key {next(k for k in keys if keys.count(k) > 1)!r}")
        return dict(pairs)

    try:
        document = json.loads(body.decode("utf-8"), parse_constant=refuse_constant, object_pairs_hook=unique_keys)
    except (UnicodeDecodeError, ValueError) as error:
        raise OciError.of("MANIFEST_INVALID", f"the manifest is not JSON: {error}", {"reason": str(error)}) from None
    except RecursionError:  # nesting deeper than the parser goes: no manifest is nested like that
        raise OciError.of("MANIFEST_INVALID", "the manifest nests too deeply") from None
    if not isinstance(document, dict):
        raise OciError.of("MANIFEST_INVALID", "the manifest is not a JSON object")
    return document


def _media_type(document: dict[str, Any], content_type: str | None) -> str:
    stated = (content_type or "").split(";")[0].strip()
    declared = document.get("mediaType")
    if declared is not None and not isinstance(declared, str):
        raise _invalid("mediaType must be a string", "mediaType")
    if declared is not None and stated not in GENERIC_CONTENT_TYPES and stated != declared:
        raise _invalid(f"the Content-Type {stated!r} does not match the manifest's mediaType {declared!r}", "mediaType")
    media_type = declared if declared is not None else stated
    if media_type in GENERIC_CONTENT_TYPES:
        raise _invalid("the manifest has no mediaType and the Content-Type does not name a manifest type", "mediaType")
    if media_type in DOCKER_SCHEMA1:
        raise _invalid(
            f"{media_type} (Docker schema 1) is not supported: push an OCI or Docker schema 2 manifest", "mediaType"
        )
    if media_type not in MANIFEST_TYPES:
        raise _invalid(
            f"unknown manifest media type {media_type!r} (supported: {', '.join(sorted(MANIFEST_TYPES))})",
            "mediaType",
        )
    return media_type


def _from_pydantic(error: PydanticValidationError) -> OciError:
    problems = [
        {"field": ".".join(str(part) for part in e["loc"]) or "manifest", "reason": e["msg"]} for e in error.errors()
    ]
    first = problems[0]
    message = f"{first['field']}: {first['reason']}"
    return OciError.many([entry("MANIFEST_INVALID", message, {"problems": problems[:10]})])


def _invalid(message: str, place: str) -> OciError:
    return OciError.of("MANIFEST_INVALID", message, {"field": place})


def path_problem(path: str) -> str | None:
    """Why `path` is not a tree path (1-1,024 bytes of UTF-8, `/`-separated segments, none empty, `.` or `..`, no
    leading `/`, no control character), or None."""
    try:
        size = len(path.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate, which JSON's \u escapes can spell
        return "a path is UTF-8 text"
    if not 1 <= size <= MAX_PATH_BYTES:
        return f"a path is 1 to {MAX_PATH_BYTES} bytes"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in path):
        return "a path has no control characters"
    if any(segment in ("", ".", "..") for segment in path.split("/")):
        return "a path's segments are not empty, '.' or '..' (and it does not start with '/')"
    return None


def _refuse_folder_conflicts(where: dict[str, str]) -> None:
    for path, place in where.items():
        segments = path.split("/")
        for depth in range(1, len(segments)):
            folder = "/".join(segments[:depth])
            if folder in where:
                raise _invalid(f"{where[folder]} is named {folder!r}, a folder of {path!r} ({place})", where[folder])
