"""The tests' door to the handlers holds Lambda's payload limits, so no test passes on an answer AWS refuses."""

from __future__ import annotations

from typing import Any

import pytest

from arca.handlers import resolve
from local.events import LAMBDA_PAYLOAD_BYTES, HandlerApi, PayloadTooLargeError


def test_an_answer_over_lambdas_payload_limit_fails_the_call_as_on_aws(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a resolve handler whose answer is over 6 MB
    def oversized(event: Any, context: Any) -> dict[str, Any]:
        return {"statusCode": 200, "headers": {}, "body": "x" * (LAMBDA_PAYLOAD_BYTES + 1)}

    monkeypatch.setattr(resolve, "handler", oversized)
    # When it is called through the handlers' client, then the call fails as Lambda would fail it
    with pytest.raises(PayloadTooLargeError, match="response"):
        HandlerApi().call("GET", "/health")


def test_an_event_over_lambdas_payload_limit_never_reaches_the_handler(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a handler that records being called
    called: list[Any] = []
    monkeypatch.setattr(resolve, "handler", lambda event, context: called.append(event))
    # When an event over 6 MB is sent, then Lambda refuses it before the handler runs
    with pytest.raises(PayloadTooLargeError, match="event"):
        HandlerApi().call("GET", "/health", headers={"X-Big": "x" * LAMBDA_PAYLOAD_BYTES})
    assert called == []
