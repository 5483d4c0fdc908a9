"""Routes of the `publish` function: uploads, LATEST, publishing, version delete/restore, prune, purge."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Query

from arca import wiring
from arca.api.caller import Caller
from arca.api.idempotency import IdempotencyKey, Idempotent, answer, idempotent
from arca.api.params import Name, VersionNumber, answers
from arca.api.routing import Router
from arca.domain.entities import (
    Attestation,
    Latest,
    Link,
    PruneResult,
    Published,
    PurgeProgress,
    Summary,
    Upload,
    Version,
)
from arca.domain.models import (
    ArtifactPatch,
    AttestationBody,
    Content,
    LinkBody,
    PruneBody,
    PublishBody,
    UploadBody,
    VersionPatch,
)
from arca.domain.receipts import Answer, Seal
from arca.observability import metrics
from arca.services.retry import Budget
from arca.settings import settings

router = Router("publish")
JSON = "application/json"


@router.post("/artifacts/<name>/uploads", responses=answers(200, 201, 400, 413, 415, 503), tags=["publishing"])
def create_upload(name: Name, blob: Annotated[UploadBody, Body()]) -> Response[Upload]:
    """Where to upload content: `exists` (200) when the blob is stored already, else a presigned PUT (201).

    With `part_size` and `parts` (the sha256 of each part) a multipart upload of up to 5 TiB, whose part URLs
    each sign their part's checksum; `exists` then means this artifact holds the content in these very parts.
    """
    if blob.parts is not None:
        upload = wiring.uploads().create(name, blob)
        return Response(200 if upload.exists else 201, JSON, upload)
    upload = wiring.publishing().create_upload(name, blob)
    return Response(200 if upload.exists else 201, JSON, upload)


@router.put("/artifacts/<name>/latest", responses=answers(200, 400, 409, 413, 415, 422, 503), tags=["publishing"])
def put_latest(
    name: Name,
    content: Annotated[Content, Body()],
    caller: Caller,
    key: Idempotent,
    idempotency_key: IdempotencyKey = None,
) -> Response[Latest]:
    """Point LATEST at an uploaded blob (checked in S3: present, same size and checksum)."""

    def write(seal: Seal | None) -> Latest:
        return wiring.publishing().put_latest(name, content, seal=seal, identity=caller)

    return idempotent(key, write, answer)


@router.post(
    "/artifacts/<name>/versions", responses=answers(200, 201, 400, 404, 409, 413, 415, 422, 503), tags=["publishing"]
)
def publish(
    name: Name,
    caller: Caller,
    key: Idempotent,
    body: Annotated[PublishBody | None, Body()] = None,
    idempotency_key: IdempotencyKey = None,
) -> Response[Published]:
    """Publish: an empty body snapshots LATEST; content sets LATEST and publishes it in one step.

    201 for a new version; 200 with `deduplicated: true` when the newest version already has that content.
    """
    request = body or PublishBody()

    def write(seal: Seal | None) -> Published:
        publishing = wiring.publishing()
        published = publishing.publish(name, request.content(), force=request.force, seal=seal, identity=caller)
        if not published.deduplicated:
            metrics.add_metric(name="VersionsPublished", unit="Count", value=1)
        return published

    return idempotent(key, write, _published)


def _published(published: Published) -> Answer:
    return answer(published, 200 if published.deduplicated else 201)


@router.delete("/artifacts/<name>/versions/<version>", responses=answers(200, 400, 404, 409, 503), tags=["publishing"])
def delete_version(name: Name, version: VersionNumber, caller: Caller) -> Version:
    """Soft-delete a version (idempotent); 409 while an alias points at it."""
    return wiring.publishing().delete_version(name, version, identity=caller)


@router.post(
    "/artifacts/<name>/versions/<version>/restore", responses=answers(200, 400, 404, 409, 503), tags=["publishing"]
)
def restore_version(name: Name, version: VersionNumber, caller: Caller) -> Version:
    """Undo a soft delete (idempotent)."""
    return wiring.publishing().restore_version(name, version, identity=caller)


@router.post("/artifacts/<name>/prune", responses=answers(200, 400, 404, 409, 415, 422, 503), tags=["publishing"])
def prune(
    name: Name,
    body: Annotated[PruneBody, Body()],
    caller: Caller,
    key: Idempotent,
    idempotency_key: IdempotencyKey = None,
) -> Response[PruneResult]:
    """Soft-delete old versions, never the newest `keep_last` and never one an alias points at; page by page."""

    def write(seal: Seal | None) -> PruneResult:
        return wiring.publishing().prune(
            name,
            keep_last=body.keep_last,
            older_than_days=body.older_than_days,
            dry_run=body.dry_run,
            token=body.next_token,
            seal=seal,
            identity=caller,
        )

    return idempotent(key, write, answer)


@router.delete(
    "/artifacts/<name>", status_code=204, responses=answers(202, 204, 400, 404, 409, 503), tags=["publishing"]
)
def purge(
    name: Name,
    force: Annotated[bool, Query(description="purge even while aliases exist")] = False,
) -> Response[PurgeProgress | None]:
    """Purge the artifact: every item and every object. Version numbers are never reused.

    204 when done, and again for a repeat after it finished (404 only for a name that never existed). 202
    when the work did not fit in one request (a batch-call budget, and 20 s kept in reserve of the
    function's time): send the same DELETE again to continue; it is idempotent.
    """
    context = router.lambda_context
    budget = Budget(calls=settings().purge_max_calls, time_left=lambda: context.get_remaining_time_in_millis() / 1000)
    if wiring.publishing().purge(name, force=force, budget=budget):
        return Response(204, None, None)
    return Response(202, JSON, PurgeProgress(name=name))


@router.put("/artifacts/<name>/link", responses=answers(200, 201, 400, 404, 409, 415, 503), tags=["links"])
def put_link(name: Name, body: Annotated[LinkBody, Body()], caller: Caller) -> Response[Link]:
    """Make `name` a link to the artifact `target` (201), or re-point it (200). Reads under `name` then follow
    it once and carry `via`; writes under it are refused (409 naming the target)."""
    link, created = wiring.links().link(name, body.target, identity=caller)
    return Response(201 if created else 200, JSON, link)


@router.delete("/artifacts/<name>/link", status_code=204, responses=answers(204, 400, 404, 409, 503), tags=["links"])
def delete_link(name: Name, caller: Caller) -> Response[None]:
    """Remove the link (never its target)."""
    wiring.links().unlink(name, identity=caller)
    return Response(204, None, None)


# Tags: mutable labels on versions and artifacts (metadata stays immutable).


@router.patch("/artifacts/<name>", responses=answers(200, 400, 404, 409, 415, 503), tags=["tags"])
def update_artifact(name: Name, body: Annotated[ArtifactPatch, Body()], caller: Caller) -> Summary:
    """Set the artifact's description and merge its tags (a null value removes the key)."""
    fields = body.model_fields_set
    return wiring.tagging().update_artifact(
        name,
        patch=body.tags,
        identity=caller,
        **({"description": body.description} if "description" in fields else {}),
    )


@router.patch("/artifacts/<name>/versions/<version>", responses=answers(200, 400, 404, 409, 415, 503), tags=["tags"])
def tag_version(name: Name, version: VersionNumber, body: Annotated[VersionPatch, Body()], caller: Caller) -> Version:
    """Merge the version's tags (a null value removes the key); soft-deleted versions too."""
    return wiring.tagging().tag_version(name, version, body.tags, identity=caller)


@router.post(
    "/artifacts/<name>/versions/<version>/attestations",
    responses=answers(200, 201, 400, 404, 409, 413, 415, 503),
    tags=["attestations"],
)
def attest(
    name: Name, version: VersionNumber, body: Annotated[AttestationBody, Body()], caller: Caller
) -> Response[Attestation]:
    """Attach a document to a live version: `content` (a JSON object of at most 256 KiB) or a blob uploaded through
    POST …/uploads (`sha256`, `size`, `media_type`). Content-addressed: the same document again is 200 and
    changes nothing. At most 100 a version."""
    attestation, created = wiring.attesting().attest(name, version, body, identity=caller)
    if created:
        metrics.add_metric(name="AttestationsAdded", unit="Count", value=1)
    return Response(201 if created else 200, JSON, attestation)


# Multipart uploads' own routes (declared on this router; imported last, as they import it).
from arca.api import uploads as _uploads  # noqa: E402, F401
