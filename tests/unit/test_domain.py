"""Pure domain logic: names, version encoding, canary choice; and that domain/ stays pure."""

from __future__ import annotations

import ast
import hashlib
import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arca.domain.errors import ValidationError
from arca.domain.names import RESERVED_SEGMENTS, parse_target, parse_version, validate_alias, validate_name
from arca.domain.routing import PRIMARY, SECONDARY, bucket, choose_route
from arca.domain.versions import LATEST, MAX_VERSION, encode_version
from arca.services.retry import Budget

segments = st.from_regex(r"[a-z0-9]([a-z0-9._-]{0,10}[a-z0-9])?", fullmatch=True).filter(
    lambda s: s not in RESERVED_SEGMENTS
)
names = st.lists(segments, min_size=1, max_size=8).map("/".join)


@given(st.integers(min_value=1, max_value=MAX_VERSION))
def test_version_encoding_round_trips_and_sorts_numerically(number: int) -> None:
    encoded = encode_version(number)
    assert len(encoded) == 6
    assert int(encoded) == number


@given(st.integers(min_value=1, max_value=MAX_VERSION), st.integers(min_value=1, max_value=MAX_VERSION))
def test_sort_keys_order_like_numbers(a: int, b: int) -> None:
    assert (encode_version(a) < encode_version(b)) == (a < b)


@pytest.mark.parametrize("bad", [0, -1, MAX_VERSION + 1])
def test_versions_outside_the_range_cannot_be_encoded(bad: int) -> None:
    with pytest.raises(ValueError):
        encode_version(bad)


def test_latest_encodes_to_itself() -> None:
    assert encode_version(LATEST) == LATEST


@given(names)
def test_valid_names_are_accepted(name: str) -> None:
    assert validate_name(name) == name


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "A",
        "a//b",
        "/a",
        "a/",
        "-a",
        "a-",
        "_a",
        "__a-alias",
        "a/versions",
        "latest",
        "a b",
        "a" * 65,
        "a/" * 8 + "a",
    ],
)
def test_invalid_names_are_refused_naming_the_field(bad: str) -> None:
    with pytest.raises(ValidationError) as raised:
        validate_name(bad)
    assert raised.value.field == "name"


def test_alias_partition_cannot_collide_with_an_artifact_name() -> None:
    # The bug of the best-known library: an artifact named `__x-alias` shares x's alias partition.
    with pytest.raises(ValidationError):
        validate_name("__x-alias")


@pytest.mark.parametrize("bad", ["LATEST", "1", "123", "-x", ".x", "a~b", "a#b", "a@b", "a b", "", "x" * 129])
def test_alias_names_are_never_numbers_or_latest(bad: str) -> None:
    with pytest.raises(ValidationError):
        validate_alias(bad)


@pytest.mark.parametrize("good", ["prod", "Prod", "v1.0", "1.0.0", "1x", "_x", "latest", "Latest", "x" * 128])
def test_alias_names_are_ocis_tags(good: str) -> None:
    assert validate_alias(good) == good


@pytest.mark.parametrize(("raw", "expected"), [("1", 1), ("7", 7), (42, 42), ("999999", 999_999)])
def test_version_numbers_parse(raw: object, expected: int) -> None:
    assert parse_version(raw) == expected


@pytest.mark.parametrize("bad", [True, "0", "1.5", "1e3", "1000000", "", " 1", -3, None, "000007", "01"])
def test_bad_version_numbers_are_refused(bad: object) -> None:
    with pytest.raises(ValidationError):
        parse_version(bad)


def test_targets_are_numbers_or_latest() -> None:
    assert parse_target("LATEST") == LATEST
    assert parse_target("3") == 3
    with pytest.raises(ValidationError):
        parse_target("latest")


@given(st.text(max_size=30), st.integers(min_value=0, max_value=99))
def test_routing_is_deterministic_per_key(key: str, weight: int) -> None:
    first = choose_route(weight, "app", "prod", key)
    assert all(choose_route(weight, "app", "prod", key) == first for _ in range(3))


