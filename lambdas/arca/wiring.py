"""Clients and services, built lazily on first use (never at import time) and injectable in tests."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import boto3
from botocore.config import Config

from arca.adapters.dynamo import Table
from arca.adapters.repository import Repository
from arca.adapters.s3 import Blobs
from arca.services.aliases import Aliases
from arca.services.publishing import Publishing
from arca.services.reading import Reading
from arca.services.retry import Policy
from arca.settings import settings

# Retries of DynamoDB throttling are ours (adapters/dynamo.py: jittered, then 503), so botocore's are off;
# S3 keeps botocore's standard retries. SigV4 so that presigned URLs really sign the checksum header.
DYNAMODB_CONFIG = Config(retries={"mode": "standard", "total_max_attempts": 1}, connect_timeout=2, read_timeout=10)
S3_CONFIG = Config(signature_version="s3v4", retries={"mode": "standard", "max_attempts": 3})


@dataclass(frozen=True)
class Services:
    """The three use-case services over one repository and one bucket."""

    repository: Repository
    blobs: Blobs
    reading: Reading
    publishing: Publishing
    aliases: Aliases


def build(policy: Policy | None = None) -> Services:
    """Services with clients of their own (one set per Lambda instance; tests build one per thread)."""
    config = settings()
    policy = policy or Policy()
    repository = Repository(Table(boto3.client("dynamodb", config=DYNAMODB_CONFIG), config.table_name))
    blobs = Blobs(
        boto3.client("s3", config=S3_CONFIG),
        config.bucket_name,
        clock=policy.clock,
        upload_ttl=config.upload_url_ttl,
        download_ttl=config.download_url_ttl,
    )
    reading = Reading(repository, blobs)
    return Services(
        repository=repository,
        blobs=blobs,
        reading=reading,
        publishing=Publishing(repository, blobs, reading, policy),
        aliases=Aliases(repository, reading, policy),
    )


@cache
def services() -> Services:
    return build()


def reading() -> Reading:
    return services().reading


def publishing() -> Publishing:
    return services().publishing


def aliases() -> Aliases:
    return services().aliases


def reset() -> None:
    """Forget built clients (tests change the environment between cases)."""
    services.cache_clear()
    settings.cache_clear()
