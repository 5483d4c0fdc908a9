"""The grammar of artifact names, alias names and version references."""

from __future__ import annotations

import re

from arca.domain.errors import ValidationError
from arca.domain.versions import LATEST, MAX_VERSION

# Words of the URL scheme. A name never contains one as a segment, which is what lets a path be
# split into name and suffix unambiguously (arca.routes.match).
RESERVED_SEGMENTS = frozenset(
    {
        "versions",
        "aliases",
        "resolve",
        "uploads",
        "latest",
        "history",
        "content",
        "rollback",
        "prune",
        "link",
        "events",
        "rollout",
        "retention",
        "policy",
        "promotions",
        "attestations",
        "consumers",
    }
)
MAX_NAME_LENGTH = 256
MAX_SEGMENTS = 8
SEGMENT_PATTERN = r"[a-z0-9]([a-z0-9._-]{0,62}[a-z0-9])?"
_SEGMENT = re.compile(SEGMENT_PATTERN)
# The whole grammar as one pattern, for the OpenAPI document (the reserved words are checked in code).
NAME_PATTERN = rf"^{SEGMENT_PATTERN}(/{SEGMENT_PATTERN}){{0,{MAX_SEGMENTS - 1}}}$"
# An alias is an OCI tag (SPEC: alias names widen to OCI's grammar), never all digits (a version number) and never
# LATEST; it holds neither `#` nor `@`, which the history's keys use, and sorts below `~` (the link marker's key).
ALIAS_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$"
ALIAS_RULE = "[A-Za-z0-9_][A-Za-z0-9._-]{0,127}, not all digits, not LATEST"
_ALIAS = re.compile(ALIAS_PATTERN)
# No leading zero: one spelling per version, as the OpenAPI pattern `^[1-9][0-9]{0,5}$` says.
_VERSION = re.compile(r"[1-9][0-9]{0,5}")


def validate_name(name: object, field: str = "name") -> str:
    """Return `name` if it is a valid artifact name; raise ValidationError naming `field` otherwise."""
    if not isinstance(name, str) or not name:
        raise ValidationError(f"{field} is required and must be a string", field=field)
    if len(name) > MAX_NAME_LENGTH:
        raise ValidationError(f"{field} is longer than {MAX_NAME_LENGTH} characters", field=field)
    segments = name.split("/")
    if len(segments) > MAX_SEGMENTS:
        raise ValidationError(f"{field} has more than {MAX_SEGMENTS} segments", field=field)
    for segment in segments:
        if not segment:
            raise ValidationError(f"{field} has an empty segment (a leading, trailing or double '/')", field=field)
        if segment in RESERVED_SEGMENTS:
            raise reserved_word(segment, field)
        if not _SEGMENT.fullmatch(segment):
            raise ValidationError(
                f"{field} segment {segment!r} must match [a-z0-9]([a-z0-9._-]{{0,62}}[a-z0-9])?", field=field
            )
    return name


def reserved_word(segment: str, field: str = "name") -> ValidationError:
    """The refusal of a name that contains a word of the URL scheme (its paths could not be read)."""
    return ValidationError(f"{field} segment {segment!r} is a reserved word", field=field)


def validate_alias(alias: object, field: str = "alias") -> str:
    if not isinstance(alias, str) or not _ALIAS.fullmatch(alias) or alias.isdigit() or alias == "LATEST":
        raise ValidationError(f"{field} must match {ALIAS_RULE}", field=field)
    return alias


def parse_version(value: object, field: str = "version") -> int:
    """A version number 1..999999 given as int or decimal string."""
    if isinstance(value, bool):
        raise ValidationError(f"{field} must be a version number", field=field)
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and _VERSION.fullmatch(value):
        number = int(value)
    else:
        raise ValidationError(f"{field} must be a version number from 1 to {MAX_VERSION}", field=field)
    if not 1 <= number <= MAX_VERSION:
        raise ValidationError(f"{field} must be a version number from 1 to {MAX_VERSION}", field=field)
    return number


def parse_target(value: object, field: str = "version") -> int | str:
    """A version number or LATEST: what an alias may point at and what /versions/{version} takes."""
    if value == LATEST:
        return LATEST
    return parse_version(value, field)
