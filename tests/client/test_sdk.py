"""The SDK over a scripted transport: a requests adapter mounted on the session answers instead of a server."""

from __future__ import annotations

import hashlib
import io
import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import botocore.auth
import pytest
import requests
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from arca_client import (
    AccessDeniedError,
    ArcaError,
    ChecksumMismatchError,
    Client,
    ConflictError,
    CredentialsError,
    NotFoundError,
    PayloadTooLargeError,
    PreconditionFailedError,
    RetryPolicy,
    ServerError,
    ThrottledError,
    TransportError,
    ValidationError,
)
from arca_client.errors import from_response
from arca_client.sdk import CHUNK, guess_content_type
from arca_client.transport import should_sign

API = "http://127.0.0.1:3000"
REMOTE = "https://abc123defg.execute-api.eu-west-1.amazonaws.com/prod"
S3_URL = "https://arca-bucket.s3.eu-west-1.amazonaws.com/artifacts/app/_blobs/x?X-Amz-Signature=presigned"
CREDENTIALS = Credentials("AKIDEXAMPLE", "secret-key", "session-token")


@dataclass
class Sent:
    """What the adapter received: the request as it went on the wire, body drained from any stream."""

    method: str
    url: str
    headers: dict[str, str]
    body: bytes
    streamed: bool  # the body was an iterable of chunks, not one bytes object
    chunks: int

    @property
    def path(self) -> str:
        return urlsplit(self.url).path

    @property
    def query(self) -> dict[str, list[str]]:
        return parse_qs(urlsplit(self.url).query)

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


Answer = tuple[int, Any] | tuple[int, Any, dict[str, str]] | Exception


@dataclass
class FakeAdapter(requests.adapters.BaseAdapter):
    """Answers each request with the next scripted answer: (status, JSON or bytes[, headers]) or an exception."""

    answers: list[Answer] = field(default_factory=list)
    sent: list[Sent] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__()

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        body = request.body
        streamed = body is not None and not isinstance(body, bytes | str)
        chunks = list(body) if streamed else ([body] if body else [])  # type: ignore[call-overload]
        data = b"".join(c.encode() if isinstance(c, str) else c for c in chunks)
        self.sent.append(
            Sent(request.method or "", request.url or "", dict(request.headers), data, streamed, len(chunks))
        )
        if not self.answers:
            raise AssertionError(f"unexpected request {request.method} {request.url}")
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        status, payload, *rest = answer
        headers = rest[0] if rest else {}
        response = requests.Response()
        response.status_code = status
        response.url = request.url or ""
        response.request = request
        raw = payload if isinstance(payload, bytes) else (b"" if payload is None else json.dumps(payload).encode())
        response.raw = io.BytesIO(raw)
        response.headers.update(headers)
        if not isinstance(payload, bytes) and payload is not None:
            response.headers.setdefault("Content-Type", "application/json")
        return response

    def close(self) -> None:
        pass


@dataclass
class Harness:
    client: Client
    adapter: FakeAdapter
    sleeps: list[float]
    ceilings: list[float]

    def answer(self, *answers: Answer) -> None:
        self.adapter.answers.extend(answers)

    @property
    def sent(self) -> list[Sent]:
        return self.adapter.sent


def make(endpoint: str = API, **options: Any) -> Harness:
    session = requests.Session()
    adapter = FakeAdapter()
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    sleeps: list[float] = []
    ceilings: list[float] = []

    def jitter(ceiling: float) -> float:
        ceilings.append(ceiling)
        return ceiling / 2

    options.setdefault("retry", RetryPolicy(max_attempts=4, base=0.25, cap=8.0))
    client = Client(endpoint, session=session, sleep=sleeps.append, jitter=jitter, **options)
    return Harness(client, adapter, sleeps, ceilings)


@pytest.fixture
def h() -> Harness:
    return make()


def error(code: str, message: str = "nope", **extra: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "request_id": "req-1", **extra}}


def version(number: int | str, **extra: Any) -> dict[str, Any]:
    return {
        "name": "app",
        "version": number,
        "sha256": "ab" * 32,
        "size": 3,
        "created_at": "2024-05-01T12:00:00Z",
        **extra,
    }


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ---- retries ------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [503, 429])
def test_throttled_answer_is_retried_then_succeeds(h: Harness, status: int) -> None:
    # Given
    h.answer((status, error("ThrottledError")), (status, error("ThrottledError")), (200, version(3)))
    # When
    found = h.client.get_version("app", 3)
    # Then
    assert found.version == 3
    assert len(h.sent) == 3
    assert len(h.sleeps) == 2


def test_gives_up_after_max_attempts_with_the_throttled_error(h: Harness) -> None:
    # Given
    h.answer(*[(503, error("ThrottledError", "DynamoDB is busy"))] * 4)
    # When
    with pytest.raises(ThrottledError) as raised:
        h.client.get_version("app", 3)
    # Then
    assert raised.value.code == "ThrottledError"
    assert raised.value.status == 503
    assert raised.value.request_id == "req-1"
    assert len(h.sent) == 4
    assert len(h.sleeps) == 3


def test_backoff_doubles_its_ceiling_and_sleeps_a_jittered_share_of_it() -> None:
    # Given
    h = make(retry=RetryPolicy(max_attempts=6, base=0.5, cap=3.0))
    h.answer(*[(429, error("THROTTLED"))] * 5, (200, version(1)))
    # When
    h.client.get_version("app", 1)
    # Then: ceilings 0.5, 1, 2, then capped at 3; each sleep is what the jitter drew from its ceiling
    assert h.ceilings == [0.5, 1.0, 2.0, 3.0, 3.0]
    assert h.sleeps == [0.25, 0.5, 1.0, 1.5, 1.5]


def test_default_jitter_draws_below_the_ceiling_and_varies() -> None:
    # Given
    session = requests.Session()
    adapter = FakeAdapter([(503, error("ThrottledError"))] * 7 + [(200, version(1))])
    session.mount("http://", adapter)
    sleeps: list[float] = []
    client = Client(API, session=session, sleep=sleeps.append, retry=RetryPolicy(max_attempts=8, base=1.0, cap=1.0))
    # When
    client.get_version("app", 1)
    # Then
    assert len(sleeps) == 7
    assert all(0 <= s <= 1.0 for s in sleeps)
    assert len(set(sleeps)) > 1


