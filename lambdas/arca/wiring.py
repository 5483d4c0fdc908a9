"""Clients and services, built lazily on first use (never at import time) and injectable in tests."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any

import boto3
from botocore.config import Config

from arca.adapters.dynamo import Table
from arca.adapters.s3 import Blobs
from arca.services.retry import Policy
from arca.settings import settings

if TYPE_CHECKING:
    from arca.adapters.store.aliases import AliasStore
    from arca.adapters.store.artifacts import ArtifactStore
    from arca.adapters.store.attestations import AttestationStore
    from arca.adapters.store.consumers import ConsumerStore
    from arca.adapters.store.feed import Feed
    from arca.adapters.store.guards import GuardStore
    from arca.adapters.store.history import HistoryStore
    from arca.adapters.store.links import LinkStore
    from arca.adapters.store.purge import PurgeStore
    from arca.adapters.store.receipts import ReceiptStore
    from arca.adapters.store.retention import RetentionStore
    from arca.adapters.store.rollouts import RolloutStore
    from arca.adapters.store.tags import TagStore
    from arca.adapters.store.uploads import UploadStore
    from arca.adapters.store.versions import VersionStore
    from arca.domain.signing import Signer
    from arca.services.aliases import Aliases, AliasWriter
    from arca.services.attestations import Attesting
    from arca.services.collection import Collection
    from arca.services.consumers import Consumers
    from arca.services.events import Announcer, Events
    from arca.services.guards import Guards
    from arca.services.idempotency import Idempotency
    from arca.services.links import Links
    from arca.services.oci import Oci
    from arca.services.promotions import Promotions
    from arca.services.publishing import Publishing
    from arca.services.reading import Reading
    from arca.services.removal import Removal
    from arca.services.resolving import Resolving
    from arca.services.retention import Retention
    from arca.services.rollouts import Rollouts, RolloutStarter
    from arca.services.tags import Searching, Tagging
    from arca.services.uploads import Uploads
    from arca.services.verification import Verification

# Retries of DynamoDB throttling are ours (adapters/dynamo.py: jittered, then 503), so botocore's are off;
# S3 keeps botocore's standard retries. SigV4 so that presigned URLs really sign the checksum header.
DYNAMODB_CONFIG = Config(retries={"mode": "standard", "total_max_attempts": 1}, connect_timeout=2, read_timeout=10)
_S3_RETRIES = {"mode": "standard", "max_attempts": 3}
# Environment variables that point S3 at a custom endpoint (local mode's moto server).
S3_ENDPOINT_VARIABLES = ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
# botocore handlers (event name, handler) registered on every client the functions build. Empty on AWS; local
# mode and the tests put the IAM check there (local/iam.py), so each call is authorised as the function's role.
CLIENT_HANDLERS: list[tuple[str, Callable[..., Any]]] = []


def client(service: str, config: Config | None = None) -> Any:
    """A boto3 client of the functions: every AWS client they use is built here."""
    built = boto3.client(service, config=config)
    for event, handler in CLIENT_HANDLERS:
        built.meta.events.register(event, handler)
    return built


def s3_config(environ: Mapping[str, str]) -> Config:
    """Presigned URLs on the Region's own virtual-hosted endpoint (`<bucket>.s3.<region>.amazonaws.com`).

    botocore's default is the legacy global endpoint, which Regions launched after 2019 do not serve and
    which answers 307 for a bucket created in another Region until DNS catches up. A custom endpoint
    (an IP and port) cannot carry the bucket in its host name, so it keeps path-style addressing.
    """
    style = "path" if any(environ.get(v) for v in S3_ENDPOINT_VARIABLES) else "virtual"
    # us-east-1 too: its regional name rather than the global one it otherwise shares with the legacy URLs.
    s3 = {"addressing_style": style, "us_east_1_regional_endpoint": "regional"}
    return Config(signature_version="s3v4", s3=s3, retries=_S3_RETRIES)


class Stores:
    """One store per aggregate over one table (arca.adapters.store), sharing one event feed. The stores only the
    writing services use are built on first use, so the resolve function never loads them."""

    def __init__(self, table: Table) -> None:
        from arca.adapters.store.aliases import AliasStore
        from arca.adapters.store.artifacts import ArtifactStore
        from arca.adapters.store.feed import Feed
        from arca.adapters.store.history import HistoryStore
        from arca.adapters.store.uploads import UploadStore
        from arca.adapters.store.versions import VersionStore

        self.table = table
        self.feed: Feed = Feed(table)
        self.artifacts: ArtifactStore = ArtifactStore(table, self.feed)
        self.versions: VersionStore = VersionStore(table, self.feed)
        self.aliases: AliasStore = AliasStore(table, self.feed)
        self.history: HistoryStore = HistoryStore(table)
        self.uploads: UploadStore = UploadStore(table)

    @cached_property
    def receipts(self) -> ReceiptStore:
        from arca.adapters.store.receipts import ReceiptStore

        return ReceiptStore(self.table)

    @cached_property
    def rollouts(self) -> RolloutStore:
        from arca.adapters.store.rollouts import RolloutStore

        return RolloutStore(self.table)

    @cached_property
    def links(self) -> LinkStore:
        from arca.adapters.store.links import LinkStore

        return LinkStore(self.table, self.feed)

    @cached_property
    def consumers(self) -> ConsumerStore:
        from arca.adapters.store.consumers import ConsumerStore

        return ConsumerStore(self.table, self.feed)

    @cached_property
    def tags(self) -> TagStore:
        from arca.adapters.store.tags import TagStore

        return TagStore(self.table, self.feed)

    @cached_property
    def purge(self) -> PurgeStore:
        from arca.adapters.store.purge import PurgeStore

        return PurgeStore(self.table)

    @cached_property
    def guards(self) -> GuardStore:
        from arca.adapters.store.guards import GuardStore

        return GuardStore(self.table, self.feed)

    @cached_property
    def attestations(self) -> AttestationStore:
        from arca.adapters.store.attestations import AttestationStore

        return AttestationStore(self.table, self.feed)

    @cached_property
    def retention(self) -> RetentionStore:
        from arca.adapters.store.retention import RetentionStore

        return RetentionStore(self.table, self.feed)


class Services:
    """The use-case services over the stores and one bucket, with clients of their own; each service is given
    only the stores it uses.

    The stores and every service are built on first use, so the resolve function, which only reads, never loads
    the writing services (and the request models they import), and its hot path (arca.api.hot) loads neither the
    stores nor `Reading` (nor pydantic, which their records need): `resolving` reads without them.
    """

    def __init__(self, policy: Policy | None = None) -> None:
        config = settings()
        self.policy = policy or Policy()
        self.table = Table(client("dynamodb", config=DYNAMODB_CONFIG), config.table_name)
        self.blobs = Blobs(
            client("s3", config=s3_config(os.environ)),
            config.bucket_name,
            clock=self.policy.clock,
            upload_ttl=config.upload_url_ttl,
            download_ttl=config.download_url_ttl,
        )

    @cached_property
    def stores(self) -> Stores:
        return Stores(self.table)

    @cached_property
    def reading(self) -> Reading:
        from arca.services.reading import Reading

        stores = self.stores
        return Reading(stores.artifacts, stores.versions, stores.aliases, stores.history, stores.uploads, self.blobs)

    @cached_property
    def resolving(self) -> Resolving:
        """The resolve function's hot path: an alias resolved with no model (arca.api.hot)."""
        from arca.adapters.store.resolving import ResolveStore
        from arca.services.resolving import Resolving

        return Resolving(ResolveStore(self.table), self.blobs)

    @cached_property
    def signer(self) -> Signer | None:
        """The stage's KMS key; None where none is configured (publishing then refuses to run)."""
        from arca.adapters.signing import KmsSigner

        arn = settings().signing_key_arn
        return KmsSigner(lambda: client("kms"), arn) if arn else None

    @cached_property
    def attesting(self) -> Attesting:
        from arca.services.attestations import Attesting

        return Attesting(self.stores.attestations, self.blobs, self.reading, self.policy)

    @cached_property
    def idempotency(self) -> Idempotency:
        from arca.services.idempotency import Idempotency

        return Idempotency(self.stores.receipts, self.policy)

    @cached_property
    def publishing(self) -> Publishing:
        from arca.services.publishing import Publishing, PublishingStores

        s = self.stores
        stores = PublishingStores(s.artifacts, s.versions, s.receipts, s.uploads)
        return Publishing(stores, self.blobs, self.reading, self.policy, self.signer, collection=self.collection)

    @cached_property
    def removal(self) -> Removal:
        from arca.services.removal import Removal, RemovalStores

        s = self.stores
        stores = RemovalStores(s.artifacts, s.versions, s.aliases, s.links, s.purge, s.receipts, s.consumers)
        return Removal(stores, self.blobs, self.reading, self.policy)

    @cached_property
    def collection(self) -> Collection:
        from arca.services.collection import Collection

        s = self.stores
        return Collection(s.retention, s.artifacts, s.uploads, self.blobs, self.policy)

    @cached_property
    def uploads(self) -> Uploads:
        from arca.adapters.multipart import Multipart
        from arca.services.uploads import Uploads

        return Uploads(
            self.stores.artifacts,
            self.stores.uploads,
            self.blobs,
            Multipart(self.blobs),
            self.policy,
            self.verification,
        )

    @cached_property
    def verification(self) -> Verification:
        from arca.adapters.multipart import Multipart
        from arca.adapters.verification import ExternalVerification, StepFunctionsVerification
        from arca.services.verification import Driver, Verification

        arn = settings().verify_state_machine_arn
        driver: Driver = ExternalVerification()
        if arn is not None:
            driver = StepFunctionsVerification(lambda: client("stepfunctions"), arn)
        return Verification(self.stores.uploads, Multipart(self.blobs), self.policy, driver)

    @cached_property
    def guards(self) -> Guards:
        from arca.services.guards import Guards

        s = self.stores
        return Guards(s.guards, s.versions, s.aliases, s.rollouts, self.reading, self.policy)

    @cached_property
    def alias_writer(self) -> AliasWriter:
        from arca.services.aliases import AliasWriter

        return AliasWriter(self.stores.aliases, self.stores.versions, self.guards, self.reading, self.policy)

    @cached_property
    def aliases(self) -> Aliases:
        from arca.services.aliases import Aliases

        return Aliases(self.alias_writer, self.stores.history, self.reading, self.policy)

    @cached_property
    def rollout_starter(self) -> RolloutStarter:
        from arca.adapters.rollouts import ExternalDriver, StepFunctionsDriver
        from arca.services.rollouts import Driver, RolloutStarter

        arn = settings().rollout_state_machine_arn
        driver: Driver = ExternalDriver()
        if arn is not None:
            driver = StepFunctionsDriver(lambda: client("stepfunctions"), arn)
        return RolloutStarter(self.stores.rollouts, self.alias_writer, driver)

    @cached_property
    def rollouts(self) -> Rollouts:
        from arca.adapters.rollouts import CloudWatchAlarms
        from arca.services.rollouts import Rollouts

        return Rollouts(
            self.stores.rollouts,
            self.alias_writer,
            self.reading,
            self.policy,
            consumers=self.stores.consumers,
            alarms=CloudWatchAlarms(lambda: client("cloudwatch")),
            starter=self.rollout_starter,
        )

    @cached_property
    def promotions(self) -> Promotions:
        from arca.services.promotions import Promotions

        return Promotions(self.alias_writer, self.rollout_starter)

    @cached_property
    def links(self) -> Links:
        from arca.services.links import Links

        return Links(self.stores.links, self.stores.artifacts, self.policy)

    @cached_property
    def consumers(self) -> Consumers:
        from arca.services.consumers import Consumers

        return Consumers(self.stores.consumers, self.reading, self.policy)

    @cached_property
    def tagging(self) -> Tagging:
        from arca.services.tags import Tagging

        return Tagging(self.stores.tags, self.reading, self.policy)

    @cached_property
    def searching(self) -> Searching:
        from arca.services.tags import Searching

        return Searching(self.stores.tags, self.stores.versions, self.reading)

    @cached_property
    def retention(self) -> Retention:
        from arca.services.retention import Retention

        s = self.stores
        return Retention(
            s.retention, s.versions, s.aliases, self.collection, self.blobs, self.reading, self.policy, s.consumers
        )

    @cached_property
    def oci(self) -> Oci:
        from arca.adapters.store.oci_referrers import OciReferrerStore
        from arca.adapters.store.oci_sessions import OciSessionStore
        from arca.services.oci import Oci

        return Oci(
            self.publishing,
            self.removal,
            self.reading,
            self.aliases,
            self.stores.aliases,
            OciSessionStore(self.stores.table),
            self.blobs,
            self.policy,
            self.attesting,
            OciReferrerStore(self.stores.table),
        )

    @cached_property
    def events(self) -> Events:
        from arca.services.events import Events

        return Events(self.stores.feed, self.reading)


