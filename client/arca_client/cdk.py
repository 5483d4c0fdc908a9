"""A Lambda function's code from an Arca alias, for a CDK app (needs `aws-cdk-lib`, which every CDK app has).

`ArcaLambdaCode.from_alias(scope, api_url, artifact, alias, consumer=...)` resolves the alias at synth time,
takes (or renews) the consumer's lease on the version it serves, downloads that version's content (a zip; its
sha256 verified) into a cache folder, and answers `aws_lambda.Code.from_asset` of that zip with the content's sha256
as the asset's hash: the function's code is the version's bytes, and one version is one asset, uploaded once.

Why an asset and not `Code.from_bucket` on Arca's own bucket: Arca's API names no bucket or key (content is
reached through short-lived presigned URLs, and the bucket is private to the stage), so a function in another
account or region could not read it, and a deploy role would need a grant on the registry's bucket. An asset
works for any deployment (CDK uploads it to the app's bootstrap bucket, once per content), and it is the same
bytes: decision 101.

The lease says "this function runs this version" (so the version is never deleted while the function may run it,
docs/decisions.md 93): each synth takes or renews it. A function deployed once and left running needs its lease
renewed until it is redeployed: `lease_ttl` (default 30 days, the most a lease takes) must outlast the time
between deploys, or a scheduled `arca consume NAME@ALIAS --consumer ID --once` renews it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from aws_cdk import AssetHashType, aws_lambda
from constructs import Construct

from arca_client.models import Lease, Resolution
from arca_client.sdk import Client

MAX_LEASE_TTL = 2_592_000  # 30 days: the most a lease takes


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "arca" / "cdk"


@dataclass(frozen=True)
class ResolvedCode:
    """What `ArcaLambdaCode.resolve` found: the resolution, the consumer's lease on it, the content's local path."""

    resolution: Resolution
    lease: Lease
    path: Path


class ArcaLambdaCode:
    """Lambda code from an Arca artifact (see the module docstring)."""

    @staticmethod
    def from_alias(
        scope: Construct,
        api_url: str | Client | None,
        artifact: str,
        alias: str,
        *,
        consumer: str,
        lease_ttl: int = MAX_LEASE_TTL,
        labels: Mapping[str, str] | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
    ) -> aws_lambda.Code:
        """The code of `artifact@alias` (or a version number) for the function `consumer` names, e.g.
        `lambda:eu-west-1:checkout`; `api_url` is an endpoint (None: the configured one) or a `Client`. The
        version, its sha256 and the lease's expiry are recorded as metadata on `scope`."""
        found = ArcaLambdaCode.resolve(
            api_url, artifact, alias, consumer=consumer, lease_ttl=lease_ttl, labels=labels, cache_dir=cache_dir
        )
        scope.node.add_metadata(
            "arca:code",
            {
                "artifact": artifact,
                "ref": alias,
                "version": found.resolution.version,
                "sha256": found.resolution.sha256,
                "consumer": consumer,
                "lease_expires_at": found.lease.expires_at,
            },
        )
        return aws_lambda.Code.from_asset(
            str(found.path), asset_hash=found.resolution.sha256, asset_hash_type=AssetHashType.CUSTOM
        )

    @staticmethod
    def resolve(
        api_url: str | Client | None,
        artifact: str,
        alias: str,
        *,
        consumer: str,
        lease_ttl: int = MAX_LEASE_TTL,
        labels: Mapping[str, str] | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
    ) -> ResolvedCode:
        """Resolve (routed by the consumer's id), lease, and fetch the content unless the cache has it."""
        client = api_url if isinstance(api_url, Client) else Client(api_url)
        try:
            resolution = client.resolve(artifact, alias, routing_key=consumer)
            if not isinstance(resolution.version, int):
                raise ValueError(f"{artifact}@{alias} resolves to LATEST, the working copy: deploy a version")
            if resolution.files is not None:
                raise ValueError(f"{artifact}@{alias} is a tree of files, not one zip: Lambda code is one zip")
            lease = client.lease(artifact, consumer, resolution.version, ttl_seconds=lease_ttl, labels=labels)
            folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"{resolution.sha256}.zip"
            if not path.exists():  # content-addressed: a file of that name is those bytes (written once verified)
                client.download_resolved(resolution, path)
            return ResolvedCode(resolution, lease, path)
        finally:
            if client is not api_url:
                client.close()


__all__ = ["ArcaLambdaCode", "ResolvedCode"]