def test_retry_after_header_is_honoured_up_to_the_cap(h: Harness) -> None:
    # Given
    h.answer((429, error("THROTTLED"), {"Retry-After": "2"}), (200, version(1)))
    # When
    h.client.get_version("app", 1)
    # Then
    assert h.sleeps == [2.0]


def test_connection_error_is_retried_for_a_read() -> None:
    # Given
    h = make()
    h.answer(requests.ConnectionError("reset"), (200, version(1)))
    # When
    found = h.client.get_version("app", 1)
    # Then
    assert found.version == 1
    assert len(h.sleeps) == 1


def test_connection_error_retries_a_rollback_under_one_idempotency_key() -> None:
    # Given: a repeated default rollback would step back twice, unless the server sees the same key
    h = make()
    h.answer(requests.ConnectionError("Connection refused"), (200, alias("prod", 2, 4)))
    # When
    rolled = h.client.rollback_alias("app", "prod")
    # Then it was sent twice with one key, which the server uses to answer the retry with the first answer
    assert rolled.revision == 4
    keys = [s.headers["Idempotency-Key"] for s in h.sent]
    assert len(keys) == 2 and keys[0] == keys[1]


def test_each_logical_write_has_a_key_of_its_own() -> None:
    # Given
    h = make()
    h.answer((200, alias("prod", 2, 4)), (200, alias("prod", 1, 5)))
    # When
    h.client.rollback_alias("app", "prod")
    h.client.rollback_alias("app", "prod")
    # Then
    first, second = (s.headers["Idempotency-Key"] for s in h.sent)
    assert first != second


def test_connection_error_gives_up_after_max_attempts() -> None:
    # Given
    h = make()
    h.answer(*[requests.ConnectionError("Connection refused")] * 4)
    # When / Then
    with pytest.raises(TransportError):
        h.client.get_artifact("app")
    assert len(h.sent) == 4


def test_bad_gateway_is_retried_for_reads_and_for_a_forced_publish_under_one_key(tmp_path: Path) -> None:
    # Given
    h = make()
    h.answer((502, {"message": "Internal server error"}), (200, version(1)))
    assert h.client.get_version("app", 1).version == 1
    source = tmp_path / "f"
    source.write_bytes(b"abc")
    h.answer(
        (200, {"exists": True, "sha256": sha(b"abc"), "size": 3}),
        (502, {"message": "Internal server error"}),
        (201, version(2, deduplicated=False)),
    )
    # When
    published = h.client.publish("app", source, force=True)
    # Then the retry carried the first attempt's key, so it cannot make a second version
    assert published.version.version == 2
    posts = [s for s in h.sent[2:] if s.path.endswith("/versions")]
    assert len(posts) == 2 and posts[0].headers["Idempotency-Key"] == posts[1].headers["Idempotency-Key"]


# ---- errors -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "code", "cls"),
    [
        (400, "ValidationError", ValidationError),
        (403, "ACCESS_DENIED", AccessDeniedError),
        (404, "NotFoundError", NotFoundError),
        (409, "VersionPinnedError", ConflictError),
        (412, "PreconditionFailedError", PreconditionFailedError),
        (413, "PayloadTooLargeError", PayloadTooLargeError),
        (500, "InternalError", ServerError),
        (501, "NotImplementedYetError", ServerError),
    ],
)
def test_error_answers_become_the_status_class_with_the_spec_code(status: int, code: str, cls: type[ArcaError]) -> None:
    # Given: no retries, so that 500 answers once
    h = make(retry=RetryPolicy(max_attempts=1))
    h.answer((status, error(code, "what went wrong", field="version", aliases=["prod"])))
    # When
    with pytest.raises(cls) as raised:
        h.client.delete_version("app", 1)
    # Then
    assert raised.value.code == code
    assert raised.value.status == status
    assert raised.value.field == "version"
    assert raised.value.request_id == "req-1"
    assert raised.value.details == {"aliases": ["prod"]}
    assert str(raised.value) == f"{code}: what went wrong"


def test_s3_xml_error_is_read() -> None:
    # Given
    body = b"<?xml version='1.0'?><Error><Code>BadDigest</Code><Message>checksum differs</Message>" + (
        b"<RequestId>S3REQ</RequestId></Error>"
    )
    # When
    raised = from_response(400, body)
    # Then
    assert isinstance(raised, ValidationError)
    assert (raised.code, raised.message, raised.request_id) == ("BadDigest", "checksum differs", "S3REQ")


def test_api_gateway_default_error_shape_is_read() -> None:
    # When
    raised = from_response(403, b'{"message": "Forbidden"}', {"x-amzn-ErrorType": "AccessDeniedException:http://x"})
    # Then
    assert isinstance(raised, AccessDeniedError)
    assert (raised.code, raised.message) == ("AccessDeniedException", "Forbidden")


def test_unreadable_error_body_still_gives_the_status_class() -> None:
    # When
    raised = from_response(404, b"<html>not here</html>")
    # Then
    assert isinstance(raised, NotFoundError)
    assert raised.code == "HTTP404"


# ---- pagination ---------------------------------------------------------------------------------


def test_iter_versions_follows_next_token_to_the_end(h: Harness) -> None:
    # Given
    h.answer(
        (200, {"versions": [version(5), version(4)], "next_token": "tok+1/="}),
        (200, {"versions": [version(3), version(2)], "next_token": "tok2"}),
        (200, {"versions": [version(1)], "next_token": None}),
    )
    # When
    numbers = [v.version for v in h.client.iter_versions("app", page_size=2)]
    # Then
    assert numbers == [5, 4, 3, 2, 1]
    assert [s.query.get("next_token") for s in h.sent] == [None, ["tok+1/="], ["tok2"]]
    assert all(s.query["limit"] == ["2"] for s in h.sent)
    assert "next_token=tok%2B1%2F%3D" in h.sent[1].url


