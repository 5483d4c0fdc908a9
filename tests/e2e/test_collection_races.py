"""Collection under concurrency, on DynamoDB Local: retention's applies race publishes, `PUT latest`, re-uploads and
each other, round after round, and an invariant checker looks at what is stored after every round.

The invariants: every version that is not expired, and LATEST, has its bytes in the bucket; and each content's
blob count equals the references it counts (the versions marked `counted` that are not expired, and LATEST's
`counted_sha256`). Threads call the services directly (each with clients of its own, as concurrent Lambda
instances would): local mode runs one invocation per function at a time, so these races cannot happen over HTTP.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
import requests
from boto3.dynamodb.types import TypeDeserializer

from arca import settings
from arca.adapters import keys
from arca.domain.errors import ConflictError, NotFoundError
from arca.domain.models import BlobRef, Content
from arca.domain.retention import RetentionBody
from arca.wiring import build
from tests.door import CURL_DEFAULT_HEADERS
from tests.e2e.conftest import ArcaHttp
from tests.e2e.test_races import race
from tests.helpers import acting, sha256

ROUNDS = 25
_deserialize = TypeDeserializer().deserialize


def stored(name: str) -> dict[str, dict[str, Any]]:
    """Every item of the artifact's partition and of its blob counts, by (pk, sk)."""
    client = boto3.client("dynamodb")
    found: dict[str, dict[str, Any]] = {}
    for pk in (name, keys.blobs_pk(name)):
        pages = client.get_paginator("query").paginate(
            TableName=settings.settings().table_name,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": pk}},
            ConsistentRead=True,
        )
        for page in pages:
            for item in page["Items"]:
                plain = {k: _deserialize(v) for k, v in item.items()}
                found[f"{plain['pk']}|{plain['sk']}"] = plain
    return found


@dataclass(frozen=True)
class Snapshot:
    """`name`'s items (by `pk|sk`), the keys of its stored blobs, LATEST, and the unexpired versions."""

    items: dict[str, dict[str, Any]]
    objects: set[str]
    latest: dict[str, Any]
    holders: list[dict[str, Any]]


def snapshot(name: str) -> Snapshot:
    items = stored(name)
    s3 = boto3.client("s3")
    bucket = settings.settings().bucket_name
    objects = {
        o["Key"]
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=keys.blob_prefix(name))
        for o in page.get("Contents", [])
    }
    latest = items[f"{name}|LATEST"]
    holders = [i for k, i in items.items() if i["pk"] == name and k != f"{name}|LATEST" and not i.get("expired")]
    return Snapshot(items, objects, latest, holders)


def violations(name: str) -> list[str]:
    """What breaks the invariants in `name` now (empty: nothing)."""
    now = snapshot(name)
    items, objects, latest, holders = now.items, now.objects, now.latest, now.holders
    found: list[str] = []
    for holder in (*holders, latest):
        if keys.blob_key(name, holder["sha256"]) not in objects:
            found.append(f"{holder['sk']} holds {holder['sha256'][:8]} whose bytes are gone")
    expected: dict[str, int] = {}
    for sha in (*(v["sha256"] for v in holders if v.get("counted")), latest.get("counted_sha256")):
        if sha:
            expected[sha] = expected.get(sha, 0) + 1
    counts = {i["sk"]: int(i.get("refs", 0)) for i in items.values() if i["pk"] == keys.blobs_pk(name)}
    if {k: v for k, v in counts.items() if v} != expected:
        found.append(f"counts {counts} are not the references {expected}")
    return found


def upload(services: Any, name: str, data: bytes) -> None:
    """POST …/uploads, then PUT the bytes unless they are stored (as a client does)."""
    answer = acting("publish", services.publishing).create_upload(name, BlobRef(sha256=sha256(data), size=len(data)))
    if not answer.exists:
        assert answer.upload is not None
        put = requests.put(
            answer.upload.url, data=data, headers={**CURL_DEFAULT_HEADERS, **answer.upload.headers}, timeout=30
        )
        assert put.status_code in (200, 412), put.text  # 412: another thread's upload created it first


