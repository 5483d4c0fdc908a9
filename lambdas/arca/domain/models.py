"""Request shapes, validated with pydantic in strict mode for JSON bodies (a JSON `true` is not a size).

Query strings arrive as text, so query models are lax (``"10"`` becomes 10) but bounded.
"""

from __future__ import annotations

import math
import re
from typing import Annotated

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    StrictBool,
    StrictInt,
    StrictStr,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from arca.domain.consumers import DEFAULT_TTL, MAX_LABELS, MAX_TTL, MIN_TTL, check_labels
from arca.domain.errors import ValidationError
from arca.domain.names import validate_name
from arca.domain.tags import MAX_DESCRIPTION, check_patch
from arca.domain.text import AlarmName, NoControl, Reason

# S3's limit for one PUT; a larger blob is a 413, not a 400.
MAX_BLOB_SIZE = 5 * 1024**3
# S3 user metadata is limited to 2 KB in all; the same bound keeps items small.
MAX_METADATA_BYTES = 2048
DEFAULT_CONTENT_TYPE = "application/octet-stream"

Sha256 = Annotated[StrictStr, Field(pattern=r"^[0-9a-f]{64}$", description="lower-case hex sha256")]
# ASCII only (`\w` would admit any Unicode letter): the value becomes an S3 and HTTP header.
ContentType = Annotated[
    StrictStr, Field(pattern=r"^[A-Za-z0-9_.+-]+/[A-Za-z0-9_.+-]+(;[ A-Za-z0-9_.+=-]*)*$", max_length=255)
]
MetadataKey = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_.-]{0,127}$")]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)


class BlobRef(_Body):
    sha256: Sha256
    size: Annotated[StrictInt, Field(ge=0)]


_HEX64 = re.compile(r"^[0-9a-f]{64}$")


class UploadBody(BlobRef):
    """POST …/uploads: with `part_size` and `parts` (the SHA-256 of each part, in order) a multipart upload;
    without them one presigned PUT (up to 5 GiB). arca.domain.multipart checks the layout against S3's rules."""

    part_size: Annotated[StrictInt, Field(ge=1)] | None = None
    parts: Annotated[list[StrictStr], Field(description="lower-case hex sha256 of each part, in order")] | None = None

    @field_validator("parts")
    @classmethod
    def _parts_are_hashes(cls, value: list[str] | None) -> list[str] | None:
        # Checked here rather than per item, so that the error names `parts` (with the index in its message).
        for index, part in enumerate(value or ()):
            if not _HEX64.match(part):
                raise ValidationError(f"parts: hash {index} is not 64 lower-case hex characters", field="parts")
        return value

    @model_validator(mode="after")
    def _layout_is_whole(self) -> UploadBody:
        if (self.part_size is None) != (self.parts is None):
            missing = "part_size" if self.part_size is None else "parts"
            raise ValidationError(
                f"{missing}: is required with {'parts' if missing == 'part_size' else 'part_size'}", field=missing
            )
        return self


def metadata_fits(value: dict[str, str] | None) -> dict[str, str] | None:
    if value and sum(len(k.encode()) + len(v.encode()) for k, v in value.items()) > MAX_METADATA_BYTES:
        raise ValueError(f"metadata is larger than {MAX_METADATA_BYTES} bytes")
    return value


class Content(BlobRef):
    """What LATEST points at: a stored blob plus how to serve it."""

    content_type: ContentType = DEFAULT_CONTENT_TYPE
    metadata: dict[MetadataKey, StrictStr] = Field(default_factory=dict)

    _metadata_fits = field_validator("metadata")(metadata_fits)


class StoredContent(Content):
    """Content as LATEST and versions store it: with the layout of multipart content (None for one PUT), which
    the service finds from the upload that assembled it; never part of a request."""

    part_size: int | None = None
    parts_sha256: str | None = None
    files: int | None = None  # a tree's count of files (its bytes are its tree manifest, arca.domain.trees)
    # The sha256 of a tree's types document (arca.domain.trees.types_document): its files' content types that are
    # not the default (None: every file is served as the default, or one blob).
    file_types: str | None = None


