"""Consumer leases: who runs which version of an artifact, until when. Pure rules, no I/O.

A lease is judged by its `expires_at` alone: a lapsed lease protects nothing and is never listed, whatever
DynamoDB's TTL deletion (late by up to days) has not removed yet.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime, timedelta

from arca.domain.errors import ValidationError
from arca.domain.tags import MAX_TAG_VALUE, TAG_KEY_PATTERN, check_text
from arca.domain.text import no_control

CONSUMER_PATTERN = r"^[a-z0-9][a-z0-9._:-]{0,127}$"
_CONSUMER = re.compile(CONSUMER_PATTERN)
# A lease's time to live, in seconds: a minute to 30 days, a day unless given.
MIN_TTL = 60
MAX_TTL = 30 * 24 * 3600
DEFAULT_TTL = 24 * 3600
# Labels a lease may carry (keys as tag keys, values as tag values).
MAX_LABELS = 20
_LABEL_KEY = re.compile(TAG_KEY_PATTERN)
# Live leases an artifact may hold, and a version of it.
MAX_LEASES = 1000
MAX_LEASES_PER_VERSION = 250
# Consumer ids an answer names for a version (rollout status, a forced purge), with the count of all of them.
SHOWN_CONSUMERS = 20
# A renewal in one write keeps a lease that has at least this long left; one closer to lapsing (or lapsed) is
# taken again under the version's condition, so clocks a few seconds apart never extend a lease that a soft
# delete already judged lapsed.
RENEW_MARGIN = timedelta(seconds=10)


def validate_consumer(value: str, field: str = "consumer") -> str:
    if not isinstance(value, str) or not _CONSUMER.fullmatch(value):
        raise ValidationError(f"{field}: a consumer id must match [a-z0-9][a-z0-9._:-]{{0,127}}", field=field)
    return value


def check_labels(labels: Mapping[str, str], field: str = "labels") -> None:
    """Raise ValidationError naming `labels` (too many) or `labels.<key>` (a bad key or value)."""
    if len(labels) > MAX_LABELS:
        raise ValidationError(
            f"{field}: a lease carries at most {MAX_LABELS} labels", field=field, details={"limit": MAX_LABELS}
        )
    for key, value in labels.items():
        if not _LABEL_KEY.fullmatch(key):
            raise ValidationError(
                f"{field}.{key}: a label key must match [a-z0-9][a-z0-9_.:/-]{{0,127}}", field=f"{field}.{key}"
            )
        if len(value) > MAX_TAG_VALUE:
            raise ValidationError(
                f"{field}.{key}: a label value is at most {MAX_TAG_VALUE} characters", field=f"{field}.{key}"
            )
        check_text(value, f"{field}.{key}")
        try:
            no_control(value)
        except ValueError as error:
            raise ValidationError(f"{field}.{key}: {error}", field=f"{field}.{key}") from None


def expiry(now: datetime, ttl_seconds: int) -> datetime:
    return now + timedelta(seconds=ttl_seconds)
