"""The SDK's models against the API's contract: every field a model reads is a property of the schema it
mirrors in the OpenAPI document the API serves (`/openapi.json`, generated from the route table)."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import pytest

from arca.api.openapi import document
from arca_client import models

MODELS = [
    cls
    for _, cls in inspect.getmembers(models, inspect.isclass)
    if dataclasses.is_dataclass(cls) and cls.__module__ == models.__name__
]
WIRE_MODELS = [cls for cls in MODELS if getattr(cls, "SCHEMA", ())]


def _schemas() -> dict[str, Any]:
    schemas: dict[str, Any] = document()["components"]["schemas"]
    return schemas


def _referenced(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The component a property refers to ($ref, directly or as one side of an `anyOf` with null)."""
    for option in [schema, *schema.get("anyOf", [])]:
        ref = option.get("$ref")
        if ref:
            found: dict[str, Any] = _schemas()[ref.rsplit("/", 1)[-1]]
            return found
    return None


def _has(schema: dict[str, Any], path: str) -> bool:
    """Whether the dotted `path` names a property of `schema` (following references on the way)."""
    head, _, rest = path.partition(".")
    prop = schema.get("properties", {}).get(head)
    if prop is None:
        return False
    if not rest:
        return True
    inner = _referenced(prop)
    return inner is not None and _has(inner, rest)


def test_every_model_says_which_schema_it_mirrors_or_that_the_client_makes_it() -> None:
    undeclared = [cls.__name__ for cls in MODELS if not hasattr(cls, "SCHEMA")]
    assert not undeclared, f"models without SCHEMA: {undeclared}"
    assert {"Version", "Alias", "Resolution", "Rollout", "Event"} <= {cls.__name__ for cls in WIRE_MODELS}


@pytest.mark.parametrize("model", WIRE_MODELS, ids=lambda cls: cls.__name__)
def test_every_field_of_a_model_is_a_property_of_its_schema(model: type) -> None:
    # Given the schemas it mirrors, from the served document
    schemas = _schemas()
    mirrored = [schemas[name] for name in model.SCHEMA]  # type: ignore[attr-defined]
    wire: dict[str, str] = getattr(model, "WIRE", {})
    local: frozenset[str] = getattr(model, "LOCAL", frozenset())
    # Then every field the client reads from an answer is there, under the name it reads
    missing = [
        f"{f.name} (read from {wire.get(f.name, f.name)})"
        for f in dataclasses.fields(model)
        if f.name != "raw" and f.name not in local
        if not any(_has(schema, wire.get(f.name, f.name)) for schema in mirrored)
    ]
    assert not missing, f"{model.__name__} reads fields {model.SCHEMA} does not have: {missing}"  # type: ignore[attr-defined]


def test_a_field_renamed_on_the_server_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given the server renames Link.link to Link.target
    link = _schemas()["Link"]
    renamed = {**link, "properties": {("target" if k == "link" else k): v for k, v in link["properties"].items()}}
    monkeypatch.setitem(_schemas(), "Link", renamed)
    # When / Then
    with pytest.raises(AssertionError, match="link"):
        test_every_field_of_a_model_is_a_property_of_its_schema(models.Link)


def test_a_nested_field_follows_its_reference() -> None:
    schemas = _schemas()
    assert _has(schemas["Upload"], "upload.url")
    assert not _has(schemas["Upload"], "upload.nope")
    assert not _has(schemas["Upload"], "exists.url")
