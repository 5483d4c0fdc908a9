"""The SDK's models against the API's contract: every field a model reads is a property of the schema it
mirrors in the OpenAPI document the API serves (`/openapi.json`, generated from the route table), and the
decoder reads each of them from a sample answer built from that schema."""

from __future__ import annotations

import copy
import dataclasses
import importlib
import inspect
import itertools
import pkgutil
from collections.abc import Iterator
from typing import Any

import pytest

from arca.api.openapi import document
from arca_client import calls, models
from arca_client.decoding import Decoded, decode

MODULES = [
    models,
    *(importlib.import_module(f"{calls.__name__}.{m.name}") for m in pkgutil.iter_modules(calls.__path__)),
]
MODELS = [
    cls
    for module in MODULES
    for _, cls in inspect.getmembers(module, inspect.isclass)
    if dataclasses.is_dataclass(cls) and cls.__module__ == module.__name__
]
WIRE_MODELS = [cls for cls in MODELS if getattr(cls, "SCHEMA", ())]


def _id(cls: type) -> str:
    return f"{cls.__module__.removeprefix('arca_client.')}.{cls.__name__}"


def _schemas() -> dict[str, Any]:
    schemas: dict[str, Any] = document()["components"]["schemas"]
    return schemas


def _component(ref: str) -> dict[str, Any]:
    found: dict[str, Any] = _schemas()[ref.rsplit("/", 1)[-1]]
    return found


