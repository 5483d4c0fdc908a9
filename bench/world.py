"""The two systems under test, side by side in one moto world.

`World` sets the fake AWS environment, starts `mock_aws`, creates Arca's table (from infra/schema.py,
like tests/integration/conftest.py) and bucket, bootstraps the `versioned` library's own table and
bucket, and undoes all of it on exit. `ArcaSide` drives Arca only through its real Lambda handlers
(API Gateway proxy events, local.events.HandlerApi); `VersionedSide` calls the library's
S3+DynamoDB `Repository`, as its users do.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any
from unittest import mock

from bench.counting import install
from bench.harness import BenchFailure

KIB = 1024
MIB = 1024 * KIB
ARCA_TABLE = "arca-bench"
ARCA_BUCKET = "arca-bench-blobs"
VERSIONED_TABLE = "versioned-bench"
VERSIONED_BUCKET = "versioned-bench-blobs"
REGION = "us-east-1"
_PATTERN = bytes(range(256)) * 16  # 4 KiB


def blob_key(name: str, sha256: str) -> str:
    from arca.adapters import keys

    return keys.blob_key(name, sha256)


@dataclass(frozen=True)
class Blob:
    data: bytes
    sha256: str

    @property
    def size(self) -> int:
        return len(self.data)


@cache
def _base(size: int) -> bytes:
    return (_PATTERN * (size // len(_PATTERN) + 1))[:size]


@cache
def blob(size: int, tag: int) -> Blob:
    """Deterministic content: a repeated pattern whose last 8 bytes are `tag` (distinct tags, distinct sha256)."""
    if size < 8:
        raise ValueError("blobs are at least 8 bytes")
    data = _base(size)[:-8] + tag.to_bytes(8, "big")
    return Blob(data, hashlib.sha256(data).hexdigest())


class ArcaSide:
    """Arca through its handlers. Tracks each artifact's LATEST sha256 so cases can always change it."""

    def __init__(self) -> None:
        import requests

        from arca import wiring
        from local.events import HandlerApi

        self._requests = requests
        self.api = HandlerApi()
        self.services = wiring.services()
        self.latest: dict[str, str] = {}  # name -> sha256 of LATEST
        self.newest: dict[str, str] = {}  # name -> sha256 of the newest version
        self.deleted: set[tuple[str, int]] = set()
        self._stored: set[tuple[str, str]] = set()
        self.counter = install()
        self.counter.attach(self.services.stores.table.client)
        self.counter.attach(self.services.blobs.client)

    def call(
        self, method: str, path: str, body: Any = None, *, expect: int | tuple[int, ...] = 200, **kwargs: Any
    ) -> Any:
        """One request through the real handler; a status other than `expect` fails the bench."""
        reply = self.api.call(method, path, body, **kwargs)
        if reply.status not in (expect if isinstance(expect, tuple) else (expect,)):
            raise BenchFailure(f"Arca {method} {path} answered {reply.status} (expected {expect}): {reply.body}")
        return reply.body

    def upload(self, name: str, item: Blob) -> None:
        """What a client does: POST …/uploads, then PUT the bytes to the presigned URL (unless stored)."""
        body = self.call(
            "POST", f"/artifacts/{name}/uploads", {"sha256": item.sha256, "size": item.size}, expect=(200, 201)
        )
        self._stored.add((name, item.sha256))
        if body["exists"]:
            return
        upload = body["upload"]
        self.counter.record("S3", "PutObject (presigned, by client)")
        put = self._requests.put(upload["url"], data=item.data, headers=upload["headers"], timeout=120)
        if put.status_code != 200:
            raise BenchFailure(f"presigned PUT answered {put.status_code}: {put.text[:200]}")

    def fetch(self, url: str) -> bytes:
        """What a client does with a presigned download URL: one GET of its bytes."""
        self.counter.record("S3", "GetObject (presigned, by client)")
        got = self._requests.get(url, timeout=120)
        if got.status_code != 200:
            raise BenchFailure(f"presigned GET answered {got.status_code}: {got.text[:200]}")
        return bytes(got.content)

    def ensure_uploaded(self, name: str, item: Blob) -> None:
        if (name, item.sha256) not in self._stored:
            self.upload(name, item)

    def put_latest(self, name: str, item: Blob) -> Any:
        body = self.call("PUT", f"/artifacts/{name}/latest", {"sha256": item.sha256, "size": item.size})
        self.latest[name] = item.sha256
        return body

    def publish(self, name: str, item: Blob | None = None, *, expect: int = 201, force: bool = False) -> Any:
        """POST …/versions: empty body (snapshot LATEST) unless `item` (one-step publish of that blob)."""
        body: dict[str, Any] = {} if item is None else {"sha256": item.sha256, "size": item.size}
        if force:
            body["force"] = True
        reply = self.call("POST", f"/artifacts/{name}/versions", body or None, expect=expect)
        if item is not None:
            self.latest[name] = item.sha256
        self.newest[name] = reply["sha256"]
        return reply

    def create(self, name: str, item: Blob, *, versions: int = 0) -> None:
        """An artifact whose LATEST is `item`, with `versions` versions of it."""
        self.ensure_uploaded(name, item)
        self.put_latest(name, item)
        for _ in range(versions):
            self.publish(name, force=True)

    def set_deleted(self, name: str, version: int, deleted: bool) -> Any:
        """Soft-delete (DELETE …/versions/n) or restore (POST …/versions/n/restore) a version."""
        if deleted:
            reply = self.call("DELETE", f"/artifacts/{name}/versions/{version}")
        else:
            reply = self.call("POST", f"/artifacts/{name}/versions/{version}/restore")
        if reply["deleted"] != deleted:
            raise BenchFailure(f"Arca version {name} {version}: deleted is {reply['deleted']}, expected {deleted}")
        (self.deleted.add if deleted else self.deleted.discard)((name, version))
        return reply

    def other(self, name: str, pair: tuple[Blob, Blob]) -> Blob:
        """The blob of the pair that LATEST does not hold (publishing it cannot be deduplicated)."""
        return pair[1] if self.latest.get(name) == pair[0].sha256 else pair[0]

    def unpublished(self, name: str, pair: tuple[Blob, Blob]) -> Blob:
        """The blob of the pair that the newest version does not hold (publishing it makes a version)."""
        return pair[1] if self.newest.get(name) == pair[0].sha256 else pair[0]

    def current(self, name: str, pair: tuple[Blob, Blob]) -> Blob:
        """The blob of the pair that LATEST holds."""
        return pair[0] if self.latest.get(name) == pair[0].sha256 else pair[1]

    def bare_get_item(self, name: str) -> Any:
        """One GetItem through Arca's own client, without the handler: the floor of any read."""
        client = self.services.stores.table.client
        return client.get_item(
            TableName=ARCA_TABLE, Key={"pk": {"S": name}, "sk": {"S": "LATEST"}}, ConsistentRead=True
        )

    def bare_probe(self, pk: str, sk: str) -> Any:
        """The point read of a version or an alias as Arca makes it (a consistent Query `sk >= :sk`, Limit 1:
        one item read, which also shows a link), through Arca's own client, without the handler."""
        client = self.services.stores.table.client
        return client.query(
            TableName=ARCA_TABLE,
            KeyConditionExpression="pk = :pk AND sk >= :sk",
            ExpressionAttributeValues={":pk": {"S": pk}, ":sk": {"S": sk}},
            Limit=1,
            ConsistentRead=True,
        )

    def bare_transaction(self, index: int) -> Any:
        """One TransactWriteItems of two unconditional Puts through Arca's client: moto's cost of a transaction."""
        client = self.services.stores.table.client
        items = [
            {"Put": {"TableName": ARCA_TABLE, "Item": {"pk": {"S": "__bench-scratch"}, "sk": {"S": sk}}}}
            for sk in ("a", "b")
        ]
        return client.transact_write_items(TransactItems=items)

    def bare_head_object(self, name: str, item: Blob) -> Any:
        return self.services.blobs.client.head_object(Bucket=ARCA_BUCKET, Key=blob_key(name, item.sha256))


