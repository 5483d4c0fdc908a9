"""Arca's answers as MLflow's registry entities.

A registered model is an artifact (its description and tags), a model version a version: MLflow's `source`,
`run_id`, `run_link` and `model_id` are kept in the version's metadata at registration (immutable, as in MLflow), its
description in the version tag `mlflow.description` (Arca versions have tags, not descriptions; MLflow may edit a
version's description). Every version is READY and in the stage "None": Arca has no stages.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime

from mlflow.entities.model_registry import (
    ModelVersion,
    ModelVersionTag,
    RegisteredModel,
    RegisteredModelAlias,
    RegisteredModelTag,
)

from arca_client.models import Alias, ArtifactSummary, Version

STAGE = "None"  # the only stage: MLflow's name for "no stage"
DESCRIPTION_TAG = "mlflow.description"
# Version metadata keys (Arca's metadata key grammar: [a-z0-9][a-z0-9_.-]*) for what MLflow records at creation.
SOURCE = "mlflow.source"
RUN_ID = "mlflow.run_id"
RUN_LINK = "mlflow.run_link"
MODEL_ID = "mlflow.model_id"
RESERVED_TAGS = frozenset({DESCRIPTION_TAG})


def millis(moment: str | None) -> int | None:
    """Milliseconds since the epoch of an ISO 8601 time (MLflow's timestamps), None when there is none."""
    if not moment:
        return None
    parsed = datetime.fromisoformat(moment.replace("Z", "+00:00"))
    aware = parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return int(aware.timestamp() * 1000)


def model_version(version: Version, download_uri: str) -> ModelVersion:
    """The ModelVersion of a live numbered version; `download_uri` is its source when MLflow recorded none."""
    metadata = version.metadata
    tags = [ModelVersionTag(k, v) for k, v in sorted(version.tags.items()) if k not in RESERVED_TAGS]
    created = millis(version.created_at) or 0
    return ModelVersion(
        name=version.name,
        version=str(version.version),
        creation_timestamp=created,
        last_updated_timestamp=created,
        description=version.tags.get(DESCRIPTION_TAG),
        current_stage=STAGE,
        source=metadata.get(SOURCE, download_uri),
        run_id=metadata.get(RUN_ID),
        run_link=metadata.get(RUN_LINK),
        tags=tags,
        aliases=list(version.aliases),
        model_id=metadata.get(MODEL_ID),
    )


def registered_model(
    summary: ArtifactSummary, aliases: Iterable[Alias], latest: Iterable[ModelVersion]
) -> RegisteredModel:
    """The RegisteredModel of an artifact. An alias that points at LATEST (no version) or whose primary is not a
    version number is left out: MLflow aliases name versions."""
    return RegisteredModel(
        name=summary.name,
        creation_timestamp=millis(summary.created_at),
        last_updated_timestamp=millis(summary.updated_at or summary.created_at),
        description=summary.description,
        latest_versions=list(latest),
        tags=tags_of(summary.tags),
        aliases=[RegisteredModelAlias(a.alias, str(a.version)) for a in aliases if isinstance(a.version, int)],
    )


def tags_of(tags: Mapping[str, str]) -> list[RegisteredModelTag]:
    return [RegisteredModelTag(k, v) for k, v in sorted(tags.items())]
