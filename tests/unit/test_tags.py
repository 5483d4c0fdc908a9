"""Tag rules and the search keys, without DynamoDB."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arca.adapters import keys
from arca.domain.errors import ValidationError
from arca.domain.tags import MAX_TAGS, check_patch, merge, parse_filter

KEYS = st.from_regex(r"[a-z0-9][a-z0-9_.:/-]{0,20}", fullmatch=True)
VALUES = st.text(max_size=30)


@given(st.dictionaries(KEYS, VALUES, max_size=20), st.dictionaries(KEYS, st.none() | VALUES, max_size=20))
def test_merge_sets_named_keys_removes_nulls_and_keeps_the_rest(current: dict[str, str], patch: dict) -> None:
    merged = merge(current, patch)
    for key, value in patch.items():
        assert merged.get(key) == value
    for key, value in current.items():
        if key not in patch:
            assert merged[key] == value
    assert set(merged) <= set(current) | set(patch)


def test_merge_refuses_more_than_the_limit_naming_tags() -> None:
    current = {f"k{i}": "v" for i in range(MAX_TAGS)}
    assert len(merge(current, {"k0": None, "new": "v"})) == MAX_TAGS
    with pytest.raises(ValidationError) as raised:
        merge(current, {"new": "v"})
    assert raised.value.field == "tags"


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"Upper": "v"}, "tags.Upper"),
        ({"-lead": "v"}, "tags.-lead"),
        ({"a=b": "v"}, "tags.a=b"),
        ({"a#b": "v"}, "tags.a#b"),
        ({"k": "v" * 257}, "tags.k"),
        ({f"k{i}": None for i in range(MAX_TAGS + 1)}, "tags"),
    ],
)
def test_bad_patches_name_the_key(patch: dict, field: str) -> None:
    with pytest.raises(ValidationError) as raised:
        check_patch(patch)
    assert raised.value.field == field


def test_a_patch_at_the_limits_is_accepted() -> None:
    check_patch({"a" * 128: "v" * 256, "team:area/x.y_z-1": "", "gone": None})


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("env:prod", ("env", "prod")),
        ("env=prod", ("env", "prod")),
        ("team:area=payments", ("team:area", "payments")),
        ("url=http://x:1/=", ("url", "http://x:1/=")),
        ("empty=", ("empty", "")),
        ("empty:", ("empty", "")),
    ],
)
def test_a_filter_splits_at_the_first_equals_else_the_first_colon(text: str, parsed: tuple[str, str]) -> None:
    assert parse_filter(text) == parsed


@pytest.mark.parametrize("text", ["novalue", "=v", ":v", "Bad:v", "k=" + "v" * 257])
def test_a_bad_filter_is_refused_naming_tag(text: str) -> None:
    with pytest.raises(ValidationError) as raised:
        parse_filter(text)
    assert raised.value.field == "tag"


def test_an_artifacts_versions_share_a_search_prefix_no_other_artifact_has() -> None:
    prefix = keys.search_prefix("app")
    assert keys.version_search_sk("app", 7).startswith(prefix)
    assert not keys.version_search_sk("app/x", 7).startswith(prefix)
    assert not keys.version_search_sk("app-x", 7).startswith(prefix)


def test_time_keys_sort_by_creation_then_number() -> None:
    early = keys.time_sk("2026-01-01T00:00:00.000Z", 9)
    late = keys.time_sk("2026-01-01T00:00:00.001Z", 1)
    assert early < late
    # the strict bounds of a range: `<t>#~` after every key at t, `<t>#` before them
    assert keys.time_sk("2026-01-01T00:00:00.000Z", 999_999) < "2026-01-01T00:00:00.000Z#~"
    assert late > "2026-01-01T00:00:00.001Z#"


def test_index_tokens_round_trip_and_stay_in_their_partition_and_range() -> None:
    last = {"pk": "app", "sk": "000003", "gsi1pk": "sha256#ab", "gsi1sk": "app#000003"}
    token = keys.encode_index_token(last, "s", index=keys.SEARCH_INDEX)
    within = lambda sk: sk.startswith("app#")  # noqa: E731
    assert keys.decode_index_token(token, "s", index=keys.SEARCH_INDEX, pk="sha256#ab", within=within) == last
    # the index partition is the request's own, whatever the token was issued for
    moved = keys.decode_index_token(token, "s", index=keys.SEARCH_INDEX, pk="sha256#cd", within=within)
    assert moved["gsi1pk"] == "sha256#cd"
    for scope, test in (("other", within), ("s", lambda sk: sk.startswith("zzz#"))):
        with pytest.raises(ValidationError):
            keys.decode_index_token(token, scope, index=keys.SEARCH_INDEX, pk="sha256#ab", within=test)
    with pytest.raises(ValidationError):
        keys.decode_index_token(token, "s", index=keys.TIME_INDEX, pk="app", within=lambda sk: True)
