"""Consumer leases, who runs which version: listing an artifact's (resolve function); taking, renewing and releasing
one (publish function). Placeholders until the feature lands: each answers 501 and is left out of the document."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path

from arca.api.routing import Router
from arca.domain.errors import NotYetImplementedError

reads = Router()
writes = Router()

Consumer = Annotated[str, Path(description="the consumer's id")]
_LATER = "consumer leases are not served yet"


@reads.route("/artifacts/<name>/consumers", "GET", stub=True)
def list_consumers(name: str) -> None:
    """The artifact's live leases."""
    raise NotYetImplementedError(_LATER)


@writes.route("/artifacts/<name>/consumers/<consumer>", "PUT", stub=True)
def put_consumer(name: str, consumer: Consumer) -> None:
    """Take or renew a lease on a version."""
    raise NotYetImplementedError(_LATER)


@writes.route("/artifacts/<name>/consumers/<consumer>", "DELETE", stub=True)
def delete_consumer(name: str, consumer: Consumer) -> None:
    """Release a lease."""
    raise NotYetImplementedError(_LATER)