def given_content_due_to_expire(arca: ArcaHttp, name: str, data: bytes) -> None:
    """Version 1 holds `data`, soft-deleted and due to expire; 2 holds other content, and LATEST too."""
    arca.published(name, data)
    arca.published(name, data + b" (newer)")
    assert arca.request("DELETE", f"/artifacts/{name}/versions/1").status_code == 200
    acting("publish", build().retention).put(name, RetentionBody(keep_last=1, rollback_window=0, expire_after_days=0))
    time.sleep(0.002)  # deleted before the cutoff (now), to the millisecond


def rounds(
    arca: ArcaHttp,
    unique: str,
    work: Callable[[str, bytes], Callable[[int], str]],
    threads: int,
    *,
    given: Callable[[ArcaHttp, str, bytes], None] = given_content_due_to_expire,
    check: Callable[[str], list[str]] = violations,
) -> dict[str, int]:
    """ROUNDS rounds of `work` on a fresh artifact each (up to three times as many while no write has won yet: a
    loaded machine can let the collection win every round, which proves nothing of the other order); the invariants
    (`check`) checked after every round. Returns how often each outcome came."""
    broken: list[tuple[int, list[str]]] = []
    outcomes: dict[str, int] = {}
    for number in range(3 * ROUNDS):
        if number >= ROUNDS and outcomes.get("ok", 0) > 0:
            break
        name = f"{unique}/r{number}"
        data = f"{name} content".encode()
        given(arca, name, data)
        for outcome in race(work(name, data), threads=threads):
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
        found = check(name)
        if found:
            broken.append((number, found))
    assert not broken, f"{len(broken)} of {ROUNDS} rounds broke the invariants: {broken[:3]} ({outcomes})"
    assert outcomes.get("ok", 0) > 0, outcomes
    return outcomes


def expired(services: Any, name: str, applied: threading.Event) -> None:
    """Wait until version 1 of `name` has expired (or the apply is over)."""
    while not applied.is_set():
        item = acting("publish", services.stores.table).get(keys.version_key(name, 1))
        if item is None or item.get("expired"):
            return


def _applier(services: Any, name: str) -> str:
    acting("publish", services.retention).apply(name)
    return "applied"


@pytest.mark.parametrize("write", ["publish", "latest"])
def test_a_publish_or_put_latest_racing_a_collection_never_commits_without_bytes(
    arca: ArcaHttp, unique: str, write: str
) -> None:
    # Given content whose only version expires now (its bytes are collected), and writers referencing it again
    def work(name: str, data: bytes) -> Callable[[int], str]:
        applied = threading.Event()

        def run(t: int) -> str:
            services = build()
            if t == 0:
                try:
                    return _applier(services, name)
                finally:
                    applied.set()
            publishing = acting("publish", services.publishing)
            content = Content(sha256=sha256(data), size=len(data), metadata={"t": str(t)})
            # Once version 1 has expired, its content has no reference left: its collection begins now
            expired(services, name, applied)
            try:
                if write == "publish":
                    publishing.publish(name, content, force=True)
                else:
                    publishing.put_latest(name, content)
            except ConflictError:
                return "refused"  # 409: the content went meanwhile; upload it again
            return "ok"

        return run

    # When they race, round after round; Then no round leaves a reference without its bytes, and counts are exact
    rounds(arca, unique, work, threads=4)


def test_two_collections_and_a_re_upload_never_delete_published_bytes(arca: ArcaHttp, unique: str) -> None:
    # Given content whose only version expires now; two applies (the sweep and a user's) and a client that
    # uploads that content again and publishes it
    def work(name: str, data: bytes) -> Callable[[int], str]:
        def run(t: int) -> str:
            services = build()
            if t < 2:
                return _applier(services, name)
            publishing = acting("publish", services.publishing)
            for _ in range(2):  # as `arca publish` does: once more when the content went between the two calls
                try:
                    upload(services, name, data)
                    publishing.publish(name, Content(sha256=sha256(data), size=len(data)), force=True)
                except (ConflictError, NotFoundError):
                    continue
                return "ok"
            return "refused"

        return run

    # When they race; Then no published bytes are deleted, and counts are exact
    rounds(arca, unique, work, threads=3)