class VersionedSide:
    """The `versioned` library (PyPI 1.0.1), S3+DynamoDB backend, used through its global session binding."""

    def __init__(self) -> None:
        from boto_session_manager import BotoSesManager
        from versioned.s3_and_dynamodb_backend import Repository

        self.bsm = BotoSesManager(region_name=REGION)
        self.bsm.s3_client.create_bucket(Bucket=VERSIONED_BUCKET)
        self.repo = Repository(aws_region=REGION, s3_bucket=VERSIONED_BUCKET, dynamodb_table_name=VERSIONED_TABLE)
        # Creates the table and binds s3pathlib and pynamodb to this session; later calls pass no bsm, so
        # pynamodb keeps its connection (with a bsm, every call would rebuild it and describe the table again).
        self.repo.bootstrap(self.bsm)
        install().attach(self.bsm.s3_client)
        self.latest: dict[str, str] = {}

    def put(self, name: str, item: Blob) -> Any:
        artifact = self.repo.put_artifact(name, item.data)
        self.latest[name] = item.sha256
        return artifact

    def ensure_latest(self, name: str, item: Blob) -> None:
        if self.latest.get(name) != item.sha256:
            self.put(name, item)

    def publish(self, name: str) -> Any:
        return self.repo.publish_artifact_version(name)

    def create(self, name: str, item: Blob, *, versions: int = 0) -> None:
        self.put(name, item)
        for _ in range(versions):
            self.publish(name)


@dataclass
class World:
    arca: ArcaSide
    versioned: VersionedSide


ENV = {
    "ARCA_TABLE_NAME": ARCA_TABLE,
    "ARCA_BUCKET_NAME": ARCA_BUCKET,
    "POWERTOOLS_METRICS_NAMESPACE": "Arca",
    "POWERTOOLS_SERVICE_NAME": "arca-bench",
}
_CLEARED = ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_S3", "AWS_PROFILE")


@contextlib.contextmanager
def world() -> Iterator[World]:
    install()  # before any session exists, so every client reports its calls
    from local.services import FAKE_AWS_ENV

    environ = {k: v for k, v in os.environ.items() if k not in _CLEARED}
    with mock.patch.dict(os.environ, {**environ, **FAKE_AWS_ENV, **ENV}, clear=True), warnings.catch_warnings():
        # Powertools warns once when a handler adds no metric; that is expected here.
        warnings.filterwarnings("ignore", message="No application metrics to publish")
        from moto import mock_aws

        from arca import wiring
        from infra.schema import create_table_request
        from local import s3_checks, s3_listing, s3_ranges

        random.seed(0)
        s3_checks.install()  # uploads are refused as S3 refuses them (a body not matching its checksum)
        s3_ranges.install()
        s3_listing.install()
        with mock_aws():
            import boto3

            from local.services import create_signing_key

            boto3.client("dynamodb").create_table(**create_table_request(ARCA_TABLE, stream=False))
            boto3.client("s3").create_bucket(Bucket=ARCA_BUCKET)
            os.environ["ARCA_SIGNING_KEY_ARN"] = create_signing_key(boto3.client("kms"))  # the stage's key, in moto
            wiring.reset()
            try:
                yield World(ArcaSide(), VersionedSide())
            finally:
                wiring.reset()
