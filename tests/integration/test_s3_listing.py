"""Local S3's version listings (local/s3_listing.py): only the keys under the prefix are read, the answer is the one
moto gave before (versions newest first, `IsLatest`, pages), and writes in other threads never break a listing."""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any

import pytest
from moto.s3.models import FakeKey


def versions(aws: SimpleNamespace, prefix: str, **kwargs: Any) -> list[tuple[str, bool]]:
    pages = aws.s3.get_paginator("list_object_versions").paginate(Bucket=aws.bucket, Prefix=prefix, **kwargs)
    return [(v["Key"], v["IsLatest"]) for page in pages for v in page.get("Versions", [])]


def test_a_listing_answers_the_prefix_versions_newest_first_in_pages_and_copies_nothing_else(
    aws: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given two versions of two keys under the prefix (a versioned bucket, as the stack's is), and keys outside it
    aws.s3.put_bucket_versioning(Bucket=aws.bucket, VersioningConfiguration={"Status": "Enabled"})
    for key in ("a/1", "a/2", "a/1", "a/2", "a-other", "b/1"):
        aws.s3.put_object(Bucket=aws.bucket, Key=key, Body=key.encode())
    copied: list[str] = []
    state = FakeKey.__getstate__

    def counted(key: FakeKey) -> dict[str, Any]:
        copied.append(key.name)
        return state(key)

    monkeypatch.setattr(FakeKey, "__getstate__", counted)
    # When listed whole and one version a page
    whole, paged = versions(aws, "a/"), versions(aws, "a/", PaginationConfig={"PageSize": 1})
    # Then both answer the prefix's four versions, the newest of each key first, and copy only those
    assert whole == paged == [("a/1", True), ("a/1", False), ("a/2", True), ("a/2", False)]
    assert set(copied) == {"a/1", "a/2"}


def test_writes_in_other_threads_never_break_a_listing(aws: SimpleNamespace) -> None:
    # Given a bucket of many keys, and a thread adding and deleting keys outside the listed prefix all along
    for n in range(300):
        aws.s3.put_object(Bucket=aws.bucket, Key=f"many/{n}", Body=b"x" * 1000)
    aws.s3.put_object(Bucket=aws.bucket, Key="listed/key", Body=b"listed")
    done = threading.Event()
    errors: list[BaseException] = []

    def churn() -> None:
        n = 0
        while not done.is_set():
            try:
                aws.s3.put_object(Bucket=aws.bucket, Key=f"churn/{n}", Body=b"y")
                aws.s3.delete_object(Bucket=aws.bucket, Key=f"churn/{n - 5}")
            except BaseException as error:
                errors.append(error)
            n += 1

    writer = threading.Thread(target=churn)
    writer.start()
    try:
        # When the prefix is listed again and again meanwhile
        listed = [versions(aws, "listed/") for _ in range(40)]
    finally:
        done.set()
        writer.join()
    # Then every listing answered its one version
    assert errors == []
    assert all(answer == [("listed/key", True)] for answer in listed)
