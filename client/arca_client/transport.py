"""HTTP for the SDK: one requests.Session, SigV4 signing of API calls, and retries with jittered backoff.

Signing is botocore's (SigV4Auth over an AWSRequest, credentials from the standard chain): the request is
signed as it will be sent, once per attempt, so a retry carries a fresh X-Amz-Date. Only API calls are
signed; presigned S3 URLs carry their own signature and go out through `send` with `sign=False`.
"""

from __future__ import annotations

import logging
import os
import random
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import IO, Any
from urllib.parse import quote, urlencode, urlsplit

import requests
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import BotoCoreError, ProfileNotFound
from botocore.session import Session as BotocoreSession

from arca_client.config import ConfigError
from arca_client.errors import CredentialsError, TransportError, from_response

log = logging.getLogger("arca_client")

SERVICE = "execute-api"
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})
# 429 and 503 mean "not processed, come back later" (the API answers 503 only for throttling it could not
# absorb), so they are retried for every method. 502/504 and lost connections may hide a request that did
# run, so they are retried only where running it twice is harmless.
RETRY_ALWAYS = frozenset({429, 503})
RETRY_IF_IDEMPOTENT = frozenset({500, 502, 504})
# S3 answers a conditional PUT (`If-None-Match: *`) with 409 ConditionalRequestConflict while another conditional
# write to the same key is under way, and asks for a retry: the retry then stores (200) or finds the key taken
# (412). Only presigned (unsigned) requests go to S3; the API's 409s are final.
RETRY_IF_PRESIGNED = frozenset({409})
_EXECUTE_API_HOST = re.compile(r"^[a-z0-9]+\.execute-api(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$")
_CONNECTION_REASONS = (
    ("Connection refused", "connection refused (is the server running? `make local` starts one)"),
    ("Name or service not known", "unknown host"),
    ("nodename nor servname", "unknown host"),
    ("timed out", "timed out"),
    ("Connection reset", "connection reset"),
    ("Connection aborted", "connection aborted"),
)
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


@dataclass(frozen=True)
class RetryPolicy:
    """Full-jitter exponential backoff: attempt n waits uniform(0, min(cap, base * 2**(n-1))) seconds.

    `Retry-After` from the server, when present and larger, wins (capped at `cap`).
    """

    max_attempts: int = 5
    base: float = 0.25
    cap: float = 8.0

    def ceiling(self, attempt: int) -> float:
        return float(min(self.cap, self.base * 2 ** (attempt - 1)))


def should_sign(endpoint: str, sign: bool | None = None, environ: Mapping[str, str] | None = None) -> bool:
    """Explicit `sign` wins, then ARCA_SIGN=1/0, then: sign unless the endpoint is this machine."""
    if sign is not None:
        return sign
    env = (environ if environ is not None else os.environ).get("ARCA_SIGN", "").strip().lower()
    if env in _TRUE:
        return True
    if env in _FALSE:
        return False
    return (urlsplit(endpoint).hostname or "") not in LOCAL_HOSTS


def region_for(endpoint: str, region: str | None, session: BotocoreSession | None = None) -> str:
    """The region to sign for: explicit, else the one in an execute-api host name, else the AWS config's."""
    if region:
        return region
    found = _EXECUTE_API_HOST.match(urlsplit(endpoint).hostname or "")
    if found:
        return found.group(1)
    configured = os.environ.get("AWS_REGION") or (session or BotocoreSession()).get_config_variable("region")
    if not configured:
        host = urlsplit(endpoint).hostname or endpoint
        raise CredentialsError(
            f"{host} is not an API Gateway host (<id>.execute-api.<region>.amazonaws.com), so it names no region to "
            "sign for: check the endpoint's URL, or for a custom domain name pass region= (or set AWS_REGION)"
        )
    return str(configured)


def missing_profile(profile: str | None, source: str | None = None) -> ConfigError:
    """The error for an AWS profile that neither ~/.aws/config nor ~/.aws/credentials defines."""
    why = f" ({source})" if source else ""
    return ConfigError(
        f"the AWS profile {profile!r} is not defined in ~/.aws/config or ~/.aws/credentials{why}; "
        "list the profiles with `aws configure list-profiles`",
        code="ProfileNotFound",
    )


