"""LATEST (publish function): pointing it at uploaded content."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body

from arca.api.caller import Caller
from arca.api.dependencies import PublishingService
from arca.api.idempotency import IdempotencyKey, Idempotent, answer, idempotent
from arca.api.params import Name, answers
from arca.api.routing import Router
from arca.domain.entities import Latest
from arca.domain.publishing import LatestBody
from arca.domain.receipts import Seal

router = Router()


@router.put("/artifacts/<name>/latest", responses=answers(200, 400, 409, 413, 415, 422, 503), tags=["publishing"])
def put_latest(
    name: Name,
    content: Annotated[LatestBody, Body()],
    caller: Caller,
    key: Idempotent,
    publishing: PublishingService,
    idempotency_key: IdempotencyKey = None,
) -> Response[Latest]:
    """Point LATEST at an uploaded blob (checked in S3: present, same size and checksum), or at a tree of uploaded
    files (`files`, or `tree`: an uploaded canonical tree manifest)."""

    def write(seal: Seal | None) -> Latest:
        given = content.tree_content() or content.content()
        assert given is not None  # LatestBody requires content
        return publishing.put_latest(name, given, seal=seal, identity=caller)

    return idempotent(key, write, answer)
