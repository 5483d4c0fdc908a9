"""Retention (publish function, which holds the grants a soft delete and an expiry need): an artifact's policy, its
preview and applying it now."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body
from pydantic import BaseModel, ConfigDict, Field, StrictStr

from arca.api.caller import Caller
from arca.api.dependencies import RetentionService
from arca.api.errors import JSON
from arca.api.params import Limit, Name, NextToken, answers
from arca.api.routing import Router
from arca.domain.retention import Applied, Preview, RetentionBody, RetentionPolicy

router = Router()


class ApplyBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)

    next_token: Annotated[StrictStr, Field(max_length=2048)] | None = None


@router.put("/artifacts/<name>/retention", responses=answers(200, 400, 404, 409, 415, 503), tags=["retention"])
def put_retention(
    name: Name, body: Annotated[RetentionBody, Body()], caller: Caller, retention: RetentionService
) -> RetentionPolicy:
    """Set the artifact's retention policy (replacing any)."""
    return retention.put(name, body, identity=caller)


@router.get("/artifacts/<name>/retention", responses=answers(200, 400, 404, 503), tags=["retention"])
def get_retention(name: Name, retention: RetentionService) -> RetentionPolicy:
    """The artifact's retention policy (404 when it has none)."""
    return retention.get(name)


@router.delete(
    "/artifacts/<name>/retention", status_code=204, responses=answers(204, 400, 404, 409, 503), tags=["retention"]
)
def delete_retention(name: Name, retention: RetentionService) -> Response[None]:
    """Remove the artifact's retention policy."""
    retention.delete(name)
    return Response(204, None, None)


@router.get("/artifacts/<name>/retention/preview", responses=answers(200, 400, 404, 503), tags=["retention"])
def preview_retention(
    name: Name, retention: RetentionService, limit: Limit = 100, next_token: NextToken = None
) -> Preview:
    """What applying the policy now would do, version by version, newest first, with every reason one is kept."""
    return retention.preview(name, limit=limit, token=next_token)


@router.post("/artifacts/<name>/retention/apply", responses=answers(200, 400, 404, 409, 415, 503), tags=["retention"])
def apply_retention(
    name: Name, retention: RetentionService, body: Annotated[ApplyBody | None, Body()] = None
) -> Response[Applied]:
    """Apply the policy now, with bounded work: send `next_token` back until it is null."""
    applied = retention.apply(name, token=(body or ApplyBody()).next_token)
    return Response(200, JSON, applied)
