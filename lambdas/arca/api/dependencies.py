"""The services a route is given: Powertools `Depends` on the composition root's providers (arca.wiring).

A route names the service it uses as a parameter (`reading: ReadingService`); Powertools calls the provider once
per request and passes the result, and tests swap a provider for their own through the resolver's
`dependency_overrides` (keyed by the provider: `app.dependency_overrides[wiring.reading] = …`).

At run time the annotation's type is not read (Powertools only calls the provider), so it is `Any` there: a
function imports a service's module when a route first asks for that service, never for the annotation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from aws_lambda_powertools.event_handler.depends import Depends

from arca import wiring

if TYPE_CHECKING:
    from arca.domain.signing import Signer
    from arca.services.aliases import Aliases
    from arca.services.attestations import Attesting
    from arca.services.consumers import Consumers
    from arca.services.events import Events
    from arca.services.guards import Guards
    from arca.services.idempotency import Idempotency
    from arca.services.links import Links
    from arca.services.oci import Oci
    from arca.services.promotions import Promotions
    from arca.services.publishing import Publishing
    from arca.services.reading import Reading
    from arca.services.removal import Removal
    from arca.services.retention import Retention
    from arca.services.rollouts import Rollouts
    from arca.services.tags import Searching, Tagging
    from arca.services.uploads import Uploads

    ReadingService = Annotated[Reading, Depends(wiring.reading)]
    PublishingService = Annotated[Publishing, Depends(wiring.publishing)]
    RemovalService = Annotated[Removal, Depends(wiring.removal)]
    IdempotencyService = Annotated[Idempotency, Depends(wiring.idempotency)]
    UploadsService = Annotated[Uploads, Depends(wiring.uploads)]
    AliasesService = Annotated[Aliases, Depends(wiring.aliases)]
    RolloutsService = Annotated[Rollouts, Depends(wiring.rollouts)]
    GuardsService = Annotated[Guards, Depends(wiring.guards)]
    PromotionsService = Annotated[Promotions, Depends(wiring.promotions)]
    LinksService = Annotated[Links, Depends(wiring.links)]
    ConsumersService = Annotated[Consumers, Depends(wiring.consumers)]
    OciService = Annotated[Oci, Depends(wiring.oci)]
    TaggingService = Annotated[Tagging, Depends(wiring.tagging)]
    SearchingService = Annotated[Searching, Depends(wiring.searching)]
    EventsService = Annotated[Events, Depends(wiring.events)]
    AttestingService = Annotated[Attesting, Depends(wiring.attesting)]
    RetentionService = Annotated[Retention, Depends(wiring.retention)]
    SignerService = Annotated[Signer | None, Depends(wiring.signer)]
else:
    ReadingService = Annotated[Any, Depends(wiring.reading)]
    PublishingService = Annotated[Any, Depends(wiring.publishing)]
    RemovalService = Annotated[Any, Depends(wiring.removal)]
    IdempotencyService = Annotated[Any, Depends(wiring.idempotency)]
    UploadsService = Annotated[Any, Depends(wiring.uploads)]
    AliasesService = Annotated[Any, Depends(wiring.aliases)]
    RolloutsService = Annotated[Any, Depends(wiring.rollouts)]
    GuardsService = Annotated[Any, Depends(wiring.guards)]
    PromotionsService = Annotated[Any, Depends(wiring.promotions)]
    LinksService = Annotated[Any, Depends(wiring.links)]
    ConsumersService = Annotated[Any, Depends(wiring.consumers)]
    OciService = Annotated[Any, Depends(wiring.oci)]
    TaggingService = Annotated[Any, Depends(wiring.tagging)]
    SearchingService = Annotated[Any, Depends(wiring.searching)]
    EventsService = Annotated[Any, Depends(wiring.events)]
    AttestingService = Annotated[Any, Depends(wiring.attesting)]
    RetentionService = Annotated[Any, Depends(wiring.retention)]
    SignerService = Annotated[Any, Depends(wiring.signer)]

# The contracts that are not routes (the rollout driver, the verification step, the stream consumer, the retention
# sweep) take their service's provider as a parameter whose default is the composition root's.
rollouts = wiring.rollouts
verification = wiring.verification
announcer = wiring.announcer
retention = wiring.retention
# A `/v2/` path no route declares is still answered by the OCI dispatcher (from the app's not-found handler).
oci = wiring.oci
