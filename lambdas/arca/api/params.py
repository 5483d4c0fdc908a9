"""Typed path, query and header parameters shared by the routers, and the documented error answers.

Path parameters are checked by the domain's own grammar (arca.domain.names): its ValidationError names the
field and passes through pydantic to the one error handler. The JSON schema each carries is what the
OpenAPI document shows.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, Any
from urllib.parse import unquote

from aws_lambda_powertools.event_handler.openapi.params import Header, Path, Query
from pydantic import BeforeValidator, WithJsonSchema

from arca.api.errors import JSON
from arca.api.schemas import ErrorBody
from arca.domain.errors import ValidationError
from arca.domain.names import (
    ALIAS_PATTERN,
    MAX_NAME_LENGTH,
    NAME_PATTERN,
    parse_target,
    parse_version,
    validate_alias,
    validate_name,
)

Name = Annotated[
    str,
    BeforeValidator(lambda v: validate_name(unquote(v))),
    WithJsonSchema({"type": "string", "pattern": NAME_PATTERN, "maxLength": MAX_NAME_LENGTH}),
    Path(description="artifact name: one to eight segments joined by `/`"),
]
AliasName = Annotated[
    str,
    BeforeValidator(validate_alias),
    WithJsonSchema({"type": "string", "pattern": ALIAS_PATTERN}),
    Path(description="alias name"),
]
VersionNumber = Annotated[
    int,
    BeforeValidator(parse_version),
    WithJsonSchema({"type": "string", "pattern": "^[1-9][0-9]{0,5}$"}),
    Path(description="version number, 1 to 999999"),
]
# A content reference: the newest version that is not deleted with that content.
CONTENT_REF_PATTERN = r"sha256:[0-9a-f]{64}"
_CONTENT_REF = re.compile(CONTENT_REF_PATTERN)


def _version_or_latest(value: object) -> int | str:
    if isinstance(value, str) and _CONTENT_REF.fullmatch(value):
        return value
    return parse_target(value) if value == "LATEST" else parse_version(value)


VersionOrLatest = Annotated[
    int | str,
    BeforeValidator(_version_or_latest),
    WithJsonSchema({"type": "string", "pattern": f"^([1-9][0-9]{{0,5}}|LATEST|{CONTENT_REF_PATTERN})$"}),
    Path(description="version number, LATEST, or sha256:<hex> (the newest live version with that content)"),
]
Ref = Annotated[
    str,
    Path(
        description="a version number, LATEST, an alias name, or sha256:<hex> (the newest live version with that "
        "content)",
        pattern=rf"^([1-9][0-9]{{0,5}}|LATEST|[A-Za-z0-9_][A-Za-z0-9._-]{{0,127}}|{CONTENT_REF_PATTERN})$",
    ),
]
TagFilter = Annotated[
    list[str] | None,
    Query(
        description="`key=value` or `key:value` (a key with `:` needs the `=` form); repeat it to AND several",
        max_length=50,
    ),
]
Sha256Filter = Annotated[
    str | None, Query(pattern=r"^[0-9a-f]{64}$", description="versions holding this content (lower-case hex)")
]
Limit = Annotated[int, Query(ge=1, le=1000, description="at most this many items")]
NextToken = Annotated[str | None, Query(description="from the previous page's `next_token`", max_length=2048)]
IfMatch = Annotated[
    str | None,
    Header(alias="If-Match", description="alias revision (the ETag), quoted or not", pattern=r'^(W/)?"?[0-9]{1,9}"?$'),
]
IfNoneMatch = Annotated[str | None, Header(alias="If-None-Match", description="`*`: create only", pattern=r"^\*$")]


def in_utc(moment: datetime | None) -> datetime | None:
    """The time in UTC; a time that has no UTC form (year 9999 west of Greenwich) is bad input, not a 500."""
    try:
        return None if moment is None else moment.astimezone(UTC)
    except OverflowError:
        raise ValueError("is outside the years 1 to 9999 in UTC") from None


def revision_of(if_match: str | None) -> int | None:
    """`If-Match: <revision>`, quoted or not (ETag form); None when absent."""
    if if_match is None:
        return None
    value = if_match.strip().removeprefix("W/").strip('"')
    if not (value.isascii() and value.isdigit()):
        raise ValidationError("If-Match must be an alias revision number", field="If-Match")
    return int(value)


def create_only(if_none_match: str | None) -> bool:
    if if_none_match is not None and if_none_match.strip() != "*":
        raise ValidationError("If-None-Match supports only *", field="If-None-Match")
    return if_none_match is not None


def answers(*statuses: int) -> dict[int, Any]:
    """OpenAPI responses: success statuses take their schema from the return type; errors share one shape."""
    described = {
        200: "OK",
        201: "created",
        202: "accepted, not finished: repeat the request to continue",
        204: "done; no body",
        302: "redirect to `Location`; the body is the resolution",
        400: "bad input: `field` names it",
        403: "the alias's policy refuses it: `violations` lists every rule broken",
        404: "no such artifact, version or alias",
        409: "conflicts with the current state",
        412: "a precondition did not hold",
        413: "too large",
        415: "the body is not JSON",
        422: "the Idempotency-Key was used for a different request",
        503: "AWS kept throttling; retry",
    }
    shape = {JSON: {"model": ErrorBody}}
    documented: dict[int, Any] = {}
    for status in statuses:
        documented[status] = {"description": described[status]}
        if status == 204:
            documented[status]["content"] = {}
        elif status >= 400:
            documented[status]["content"] = shape
    return documented
