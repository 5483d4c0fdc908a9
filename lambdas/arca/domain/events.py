"""Events: what each committed change announces, and the ids that order them (pure; no I/O).

An event id is `<microseconds since the epoch, 16 digits>-<8 hex digits>`: fixed width, so ids sort as
strings in time order. Ids are made strictly increasing per artifact by the writer (after the artifact's
`last_event`, the floor), and the transaction that stores an event also moves `last_event` on LATEST
only forwards, so the order of ids is the order of commits.
"""

from __future__ import annotations

import operator
import secrets
from dataclasses import dataclass
from functools import reduce
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    GetJsonSchemaHandler,
    SerializerFunctionWrapHandler,
    Tag,
    model_serializer,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from arca.domain.entities import via_field

ID_PATTERN = r"^[0-9]{16}-[0-9a-f]{8}$"
_DIGITS = 16
Ref = int | Literal["LATEST"]  # a version number or LATEST


class Detail(BaseModel):
    """What an event of one type carries besides its id, time, author, version and alias.

    One class per event type (`TYPE`). A field left out (or absent from the stored map) and null is absent
    from the answer, as a key the writer did not put; one given as null stays null. Stored items drop nulls.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)
    TYPE: ClassVar[str]

    @model_serializer(mode="wrap")
    def _given(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        return {k: v for k, v in data.items() if v is not None or k in self.model_fields_set}

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        """The contract is the fields: the wrap serializer alone would leave the schema empty."""
        return handler({k: v for k, v in schema.items() if k != "serialization"})


def _absent_if_none() -> Any:
    return Field(None, exclude_if=lambda value: value is None)


def _absent_if_false() -> Any:
    return Field(False, exclude_if=lambda value: not value)


class _Content(Detail):
    sha256: str
    size: int
    content_type: str


class LatestUpdated(_Content):
    TYPE = "latest.updated"


class VersionPublished(_Content):
    TYPE = "version.published"


class VersionDeleted(Detail):
    TYPE = "version.deleted"
    prune: bool = _absent_if_false()  # a prune deleted it
    retention: bool = _absent_if_false()  # a retention run deleted it


class VersionRestored(Detail):
    TYPE = "version.restored"


class VersionTagged(Detail):
    TYPE = "version.tagged"
    tags: dict[str, str | None] = Field(description="the tags that changed: their new values, null for removed")


class ArtifactUpdated(Detail):
    TYPE = "artifact.updated"
    tags: dict[str, str | None] = Field(description="the tags that changed: their new values, null for removed")
    description: str | None = Field(None, description="present when the description changed")


class ArtifactCreated(Detail):
    TYPE = "artifact.created"
    tags: dict[str, str] = Field(description="the artifact's tags as created")
    description: str | None = _absent_if_none()


class AliasUpdated(Detail):
    TYPE = "alias.updated"
    revision: int
    action: str = Field(description="set, rollback or rollout")
    secondary_version: Ref | None = None
    secondary_version_weight: int | None = None
    previous_version: Ref | None = None
    reason: str | None = None
    rollback: bool = _absent_if_false()


class AliasDeleted(Detail):
    TYPE = "alias.deleted"
    revision: int


class LinkUpdated(Detail):
    TYPE = "link.updated"
    link: str
    target: str
    previous_target: str | None = _absent_if_none()


class LinkDeleted(Detail):
    TYPE = "link.deleted"
    link: str
    target: str


class _Rollout(Detail):
    id: str
    step: int
    weight: int
    steps: list[int]


class RolloutStarted(_Rollout):
    TYPE = "rollout.started"


class RolloutAdvanced(_Rollout):
    TYPE = "rollout.advanced"


class RolloutCompleted(_Rollout):
    TYPE = "rollout.completed"


class RolloutRolledBack(_Rollout):
    TYPE = "rollout.rolled_back"
    state: str | None = Field(None, description="rolled_back or aborted")
    alarm: str | None = Field(None, description="the alarm found in ALARM")


class ArtifactPurged(Detail):
    TYPE = "artifact.purged"
    newest_version: int | None = None
    purges: int


class VersionExpired(Detail):
    TYPE = "version.expired"
    retention: bool = True


class AliasPolicyUpdated(Detail):
    TYPE = "alias.policy_updated"
    revision: int
    removed: bool
    policy: dict[str, Any] | None = _absent_if_none()


class PromotionRequested(Detail):
    TYPE = "promotion.requested"
    id: str
    required_approvals: int
    reason: str | None = Field(None, exclude_if=lambda value: not value)
    rollout: dict[str, Any] | None = _absent_if_none()


class PromotionApproved(Detail):
    TYPE = "promotion.approved"
    id: str
    by: str | None = None
    approvals: int
    reason: str | None = None


class PromotionApplied(Detail):
    TYPE = "promotion.applied"
    id: str
    revision: int
    approved_by: list[str] = Field(default_factory=list, exclude_if=lambda value: not value)


class PromotionRejected(Detail):
    TYPE = "promotion.rejected"
    id: str
    by: str | None = None
    reason: str | None = None


class AttestationAdded(Detail):
    TYPE = "attestation.added"
    id: str
    type: str
    sha256: str


class ConsumerUpdated(Detail):
    TYPE = "consumer.updated"
    consumer: str
    expires_at: str
    labels: dict[str, str] = Field(default_factory=dict, exclude_if=lambda value: not value)
    previous_version: int | None = _absent_if_none()


class ConsumerReleased(Detail):
    TYPE = "consumer.released"
    consumer: str


DETAILS: dict[str, type[Detail]] = {
    d.TYPE: d
    for d in (
        LatestUpdated,
        VersionPublished,
        VersionDeleted,
        VersionRestored,
        VersionTagged,
        ArtifactUpdated,
        ArtifactCreated,
        AliasUpdated,
        AliasDeleted,
        LinkUpdated,
        LinkDeleted,
        RolloutStarted,
        RolloutAdvanced,
        RolloutCompleted,
        RolloutRolledBack,
        ArtifactPurged,
        VersionExpired,
        AliasPolicyUpdated,
        PromotionRequested,
        PromotionApproved,
        PromotionApplied,
        PromotionRejected,
        AttestationAdded,
        ConsumerUpdated,
        ConsumerReleased,
    )
}
EVENT_TYPES = tuple(DETAILS)


def _tag(value: Any) -> str | None:
    return value.TYPE if isinstance(value, Detail) else None


class _AnyOf:
    """The details' union is documented as `anyOf`: the event's `type` tells them apart, not their fields, and a
    detail with few fields (`latest.updated`'s) is valid under several of them, which `oneOf` would refuse."""

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        built = handler(schema)
        if "oneOf" in built:
            built["anyOf"] = built.pop("oneOf")
        return built


if TYPE_CHECKING:
    EventDetail = Detail
else:  # the union of every detail, told apart by the event's type (Event parses the stored map by it)
    _TAGGED = (Annotated[d, Tag(t)] for t, d in DETAILS.items())
    EventDetail = Annotated[reduce(operator.or_, _TAGGED), Discriminator(_tag), _AnyOf()]


def detail_of(type_: str, detail: Any) -> Detail:
    """`detail` (a stored or sent map, or a Detail) as the detail of an event of `type_`."""
    cls = DETAILS.get(type_)
    if cls is None:
        raise ValueError(f"unknown event type {type_!r}")
    if isinstance(detail, Detail):
        if not isinstance(detail, cls):
            raise ValueError(f"a {type_} event cannot carry {type(detail).__name__}")
        return detail
    return cls.model_validate(detail or {})


# The per-artifact feed, as the API shows it (arca.domain.entities holds the other answers; the resolve function,
# which announces nothing, never imports these models).


class Event(BaseModel):
    """One committed change. Ids sort in commit order within an artifact."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    id: str = Field(description="sorts in commit order within the artifact; `after=` takes it")
    type: str = Field(description="e.g. version.published, alias.updated")
    at: str
    by: str | None = Field(None, description="the caller's identity where known")
    name: str
    version: Ref | None = None
    alias: str | None = None
    detail: EventDetail = Field(description="what the change carries: its fields are the type's")

    @model_validator(mode="before")
    @classmethod
    def _typed_detail(cls, data: Any) -> Any:
        """The detail (a stored map, absent when empty) read as its type's: one type, one shape."""
        if isinstance(data, dict) and "type" in data:
            return {**data, "detail": detail_of(str(data["type"]), data.get("detail"))}
        return data


class EventPage(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)

    events: list[Event]
    next_token: str | None
    via: str | None = via_field()


@dataclass(frozen=True)
class Change:
    """One event a write announces, before it has an id, a time and an author (the transaction gives those).

    Its type is its detail's: a change carries exactly what its type announces. `by` names its author where it is
    not the transaction's (an approval applying a promotion writes the alias as the requester, but approves as
    the approver)."""

    detail: Detail
    version: int | str | None = None
    alias: str | None = None
    by: str | None = None

    def __post_init__(self) -> None:
        if type(self.detail) not in DETAILS.values():
            raise ValueError(f"unknown event detail {type(self.detail).__name__}")

    @property
    def type(self) -> str:
        return self.detail.TYPE


def event_id(micros: int, suffix: str | None = None) -> str:
    return f"{micros:0{_DIGITS}d}-{suffix or secrets.token_hex(4)}"


def micros_of(event: str) -> int:
    return int(event[:_DIGITS])


def next_ids(now_micros: int, floor: str | None, count: int) -> list[str]:
    """`count` increasing ids, all after `floor` (the artifact's `last_event`) even when this clock is behind.

    Each takes a microsecond of its own, so ids of one transaction never tie whatever their suffixes.
    """
    start = now_micros if floor is None else max(now_micros, micros_of(floor) + 1)
    return [event_id(start + i) for i in range(count)]
