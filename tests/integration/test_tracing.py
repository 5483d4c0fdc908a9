"""Tracing: the traced functions record their work in X-Ray, never their answers (presigned URLs are bearer tokens)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

import pytest
from aws_lambda_powertools import Tracer

from arca.handlers.http import entry_point
from arca.observability import traced
from local import iam
from local.events import api_event, lambda_context
from tests.helpers import sha256


class FakeSegment:
    def __init__(self, name: str) -> None:
        self.name = name
        self.annotations: dict[str, Any] = {}
        self.metadata: dict[str, Any] = {}

    def put_annotation(self, key: str, value: Any) -> None:
        self.annotations[key] = value

    def put_metadata(self, key: str, value: Any, namespace: str = "default") -> None:
        self.metadata[f"{namespace}/{key}"] = value

    def add_exception(self, exception: BaseException, stack: Any, remote: bool = False) -> None:
        self.metadata["exception"] = repr(exception)


class FakeRecorder:
    """An X-Ray recorder that keeps every subsegment in memory and patches nothing."""

    def __init__(self) -> None:
        self.segments: list[FakeSegment] = []

    @contextmanager
    def in_subsegment(self, name: str | None = None, **kwargs: Any) -> Iterator[FakeSegment]:
        segment = FakeSegment(name or "")
        self.segments.append(segment)
        yield segment

    def patch(self, modules: Any) -> None:
        pass

    def patch_all(self) -> None:
        pass

    def put_annotation(self, key: str, value: Any) -> None:
        pass

    def put_metadata(self, key: str, value: Any, namespace: str = "default") -> None:
        pass


@pytest.fixture
def recorder(aws: SimpleNamespace, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeRecorder]:
    """Tracing on, as in Lambda (a task root, tracing not disabled), into the fake recorder."""
    monkeypatch.setenv("LAMBDA_TASK_ROOT", "/var/task")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "false")
    fake = FakeRecorder()
    Tracer._reset_config()
    Tracer(provider=fake)  # type: ignore[arg-type]
    yield fake
    Tracer._reset_config()


def test_a_traced_function_records_its_handler_but_never_the_presigned_url_it_answers(recorder: FakeRecorder) -> None:
    # Given the publish function under the tracer, and a request whose answer is a presigned upload URL
    handler = traced(entry_point("publish"))
    body = json.dumps({"sha256": sha256(b"secret"), "size": 6})
    event, _ = api_event("POST", "/artifacts/app/uploads", body=body, headers={"Content-Type": "application/json"})
    # When the function is invoked
    with iam.acting_as("publish"):
        response = handler(event, lambda_context("publish"))
    # Then the handler ran in a subsegment, and nothing recorded holds the URL or its signature
    assert response["statusCode"] == 201
    assert "X-Amz-Signature" in response["body"]
    assert [segment.name for segment in recorder.segments] == ["## handler"]
    recorded = json.dumps([(s.annotations, s.metadata) for s in recorder.segments], default=str)
    assert "X-Amz-Signature" not in recorded
    assert "response" not in recorded
