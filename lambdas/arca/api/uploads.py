"""Routes of the `publish` function for multipart uploads (content up to 5 TiB): status, complete, abort.

`POST …/uploads` itself (one route for a single PUT and a multipart upload) is in arca.api.publishing.
"""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path
from pydantic import Field

from arca import wiring
from arca.api.params import Name, answers
from arca.api.publishing import router
from arca.domain.entities import CompletedUpload, Upload

UploadId = Annotated[
    str,
    Field(pattern=r"^[0-9a-f]{64}\.[0-9a-f]{64}$"),
    Path(description="the upload's id: `<sha256>.<sha256 of the part digests>`"),
]


@router.get("/artifacts/<name>/uploads/<id>", responses=answers(200, 400, 404, 503), tags=["publishing"])
def get_upload(name: Name, id: UploadId) -> Upload:
    """The upload's `state`: while `uploading`, the parts S3 already has and fresh URLs for the others (resume an
    interrupted upload from here); while `verifying`, the bytes hashed so far; `complete` or `failed`."""
    return wiring.uploads().status(name, id)


@router.post(
    "/artifacts/<name>/uploads/<id>/complete", responses=answers(200, 202, 400, 404, 409, 503), tags=["publishing"]
)
def complete_upload(name: Name, id: UploadId) -> Response[CompletedUpload]:
    """Assemble a multipart upload (S3 checks every part's checksum) and check its SHA-256: 200 `complete` (then
    PUT latest or publish its sha256), or 202 `verifying` for content hashed in the background (follow GET
    …/uploads/{id}; sending this again resumes a stalled check). 409 `failed` when the parts do not make content
    with the declared sha256: nothing may reference it."""
    context = router.lambda_context
    done = wiring.uploads().complete(name, id, time_left=lambda: context.get_remaining_time_in_millis() / 1000)
    return Response(200 if done.state == "complete" else 202, "application/json", done)


@router.delete(
    "/artifacts/<name>/uploads/<id>", status_code=204, responses=answers(204, 400, 404, 409, 503), tags=["publishing"]
)
def abort_upload(name: Name, id: UploadId) -> Response[None]:
    """Abort a multipart upload: S3 frees its parts."""
    wiring.uploads().abort(name, id)
    return Response(204, None, None)
