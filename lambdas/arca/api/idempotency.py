"""How a writing route answers, live and replayed alike, and the `Idempotency-Key` header it takes.

A route renders the outcome of its write into an Answer (status and JSON body, `answer`); the live response
and a replayed one are both built from an Answer by `respond`, so a retry gets exactly what the first request
got. With a key, the route hands its rendering down with the receipt (a Seal): the service passes it to the
store, which writes the rendered answer as the key's record in the transaction of the change (so a crash can
never leave a change without its record, nor a record without its change). The receipt is injected
(`Idempotent`, a Powertools dependency); the record is read back through the idempotency service.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.depends import Depends
from aws_lambda_powertools.event_handler.openapi.params import Header
from aws_lambda_powertools.event_handler.request import Request
from pydantic import BaseModel

from arca.api.caller import Caller
from arca.api.dependencies import IdempotencyService
from arca.api.errors import JSON
from arca.domain.receipts import KEY_PATTERN, Answer, Receipt, Seal

if TYPE_CHECKING:
    from arca.services.idempotency import Idempotency

T = TypeVar("T")
# The header as a route declares it (so it is validated and documented); the receipt is built from it.
IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        description="1-128 printable ASCII characters: a retry with the same key and request within 24 hours "
        "gets the first answer again and changes nothing; the same key with another request is a 422",
        pattern=KEY_PATTERN,
    ),
]
# Headers that change what a write does, so they are part of the request's fingerprint.
_CONDITIONS = ("if-match", "if-none-match")


@dataclass(frozen=True)
class Keyed:
    """A request's Idempotency-Key as a receipt, and the service that keeps its answer."""

    receipt: Receipt
    service: Idempotency


def receipt(request: Request, caller: Caller, idempotency: IdempotencyService) -> Keyed | None:
    """The request's Idempotency-Key as a receipt, None without one. Keys are scoped by caller, so two callers'
    keys never meet."""
    headers = {k.lower(): v for k, v in request.headers.items()}
    key = headers.get("idempotency-key")
    if key is None:
        return None
    return Keyed(idempotency.receipt(caller or "anonymous", key, _fingerprint(request, headers)), idempotency)


Idempotent = Annotated[Keyed | None, Depends(receipt)]


def answer(body: BaseModel, status: int = 200) -> Answer:
    """A route's answer: the status, and the body as the API serialises a response model (JSON mode, by alias)."""
    return Answer(status, json.dumps(body.model_dump(mode="json", by_alias=True), separators=(",", ":")))


def respond(
    answer: Answer, headers: Callable[[dict[str, Any]], dict[str, str]] = lambda _: {}, *, replayed: bool = False
) -> Response[Any]:
    """The response of an answer, live or replayed; `headers` derives the route's headers from the body."""
    body = json.loads(answer.body)
    return Response(
        answer.status, JSON, body, headers={**headers(body), **({"Idempotent-Replayed": "true"} if replayed else {})}
    )


def idempotent(
    key: Keyed | None,
    write: Callable[[Seal | None], T],
    render: Callable[[T], Answer],
    headers: Callable[[dict[str, Any]], dict[str, str]] = lambda _: {},
) -> Response[Any]:
    """Run the write (with a seal of `render` when the request has a key), or replay the answer kept for it.

    Raises IdempotencyKeyReusedError (422) when the key was used for a different request.
    """
    if key is None:
        return respond(render(write(None)), headers)
    done = key.service.once(key.receipt, lambda: write(Seal(key.receipt, render)))
    if isinstance(done, Answer):
        return respond(done, headers, replayed=True)
    return respond(render(done), headers)


def _fingerprint(request: Request, headers: dict[str, str]) -> str:
    """The request as the write sees it: method, path, the JSON body (keys sorted) and its conditions."""
    event = request.resolved_event
    raw = event.decoded_body or ""
    try:
        body: Any = json.loads(raw) if raw else None
    except ValueError:
        body = raw
    found = {
        "method": event.http_method,
        "path": event.path,
        "body": body,
        "conditions": {h: headers.get(h) for h in _CONDITIONS},
    }
    return hashlib.sha256(json.dumps(found, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
