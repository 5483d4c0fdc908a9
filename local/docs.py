"""The interactive API page of local mode (`/docs`): Swagger UI over the OpenAPI document the API serves.

Powertools ships the Swagger UI bundle and its page template, so the page needs no network.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import aws_lambda_powertools.event_handler.openapi.swagger_ui as swagger_ui
from aws_lambda_powertools.event_handler.openapi.swagger_ui import generate_swagger_html

PATH = "/docs"


@cache
def page() -> bytes:
    assets = Path(swagger_ui.__file__).parent
    js = (assets / "swagger-ui-bundle.min.js").read_text()
    css = (assets / "swagger-ui.min.css").read_text()
    from arca.api.openapi import document  # on first use: see local.server.routes

    html = generate_swagger_html(json.dumps(document()), js, css, swagger_base_url="", oauth2_config=None)
    return html.replace("<title>Swagger UI</title>", "<title>Arca API</title>").encode()