class PruneBody(_Body):
    keep_last: Annotated[StrictInt, Field(ge=0, le=999_999)]
    older_than_days: Annotated[StrictInt, Field(ge=0, le=36_500)] | None = None
    dry_run: StrictBool = False
    next_token: Annotated[StrictStr, Field(max_length=2048)] | None = None


def _target(value: object) -> int | str:
    """A version number or "LATEST", strictly: "3" and true are not versions."""
    if value == "LATEST" or (type(value) is int and 1 <= value <= 999_999):
        return value
    raise ValueError('must be a version number from 1 to 999999 or "LATEST"')


# One validator rather than a Union, so that an error names the field alone (no union member in its loc).
Target = Annotated[
    int | str,
    PlainValidator(_target),
    WithJsonSchema({"anyOf": [{"type": "integer", "minimum": 1, "maximum": 999_999}, {"const": "LATEST"}]}),
]
MAX_WEIGHT = 99


class AliasBody(_Body):
    """PUT …/aliases/{alias}. A secondary gets `secondary_version_weight`% of traffic (canary)."""

    version: Target
    secondary_version: Target | None = None
    secondary_version_weight: Annotated[StrictInt, Field(ge=0, le=MAX_WEIGHT)] | None = None
    description: Annotated[StrictStr, Field(max_length=256), NoControl] | None = None
    reason: Reason | None = None
    expected_version: Target | None = None

    @model_validator(mode="after")
    def _canary_is_coherent(self) -> AliasBody:
        if self.secondary_version is not None and self.secondary_version == self.version:
            raise ValidationError("secondary_version: must differ from version", field="secondary_version")
        if self.secondary_version_weight is not None and self.secondary_version is None:
            raise ValidationError(
                "secondary_version_weight: is only allowed with a secondary_version", field="secondary_version_weight"
            )
        return self


class RollbackBody(_Body):
    to_revision: Annotated[StrictInt, Field(ge=1)] | None = None
    reason: Reason | None = None


# Progressive rollouts.

# CloudWatch's DescribeAlarms takes at most 100 names in one call.
MAX_ROLLOUT_ALARMS = 100
MAX_ROLLOUT_STEPS = 20


class RolloutBody(_Body):
    """PUT …/aliases/{alias}/rollout: `version` as the alias's secondary at each weight of `steps` in turn,
    `interval_seconds` apart, then its primary; any of `alarms` in ALARM before a step rolls it back."""

    version: Annotated[StrictInt, Field(ge=1, le=999_999)]
    steps: Annotated[
        list[Annotated[StrictInt, Field(ge=1, le=MAX_WEIGHT)]], Field(min_length=1, max_length=MAX_ROLLOUT_STEPS)
    ]
    interval_seconds: Annotated[StrictInt, Field(ge=1, le=86_400)]
    alarms: Annotated[list[AlarmName], Field(max_length=MAX_ROLLOUT_ALARMS)] = Field(default_factory=list)
    reason: Reason | None = None

    @model_validator(mode="after")
    def _steps_increase(self) -> RolloutBody:
        if any(later <= earlier for earlier, later in zip(self.steps, self.steps[1:], strict=False)):
            raise ValidationError("steps: weights must be strictly increasing", field="steps")
        return self


class LinkBody(_Body):
    """PUT …/link: the artifact this name leads to (it must exist and must not be a link itself)."""

    target: Annotated[StrictStr, Field(description="artifact name: one to eight segments joined by `/`")]

    @field_validator("target")
    @classmethod
    def _target_is_a_name(cls, value: str) -> str:
        return validate_name(value, field="target")


