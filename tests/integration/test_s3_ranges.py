"""Local S3's ranged GETs (local/s3_ranges.py): one byte range is read from the key's buffer, never the whole object,
and every answer is the one moto gave before (status, Content-Range, 416 past the end, whole answers otherwise)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
import requests
from moto.s3.models import FakeKey

from local.s3_ranges import single_range

KEY = "artifacts/app/_blobs/ranged"
# Larger than moto's in-memory buffer (about 5 MiB): the bytes are in a file on disk, as a large upload's are.
DATA = os.urandom(6 * 1024 * 1024 + 123)


@pytest.fixture
def stored(aws: SimpleNamespace) -> str:
    """The object's presigned GET URL."""
    aws.s3.put_object(Bucket=aws.bucket, Key=KEY, Body=DATA)
    return str(aws.s3.generate_presigned_url("get_object", Params={"Bucket": aws.bucket, "Key": KEY}))


@pytest.fixture
def whole_reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every read of a key's whole value (moto's FakeKey.value), by key name."""
    reads: list[str] = []
    value = FakeKey.value

    def counted(key: FakeKey) -> bytes:
        reads.append(key.name)
        return value.fget(key)  # type: ignore[attr-defined,no-any-return]

    monkeypatch.setattr(FakeKey, "value", property(counted, value.fset))  # type: ignore[attr-defined]
    yield reads


@pytest.mark.parametrize(
    ("header", "start", "end"),
    [
        ("bytes=0-99", 0, 99),
        ("bytes=5242880-6291455", 5242880, 6291455),
        ("bytes=6291456-", 6291456, len(DATA) - 1),
        ("bytes=-1000", len(DATA) - 1000, len(DATA) - 1),
        ("bytes=6291400-99999999", 6291400, len(DATA) - 1),
    ],
)
def test_a_ranged_get_answers_its_range_without_reading_the_whole_object(
    stored: str, whole_reads: list[str], header: str, start: int, end: int
) -> None:
    # When one range of a large object is asked for
    answer = requests.get(stored, headers={"Range": header}, timeout=10)
    # Then it is answered as S3 answers it, and the object was never read whole
    assert answer.status_code == 206, answer.text
    assert answer.content == DATA[start : end + 1]
    assert answer.headers["Content-Range"] == f"bytes {start}-{end}/{len(DATA)}"
    assert int(answer.headers["Content-Length"]) == end - start + 1
    assert whole_reads == []


def test_a_range_past_the_end_is_refused_as_before(stored: str) -> None:
    answer = requests.get(stored, headers={"Range": f"bytes={len(DATA)}-"}, timeout=10)
    assert (answer.status_code, "<Code>InvalidRange</Code>" in answer.text) == (416, True), answer.text


@pytest.mark.parametrize("header", [None, "bytes=0-9,20-29", "bytes=20-10"])
def test_gets_without_one_range_answer_the_whole_object_as_before(stored: str, header: str | None) -> None:
    answer = requests.get(stored, headers={"Range": header} if header else {}, timeout=10)
    assert (answer.status_code, answer.content) == (200, DATA)


def test_a_ranged_get_of_a_small_object_held_in_memory(aws: SimpleNamespace, whole_reads: list[str]) -> None:
    # Given an object small enough for moto to keep in memory
    aws.s3.put_object(Bucket=aws.bucket, Key="small", Body=b"0123456789")
    # When two ranges of it are read through the SDK
    first = aws.s3.get_object(Bucket=aws.bucket, Key="small", Range="bytes=2-4")["Body"].read()
    last = aws.s3.get_object(Bucket=aws.bucket, Key="small", Range="bytes=-3")["Body"].read()
    # Then each is its range
    assert (first, last) == (b"234", b"789")
    assert whole_reads == []


def test_a_ranged_get_of_a_missing_key_is_no_such_key(aws: SimpleNamespace) -> None:
    url = aws.s3.generate_presigned_url("get_object", Params={"Bucket": aws.bucket, "Key": "missing"})
    answer = requests.get(url, headers={"Range": "bytes=0-9"}, timeout=10)
    assert (answer.status_code, "<Code>NoSuchKey</Code>" in answer.text) == (404, True)


@pytest.mark.parametrize(
    ("header", "one"),
    [("bytes=0-9", True), ("bytes=-9", True), ("bytes=9-", True), ("bytes=-", False), ("bytes=1-2,4-5", False)],
)
def test_only_a_single_byte_range_is_read_in_place(header: str, one: bool) -> None:
    assert single_range(header) is one