class Signer:
    """SigV4 for API Gateway with botocore: credentials resolved lazily, refreshed by botocore when they expire."""

    def __init__(
        self,
        region: str,
        *,
        credentials: Credentials | None = None,
        session: BotocoreSession | None = None,
    ) -> None:
        self.region = region
        self._credentials = credentials
        self._session = session

    def _resolve_credentials(self) -> Credentials:
        if self._credentials is None:
            session = self._session or BotocoreSession()
            try:
                self._credentials = session.get_credentials()
            except ProfileNotFound as error:
                raise missing_profile(error.kwargs.get("profile")) from None
            except BotoCoreError as error:  # an SSO session expired, a credential process failed, ...
                raise CredentialsError(f"the AWS credential chain failed: {error}") from None
            if self._credentials is None:
                raise CredentialsError(
                    "the API needs SigV4 but no AWS credentials were found (environment, ~/.aws, SSO, instance "
                    "role); set ARCA_SIGN=0 for an unsigned local endpoint"
                )
        return self._credentials

    def sign(self, method: str, url: str, headers: dict[str, str], body: bytes | IO[bytes] | None) -> dict[str, str]:
        """The headers to send: `headers` plus Authorization, X-Amz-Date and (temporary keys) X-Amz-Security-Token.

        The payload hash is of `body` exactly as sent (a seekable file is read from where it stands, then put
        back there); `url` must already be percent-encoded as it will go on the wire (botocore signs its query
        string verbatim).
        """
        frozen = self._resolve_credentials().get_frozen_credentials()
        request = AWSRequest(method=method, url=url, headers=dict(headers), data=body or b"")
        SigV4Auth(frozen, SERVICE, self.region).add_auth(request)
        return dict(request.headers.items())


def encode_query(params: Mapping[str, Any] | None) -> str:
    """AWS's canonical encoding (RFC 3986 unreserved kept), so the URL sent is the URL signed."""
    if not params:
        return ""
    # A list is a repeated parameter (`tag=a:b&tag=c:d`).
    pairs = [
        (k, _query_value(item))
        for k, v in params.items()
        if v is not None
        for item in (v if isinstance(v, list | tuple) else [v])
    ]
    return urlencode(pairs, quote_via=quote, safe="-_.~")


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class Transport:
    """Sends requests with retries; raises the `ArcaError` subclass of the status for any non-2xx answer."""

    def __init__(
        self,
        *,
        session: requests.Session,
        signer: Signer | None,
        retry: RetryPolicy,
        timeout: float | tuple[float, float],
        sleep: Callable[[float], None] = time.sleep,
        jitter: Callable[[float], float] = lambda ceiling: random.uniform(0, ceiling),
        user_agent: str = "arca-client",
    ) -> None:
        self.session = session
        self.signer = signer
        self.retry = retry
        self.timeout = timeout
        self.sleep = sleep
        self.jitter = jitter
        self.user_agent = user_agent

    def send(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        body: bytes | None = None,
        body_factory: Callable[[], Iterable[bytes] | Any] | None = None,
        idempotent: bool | None = None,
        sign: bool = True,
        stream: bool = False,
    ) -> requests.Response:
        """One logical request, retried per the policy; returns a 2xx (or 3xx) response.

        `body_factory` builds a fresh streaming body for each attempt (a rewound file), so a retried upload
        never sends a half-consumed stream. Raises ArcaError subclasses; TransportError when nothing answered.
        """
        method = method.upper()
        if idempotent is None:
            idempotent = method in IDEMPOTENT_METHODS
        attempt = 0
        while True:
            attempt += 1
            send_headers = {"User-Agent": self.user_agent, **(headers or {})}
            if sign and self.signer is not None:
                send_headers = self.signer.sign(method, url, send_headers, body)
            data = body_factory() if body_factory is not None else body
            try:
                response = self.session.request(
                    method,
                    url,
                    headers=send_headers,
                    data=data,
                    timeout=self.timeout,
                    stream=stream,
                    allow_redirects=False,
                )
            except (requests.ConnectionError, requests.Timeout) as lost:
                if idempotent and attempt < self.retry.max_attempts:
                    self._pause(attempt, None, f"{method} {_short(url)}: {type(lost).__name__}")
                    continue
                raise TransportError(f"{method} {_short(url)}: {_why(lost)}", code="ConnectionError") from lost
            if response.status_code < 400:
                return response
            retryable = (
                response.status_code in RETRY_ALWAYS
                or (idempotent and response.status_code in RETRY_IF_IDEMPOTENT)
                or (idempotent and not sign and response.status_code in RETRY_IF_PRESIGNED)
            )
            if retryable and attempt < self.retry.max_attempts:
                response.close()
                self._pause(
                    attempt, response.headers.get("Retry-After"), f"{method} {_short(url)}: {response.status_code}"
                )
                continue
            content = response.content
            raise from_response(response.status_code, content, dict(response.headers))

    def _pause(self, attempt: int, retry_after: str | None, why: str) -> None:
        delay = self.jitter(self.retry.ceiling(attempt))
        if retry_after and retry_after.strip().isdigit():
            delay = max(delay, min(float(retry_after), self.retry.cap))
        log.info("retrying after %.2fs (attempt %d of %d): %s", delay, attempt, self.retry.max_attempts, why)
        self.sleep(delay)


def _why(lost: Exception) -> str:
    """The useful part of a requests/urllib3 connection error, whose text nests three exceptions deep."""
    text = str(lost)
    for marker, reason in _CONNECTION_REASONS:
        if marker in text:
            return reason
    return f"no answer ({type(lost).__name__})"


def _short(url: str) -> str:
    """A URL without its query string: presigned URLs carry credentials-like material there."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"