class LeaseBody(_Body):
    """PUT …/consumers/{consumer}: the consumer runs `version` for `ttl_seconds` (renewed by the same call)."""

    version: Annotated[StrictInt, Field(ge=1, le=999_999, description="a live version of the artifact")]
    ttl_seconds: Annotated[
        StrictInt, Field(ge=MIN_TTL, le=MAX_TTL, description="seconds until the lease lapses unless renewed")
    ] = DEFAULT_TTL
    labels: Annotated[
        dict[StrictStr, StrictStr] | None,
        Field(description=f"at most {MAX_LABELS}; keys as tag keys, values up to 256 characters"),
    ] = None

    @field_validator("labels")
    @classmethod
    def _labels_are_valid(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        if value is not None:
            check_labels(value)
        return value


# Tags (arca.domain.tags holds the rules): a null value removes the key.
TagMap = dict[StrictStr, StrictStr | None]


class _TagBody(_Body):
    @field_validator("tags", check_fields=False)
    @classmethod
    def _tags_are_valid(cls, value: TagMap | None) -> TagMap | None:
        if value is not None:
            check_patch(value)
        return value


class ArtifactPatch(_TagBody):
    """PATCH /artifacts/{name}: the artifact's description and tags (merged)."""

    description: Annotated[StrictStr, Field(max_length=MAX_DESCRIPTION), NoControl] | None = None
    tags: TagMap | None = None


class ArtifactCreate(_TagBody):
    """PUT /artifacts/{name}: an artifact with no version yet, with its description and tags."""

    description: Annotated[StrictStr, Field(max_length=MAX_DESCRIPTION), NoControl] | None = None
    tags: dict[StrictStr, StrictStr] | None = None


class VersionPatch(_TagBody):
    """PATCH …/versions/{version}: the version's tags (merged)."""

    tags: TagMap


# Live aliases an artifact may have. Each pins its versions in their `pinned_by` sets, so this also keeps
# every version item far below DynamoDB's 400 KB item limit (100 names of at most 64 bytes).
MAX_ALIASES = 100

# Attestations: at most this many a version; inline content at most this many bytes (as canonical JSON).
MAX_ATTESTATIONS = 100
MAX_INLINE_ATTESTATION = 256 * 1024
AttestationType = Annotated[
    StrictStr,
    Field(
        pattern=r"^[a-z0-9][a-z0-9.+_/-]{0,127}$",
        description="e.g. slsa-provenance, sbom-spdx, test-report, or a media type (an OCI artifactType)",
    ),
]


def _strict_json(value: object) -> None:
    """ValueError for a number JSON cannot hold: NaN and Infinity are no JSON (Python's parser takes them), and a
    literal beyond a double (`1e400`) parses as Infinity."""
    pending = [value]
    while pending:  # iteratively: the body may nest as deep as the parser took it
        item = pending.pop()
        if isinstance(item, float) and not math.isfinite(item):
            raise ValueError("is not strict JSON: NaN, Infinity and numbers beyond a double (1e400) have no JSON")
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)


class AttestationBody(_Body):
    """`{type, content}` (a JSON object, stored by the service) or `{type, sha256, size, media_type}` (a blob
    uploaded through POST …/uploads)."""

    type: AttestationType
    content: dict[str, object] | None = None
    sha256: Sha256 | None = None
    size: Annotated[StrictInt, Field(ge=0, le=MAX_BLOB_SIZE)] | None = None
    media_type: ContentType | None = None

    @field_validator("content")
    @classmethod
    def _is_json(cls, value: dict[str, object] | None) -> dict[str, object] | None:
        _strict_json(value)
        return value

    @model_validator(mode="after")
    def _one_source(self) -> AttestationBody:
        if self.content is not None:
            if self.sha256 is not None or self.size is not None:
                raise ValueError("give either content or sha256 and size, not both")
        elif self.sha256 is None or self.size is None:
            raise ValueError("give content (a JSON object), or sha256 and size of an uploaded blob")
        return self