def test_iteration_fetches_pages_lazily(h: Harness) -> None:
    # Given
    h.answer((200, {"history": [{"revision": 9, "version": 3}], "next_token": "more"}))
    # When
    first = next(iter(h.client.iter_alias_history("app", "prod")))
    # Then
    assert first.revision == 9
    assert len(h.sent) == 1
    assert h.sent[0].path == "/artifacts/app/aliases/prod/history"


def test_iter_artifacts_yields_prefixes_and_names_across_pages(h: Harness) -> None:
    # Given
    h.answer(
        (200, {"artifacts": [{"name": "team/web"}], "prefixes": ["team/api/"], "next_token": "t"}),
        (200, {"artifacts": [{"name": "team/zoo"}], "prefixes": [], "next_token": None}),
    )
    # When
    entries = list(h.client.iter_artifacts("team/"))
    # Then
    assert [(e.name, e.is_prefix) for e in entries] == [("team/api/", True), ("team/web", False), ("team/zoo", False)]
    assert h.sent[0].query == {"prefix": ["team/"], "delimiter": ["/"]}


def test_iter_aliases_and_a_repeated_token_is_refused(h: Harness) -> None:
    # Given
    h.answer(
        (200, {"aliases": [{"alias": "prod", "version": 1, "revision": 2}], "next_token": "same"}),
        (200, {"aliases": [], "next_token": "same"}),
    )
    # When / Then
    with pytest.raises(ArcaError) as raised:
        list(h.client.iter_aliases("app"))
    assert raised.value.code == "PaginationLoop"


# ---- SigV4 --------------------------------------------------------------------------------------


def test_signing_is_on_for_remote_endpoints_and_off_for_this_machine() -> None:
    assert should_sign(REMOTE, environ={}) is True
    assert should_sign("http://localhost:3000", environ={}) is False
    assert should_sign("http://127.0.0.1:3000", environ={}) is False
    assert should_sign("http://127.0.0.1:3000", environ={"ARCA_SIGN": "1"}) is True
    assert should_sign(REMOTE, environ={"ARCA_SIGN": "0"}) is False
    assert should_sign(REMOTE, sign=False, environ={"ARCA_SIGN": "1"}) is False


def publish_through(h: Harness, tmp_path: Path, data: bytes) -> None:
    source = tmp_path / "blob"
    source.write_bytes(data)
    upload = {"url": S3_URL, "method": "PUT", "headers": {"Content-Type": "application/octet-stream"}}
    h.answer(
        (201, {"exists": False, "sha256": sha(data), "size": len(data), "upload": upload}),
        (200, b""),
        (201, {**version(1), "deduplicated": False}),
    )
    h.client.publish("app", source, metadata={"commit": "abc"})


def test_api_calls_are_signed_and_the_presigned_upload_is_not(tmp_path: Path) -> None:
    # Given
    h = make(REMOTE, credentials=CREDENTIALS)
    # When
    publish_through(h, tmp_path, b"some bytes")
    # Then
    uploads, put, publish = h.sent
    for api_call in (uploads, publish):
        authorization = api_call.headers["Authorization"]
        assert authorization.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
        assert "/eu-west-1/execute-api/aws4_request" in authorization
        signed = authorization.split("SignedHeaders=")[1].split(",")[0].split(";")
        assert {"host", "x-amz-date", "x-amz-security-token", "content-type"} <= set(signed)
        assert api_call.headers["X-Amz-Security-Token"] == "session-token"
        assert len(api_call.headers["X-Amz-Date"]) == len("20240501T120000Z")
    assert uploads.url == REMOTE + "/artifacts/app/uploads"
    assert put.url == S3_URL
    assert not {"authorization", "x-amz-date", "x-amz-security-token"} & {k.lower() for k in put.headers}


def test_signature_covers_the_json_body_as_sent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given: a fixed clock, so that the signature can be recomputed independently
    moment = datetime(2024, 5, 1, 12, 0, 0)
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: moment)
    h = make(REMOTE, credentials=CREDENTIALS)
    h.answer((200, {"name": "app", "dry_run": True, "deleted": [], "skipped": []}))
    # When
    h.client.prune("app", keep_last=3, dry_run=True)
    # Then
    sent = h.sent[0]
    expected = AWSRequest(
        method="POST",
        url=sent.url,
        headers={
            k: v
            for k, v in sent.headers.items()
            if k.lower() in ("content-type", "accept", "user-agent", "idempotency-key")
        },
        data=sent.body,
    )
    SigV4Auth(CREDENTIALS.get_frozen_credentials(), "execute-api", "eu-west-1").add_auth(expected)
    assert sent.headers["Authorization"] == expected.headers["Authorization"]
    assert sent.json() == {"keep_last": 3, "dry_run": True}


def test_signed_query_string_is_the_one_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given
    moment = datetime(2024, 5, 1, 12, 0, 0)
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: moment)
    h = make(REMOTE, credentials=CREDENTIALS)
    h.answer((200, {"versions": [], "next_token": None}))
    # When
    h.client.list_versions("app", next_token="a+b/c=", limit=5)
    # Then
    sent = h.sent[0]
    expected = AWSRequest(method="GET", url=sent.url, headers={"Accept": "application/json"}, data=b"")
    SigV4Auth(CREDENTIALS.get_frozen_credentials(), "execute-api", "eu-west-1").add_auth(expected)
    assert sent.headers["Authorization"] == expected.headers["Authorization"]


def test_each_retry_is_signed_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given
    clock = iter([datetime(2024, 5, 1, 12, 0, 0), datetime(2024, 5, 1, 12, 0, 7)])
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: next(clock))
    h = make(REMOTE, credentials=CREDENTIALS)
    h.answer((503, error("ThrottledError")), (200, version(1)))
    # When
    h.client.get_version("app", 1)
    # Then
    assert [s.headers["X-Amz-Date"] for s in h.sent] == ["20240501T120000Z", "20240501T120007Z"]


def test_local_endpoint_is_not_signed(h: Harness, tmp_path: Path) -> None:
    # When
    publish_through(h, tmp_path, b"x")
    # Then
    assert not any("Authorization" in s.headers for s in h.sent)


