"""The decoder of the client's models: each field read by its annotated type, leniently."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import pytest

from arca_client.decoding import Decoded, decode
from arca_client.models import Alias, AliasRevision, ArtifactSummary, Version


@dataclass(frozen=True)
class Part:
    number: int
    sha256: str | None = None


@dataclass(frozen=True)
class Sample(Decoded):
    WIRE: ClassVar[dict[str, str]] = {"url": "upload.url", "expires_at": "upload.expires_at"}
    LOCAL: ClassVar[frozenset[str]] = frozenset({"seen_by"})
    name: str
    size: int | None
    version: int | str | None = None
    count: int = 0
    ratio: float = 0.0
    deleted: bool = False
    url: str | None = None
    expires_at: str = "never"
    first: Part | None = None
    parts: list[Part] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)
    tags: dict[str, str] = field(default_factory=dict)
    detail: dict[str, Any] = field(default_factory=dict)
    seen_by: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


def test_an_optional_int_reads_a_number_a_numeric_string_and_null() -> None:
    assert Sample.from_dict({"size": 5}).size == 5
    assert Sample.from_dict({"size": "5"}).size == 5
    assert Sample.from_dict({"size": None}).size is None
    assert Sample.from_dict({}).size is None


def test_a_version_ref_reads_a_number_and_keeps_latest_a_string() -> None:
    assert Sample.from_dict({"version": 3}).version == 3
    assert Sample.from_dict({"version": "3"}).version == 3
    assert Sample.from_dict({"version": "LATEST"}).version == "LATEST"
    assert Sample.from_dict({"version": None}).version is None


def test_scalars_are_made_their_type() -> None:
    sample = Sample.from_dict({"name": 12, "count": "4", "ratio": 1, "deleted": 1})
    assert (sample.name, sample.count, sample.ratio, sample.deleted) == ("12", 4, 1.0, True)
    assert isinstance(sample.ratio, float)


def test_a_nested_dataclass_and_a_list_of_them_are_decoded() -> None:
    # Given an answer with one nested object and a list of them
    answer = {"first": {"number": "1", "sha256": "aa"}, "parts": [{"number": 1}, {"number": 2, "sha256": "bb"}]}
    # When
    sample = Sample.from_dict(answer)
    # Then
    assert sample.first == Part(1, "aa")
    assert sample.parts == [Part(1), Part(2, "bb")]
    assert Sample.from_dict({"first": None}).first is None


def test_lists_and_dicts_coerce_their_items() -> None:
    sample = Sample.from_dict({"numbers": ["1", 2], "tags": {"n": 1}, "detail": {"n": 1, "list": [1]}})
    assert sample.numbers == [1, 2]
    assert sample.tags == {"n": "1"}  # dict[str, str]
    assert sample.detail == {"n": 1, "list": [1]}  # dict[str, Any]: as it is


def test_a_dotted_wire_path_reads_inside_an_object() -> None:
    sample = Sample.from_dict({"upload": {"url": "https://u", "expires_at": "soon"}, "url": "top-level"})
    assert (sample.url, sample.expires_at) == ("https://u", "soon")


@pytest.mark.parametrize(
    "answer", [{}, {"upload": None}, {"upload": {}}, {"upload": "text"}, {"upload": {"url": None}}]
)
def test_a_dotted_wire_path_missing_on_the_way_is_the_default(answer: dict[str, Any]) -> None:
    sample = Sample.from_dict(answer)
    assert (sample.url, sample.expires_at) == (None, "never")


def test_a_property_the_model_does_not_have_is_ignored() -> None:
    plain = Sample.from_dict({"name": "a", "size": 1})
    assert Sample.from_dict({"name": "a", "size": 1, "added_later": {"x": [1]}, "upload": {"new": 1}}) == plain


def test_a_missing_field_takes_the_callers_value_then_its_default_then_the_empty_value_of_its_type() -> None:
    # Given an answer without any field
    sample = Sample.from_dict({}, name="given")
    # Then: the caller's value, the defaults, and for a required field the empty value of its type
    assert sample == Sample(name="given", size=None)
    assert Sample.from_dict({}).name == ""
    assert decode(Part, {}) == Part(0)


def test_the_answer_wins_over_the_callers_value_and_a_local_field_is_never_read() -> None:
    sample = Sample.from_dict({"name": "answered", "seen_by": "server"}, name="given")
    assert sample.name == "answered"
    assert sample.seen_by is None
    assert Sample.from_dict({"seen_by": "server"}, seen_by="me").seen_by == "me"


def test_raw_is_the_answer_itself_and_none_reads_as_an_empty_answer() -> None:
    answer = {"name": "a", "size": 1, "first": {"number": 1}}
    assert Sample.from_dict(answer).raw is answer
    assert Sample.from_dict(None) == Sample(name="", size=None)


def test_a_value_of_the_wrong_shape_is_refused() -> None:
    with pytest.raises(TypeError, match=r"Sample\.count: expected int, got \[1\]"):
        Sample.from_dict({"count": [1]})
    with pytest.raises(TypeError, match=r"Sample\.parts: expected a list"):
        Sample.from_dict({"parts": {"number": 1}})
    with pytest.raises(ValueError, match=r"Sample\.first: Part\.number: invalid literal"):
        Sample.from_dict({"first": {"number": "one"}})
    with pytest.raises(ValueError, match=r"Sample\.size: invalid literal for int\(\)"):
        Sample.from_dict({"size": "big"})
    with pytest.raises(ValueError, match=r"Sample\.version: \['prod'\] fits no type of its union"):
        Sample.from_dict({"version": ["prod"]})
    with pytest.raises(TypeError, match="expected a JSON object"):
        decode(Sample, ["not", "an", "object"])  # type: ignore[arg-type]


def test_a_value_for_a_field_the_model_does_not_have_is_refused() -> None:
    with pytest.raises(TypeError, match=r"no fields \['nmae'\]"):
        Sample.from_dict({}, nmae="typo")


def test_an_alias_answered_without_a_revision_takes_it_from_the_etag() -> None:
    # Given a write answered with an empty body and the alias's revision in its ETag
    alias = Alias.from_dict(None, name="app", alias="prod", etag='W/"7"')
    # Then
    assert (alias.name, alias.alias, alias.revision, alias.version) == ("app", "prod", 7, None)
    # And the answer's own revision wins over the ETag's; an ETag that is not a number is no revision
    assert Alias.from_dict({"revision": 3}, etag='"7"').revision == 3
    assert Alias.from_dict({}, etag='"abc"').revision is None


def test_a_deletion_in_an_alias_history_is_deleted() -> None:
    assert AliasRevision.from_dict({"revision": 2, "action": "delete"}).deleted is True
    assert AliasRevision.from_dict({"revision": 1, "action": "set", "version": 4}).deleted is False


def test_an_empty_summary_has_latest_without_content() -> None:
    summary = ArtifactSummary.from_dict({"name": "app", "counts": {"versions": 1}})
    assert summary.latest == Version(name="", version="LATEST", sha256=None, size=None)
    assert (summary.counts.versions, summary.counts.aliases) == (1, 0)