def build(policy: Policy | None = None) -> Services:
    """Services with clients of their own (one set per Lambda instance; tests build one per thread)."""
    return Services(policy)


@cache
def services() -> Services:
    return build()


def reading() -> Reading:
    return services().reading


def resolving() -> Resolving:
    return services().resolving


def publishing() -> Publishing:
    return services().publishing


def removal() -> Removal:
    return services().removal


def idempotency() -> Idempotency:
    return services().idempotency


def uploads() -> Uploads:
    return services().uploads


def verification() -> Verification:
    return services().verification


def aliases() -> Aliases:
    return services().aliases


def rollouts() -> Rollouts:
    return services().rollouts


def guards() -> Guards:
    return services().guards


def promotions() -> Promotions:
    return services().promotions


def links() -> Links:
    return services().links


def consumers() -> Consumers:
    return services().consumers


def tagging() -> Tagging:
    return services().tagging


def searching() -> Searching:
    return services().searching


def oci() -> Oci:
    return services().oci


def events() -> Events:
    return services().events


def attesting() -> Attesting:
    return services().attesting


def signer() -> Signer | None:
    return services().signer


def retention() -> Retention:
    return services().retention


@cache
def announcer() -> Announcer:
    """The events function's one service: a bus client only (it reads no table and no bucket)."""
    from arca.adapters.bus import Bus
    from arca.services.events import Announcer
    from arca.settings import event_bus_name

    return Announcer(Bus(client("events"), event_bus_name()))


def reset() -> None:
    """Forget built clients (tests change the environment between cases)."""
    services.cache_clear()
    announcer.cache_clear()
    settings.cache_clear()
