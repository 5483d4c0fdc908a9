"""Links (publish function): a name that reads as another artifact."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body

from arca.api.caller import Caller
from arca.api.dependencies import LinksService
from arca.api.errors import JSON
from arca.api.params import Name, answers
from arca.api.routing import Router
from arca.domain.entities import Link
from arca.domain.models import LinkBody

router = Router()


@router.put("/artifacts/<name>/link", responses=answers(200, 201, 400, 404, 409, 415, 503), tags=["links"])
def put_link(name: Name, body: Annotated[LinkBody, Body()], caller: Caller, links: LinksService) -> Response[Link]:
    """Make `name` a link to the artifact `target` (201), or re-point it (200). Reads under `name` then follow
    it once and carry `via`; writes under it are refused (409 naming the target)."""
    link, created = links.link(name, body.target, identity=caller)
    return Response(201 if created else 200, JSON, link)


@router.delete("/artifacts/<name>/link", status_code=204, responses=answers(204, 400, 404, 409, 503), tags=["links"])
def delete_link(name: Name, caller: Caller, links: LinksService) -> Response[None]:
    """Remove the link (never its target)."""
    links.unlink(name, identity=caller)
    return Response(204, None, None)
