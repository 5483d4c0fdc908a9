"""The Python SDK: `Client`, one method per API operation plus the publish and download workflows.

`Client` is built here (endpoint, signing, transport) from the groups of calls in `arca_client.calls`: HTTP
plumbing in `calls.http`, content transfers in `calls.transfers`, and one mixin per group of operations.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import requests
from botocore.credentials import Credentials
from botocore.exceptions import ProfileNotFound
from botocore.session import Session as BotocoreSession

from arca_client._version import __version__
from arca_client.calls.aliases import AliasCalls
from arca_client.calls.artifacts import UNSET as UNSET
from arca_client.calls.artifacts import ArtifactCalls
from arca_client.calls.attestations import AttestationCalls
from arca_client.calls.events import EventCalls
from arca_client.calls.guards import GuardCalls
from arca_client.calls.http import LOCAL_USER_HEADER as LOCAL_USER_HEADER
from arca_client.calls.retention import RetentionCalls
from arca_client.calls.rollouts import RolloutCalls
from arca_client.calls.tags import TagCalls
from arca_client.calls.transfers import CHUNK as CHUNK
from arca_client.calls.transfers import FILENAME_KEY as FILENAME_KEY
from arca_client.calls.transfers import ProgressFn as ProgressFn
from arca_client.calls.transfers import Source as Source
from arca_client.calls.transfers import TransferCalls
from arca_client.calls.transfers import guess_content_type as guess_content_type
from arca_client.calls.transfers import safe_filename as safe_filename
from arca_client.calls.trees import TreeCalls
from arca_client.calls.uploads import UploadCalls
from arca_client.calls.versions import VersionCalls
from arca_client.config import DEFAULT_ENDPOINT as DEFAULT_ENDPOINT  # re-exported: it was defined here
from arca_client.config import resolve_endpoint
from arca_client.transport import RetryPolicy, Signer, Transport, missing_profile, region_for, should_sign

LOCAL_USER_ENV = "ARCA_LOCAL_USER"


class Client(
    AttestationCalls,
    TreeCalls,
    TransferCalls,
    UploadCalls,
    ArtifactCalls,
    VersionCalls,
    TagCalls,
    AliasCalls,
    EventCalls,
    RolloutCalls,
    GuardCalls,
    RetentionCalls,
):
    """A client of one Arca API.

    `endpoint` is a URL or the name of an endpoint in arca's config file; it defaults to $ARCA_ENDPOINT
    (the same), then the config file's current endpoint, then the local server (see `arca_client.config`).
    A configured endpoint brings its region and profile unless they are given here. Requests are
    SigV4-signed (service execute-api, the standard AWS credential chain) unless the endpoint is this
    machine; `sign` or ARCA_SIGN=1/0 forces either way. `local_user` (default $ARCA_LOCAL_USER) names the caller
    to a local server (header X-Arca-Local-User); a deployed API ignores it. Every method raises an `ArcaError`
    subclass on failure.
    """

    def __init__(
        self,
        endpoint: str | None = None,
        *,
        sign: bool | None = None,
        region: str | None = None,
        profile: str | None = None,
        credentials: Credentials | None = None,
        session: requests.Session | None = None,
        retry: RetryPolicy | None = None,
        timeout: float | tuple[float, float] = (10.0, 120.0),
        sleep: Callable[[float], None] = time.sleep,
        jitter: Callable[[float], float] | None = None,
        local_user: str | None = None,
    ) -> None:
        self.target = resolve_endpoint(endpoint)
        self.local_user = local_user or os.environ.get(LOCAL_USER_ENV) or None
        self.endpoint = self.target.url
        region = region or self.target.region
        source = "given with --profile" if profile else f"the configured endpoint {self.target.name!r} names it"
        profile = profile or self.target.profile
        self.signed = should_sign(self.endpoint, sign)
        signer = None
        if self.signed:
            botocore_session = BotocoreSession(profile=profile) if profile else BotocoreSession()
            try:
                signer = Signer(
                    region_for(self.endpoint, region, botocore_session),
                    credentials=credentials,
                    session=botocore_session,
                )
            except ProfileNotFound:
                raise missing_profile(profile, source) from None
        self.session = session or requests.Session()
        extra = {"jitter": jitter} if jitter is not None else {}
        self.transport = Transport(
            session=self.session,
            signer=signer,
            retry=retry or RetryPolicy(),
            timeout=timeout,
            sleep=sleep,
            user_agent=f"arca-client/{__version__}",
            **extra,
        )

    def close(self) -> None:
        self.session.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