def _referenced(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The components a property refers to ($ref, directly or as options of an `anyOf`)."""
    return [_component(option["$ref"]) for option in [schema, *schema.get("anyOf", [])] if "$ref" in option]


def _has(schema: dict[str, Any], path: str) -> bool:
    """Whether the dotted `path` names a property of `schema` (following references on the way)."""
    head, _, rest = path.partition(".")
    prop = schema.get("properties", {}).get(head)
    if prop is None:
        return False
    if not rest:
        return True
    return any(_has(inner, rest) for inner in _referenced(prop))


def test_every_model_says_which_schema_it_mirrors_or_that_the_client_makes_it() -> None:
    undeclared = [_id(cls) for cls in MODELS if not hasattr(cls, "SCHEMA")]
    assert not undeclared, f"models without SCHEMA: {undeclared}"
    wire = {cls.__name__ for cls in WIRE_MODELS}
    assert {"Version", "Alias", "Resolution", "Rollout", "Event", "Attestation", "MultipartTarget"} <= wire


def test_every_model_read_from_an_answer_is_decoded_by_the_decoder() -> None:
    by_hand = [_id(cls) for cls in WIRE_MODELS if "from_dict" in vars(cls) and not issubclass(cls, Decoded)]
    assert not by_hand, f"models decoded by hand: {by_hand}"


@pytest.mark.parametrize("model", WIRE_MODELS, ids=_id)
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
    assert _has(schemas["Upload"], "upload.missing")  # the other shape of the answer (multipart)
    assert not _has(schemas["Upload"], "upload.nope")
    assert not _has(schemas["Upload"], "exists.url")


# The decoder against the same document: a sample answer of each model's schemas, every property present and
# every value unlike a field's default (strings name their property, numbers are distinct and never 0,
# booleans are true, an enum takes its last value), so that a field left at its default was not read.


def _sample(schema: dict[str, Any], name: str, numbers: Iterator[int]) -> Any:
    alternatives = schema.get("anyOf") or schema.get("oneOf") or [schema]  # anyOf: an event's detail by type
    options = [option for option in alternatives if option.get("type") != "null"]
    if len(options) > 1 and all("$ref" in option for option in options):
        # an answer of several shapes (a single PUT or a multipart upload): every shape's properties, first wins
        shapes = [_sample(option, name, numbers) for option in options]
        return {key: value for shape in reversed(shapes) for key, value in shape.items()}
    chosen = _component(options[0]["$ref"]) if "$ref" in options[0] else options[0]
    kind = chosen.get("type")
    if "properties" in chosen:
        return {prop: _sample(inner, prop, numbers) for prop, inner in chosen["properties"].items()}
    if kind == "array":
        return [_sample(chosen["items"], name, numbers)]
    if kind == "object":
        values = chosen.get("additionalProperties")
        return {"key": _sample(values if isinstance(values, dict) else {"type": "string"}, name, numbers)}
    if kind == "integer":
        return next(numbers)
    if kind == "boolean":
        return True
    if kind == "string":  # a `const` is not kept: a constant could not show that its field is read
        return chosen["enum"][-1] if "enum" in chosen else f"{name}-sample"
    raise AssertionError(f"no sample for {chosen}")


def _answer(model: type) -> dict[str, Any]:
    """A sample answer of every schema the model mirrors (the first schema's property wins a clash)."""
    numbers = itertools.count(7)
    samples = [_sample(_schemas()[name], name, numbers) for name in model.SCHEMA]  # type: ignore[attr-defined]
    return {key: value for sample in reversed(samples) for key, value in sample.items()}


def _decode(model: type, answer: dict[str, Any]) -> Any:
    return model.from_dict(answer) if issubclass(model, Decoded) else decode(model, answer)


def _read_fields(model: type) -> list[tuple[dataclasses.Field[Any], list[str]]]:
    """The fields the decoder reads from an answer, each with the path it reads."""
    wire: dict[str, str] = getattr(model, "WIRE", {})
    local: frozenset[str] = getattr(model, "LOCAL", frozenset())
    return [
        (f, wire.get(f.name, f.name).split("."))
        for f in dataclasses.fields(model)
        if f.name != "raw" and f.name not in local
    ]


def _plain(value: Any) -> Any:
    """A decoded value as JSON again: a nested model as the answer it was read from."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if hasattr(value, "raw"):
            return value.raw
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _lookup(answer: Any, path: list[str]) -> Any:
    for key in path:
        answer = answer[key]
    return answer


def _without(answer: dict[str, Any], path: list[str]) -> dict[str, Any]:
    trimmed = copy.deepcopy(answer)
    del _lookup(trimmed, path[:-1])[path[-1]]
    return trimmed


@pytest.mark.parametrize("model", WIRE_MODELS, ids=_id)
def test_the_decoder_reads_every_field_of_a_model_from_an_answer_of_its_schema(model: type) -> None:
    # Given a sample answer built from the served document
    answer = _answer(model)
    # When the model is decoded from it, and from an empty answer
    decoded, empty = _decode(model, answer), _decode(model, {})
    # Then every field holds the answer's value, which is not what it holds when the answer lacks it
    wrong = []
    for f, path in _read_fields(model):
        where = ".".join(path)
        try:
            sent = _lookup(answer, path)
        except (KeyError, TypeError):
            wrong.append(f"{f.name}: the answer has no {where}")
            continue
        value = getattr(decoded, f.name)
        if _plain(value) != sent or value == getattr(empty, f.name):
            wrong.append(f"{f.name}: read {value!r} from {where} = {sent!r}")
    assert not wrong, f"{_id(model)} does not read {wrong}"
    if hasattr(decoded, "raw"):
        assert decoded.raw is answer


@pytest.mark.parametrize("model", WIRE_MODELS, ids=_id)
def test_the_decoder_ignores_a_property_the_server_adds(model: type) -> None:
    answer = _answer(model)
    added = {**answer, "added_later": {"anything": [1, "two"]}}
    assert _decode(model, added) == _decode(model, answer)


@pytest.mark.parametrize("model", WIRE_MODELS, ids=_id)
def test_a_field_missing_from_the_answer_is_its_default_or_none(model: type) -> None:
    # Given a sample answer
    answer = _answer(model)
    for f, path in _read_fields(model):
        # When the answer lacks the property a field is read from
        decoded = getattr(_decode(model, _without(answer, path)), f.name)
        # Then the field is its default (None for an optional field without one)
        if f.default is not dataclasses.MISSING:
            assert decoded == f.default, f.name
        elif f.default_factory is not dataclasses.MISSING:
            assert decoded == f.default_factory(), f.name
        elif "None" in str(f.type):
            assert decoded is None, f.name


def test_a_property_renamed_on_the_server_is_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given the server renames Link.link to Link.target
    link = _schemas()["Link"]
    renamed = {**link, "properties": {("target" if k == "link" else k): v for k, v in link["properties"].items()}}
    monkeypatch.setitem(_schemas(), "Link", renamed)
    # When / Then
    with pytest.raises(AssertionError, match="link: the answer has no link"):
        test_the_decoder_reads_every_field_of_a_model_from_an_answer_of_its_schema(models.Link)


def test_a_wrong_wire_path_is_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given UploadTarget reads its URL from a property the answer's `upload` does not have
    monkeypatch.setitem(models.UploadTarget.WIRE, "url", "upload.href")
    # When / Then
    with pytest.raises(AssertionError, match=r"url: the answer has no upload\.href"):
        test_the_decoder_reads_every_field_of_a_model_from_an_answer_of_its_schema(models.UploadTarget)


def test_a_model_that_misreads_a_field_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given Version read by a from_dict that loses `via` on the way
    def forgetful(cls: type, data: dict[str, Any]) -> Any:
        return decode(cls, {k: v for k, v in data.items() if k != "via"})

    monkeypatch.setattr(models.Version, "from_dict", classmethod(forgetful))
    # When / Then
    with pytest.raises(AssertionError, match="via: read None from via = 'via-sample'"):
        test_the_decoder_reads_every_field_of_a_model_from_an_answer_of_its_schema(models.Version)
