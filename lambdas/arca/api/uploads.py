"""Uploads (publish function): where content goes, and multipart uploads of up to 5 TiB (status, complete, abort)."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Path
from pydantic import Field

from arca.api.dependencies import PublishingService, UploadsService
from arca.api.errors import JSON
from arca.api.params import Name, answers
from arca.api.routing import Router
from arca.domain.entities import CompletedUpload, Upload
from arca.domain.models import UploadBody

router = Router()

UploadId = Annotated[
    str,
    Field(pattern=r"^[0-9a-f]{64}\.[0-9a-f]{64}$"),
    Path(description="the upload's id: `<sha256>.<sha256 of the part digests>`"),
]


@router.post("/artifacts/<name>/uploads", responses=answers(200, 201, 400, 413, 415, 503), tags=["publishing"])
def create_upload(
    name: Name, blob: Annotated[UploadBody, Body()], publishing: PublishingService, uploads: UploadsService
) -> Response[Upload]:
    """Where to upload content: `exists` (200) when the blob is stored already, else a presigned PUT (201).

    With `part_size` and `parts` (the sha256 of each part) a multipart upload of up to 5 TiB, whose part URLs
    each sign their part's checksum; `exists` then means this artifact holds the content in these very parts.
    """
    upload = uploads.create(name, blob) if blob.parts is not None else publishing.create_upload(name, blob)
    return Response(200 if upload.exists else 201, JSON, upload)


@router.get("/artifacts/<name>/uploads/<id>", responses=answers(200, 400, 404, 503), tags=["publishing"])
def get_upload(name: Name, id: UploadId, uploads: UploadsService) -> Upload:
    """The upload's `state`: while `uploading`, the parts S3 already has and fresh URLs for the others (resume an
    interrupted upload from here); while `verifying`, the bytes hashed so far; `complete` or `failed`."""
    return uploads.status(name, id)


@router.post(
    "/artifacts/<name>/uploads/<id>/complete", responses=answers(200, 202, 400, 404, 409, 503), tags=["publishing"]
)
def complete_upload(name: Name, id: UploadId, uploads: UploadsService) -> Response[CompletedUpload]:
    """Assemble a multipart upload (S3 checks every part's checksum) and check its SHA-256: 200 `complete` (then
    PUT latest or publish its sha256), or 202 `verifying` for content hashed in the background (follow GET
    …/uploads/{id}; sending this again resumes a stalled check). 409 `failed` when the parts do not make content
    with the declared sha256: nothing may reference it."""
    context = router.lambda_context
    done = uploads.complete(name, id, time_left=lambda: context.get_remaining_time_in_millis() / 1000)
    return Response(200 if done.state == "complete" else 202, JSON, done)


@router.delete(
    "/artifacts/<name>/uploads/<id>", status_code=204, responses=answers(204, 400, 404, 409, 503), tags=["publishing"]
)
def abort_upload(name: Name, id: UploadId, uploads: UploadsService) -> Response[None]:
    """Abort a multipart upload: S3 frees its parts."""
    uploads.abort(name, id)
    return Response(204, None, None)
