"""Integration fixtures: moto in process, the table and bucket made from the stack's definitions."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import boto3
import pytest
from moto import mock_aws

from arca import wiring
from infra.schema import create_table_request
from local import iam, s3_checks, s3_listing, s3_ranges
from local.services import create_signing_key
from tests.helpers import FAKE_AWS_ENV, HandlerApi

TABLE = "arca-test"
BUCKET = "arca-test-blobs"


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[SimpleNamespace]:
    for key, value in {**FAKE_AWS_ENV, "ARCA_TABLE_NAME": TABLE, "ARCA_BUCKET_NAME": BUCKET}.items():
        monkeypatch.setenv(key, value)
    for key in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_S3", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    s3_checks.install()  # S3 refuses a body that does not match its SHA-256 header; moto alone would store it
    s3_ranges.install()  # ranged GETs as local mode serves them
    s3_listing.install()  # and version listings
    with mock_aws():
        dynamodb = boto3.client("dynamodb")
        dynamodb.create_table(**create_table_request(TABLE, stream=False))  # nothing reads moto's stream
        s3 = boto3.client("s3")
        s3.create_bucket(Bucket=BUCKET)
        monkeypatch.setenv("ARCA_SIGNING_KEY_ARN", create_signing_key(boto3.client("kms")))
        # Every call of the functions' clients is authorised by the calling function's role (local/iam.py).
        with iam.checking() as checker:
            yield SimpleNamespace(dynamodb=dynamodb, s3=s3, table=TABLE, bucket=BUCKET, iam=checker)
    wiring.reset()


@pytest.fixture
def api(aws: SimpleNamespace) -> HandlerApi:
    return HandlerApi()


def snapshot(aws: SimpleNamespace) -> dict[str, Any]:
    """Everything stored: every item (a test-only Scan) and every object key."""
    items = aws.dynamodb.scan(TableName=aws.table, ConsistentRead=True)["Items"]
    objects = aws.s3.list_objects_v2(Bucket=aws.bucket).get("Contents", [])
    return {
        "items": sorted((i["pk"]["S"], i["sk"]["S"], str(sorted(i.items()))) for i in items),
        "objects": sorted(o["Key"] for o in objects),
    }
