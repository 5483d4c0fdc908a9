"""Clients and services, built lazily on first use (never at import time) and injectable in tests."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache

import boto3
from botocore.config import Config

from arca.adapters.dynamo import Table
from arca.adapters.s3 import Blobs
from arca.aliases import AliasService
from arca.service import Registry
from arca.settings import settings

# Retries of DynamoDB throttling are ours (adapters/dynamo.py: jittered, then 503), so botocore's are off;
# S3 keeps botocore's standard retries. SigV4 so that presigned URLs really sign the checksum header.
DYNAMODB_CONFIG = Config(retries={"mode": "standard", "total_max_attempts": 1}, connect_timeout=2, read_timeout=10)
S3_CONFIG = Config(signature_version="s3v4", retries={"mode": "standard", "max_attempts": 3})


def clock() -> datetime:
    return datetime.now(UTC)


@cache
def registry() -> Registry:
    return build_registry()


def build_registry() -> Registry:
    """A registry with clients of its own (one per Lambda instance; tests build one per thread)."""
    config = settings()
    table = Table(boto3.client("dynamodb", config=DYNAMODB_CONFIG), config.table_name)
    blobs = Blobs(
        boto3.client("s3", config=S3_CONFIG),
        config.bucket_name,
        clock=clock,
        upload_ttl=config.upload_url_ttl,
        download_ttl=config.download_url_ttl,
    )
    return Registry(table, blobs, clock=clock)


@cache
def aliases() -> AliasService:
    return AliasService(registry())


def reset() -> None:
    """Forget built clients (tests change the environment between cases)."""
    aliases.cache_clear()
    registry.cache_clear()
    settings.cache_clear()