@given(st.text(max_size=30))
def test_weight_zero_never_routes_to_secondary(key: str) -> None:
    assert choose_route(0, "app", "prod", key) == PRIMARY
    assert choose_route(0, "app", "prod", None, random.Random(1)) == PRIMARY


@pytest.mark.parametrize("weight", [1, 10, 25, 50, 90, 99])
def test_share_across_keys_matches_the_weight(weight: int) -> None:
    keys = [f"user-{i}" for i in range(20_000)]
    share = sum(choose_route(weight, "app", "prod", k) == SECONDARY for k in keys) / len(keys)
    assert abs(share - weight / 100) < 0.015


def test_random_routing_without_key_follows_the_weight() -> None:
    rng = random.Random(42)
    share = sum(choose_route(30, "app", "prod", None, rng) == SECONDARY for _ in range(20_000)) / 20_000
    assert abs(share - 0.30) < 0.015


def test_buckets_differ_between_aliases_of_the_same_key() -> None:
    # Independent canaries on two aliases must not always pick the same users.
    same = sum(bucket("app", "prod", f"k{i}") == bucket("app", "beta", f"k{i}") for i in range(1000))
    assert same < 50


def test_domain_imports_no_boto3_and_reads_no_environment() -> None:
    domain = Path(__file__).resolve().parents[2] / "lambdas" / "arca" / "domain"
    for path in domain.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                assert not any(m.split(".")[0] in {"boto3", "botocore", "os"} for m in modules), path
            if isinstance(node, ast.Attribute):
                assert node.attr != "environ", path


def test_budget_stops_at_its_call_count() -> None:
    # Given
    budget = Budget(calls=2)
    # When / Then
    assert [budget.spend() for _ in range(3)] == [True, True, False]


def test_budget_stops_while_the_reserve_of_time_remains() -> None:
    # Given a function with 25 s left, then 19 s, and 20 s kept in reserve
    left = iter([25.0, 19.0])
    budget = Budget(time_left=lambda: next(left), reserve=20.0)
    # When / Then
    assert budget.spend() is True
    assert budget.spend() is False


def test_multipart_layouts_follow_s3s_rules() -> None:
    from arca.domain import multipart
    from arca.domain.errors import PayloadTooLargeError

    mib = 1024**2
    # Accepted: an only part of any size up to 5 GiB, and parts of 5 MiB with a short last one
    multipart.check_layout(3, 3, ["a" * 64])
    multipart.check_layout(11 * mib, 5 * mib, ["a" * 64] * 3)
    multipart.check_layout(10_000 * 5 * mib, 5 * mib, ["a" * 64] * 10_000)
    # Refused, naming the field
    cases = [
        ((5 * 1024**4 + 1, 5 * 1024**3, ["a" * 64] * 1025), PayloadTooLargeError, "size"),
        ((0, 5 * mib, []), ValidationError, "size"),
        ((6 * 1024**3, 6 * 1024**3, ["a" * 64]), ValidationError, "part_size"),
        ((10 * mib, 4 * mib, ["a" * 64] * 3), ValidationError, "part_size"),
        ((10_001 * 5 * mib, 5 * mib, ["a" * 64] * 10_001), ValidationError, "parts"),
        ((11 * mib, 5 * mib, ["a" * 64] * 2), ValidationError, "parts"),
    ]
    for args, error, field in cases:
        with pytest.raises(error) as refused:
            multipart.check_layout(*args)
        assert refused.value.field == field, args
    # A layout's name is S3's composite checksum: the SHA-256 of the part digests; hashes pack to 32 bytes each
    parts = [hashlib.sha256(b"one").hexdigest(), hashlib.sha256(b"two").hexdigest()]
    digest = hashlib.sha256(hashlib.sha256(b"one").digest() + hashlib.sha256(b"two").digest()).hexdigest()
    assert multipart.parts_sha256(parts) == digest
    assert multipart.unpack(multipart.pack(parts)) == parts and len(multipart.pack(parts)) == 64
