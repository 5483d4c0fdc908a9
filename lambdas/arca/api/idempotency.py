"""The `Idempotency-Key` header of the writing routes: replay a first answer, refuse a reused key.

The key's record is written by the repository in the same transaction as the change (so a crash can
never leave a change without its record, nor a record without its change); this module reads it first,
fingerprints the request, and renders a stored answer again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Header

from arca import wiring
from arca.api.routing import Router
from arca.domain.errors import IdempotencyKeyReusedError, IdempotencyKeyTakenError
from arca.domain.receipts import KEY_PATTERN, Answer, Receipt

IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        description="1-128 printable ASCII characters: a retry with the same key and request within 24 hours "
        "gets the first answer again and changes nothing; the same key with another request is a 422",
        pattern=KEY_PATTERN,
    ),
]
JSON = "application/json"
# Headers that change what a write does, so they are part of the request's fingerprint.
_CONDITIONS = ("if-match", "if-none-match")


def idempotent(
    router: Router,
    key: str | None,
    run: Callable[[Receipt | None], Response[Any]],
    headers: Callable[[dict[str, Any]], dict[str, str]] = lambda _: {},
) -> Response[Any]:
    """Run the write with its receipt, or replay the answer stored under `key` for the same request.

    A concurrent request with the same key that commits first makes this one's transaction fail on the
    record's condition; its answer is then replayed too. Raises IdempotencyKeyReusedError (422) when
    the key was used for a different request.
    """
    if key is None:
        return run(None)
    services = wiring.services()
    caller = router.current_event.request_context.identity
    # Keys are scoped by caller, so two callers' keys never meet.
    scope = caller.user_arn or caller.caller or caller.cognito_identity_id or "anonymous"
    receipt = Receipt(scope, key, _fingerprint(router), int(services.policy.clock().timestamp()))
    stored = services.stores.receipts.receipt(receipt.scope, key, now=receipt.now)
    if stored is None:
        try:
            return run(receipt)
        except IdempotencyKeyTakenError:
            stored = services.stores.receipts.receipt(receipt.scope, key, now=receipt.now)
            if stored is None:
                raise
    if stored.fingerprint != receipt.fingerprint:
        raise IdempotencyKeyReusedError(
            "this Idempotency-Key was used for a different request in the last 24 hours", field="Idempotency-Key"
        )
    return _replay(stored.answer, headers)


def _replay(answer: Answer, headers: Callable[[dict[str, Any]], dict[str, str]]) -> Response[Any]:
    body = json.loads(answer.body)
    return Response(answer.status, JSON, body, headers={**headers(body), "Idempotent-Replayed": "true"})


def _fingerprint(router: Router) -> str:
    """The request as the write sees it: method, path, the JSON body (keys sorted) and its conditions."""
    event = router.current_event
    raw = event.decoded_body or ""
    try:
        body: Any = json.loads(raw) if raw else None
    except ValueError:
        body = raw
    found = {k.lower(): v for k, v in (event.headers or {}).items()}
    request = {
        "method": event.http_method,
        "path": event.path,
        "body": body,
        "conditions": {h: found.get(h) for h in _CONDITIONS},
    }
    return hashlib.sha256(json.dumps(request, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
