"""The OpenAPI document, generated from every function's routers (never written by hand), and its route."""

from __future__ import annotations

from functools import cache
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response

from arca.api.errors import JSON
from arca.api.params import answers
from arca.api.routing import Router

router = Router()
TITLE = "Arca"
VERSION = "1.0.0"
DESCRIPTION = (
    "A registry for versioned artifacts: publish immutable versions, point aliases (with canary weights) at them, "
    "resolve an alias to a version and a download URL. Every method is IAM-authorised (SigV4, service "
    "`execute-api`). Artifact names contain `/`; write them with plain slashes in paths. The OCI Distribution "
    "API under `/v2/` is specified by the OCI Distribution Specification v1.1, not by this document."
)


@router.get("/openapi.json", responses=answers(200), tags=["reads"])
def openapi() -> Response[dict[str, Any]]:
    """This API's OpenAPI 3 document, generated from the route declarations."""
    return Response(200, JSON, document())


@cache
def document() -> dict[str, Any]:
    """OpenAPI 3 for every route (placeholders of later features left out). Bad input is answered 400 in the error
    shape (never 422), and each operation's id is the name of the function that serves it.

    Built on first use, never at import: it imports every function's routers, which the resolve function does not
    load to serve anything else."""
    from arca.api.functions import SERVED, routers, table

    app = APIGatewayRestResolver(enable_validation=True)
    for function in SERVED:
        for included in routers(function):
            app.include_router(included)
    schema = app.get_openapi_schema(title=TITLE, version=VERSION, description=DESCRIPTION)
    doc: dict[str, Any] = schema.model_dump(mode="json", by_alias=True, exclude_none=True)
    operations = {(r.path, r.method.lower()): r for r in table()}
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            route = operations[(path, method)]
            operation["operationId"] = route.operation
            operation["x-arca-function"] = route.function
            # Powertools adds its own 422 (validation) to every operation; one a route declares (a reused
            # Idempotency-Key) stays.
            if operation["responses"].get("422", {}).get("description") == "Validation Error":
                operation["responses"].pop("422")
            operation["summary"] = route.summary
    for unused in ("HTTPValidationError", "ValidationError", "ResponseValidationError"):
        doc.get("components", {}).get("schemas", {}).pop(unused, None)
    return doc