def test_region_comes_from_the_execute_api_host_or_must_be_given(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given: no region anywhere in the environment
    for variable in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    # When / Then
    assert make(REMOTE, credentials=CREDENTIALS).client.transport.signer.region == "eu-west-1"  # type: ignore[union-attr]
    with pytest.raises(CredentialsError):
        Client("https://artifacts.example.com", credentials=CREDENTIALS)
    assert Client("https://artifacts.example.com", region="us-west-2").signed


def test_missing_credentials_are_reported_before_sending(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given: an empty credential chain
    for variable in list(os.environ):
        if variable.startswith("AWS_") or variable.startswith("ECS_") or variable == "ARCA_SIGN":
            monkeypatch.delenv(variable)
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    h = make(REMOTE)
    # When
    with pytest.raises(CredentialsError):
        h.client.get_artifact("app")
    # Then
    assert h.sent == []


# ---- upload and publish -------------------------------------------------------------------------


def test_publish_streams_the_file_in_chunks_with_a_content_length(h: Harness, tmp_path: Path) -> None:
    # Given: a file of three and a half chunks
    data = os.urandom(CHUNK * 3 + CHUNK // 2)
    source = tmp_path / "model.bin"
    source.write_bytes(data)
    upload = {
        "url": S3_URL,
        "method": "PUT",
        "headers": {"Content-Type": "application/octet-stream", "x-amz-checksum-sha256": "b64"},
    }
    h.answer(
        (201, {"exists": False, "sha256": sha(data), "size": len(data), "upload": upload}),
        (200, b""),
        (201, {**version(1, sha256=sha(data), size=len(data)), "deduplicated": False}),
    )
    seen: list[tuple[str, int, int]] = []
    # When
    published = h.client.publish(
        "app", source, content_type="application/zip", metadata={"commit": "abc"}, progress=lambda *p: seen.append(p)
    )
    # Then
    uploads, put, publish = h.sent
    assert uploads.json() == {"sha256": sha(data), "size": len(data)}
    assert put.method == "PUT"
    assert put.streamed
    assert put.chunks == 4
    assert put.body == data
    assert put.headers["Content-Length"] == str(len(data))
    assert put.headers["x-amz-checksum-sha256"] == "b64"
    assert "Transfer-Encoding" not in put.headers
    assert publish.json() == {
        "sha256": sha(data),
        "size": len(data),
        "content_type": "application/zip",
        "metadata": {"filename": "model.bin", "commit": "abc"},
    }
    assert published.version.version == 1
    assert (published.deduplicated, published.uploaded) == (False, True)
    assert ("upload", len(data), len(data)) in seen
    assert ("hash", len(data), len(data)) in seen


def test_publish_skips_the_upload_when_the_blob_is_stored(h: Harness, tmp_path: Path) -> None:
    # Given
    source = tmp_path / "f"
    source.write_bytes(b"same")
    h.answer((200, {"exists": True, "sha256": sha(b"same"), "size": 4}), (200, {**version(2), "deduplicated": True}))
    # When
    published = h.client.publish("app", source)
    # Then
    assert [(s.method, s.path) for s in h.sent] == [
        ("POST", "/artifacts/app/uploads"),
        ("POST", "/artifacts/app/versions"),
    ]
    assert (published.deduplicated, published.uploaded) == (True, False)


def test_publish_uploads_again_once_when_the_stored_bytes_went_before_the_publish(h: Harness, tmp_path: Path) -> None:
    # Given bytes the registry said it had, removed by retention before the publish arrived
    source = tmp_path / "f"
    source.write_bytes(b"same")
    stored = {"exists": True, "sha256": sha(b"same"), "size": 4}
    gone = {"error": {"code": "ConflictError", "message": "no blob with this sha256", "field": "sha256"}}
    upload = {"url": S3_URL, "method": "PUT", "headers": {}}
    h.answer(
        (200, stored),
        (409, gone),
        (201, {**stored, "exists": False, "upload": upload}),
        (200, b""),
        (201, {**version(1), "deduplicated": False}),
    )
    # When the file is published
    published = h.client.publish("app", source)
    # Then it was uploaded again, once, and published
    assert [(s.method, s.path) for s in h.sent] == [
        ("POST", "/artifacts/app/uploads"),
        ("POST", "/artifacts/app/versions"),
        ("POST", "/artifacts/app/uploads"),
        ("PUT", "/artifacts/app/_blobs/x"),
        ("POST", "/artifacts/app/versions"),
    ]
    assert (published.version.version, published.uploaded) == (1, True)


@pytest.mark.parametrize("detail", [{"collecting": True}, {"state": "verifying"}])
def test_publish_does_not_upload_again_while_retention_removes_the_content_or_it_is_verified(
    h: Harness, tmp_path: Path, detail: dict[str, Any]
) -> None:
    # Given a publish refused because the content is being removed, or not verified yet
    source = tmp_path / "f"
    source.write_bytes(b"same")
    refused = {"error": {"code": "ConflictError", "message": "not yet", "field": "sha256", **detail}}
    h.answer((200, {"exists": True, "sha256": sha(b"same"), "size": 4}), (409, refused))
    # When the file is published, then the refusal is the answer: sending the bytes again would not help
    with pytest.raises(ConflictError):
        h.client.publish("app", source)
    assert len(h.sent) == 2


def test_a_throttled_upload_is_sent_again_from_the_first_byte(h: Harness, tmp_path: Path) -> None:
    # Given
    data = os.urandom(CHUNK + 10)
    source = tmp_path / "f"
    source.write_bytes(data)
    upload = {"url": S3_URL, "method": "PUT", "headers": {}}
    h.answer(
        (201, {"exists": False, "sha256": sha(data), "size": len(data), "upload": upload}),
        (503, b"<Error><Code>SlowDown</Code><Message>Reduce your request rate</Message></Error>"),
        (200, b""),
        (201, {**version(1), "deduplicated": False}),
    )
    # When
    h.client.publish("app", source)
    # Then
    assert h.sent[1].body == data
    assert h.sent[2].body == data
    assert len(h.sleeps) == 1


def test_an_upload_redirected_by_s3_is_a_failure_and_nothing_is_published(h: Harness, tmp_path: Path) -> None:
    # Given S3 answering the presigned PUT with a 307 to another endpoint (a legacy global URL, a new bucket)
    data = b"model bytes"
    source = tmp_path / "f"
    source.write_bytes(data)
    upload = {"url": S3_URL, "method": "PUT", "headers": {}}
    regional = "https://arca-bucket.s3.af-south-1.amazonaws.com/artifacts/app/_blobs/x"
    h.answer(
        (201, {"exists": False, "sha256": sha(data), "size": len(data), "upload": upload}),
        (307, b"<Error><Code>TemporaryRedirect</Code></Error>", {"Location": regional}),
    )
    # When the file is published
    with pytest.raises(ArcaError) as raised:
        h.client.publish("app", source)
    # Then the upload is reported as not stored, the redirect is not followed, and no publish is sent
    assert (raised.value.code, raised.value.status) == ("UploadNotStored", 307)
    assert [(s.method, s.url.split("?")[0]) for s in h.sent[1:]] == [("PUT", S3_URL.split("?")[0])]


def _publish_with_create_only_put(h: Harness, tmp_path: Path, *s3_answers: tuple[int, bytes]) -> Any:
    """Publish a small file whose upload URL is create-only (`If-None-Match: *`), S3 answering its PUTs with
    `s3_answers`; the publish itself succeeds."""
    data = b"model bytes"
    source = tmp_path / "f"
    source.write_bytes(data)
    upload = {"url": S3_URL, "method": "PUT", "headers": {"If-None-Match": "*"}}
    h.answer(
        (201, {"exists": False, "sha256": sha(data), "size": len(data), "upload": upload}),
        *s3_answers,
        (201, {**version(1), "deduplicated": False}),
    )
    return h.client.publish("app", source)


def test_an_upload_refused_because_the_blob_is_stored_already_goes_on_to_publish(h: Harness, tmp_path: Path) -> None:
    # Given S3 answering the create-only PUT with 412: the content's key holds an object already (an earlier
    # attempt whose answer was lost, or another uploader of the same bytes)
    # When the file is published
    published = _publish_with_create_only_put(h, tmp_path, (412, b"<Error><Code>PreconditionFailed</Code></Error>"))
    # Then the publish is sent (the service verifies the stored blob), and no bytes count as sent
    assert [s.method for s in h.sent] == ["POST", "PUT", "POST"]
    assert (published.version.version, published.uploaded) == (1, False)


def test_an_upload_meeting_a_concurrent_conditional_write_is_retried(h: Harness, tmp_path: Path) -> None:
    # Given S3 answering the create-only PUT with 409 ConditionalRequestConflict (another conditional write to
    # the same key under way), then storing it
    # When the file is published
    published = _publish_with_create_only_put(
        h, tmp_path, (409, b"<Error><Code>ConditionalRequestConflict</Code></Error>"), (200, b"")
    )
    # Then the PUT is sent again, as S3 asks, and the publish follows
    assert [s.method for s in h.sent] == ["POST", "PUT", "PUT", "POST"]
    assert (published.version.version, published.uploaded) == (1, True)


def test_a_conflict_from_the_api_is_never_retried(h: Harness) -> None:
    # Given the API answering 409 (aliases present)
    h.answer((409, {"error": {"code": "ConflictError", "message": "aliases exist"}}))
    # When the purge is sent, then it fails at once
    with pytest.raises(ConflictError):
        h.client.purge("app")
    assert len(h.sent) == 1


def test_a_pipe_is_spooled_while_hashed(h: Harness) -> None:
    # Given: a non-seekable source
    data = b"piped bytes" * 1000

    class Pipe(io.RawIOBase):
        def __init__(self) -> None:
            self.inner = io.BytesIO(data)

        def readable(self) -> bool:
            return True

        def readinto(self, buffer: Any) -> int:
            chunk = self.inner.read(len(buffer))
            buffer[: len(chunk)] = chunk
            return len(chunk)

    upload = {"url": S3_URL, "method": "PUT", "headers": {}}
    h.answer(
        (201, {"exists": False, "sha256": sha(data), "size": len(data), "upload": upload}),
        (200, b""),
        (201, {**version(1), "deduplicated": False}),
    )
    # When
    h.client.publish("app", io.BufferedReader(Pipe()))
    # Then
    assert h.sent[0].json() == {"sha256": sha(data), "size": len(data)}
    assert h.sent[1].body == data


def test_an_empty_file_is_uploaded_with_a_zero_content_length(h: Harness, tmp_path: Path) -> None:
    # Given
    source = tmp_path / "empty"
    source.write_bytes(b"")
    upload = {"url": S3_URL, "method": "PUT", "headers": {}}
    h.answer(
        (201, {"exists": False, "sha256": sha(b""), "size": 0, "upload": upload}),
        (200, b""),
        (201, {**version(1), "deduplicated": False}),
    )
    # When
    h.client.publish("app", source)
    # Then
    assert h.sent[1].headers["Content-Length"] == "0"
    assert "Transfer-Encoding" not in h.sent[1].headers


def test_publish_latest_sends_no_content(h: Harness) -> None:
    # Given
    h.answer((201, {**version(4), "deduplicated": False}))
    # When
    published = h.client.publish_latest("app")
    # Then
    assert h.sent[0].body == b""
    assert published.version.version == 4


# ---- download -----------------------------------------------------------------------------------


def resolution(data: bytes, **extra: Any) -> dict[str, Any]:
    return {
        "name": "team/app",
        "ref": "prod",
        "version": 7,
        "sha256": sha(data),
        "size": len(data),
        "download_url": S3_URL,
        "expires_at": "2024-05-01T12:15:00Z",
        "route": "secondary",
        "alias_revision": 3,
        **extra,
    }


def test_download_verifies_and_renames_into_place(h: Harness, tmp_path: Path) -> None:
    # Given
    data = os.urandom(CHUNK * 2 + 5)
    # (a version published without a recorded file name: the name's last segment names the file)
    h.answer((200, resolution(data)), (200, version(7, sha256=sha(data))), (200, data))
    seen: list[tuple[str, int, int]] = []
    # When
    downloaded = h.client.download(
        "team/app", "prod", tmp_path, routing_key="user-1", progress=lambda *p: seen.append(p)
    )
    # Then
    assert downloaded.path == str(tmp_path / "app")
    assert (tmp_path / "app").read_bytes() == data
    assert os.listdir(tmp_path) == ["app"]
    assert h.sent[0].path == "/artifacts/team/app/resolve/prod"
    assert h.sent[0].query == {"routing_key": ["user-1"]}
    assert h.sent[1].path == "/artifacts/team/app/versions/7"
    assert "Authorization" not in h.sent[2].headers
    assert downloaded.resolution.route == "secondary"
    assert seen[-1] == ("download", len(data), len(data))


def test_download_with_a_wrong_checksum_keeps_nothing(h: Harness, tmp_path: Path) -> None:
    # Given: the existing file must survive a failed download
    dest = tmp_path / "app.zip"
    dest.write_bytes(b"previous")
    h.answer((200, resolution(b"expected")), (200, b"tampered"))
    # When
    with pytest.raises(ChecksumMismatchError) as raised:
        h.client.download("team/app", "prod", dest)
    # Then
    assert raised.value.code == "ChecksumMismatch"
    assert dest.read_bytes() == b"previous"
    assert os.listdir(tmp_path) == ["app.zip"]


def test_download_to_a_file_object(h: Harness) -> None:
    # Given
    h.answer((200, resolution(b"hello")), (200, b"hello"))
    out = io.BytesIO()
    # When
    downloaded = h.client.download("team/app", "LATEST", out)
    # Then
    assert out.getvalue() == b"hello"
    assert downloaded.path is None


def test_resolve_of_latest_and_as_of_a_time(h: Harness) -> None:
    # Given
    h.answer((200, resolution(b"x", version="LATEST", ref="LATEST", route="primary")), (200, resolution(b"x")))
    # When
    latest = h.client.resolve("team/app")
    h.client.resolve("team/app", "prod", at=datetime(2024, 5, 1, 12, 0, tzinfo=UTC))
    # Then
    assert latest.version == "LATEST"
    assert h.sent[1].query == {"at": ["2024-05-01T12:00:00Z"]}
    assert "at=2024-05-01T12%3A00%3A00Z" in h.sent[1].url


# ---- aliases ------------------------------------------------------------------------------------


def alias(name: str, number: int | str, revision: int, **extra: Any) -> dict[str, Any]:
    return {"name": "app", "alias": name, "version": number, "revision": revision, **extra}


def test_set_alias_sends_the_canary_and_the_conditions(h: Harness) -> None:
    # Given
    h.answer((200, alias("prod", 3, 8, secondary_version=4, secondary_version_weight=10), {"ETag": '"8"'}))
    # When
    moved = h.client.set_alias(
        "app", "prod", 3, secondary_version=4, secondary_version_weight=10, reason="canary", if_revision=7
    )
    # Then
    sent = h.sent[0]
    assert (sent.method, sent.path) == ("PUT", "/artifacts/app/aliases/prod")
    assert sent.json() == {"version": 3, "secondary_version": 4, "secondary_version_weight": 10, "reason": "canary"}
    assert sent.headers["If-Match"] == '"7"'
    assert (moved.revision, moved.secondary_version, moved.secondary_version_weight) == (8, 4, 10)


def test_revision_falls_back_to_the_etag(h: Harness) -> None:
    # Given
    h.answer((200, {"alias": "prod", "version": 1}, {"ETag": '"12"'}))
    # When / Then
    assert h.client.get_alias("app", "prod").revision == 12


def test_promote_moves_the_target_only_if_unchanged_since_read(h: Harness) -> None:
    # Given
    h.answer(
        (200, alias("staging", 5, 2)),
        (200, alias("prod", 4, 9, description="live")),
        (200, alias("prod", 5, 10, description="live")),
    )
    # When
    promotion = h.client.promote("app", "staging", "prod")
    # Then
    put = h.sent[2]
    assert put.headers["If-Match"] == '"9"'
    assert "If-None-Match" not in put.headers
    assert put.json() == {"version": 5, "description": "live", "reason": "promoted from staging (version 5)"}
    assert promotion.changed
    assert promotion.previous is not None and promotion.previous.version == 4
    assert promotion.alias.version == 5


def test_promote_creates_a_missing_target_create_only(h: Harness) -> None:
    # Given
    h.answer((200, alias("staging", 5, 2)), (404, error("NotFoundError")), (201, alias("prod", 5, 1)))
    # When
    promotion = h.client.promote("app", "staging", "prod")
    # Then
    assert h.sent[2].headers["If-None-Match"] == "*"
    assert "If-Match" not in h.sent[2].headers
    assert promotion.previous is None


def test_promote_to_where_the_target_already_points_writes_nothing(h: Harness) -> None:
    # Given
    h.answer((200, alias("staging", 5, 2)), (200, alias("prod", 5, 9)))
    # When
    promotion = h.client.promote("app", "staging", "prod")
    # Then
    assert not promotion.changed
    assert len(h.sent) == 2


def test_promote_lost_race_is_a_precondition_failure(h: Harness) -> None:
    # Given
    h.answer((200, alias("staging", 5, 2)), (200, alias("prod", 4, 9)), (412, error("PreconditionFailedError")))
    # When / Then
    with pytest.raises(PreconditionFailedError):
        h.client.promote("app", "staging", "prod")


def test_rollback_and_delete_alias(h: Harness) -> None:
    # Given
    h.answer((200, alias("prod", 3, 11)), (204, None))
    # When
    rolled = h.client.rollback_alias("app", "prod", to_revision=4)
    h.client.delete_alias("app", "prod", if_revision=11)
    # Then
    assert h.sent[0].json() == {"to_revision": 4}
    assert rolled.version == 3
    assert (h.sent[1].method, h.sent[1].headers["If-Match"]) == ("DELETE", '"11"')


def test_names_with_slashes_keep_them_in_paths(h: Harness) -> None:
    # Given
    h.answer((200, {"name": "a/b/c", "latest": version("LATEST"), "newest_version": 2, "counts": {"versions": 2}}))
    # When
    summary = h.client.get_artifact("a/b/c")
    # Then
    assert h.sent[0].path == "/artifacts/a/b/c"
    assert summary.counts.versions == 2
    assert summary.latest.version == "LATEST"


def test_purge_with_force_and_prune_results(h: Harness) -> None:
    # Given
    h.answer((204, None), (200, {"name": "app", "dry_run": False, "deleted": [1, 2], "skipped": []}))
    # When
    h.client.purge("app", force=True)
    pruned = h.client.prune("app", keep_last=1, older_than_days=30)
    # Then
    assert h.sent[0].query == {"force": ["true"]}
    assert h.sent[1].json() == {"keep_last": 1, "dry_run": False, "older_than_days": 30}
    assert pruned.deleted == [1, 2]


def test_purge_repeats_the_delete_while_the_api_answers_202(h: Harness) -> None:
    # Given a purge that takes three requests
    progress = {"name": "app", "status": "purging", "message": "send the same DELETE again"}
    h.answer((202, progress), (202, progress), (204, None))
    # When
    h.client.purge("app", force=True)
    # Then the same DELETE was sent until it finished
    assert [(s.method, s.path, s.query) for s in h.sent] == [("DELETE", "/artifacts/app", {"force": ["true"]})] * 3


def test_prune_follows_next_token_and_returns_everything_done(h: Harness) -> None:
    # Given a prune the API does in two requests
    h.answer(
        (200, {"name": "app", "dry_run": False, "deleted": [9, 8], "skipped": [], "next_token": "t1"}),
        (200, {"name": "app", "dry_run": False, "deleted": [2], "skipped": [{"version": 1}], "next_token": None}),
    )
    # When
    pruned = h.client.prune("app", keep_last=1)
    # Then the second request carried the token with the same body, and the results are merged
    assert h.sent[1].json() == {"keep_last": 1, "dry_run": False, "next_token": "t1"}
    assert pruned.deleted == [9, 8, 2]
    assert pruned.skipped == [{"version": 1}]


def test_a_non_json_success_is_a_bad_response(h: Harness) -> None:
    # Given
    h.answer((200, b"<html>proxy page</html>"))
    # When / Then
    with pytest.raises(ArcaError) as raised:
        h.client.health()
    assert raised.value.code == "BadResponse"


def test_client_reads_the_endpoint_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given
    monkeypatch.setenv("ARCA_ENDPOINT", "http://localhost:4000/")
    monkeypatch.delenv("ARCA_SIGN", raising=False)
    # When
    client = Client()
    # Then
    assert client.endpoint == "http://localhost:4000"
    assert not client.signed


# ---- file names and content types ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content_type"),
    [
        ("app.zip", "application/zip"),
        ("config.json", "application/json"),
        ("site.tar", "application/x-tar"),
        ("site.tar.gz", None),  # a gzip stream, not a tar file: left to the registry's default
        ("model.weights", None),
        ("README", None),
    ],
)
def test_content_type_is_guessed_from_the_file_name(name: str, content_type: str | None) -> None:
    assert guess_content_type(name) == content_type


def publish_answers(h: Harness, data: bytes) -> None:
    h.answer(
        (200, {"exists": True, "sha256": sha(data), "size": len(data)}),
        (201, {**version(1, sha256=sha(data), size=len(data)), "deduplicated": False}),
    )


def test_publish_records_the_file_name_and_guesses_the_type_from_it(h: Harness, tmp_path: Path) -> None:
    # Given
    source = tmp_path / "app-v1.zip"
    source.write_bytes(b"zip")
    publish_answers(h, b"zip")
    # When
    h.client.publish("app", source)
    # Then
    assert h.sent[-1].json() == {
        "sha256": sha(b"zip"),
        "size": 3,
        "content_type": "application/zip",
        "metadata": {"filename": "app-v1.zip"},
    }


def test_a_stream_gets_the_name_it_is_given_and_explicit_values_win(h: Harness) -> None:
    # Given
    publish_answers(h, b"{}")
    publish_answers(h, b"{}")
    publish_answers(h, b"{}")
    # When
    h.client.publish("app", io.BytesIO(b"{}"), filename="settings.json")
    h.client.publish(
        "app", io.BytesIO(b"{}"), filename="x.json", content_type="text/plain", metadata={"filename": "y.txt"}
    )
    h.client.publish("app", io.BytesIO(b"{}"))
    # Then
    named, explicit, anonymous = (sent.json() for sent in h.sent if sent.path.endswith("/versions"))
    assert (named["content_type"], named["metadata"]) == ("application/json", {"filename": "settings.json"})
    assert (explicit["content_type"], explicit["metadata"]) == ("text/plain", {"filename": "y.txt"})
    assert "content_type" not in anonymous
    assert "metadata" not in anonymous


def test_an_empty_filename_records_none(h: Harness, tmp_path: Path) -> None:
    # Given
    source = tmp_path / "app.zip"
    source.write_bytes(b"zip")
    publish_answers(h, b"zip")
    # When
    h.client.publish("app", source, filename="")
    # Then
    assert h.sent[-1].json() == {"sha256": sha(b"zip"), "size": 3}


def test_download_without_a_destination_keeps_the_published_file_name(
    h: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given
    monkeypatch.chdir(tmp_path)
    h.answer(
        (200, resolution(b"zip")),
        (200, version(7, sha256=sha(b"zip"), metadata={"filename": "app-v7.zip"})),
        (200, b"zip"),
    )
    # When
    downloaded = h.client.download("team/app", "prod")
    # Then
    assert downloaded.path == "app-v7.zip"
    assert (tmp_path / "app-v7.zip").read_bytes() == b"zip"


@pytest.mark.parametrize("recorded", ["../escape.zip", "/etc/passwd", "a/b.zip", "a\\b.zip", ".bashrc", "x\ny", ".."])
def test_a_recorded_name_that_could_land_elsewhere_is_not_used(h: Harness, tmp_path: Path, recorded: str) -> None:
    # Given
    h.answer(
        (200, resolution(b"zip")),
        (200, version(7, sha256=sha(b"zip"), metadata={"filename": recorded})),
        (200, b"zip"),
    )
    # When
    downloaded = h.client.download("team/app", "prod", tmp_path)
    # Then
    assert downloaded.path == str(tmp_path / "app")
    assert os.listdir(tmp_path) == ["app"]


def test_the_recorded_name_of_another_content_is_not_used(h: Harness, tmp_path: Path) -> None:
    # Given: LATEST moved between the resolve and the read of its metadata
    h.answer(
        (200, resolution(b"zip", version="LATEST")),
        (200, version("LATEST", sha256=sha(b"other"), metadata={"filename": "other.zip"})),
        (200, b"zip"),
    )
    # When
    downloaded = h.client.download("team/app", "LATEST", tmp_path)
    # Then
    assert h.sent[1].path == "/artifacts/team/app/versions/LATEST"
    assert downloaded.path == str(tmp_path / "app")


def test_download_refuses_an_existing_file_before_fetching_it(h: Harness, tmp_path: Path) -> None:
    # Given
    dest = tmp_path / "app.zip"
    dest.write_bytes(b"mine")
    h.answer((200, resolution(b"zip")))
    # When
    with pytest.raises(FileExistsError) as raised:
        h.client.download("team/app", "prod", dest, overwrite=False)
    # Then
    assert raised.value.filename == str(dest)
    assert dest.read_bytes() == b"mine"
    assert len(h.sent) == 1  # resolved, nothing fetched


def test_download_refuses_a_file_that_appeared_while_it_was_fetched(h: Harness, tmp_path: Path) -> None:
    # Given: someone else writes the file while the download runs
    dest = tmp_path / "app.zip"
    h.answer((200, resolution(b"zip")), (200, b"zip"))

    def meanwhile(phase: str, done: int, total: int) -> None:
        if done == total:
            dest.write_bytes(b"theirs")

    # When
    with pytest.raises(FileExistsError):
        h.client.download("team/app", "prod", dest, overwrite=False, progress=meanwhile)
    # Then
    assert dest.read_bytes() == b"theirs"
    assert os.listdir(tmp_path) == ["app.zip"]  # no partial file left


def test_a_local_user_is_named_on_every_api_call_and_comes_from_the_environment_by_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a client naming its local user, one taking it from the environment, and one without
    monkeypatch.delenv("ARCA_LOCAL_USER", raising=False)
    named, unnamed = make(local_user="alice"), make()
    monkeypatch.setenv("ARCA_LOCAL_USER", "bob")
    from_env = make()
    # When
    for harness in (named, unnamed, from_env):
        harness.answer((200, {"status": "ok"}))
        harness.client.health()
    # Then
    assert named.sent[0].headers["X-Arca-Local-User"] == "alice"
    assert from_env.sent[0].headers["X-Arca-Local-User"] == "bob"
    assert "X-Arca-Local-User" not in unnamed.sent[0].headers


UPLOAD_ID = f"{'a' * 64}.{'b' * 64}"


def _completed(state: str, hashed: int) -> dict[str, Any]:
    return {
        "id": UPLOAD_ID,
        "sha256": "a" * 64,
        "size": 100,
        "part_size": 50,
        "part_count": 2,
        "completed_at": "2026-01-01T00:00:00Z",
        "state": state,
        "verified_bytes": hashed,
    }


def test_a_completion_verified_in_the_background_is_followed_until_complete(h: Harness) -> None:
    # Given a completion answered 202 `verifying`, then the upload's state moving on
    status = {"exists": False, "sha256": "a" * 64, "size": 100}
    h.answer(
        (202, _completed("verifying", 0)),
        (200, {**status, "state": "verifying", "verified_bytes": 50}),
        (200, {**status, "exists": True, "state": "complete"}),
    )
    naps: list[float] = []
    # When it is completed
    done = h.client.complete_upload("app", UPLOAD_ID, sleep=naps.append)
    # Then the state was followed until complete
    assert done["state"] == "complete"
    assert [(s.method, s.path.rsplit("/", 1)[-1]) for s in h.sent] == [
        ("POST", "complete"),
        ("GET", UPLOAD_ID),
        ("GET", UPLOAD_ID),
    ]
    assert naps == [0.5, 1.0]


def test_a_stalled_background_check_is_asked_again_and_a_failed_one_raises(h: Harness) -> None:
    # Given a check that makes no progress for longer than the stall limit, then fails
    status = {"exists": False, "sha256": "a" * 64, "size": 100, "state": "verifying", "verified_bytes": 10}
    h.answer(
        (202, _completed("verifying", 10)),
        (200, status),
        (200, status),
        (202, _completed("verifying", 10)),
        (200, {**status, "state": "failed"}),
    )
    moments = iter([0.0, 1.0, 500.0, 500.0, 501.0])
    # When it is completed, then the failure is raised, and the stalled check was asked to go on once
    with pytest.raises(ConflictError) as failed:
        h.client.complete_upload("app", UPLOAD_ID, sleep=lambda _: None, clock=lambda: next(moments))
    assert failed.value.code == "UploadFailed"
    assert [s.method for s in h.sent] == ["POST", "GET", "GET", "POST", "GET"]


def test_part_hashes_are_checked_against_the_signed_manifest() -> None:
    from arca_client.verify import SignatureError, check_parts

    parts = [hashlib.sha256(b"one").hexdigest(), hashlib.sha256(b"two").hexdigest()]
    digest = hashlib.sha256(b"".join(bytes.fromhex(p) for p in parts)).hexdigest()
    signed = {"name": "app", "version": 1, "manifest": json.dumps({"part_size": 50, "parts_sha256": digest})}
    check_parts(signed, 50, parts)  # the signed ones: nothing to say
    check_parts({"manifest": json.dumps({"sha256": "x"})}, 50, parts)  # a manifest without parts checks none
    for size, hashes in ((50, list(reversed(parts))), (60, parts)):
        with pytest.raises(SignatureError) as refused:
            check_parts(signed, size, hashes)
        assert refused.value.code == "ManifestMismatch"
