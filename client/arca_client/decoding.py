"""Reading the API's answers into the client's models, by the types the models declare.

`decode(cls, answer)` fills each field of the dataclass `cls` from the answer's property of the same name, or
from the dotted path `cls.WIRE` names for it (`{"url": "upload.url"}`), and makes the value the field's
annotated type: `int`, `str`, `bool`, `float`; `X | None`; a union such as a version ref `int | str`, whose
first type that takes the value wins (`7` and `"7"` are 7, `"LATEST"` stays a string); `list[X]`,
`dict[K, V]`; a nested dataclass, decoded the same way. `Any` is taken as it is.

It reads leniently, so that an older client keeps working against a newer server: a property the server
adds is ignored; a field the answer lacks (or sends as null) takes the value the caller passed for it, else
its default, else the empty value of its type (None when the type allows it, else `""`, `0`, `False`, `[]`,
`{}` or the nested model decoded from nothing). The fields in `cls.LOCAL` are the client's own and are never
read from the answer; a field named `raw` keeps the answer itself.
"""

from __future__ import annotations

import dataclasses
import functools
import types
from collections.abc import Callable, Mapping
from typing import Any, Self, TypeVar, Union, get_args, get_origin, get_type_hints

T = TypeVar("T")
_ABSENT: Any = object()  # no such property in the answer
_SCALARS = (bool, int, float, str)
Reader = Callable[[Any], Any]
_FIELDS: dict[type[Any], dict[str, tuple[Any, Reader, bool]]] = {}  # by class: resolving annotations is slow


class Decoded:
    """A model of an answer of the API: `from_dict` decodes one (`decode`)."""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, **given: Any) -> Self:
        return decode(cls, data, **given)


def decode(cls: type[T], data: Mapping[str, Any] | None, /, **given: Any) -> T:
    """The dataclass `cls` read from the answer `data` (None reads as `{}`).

    `given` holds values the caller knows for fields the answer may lack (the artifact a listing was read
    from, a revision from the ETag, a LOCAL field): the answer's own value wins when it has one. Raises
    TypeError for a name in `given` that is no field of `cls`, and TypeError or ValueError for a value its
    field's type cannot take (a list where a number belongs).
    """
    answer: Mapping[str, Any] = {} if data is None else data
    if not isinstance(answer, Mapping):
        raise TypeError(f"{cls.__name__}: expected a JSON object, got {type(answer).__name__}")
    fields = _fields(cls)
    unknown = given.keys() - fields.keys()
    if unknown:
        raise TypeError(f"{cls.__name__} has no fields {sorted(unknown)}")
    wire: Mapping[str, str] = getattr(cls, "WIRE", {})
    local: frozenset[str] = getattr(cls, "LOCAL", frozenset())
    values: dict[str, Any] = {}
    for name, (kind, read, has_default) in fields.items():
        if name == "raw":
            values[name] = answer
            continue
        value = _ABSENT if name in local else _at(answer, wire.get(name, name))
        if value is not None and value is not _ABSENT:
            try:
                values[name] = read(value)
            except (TypeError, ValueError) as error:
                raise type(error)(f"{cls.__name__}.{name}: {error}") from error
        elif name in given:
            values[name] = given[name]
        elif not has_default:
            values[name] = _empty(kind)
    return cls(**values)


def _fields(cls: type[Any]) -> dict[str, tuple[Any, Reader, bool]]:
    """Each init field of the dataclass `cls`: its type (annotations resolved), its reader, whether it has a
    default."""
    known = _FIELDS.get(cls)
    if known is None:
        if not dataclasses.is_dataclass(cls):
            raise TypeError(f"{cls.__name__} is not a dataclass")
        hints = get_type_hints(cls)
        missing = dataclasses.MISSING
        known = _FIELDS[cls] = {
            f.name: (
                hints[f.name],
                _reader(hints[f.name]),
                f.default is not missing or f.default_factory is not missing,
            )
            for f in dataclasses.fields(cls)
            if f.init
        }
    return known


def _at(answer: Mapping[str, Any], path: str) -> Any:
    """The value at the dotted `path` of the answer, or _ABSENT when a step of it is not there."""
    if "." not in path:
        return answer.get(path, _ABSENT)
    value: Any = answer
    for key in path.split("."):
        if not isinstance(value, Mapping):
            return _ABSENT
        value = value.get(key, _ABSENT)
    return value


@functools.cache
def _reader(kind: Any) -> Reader:
    """The function that makes a JSON value the type `kind` (null: its empty value), built once per type."""
    read = _read(kind)

    def reader(value: Any) -> Any:
        return _empty(kind) if value is None else read(value)

    return reader


def _read(kind: Any) -> Reader:
    origin, args = get_origin(kind), get_args(kind)
    if origin is Union or origin is types.UnionType:
        members = [_reader(member) for member in args if member is not type(None)]  # null: the outer reader's
        return members[0] if len(members) == 1 else functools.partial(_first_fit, members)
    if kind is Any:
        return lambda value: value
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return functools.partial(decode, kind)
    if origin is list:
        item = _reader(args[0])
        return lambda value: [item(v) for v in _shaped(value, list | tuple, "a list")]
    if origin is dict:
        key, item = _reader(args[0]), _reader(args[1])
        return lambda value: {key(k): item(v) for k, v in _shaped(value, Mapping, "an object").items()}
    if kind in _SCALARS:
        return lambda value: kind(_shaped(value, _SCALARS, kind.__name__))
    raise TypeError(f"no decoding for {kind!r}")


def _shaped(value: Any, shape: Any, what: str) -> Any:
    if not isinstance(value, shape):
        raise TypeError(f"expected {what}, got {value!r}")
    return value


def _first_fit(members: list[Reader], value: Any) -> Any:
    for read in members:
        try:
            return read(value)
        except (TypeError, ValueError):
            continue
    raise ValueError(f"{value!r} fits no type of its union")


def _empty(kind: Any) -> Any:
    """What a field the answer lacks holds when it has no default."""
    origin = get_origin(kind)
    if origin is Union or origin is types.UnionType:
        members = get_args(kind)
        return None if type(None) in members else _empty(members[0])
    if kind is Any:
        return None
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return decode(kind, {})
    if origin in (list, dict):
        return origin()
    if kind in _SCALARS:
        return kind()
    raise TypeError(f"no empty value for {kind!r}")
