"""Tags and descriptions (publish function): mutable labels on versions and artifacts (metadata stays immutable)."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Body

from arca.api.caller import Caller
from arca.api.dependencies import TaggingService
from arca.api.params import Name, VersionNumber, answers
from arca.api.routing import Router
from arca.domain.entities import Summary, Version
from arca.domain.models import ArtifactPatch, VersionPatch

router = Router()


@router.patch("/artifacts/<name>", responses=answers(200, 400, 404, 409, 415, 503), tags=["tags"])
def update_artifact(
    name: Name, body: Annotated[ArtifactPatch, Body()], caller: Caller, tagging: TaggingService
) -> Summary:
    """Set the artifact's description and merge its tags (a null value removes the key)."""
    fields = body.model_fields_set
    return tagging.update_artifact(
        name,
        patch=body.tags,
        identity=caller,
        **({"description": body.description} if "description" in fields else {}),
    )


@router.patch("/artifacts/<name>/versions/<version>", responses=answers(200, 400, 404, 409, 415, 503), tags=["tags"])
def tag_version(
    name: Name, version: VersionNumber, body: Annotated[VersionPatch, Body()], caller: Caller, tagging: TaggingService
) -> Version:
    """Merge the version's tags (a null value removes the key); soft-deleted versions too."""
    return tagging.tag_version(name, version, body.tags, identity=caller)
