"""Arca's Python SDK and command-line client.

from arca_client import Client

with Client() as arca:  # $ARCA_ENDPOINT, the config file's endpoint, or the local server; signed when remote
    published = arca.publish("my-app", "build/app.zip", metadata={"commit": "abc123"})
    arca.set_alias("my-app", "prod", published.version.version)
    arca.download("my-app", "prod", "app.zip")
"""

from arca_client._version import __version__
from arca_client.config import ConfigError
from arca_client.errors import (
    AccessDeniedError,
    ArcaError,
    ChecksumMismatchError,
    ConflictError,
    CredentialsError,
    NotFoundError,
    PayloadTooLargeError,
    PreconditionFailedError,
    ServerError,
    ThrottledError,
    TransportError,
    ValidationError,
)
from arca_client.models import (
    LATEST,
    Alias,
    AliasRevision,
    ArtifactSummary,
    BlobRef,
    Downloaded,
    Event,
    Lease,
    Link,
    ListEntry,
    Page,
    Promotion,
    PruneResult,
    Published,
    Purged,
    Resolution,
    Rollout,
    UploadTarget,
    Version,
    VersionConsumers,
    VersionHit,
)
from arca_client.refs import parse_ref, split_ref
from arca_client.resolver import Resolved, Resolver
from arca_client.sdk import Client, guess_content_type
from arca_client.transport import RetryPolicy

__all__ = [
    "LATEST",
    "AccessDeniedError",
    "Alias",
    "AliasRevision",
    "ArcaError",
    "ArtifactSummary",
    "BlobRef",
    "ChecksumMismatchError",
    "Client",
    "ConfigError",
    "ConflictError",
    "CredentialsError",
    "Downloaded",
    "Event",
    "Lease",
    "Link",
    "ListEntry",
    "NotFoundError",
    "Page",
    "PayloadTooLargeError",
    "PreconditionFailedError",
    "Promotion",
    "PruneResult",
    "Published",
    "Purged",
    "Resolution",
    "Resolved",
    "Resolver",
    "RetryPolicy",
    "Rollout",
    "ServerError",
    "ThrottledError",
    "TransportError",
    "UploadTarget",
    "ValidationError",
    "Version",
    "VersionConsumers",
    "VersionHit",
    "__version__",
    "guess_content_type",
    "parse_ref",
    "split_ref",
]
