"""Routes of the `resolve` function: every read, resolve, and the OpenAPI document. It can write nothing."""

from typing import Annotated, Any, Literal

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from pydantic import AfterValidator, AwareDatetime

from arca import wiring
from arca.api.params import (
    AliasName,
    Limit,
    Name,
    NextToken,
    Ref,
    Sha256Filter,
    TagFilter,
    VersionNumber,
    VersionOrLatest,
    answers,
    in_utc,
)
from arca.api.routing import Router
from arca.domain.entities import (
    Alias,
    AliasList,
    ArtifactPage,
    Attestation,
    AttestationPage,
    EventPage,
    Health,
    HistoryPage,
    HitPage,
    Latest,
    Resolution,
    Rollout,
    SigningKey,
    Summary,
    Version,
    VersionPage,
)
from arca.domain.errors import NotFoundError, ValidationError
from arca.domain.events import ID_PATTERN
from arca.observability import count_resolve

router = Router("resolve")
JSON = "application/json"


@router.get("/health", responses=answers(200), tags=["reads"])
def health() -> Health:
    """Liveness."""
    return Health()


@router.get("/signing-key", responses=answers(200, 503), tags=["reads"])
def signing_key() -> SigningKey:
    """The stage's public key: version and resolve answers carry a `manifest` and its `signature` by this key."""
    signer = wiring.signer()
    if signer is None:
        raise NotFoundError("this stage has no signing key")
    return SigningKey(public_key_pem=signer.public_key_pem())


@router.get("/openapi.json", responses=answers(200), tags=["reads"])
def openapi() -> Response[dict[str, Any]]:
    """This API's OpenAPI 3 document, generated from the route declarations."""
    from arca.api.openapi import document  # built on demand: not on the resolve path's cold start

    return Response(200, JSON, document())


@router.get("/artifacts", responses=answers(200, 400, 503), tags=["reads"])
def list_artifacts(
    prefix: Annotated[str, Query(max_length=256, description="names that start with this")] = "",
    delimiter: Annotated[Literal["/"] | None, Query(description="`/`: fold deeper names into `prefixes`")] = None,
    limit: Limit = 100,
    next_token: NextToken = None,
    tag: TagFilter = None,
) -> ArtifactPage:
    """Artifact names under a prefix, in name order; with `tag`, the artifacts whose own tags hold it."""
    if tag:
        if prefix or delimiter:
            raise ValidationError("tag cannot be combined with prefix or delimiter", field="tag")
        return wiring.searching().search_artifacts(tag, limit=limit, token=next_token)
    return wiring.reading().list_artifacts(prefix=prefix, delimiter=delimiter, limit=limit, token=next_token)


@router.get("/versions", responses=answers(200, 400, 503), tags=["reads"])
def search_versions(
    sha256: Sha256Filter = None, tag: TagFilter = None, limit: Limit = 100, next_token: NextToken = None
) -> HitPage:
    """Registry-wide search: every version holding the content `sha256`, or the tag (one of the two)."""
    return wiring.searching().search_versions(sha256=sha256, tags=tag, limit=limit, token=next_token)


@router.get("/artifacts/<name>", responses=answers(200, 400, 404, 503), tags=["reads"])
def get_artifact(name: Name) -> Summary:
    """Summary: LATEST, the newest version number, counts."""
    return wiring.reading().summary_through(name)


Since = Annotated[
    AwareDatetime | None, AfterValidator(in_utc), Query(description="ISO 8601 time: versions created after it")
]
Until = Annotated[
    AwareDatetime | None, AfterValidator(in_utc), Query(description="ISO 8601 time: versions created before it")
]


@router.get("/artifacts/<name>/versions", responses=answers(200, 400, 404, 503), tags=["reads"])
def list_versions(
    name: Name,
    limit: Limit = 100,
    next_token: NextToken = None,
    order: Annotated[Literal["asc", "desc"], Query(description="by version number")] = "desc",
    include_deleted: Annotated[bool, Query(description="list soft-deleted versions too")] = False,
    tag: TagFilter = None,
    sha256: Sha256Filter = None,
    created_after: Since = None,
    created_before: Until = None,
) -> VersionPage:
    """Versions, newest first by default; the filters combine with AND."""
    return wiring.reading().follow(
        name,
        lambda n: wiring.searching().list_versions(
            n,
            limit=limit,
            token=next_token,
            order=order,
            include_deleted=include_deleted,
            tags=tag,
            sha256=sha256,
            created_after=created_after,
            created_before=created_before,
        ),
    )


@router.get("/artifacts/<name>/versions/<version>", responses=answers(200, 400, 404, 503), tags=["reads"])
def get_version(name: Name, version: VersionOrLatest) -> Version | Latest:
    """One version, or LATEST. A version of multipart content carries `part_size`, `part_count` and `parts`."""
    reading = wiring.reading()
    return reading.follow(name, lambda n: reading.with_parts(reading.version_or_latest(n, version)))


