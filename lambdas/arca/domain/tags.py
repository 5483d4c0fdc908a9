"""Tags: mutable labels on a version or an artifact (metadata stays immutable). Pure rules, no I/O."""

from __future__ import annotations

import re
from collections.abc import Mapping

from arca.domain.errors import ValidationError

TAG_KEY_PATTERN = r"^[a-z0-9][a-z0-9_.:/-]{0,127}$"
_TAG_KEY = re.compile(TAG_KEY_PATTERN)
MAX_TAG_VALUE = 256
# Tags a version or an artifact may carry. Each is one index row written in the tag change's transaction, so
# this also bounds that transaction (a patch changes at most MAX_TAGS keys) under DynamoDB's 100 items.
MAX_TAGS = 50
MAX_DESCRIPTION = 1024

TagPatch = Mapping[str, str | None]


def check_patch(patch: TagPatch, field: str = "tags") -> None:
    """Raise ValidationError naming `tags.<key>` for a bad key or value, or `tags` for too many keys."""
    if len(patch) > MAX_TAGS:
        raise ValidationError(f"{field}: a patch may change at most {MAX_TAGS} tags", field=field)
    for key, value in patch.items():
        if not _TAG_KEY.fullmatch(key):
            raise ValidationError(
                f"{field}.{key}: a tag key must match [a-z0-9][a-z0-9_.:/-]{{0,127}}", field=f"{field}.{key}"
            )
        if value is not None and len(value) > MAX_TAG_VALUE:
            raise ValidationError(
                f"{field}.{key}: a tag value is at most {MAX_TAG_VALUE} characters", field=f"{field}.{key}"
            )
        if value is not None:
            check_text(value, f"{field}.{key}")


def check_text(value: str, field: str) -> str:
    """`value` if it is Unicode text that UTF-8 can encode: JSON's `\\ud800` escapes decode to a lone surrogate,
    which no store or client can hold. ValidationError naming `field` otherwise."""
    try:
        value.encode()
    except UnicodeEncodeError:
        raise ValidationError(f"{field}: holds a lone surrogate (not Unicode text)", field=field) from None
    return value


def merge(current: Mapping[str, str], patch: TagPatch, field: str = "tags") -> dict[str, str]:
    """`current` with `patch` applied (a None value removes the key); ValidationError over MAX_TAGS."""
    merged = {**current, **{k: v for k, v in patch.items() if v is not None}}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
    if len(merged) > MAX_TAGS:
        raise ValidationError(
            f"{field}: at most {MAX_TAGS} tags (this patch would leave {len(merged)})",
            field=field,
            details={"limit": MAX_TAGS},
        )
    return dict(sorted(merged.items()))


def parse_filter(text: str, field: str = "tag") -> tuple[str, str]:
    """A tag filter `k=v` or `k:v` as (key, value).

    Keys may contain `:` but never `=`, so `k=v` splits at the first `=` whatever the key; `k:v` (the form
    without `=`) splits at the first `:`, which suits keys without a colon.
    """
    key, sep, value = text.partition("=")
    if not sep:
        key, sep, value = text.partition(":")
    if not sep or not _TAG_KEY.fullmatch(key) or len(value) > MAX_TAG_VALUE:
        raise ValidationError(
            f"{field}: {text!r} must be key=value or key:value, the key matching [a-z0-9][a-z0-9_.:/-]{{0,127}}",
            field=field,
        )
    return key, check_text(value, field)
