"""Attestations: listing and reading a version's (resolve function); attaching one (publish function)."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query

from arca.api.caller import Caller
from arca.api.dependencies import AttestingService, ReadingService
from arca.api.errors import JSON
from arca.api.params import Limit, Name, NextToken, VersionNumber, answers
from arca.api.routing import Router
from arca.domain.entities import Attestation, AttestationPage
from arca.domain.models import AttestationBody
from arca.observability import metrics

reads = Router()
writes = Router()

AttestationId = Annotated[
    str,
    Path(
        pattern=r"^[0-9a-f]{64}$", description="the attestation's id (the sha256 of its type and its content's sha256)"
    ),
]
AttestationTypeFilter = Annotated[
    str | None, Query(pattern=r"^[a-z0-9][a-z0-9.+_/-]{0,127}$", description="only attestations of this type")
]


@reads.get(
    "/artifacts/<name>/versions/<version>/attestations", responses=answers(200, 400, 404, 503), tags=["attestations"]
)
def list_attestations(
    name: Name,
    version: VersionNumber,
    reading: ReadingService,
    attesting: AttestingService,
    type: AttestationTypeFilter = None,
    limit: Limit = 100,
    next_token: NextToken = None,
) -> AttestationPage:
    """A version's attestations (soft-deleted versions' too), in id order; `type` keeps one type."""
    return reading.follow(name, lambda n: attesting.page(n, version, kind=type, limit=limit, token=next_token))


@reads.get(
    "/artifacts/<name>/versions/<version>/attestations/<attestation_id>",
    responses=answers(200, 400, 404, 503),
    tags=["attestations"],
)
def get_attestation(
    name: Name, version: VersionNumber, attestation_id: AttestationId, attesting: AttestingService
) -> Attestation:
    """One attestation, with a `download_url` of its content (a presigned GET)."""
    return attesting.get(name, version, attestation_id)


@writes.post(
    "/artifacts/<name>/versions/<version>/attestations",
    responses=answers(200, 201, 400, 404, 409, 413, 415, 503),
    tags=["attestations"],
)
def attest(
    name: Name,
    version: VersionNumber,
    body: Annotated[AttestationBody, Body()],
    caller: Caller,
    attesting: AttestingService,
) -> Response[Attestation]:
    """Attach a document to a live version: `content` (a JSON object of at most 256 KiB) or a blob uploaded through
    POST …/uploads (`sha256`, `size`, `media_type`). Content-addressed: the same document again is 200 and
    changes nothing. At most 100 a version."""
    attestation, created = attesting.attest(name, version, body, identity=caller)
    if created:
        metrics.add_metric(name="AttestationsAdded", unit="Count", value=1)
    return Response(201 if created else 200, JSON, attestation)
