"""The API contract: the OpenAPI document is valid, covers every route, and the server keeps to it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from openapi_spec_validator import validate

from arca.api.openapi import document
from arca.routes import ROUTES
from tests.e2e.conftest import ArcaHttp
from tests.helpers import HTTP_TIMEOUT, PATIENCE

# Bounded so the run stays well under a minute on two cores; the seed makes a failure reproducible.
MAX_EXAMPLES = 8
SEED = 20261123
CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
)


def test_served_document_is_valid_openapi_and_the_one_generated_from_the_code(arca: ArcaHttp) -> None:
    # When
    served = arca.get("/openapi.json")
    # Then
    assert served.status_code == 200 and served.headers["Content-Type"].startswith("application/json")
    validate(served.json())
    assert served.json() == document()


def test_every_route_is_documented_with_its_method_operation_and_answers() -> None:
    # Given
    paths = document()["paths"]
    # Then every route of the route table is there (placeholders of later features and other protocols' routes
    # excepted), under its operation id, with a success and its errors
    served = [route for route in ROUTES if route.documented]
    for route in served:
        operation = paths[route.path][route.method.lower()]
        assert operation["operationId"] == route.operation
        assert operation["x-arca-function"] == route.function
        assert operation["summary"], route.operation
        statuses = set(operation["responses"])
        assert statuses & {"200", "201", "204", "302"}, route.operation
        # Bad input is a 400, never Powertools' 422; a 422 is only a reused Idempotency-Key
        headers = {p["name"].lower() for p in operation.get("parameters", []) if p["in"] == "header"}
        assert ("422" in statuses) == ("idempotency-key" in headers), route.operation
        for status in statuses - {"200", "201", "202", "204", "302"}:
            content = operation["responses"][status]["content"]["application/json"]["schema"]
            assert content == {"$ref": "#/components/schemas/ErrorBody"}, (route.operation, status)
        if "{name}" in route.path:
            assert "400" in statuses and "503" in statuses, route.operation
    # And nothing else is documented
    documented = {(path, method.upper()) for path, item in paths.items() for method in item}
    assert documented == {(r.path, r.method) for r in served}


def test_the_interactive_page_embeds_the_document(arca: ArcaHttp) -> None:
    # When
    page = arca.get("/docs")
    # Then
    assert page.status_code == 200 and page.headers["Content-Type"].startswith("text/html")
    assert "SwaggerUIBundle" in page.text and '"operationId": "resolve"' in page.text


def test_property_based_run_finds_no_server_error_and_no_answer_outside_the_schema(
    arca: ArcaHttp, tmp_path: Path
) -> None:
    # When schemathesis generates requests from the document and sends them to the local server
    command = [
        str(Path(sys.executable).with_name("schemathesis")),
        "--no-color",
        "run",
        f"{arca.url}/openapi.json",
        "--url",
        arca.url,
        "--checks",
        ",".join(CHECKS),
        "--max-examples",
        str(MAX_EXAMPLES),
        "--seed",
        str(SEED),
        "--generation-database",
        "none",
        "--request-timeout",
        str(int(HTTP_TIMEOUT)),
        # The name and If-Match patterns make hypothesis discard many drafts; that is expected, not a failure.
        "--suppress-health-check",
        "filter_too_much",
    ]
    env = {**os.environ, "NO_COLOR": "1"}
    # In a temporary folder: schemathesis keeps a cache in the working directory.
    run = subprocess.run(command, capture_output=True, text=True, timeout=4 * PATIENCE, env=env, cwd=tmp_path)
    # Then
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