@router.get("/artifacts/<name>/aliases", responses=answers(200, 400, 404, 503), tags=["reads"])
def list_aliases(name: Name, limit: Limit = 100, next_token: NextToken = None) -> AliasList:
    """The artifact's aliases, in name order."""
    reading = wiring.reading()
    return reading.follow(name, lambda n: reading.list_aliases(n, limit=limit, token=next_token))


@router.get("/artifacts/<name>/aliases/<alias>", responses=answers(200, 400, 404, 503), tags=["reads"])
def get_alias(name: Name, alias: AliasName) -> Response[Alias]:
    """One alias; `ETag` is its revision."""
    reading = wiring.reading()
    found = reading.follow(name, lambda n: reading.live_alias(n, alias).entity())
    return Response(200, JSON, found, headers={"ETag": f'"{found.revision}"'})


@router.get("/artifacts/<name>/aliases/<alias>/history", responses=answers(200, 400, 404, 503), tags=["reads"])
def alias_history(name: Name, alias: AliasName, limit: Limit = 100, next_token: NextToken = None) -> HistoryPage:
    """The alias's revisions, newest first."""
    reading = wiring.reading()
    return reading.follow(name, lambda n: reading.history(n, alias, limit=limit, token=next_token))


@router.get("/artifacts/<name>/aliases/<alias>/rollout", responses=answers(200, 400, 404, 503), tags=["rollouts"])
def get_rollout(name: Name, alias: AliasName) -> Rollout:
    """The alias's latest rollout and its state."""
    return wiring.reading().follow(name, lambda n: wiring.rollouts().status(n, alias))


RoutingKey = Annotated[
    str | None, Query(min_length=1, max_length=256, description="the same key always lands on the same side")
]
At = Annotated[
    AwareDatetime | None, AfterValidator(in_utc), Query(description="ISO 8601 time: the alias as it stood then")
]


def _resolve(name: str, ref: str, routing_key: str | None, at: Any) -> Resolution:
    reading = wiring.reading()
    resolution = reading.follow(name, lambda n: reading.resolve(n, ref, routing_key=routing_key, at=at))
    if resolution.alias_revision is not None:
        count_resolve(name, ref, resolution.route)
    return resolution


@router.get("/artifacts/<name>/resolve/<ref>", responses=answers(200, 400, 404, 503), tags=["reads"])
def resolve(name: Name, ref: Ref, routing_key: RoutingKey = None, at: At = None) -> Resolution:
    """An alias, version number, LATEST or `sha256:<hex>` as one concrete version and a short-lived download URL."""
    return _resolve(name, ref, routing_key, at)


@router.get("/artifacts/<name>/resolve/<ref>/content", responses=answers(302, 400, 404, 503), tags=["reads"])
def resolve_content(name: Name, ref: Ref, routing_key: RoutingKey = None, at: At = None) -> Response[Resolution]:
    """302 to the download URL (the body is the resolution)."""
    resolution = _resolve(name, ref, routing_key, at)
    return Response(302, JSON, resolution, headers={"Location": resolution.download_url})


# Events.

After = Annotated[str | None, Query(pattern=ID_PATTERN, description="an event id: the events committed after it")]


@router.get("/artifacts/<name>/events", responses=answers(200, 400, 404, 503), tags=["reads"])
def list_events(name: Name, after: After = None, limit: Limit = 100, next_token: NextToken = None) -> EventPage:
    """The artifact's events, oldest first, each once: poll with `after` = the last id seen."""
    return wiring.reading().follow(name, lambda n: wiring.events().page(n, after=after, limit=limit, token=next_token))


AttestationId = Annotated[
    str,
    Path(
        pattern=r"^[0-9a-f]{64}$", description="the attestation's id (the sha256 of its type and its content's sha256)"
    ),
]
AttestationTypeFilter = Annotated[
    str | None, Query(pattern=r"^[a-z0-9][a-z0-9.-]{0,63}$", description="only attestations of this type")
]


@router.get(
    "/artifacts/<name>/versions/<version>/attestations", responses=answers(200, 400, 404, 503), tags=["attestations"]
)
def list_attestations(
    name: Name,
    version: VersionNumber,
    type: AttestationTypeFilter = None,
    limit: Limit = 100,
    next_token: NextToken = None,
) -> AttestationPage:
    """A version's attestations (soft-deleted versions' too), in id order; `type` keeps one type."""
    return wiring.reading().follow(
        name, lambda n: wiring.attesting().page(n, version, kind=type, limit=limit, token=next_token)
    )


@router.get(
    "/artifacts/<name>/versions/<version>/attestations/<attestation_id>",
    responses=answers(200, 400, 404, 503),
    tags=["attestations"],
)
def get_attestation(name: Name, version: VersionNumber, attestation_id: AttestationId) -> Attestation:
    """One attestation, with a `download_url` of its content (a presigned GET)."""
    return wiring.attesting().get(name, version, attestation_id)
