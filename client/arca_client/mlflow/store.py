"""MLflow's model registry store over Arca (`mlflow.set_registry_uri("arca+http://127.0.0.1:3000")`).

Every abstract method of MLflow's registry `AbstractStore` is implemented: a registered model is an artifact, a
model version a version (a tree of the model's files, copied into Arca at registration), an alias an alias (with
its history, canaries and policies), tags and descriptions are tags and descriptions. What does not map is an
MlflowException saying so (`errors`, `unmapped`). The SDK's `Client` does the HTTP, signing as the CLI signs.
"""

from __future__ import annotations

import os
import re
import socket
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mlflow.entities.model_registry import ModelVersion, ModelVersionTag, RegisteredModel, RegisteredModelTag
from mlflow.entities.model_registry.model_version_stages import get_canonical_stage
from mlflow.store.entities.paged_list import PagedList
from mlflow.store.model_registry import (
    SEARCH_MODEL_VERSION_MAX_RESULTS_THRESHOLD,
    SEARCH_REGISTERED_MODEL_MAX_RESULTS_THRESHOLD,
)
from mlflow.store.model_registry.abstract_store import AbstractStore
from mlflow.utils.search_utils import SearchModelUtils, SearchModelVersionUtils
from mlflow.utils.validation import (
    _validate_model_alias_name,
    _validate_model_alias_name_reserved,
    _validate_model_version,
    _validate_model_version_tag,
    _validate_registered_model_tag,
)

from arca_client.errors import ArcaError, ConflictError, NotFoundError
from arca_client.mlflow import entities, search
from arca_client.mlflow.entities import DESCRIPTION_TAG, RESERVED_TAGS, STAGE
from arca_client.mlflow.errors import already_exists, invalid, not_found, translate, translated, unmapped
from arca_client.mlflow.unmapped import Unmapped
from arca_client.mlflow.uris import parse_registry
from arca_client.models import LATEST, Version
from arca_client.sdk import Client
from arca_client.trees import HashCache

ROUTING_KEY_ENV = "ARCA_ROUTING_KEY"
_NAME = re.compile(r"[a-z0-9]([a-z0-9._-]{0,62}[a-z0-9])?(/[a-z0-9]([a-z0-9._-]{0,62}[a-z0-9])?){0,7}")
_LATEST_ALIAS = "latest"
_DEFAULT_ORDER = ["last_updated_timestamp DESC", "name ASC", "version_number DESC"]


class ArcaRegistryStore(Unmapped, AbstractStore):
    """The registry store of `arca+http://…` / `arca+https://…` registry URIs (see `arca_client.mlflow.uris`)."""

    def __init__(self, store_uri: str | None = None, tracking_uri: str | None = None) -> None:
        super().__init__()
        self.registry = parse_registry(store_uri or "")
        self.tracking_uri = tracking_uri
        self.routing_key = self.registry.routing_key or os.environ.get(ROUTING_KEY_ENV) or socket.gethostname()
        with translated(f"connect to Arca at {self.registry.endpoint}"):
            self.client = Client(self.registry.endpoint, region=self.registry.region, profile=self.registry.profile)

    # Registered models.

    def create_registered_model(
        self,
        name: str,
        tags: list[RegisteredModelTag] | None = None,
        description: str | None = None,
        deployment_job_id: str | None = None,
    ) -> RegisteredModel:
        _name(name)
        _no_deployment_job(deployment_job_id)
        tag_map = {t.key: t.value for t in tags or []}
        if "mlflow.prompt.is_prompt" in tag_map:
            self.create_prompt(name)
        for key, value in tag_map.items():
            _validate_registered_model_tag(key, value)
        try:
            self.client.create_artifact(name, description=description, tags=tag_map)
        except ConflictError as error:
            if error.details.get("exists"):
                raise already_exists(f"Registered Model (name={name}) already exists.") from None
            raise translate(error, f"create registered model {name}") from error
        except ArcaError as error:
            raise translate(error, f"create registered model {name}") from error
        return self.get_registered_model(name)

    def update_registered_model(
        self, name: str, description: str | None, deployment_job_id: str | None = None
    ) -> RegisteredModel:
        _name(name)
        _no_deployment_job(deployment_job_id)
        with _about_model(name, "update the description of"):
            self.client.update_artifact(name, description=description)
        return self.get_registered_model(name)

    def rename_registered_model(self, name: str, new_name: str) -> RegisteredModel:
        unmapped(
            f"rename_registered_model({name!r}, {new_name!r})",
            "Arca keeps a name's versions, aliases and their history under that name; register the model under "
            "the new name, or make the new name a link to it (`arca link NEW OLD`)",
        )

    def delete_registered_model(self, name: str) -> None:
        _name(name)
        with _about_model(name, "delete"):
            self.client.get_artifact(name)
            self.client.purge(name, force=True)

    def search_registered_models(
        self,
        filter_string: str | None = None,
        max_results: int | None = None,
        order_by: list[str] | None = None,
        page_token: str | None = None,
    ) -> PagedList[RegisteredModel]:
        limit = search.check_max_results(max_results, SEARCH_REGISTERED_MODEL_MAX_RESULTS_THRESHOLD)
        narrowing = search.Narrowing.of(SearchModelUtils.parse_search_filter(filter_string))
        with translated("search registered models"):
            found = [m for m in map(self._bare_model, self._candidate_names(narrowing)) if m is not None]
        matches = SearchModelUtils.sort(SearchModelUtils.filter(found, filter_string), order_by)
        return search.page(matches, limit, page_token, lambda m: self.get_registered_model(m.name))

    def get_registered_model(self, name: str) -> RegisteredModel:
        _name(name)
        with _about_model(name, "read"):
            summary = self.client.get_artifact(name)
            aliases = list(self.client.iter_aliases(name))
            latest = self._newest(name)
        return entities.registered_model(summary, aliases, latest)

    def get_latest_versions(self, name: str, stages: list[str] | None = None) -> list[ModelVersion]:
        _name(name)
        asked = [get_canonical_stage(s) for s in stages or []]
        if any(stage != STAGE for stage in asked):
            invalid(
                f"Arca has no stages ({', '.join(s for s in asked if s != STAGE)}): point an alias at the version "
                f"and load it by alias (models:/{name}@production)"
            )
        with _about_model(name, "read the latest version of"):
            self.client.get_artifact(name)
            return self._newest(name)

    def set_registered_model_tag(self, name: str, tag: RegisteredModelTag) -> None:
        _name(name)
        _validate_registered_model_tag(tag.key, tag.value)
        with _about_model(name, f"set tag {tag.key} of"):
            self.client.update_artifact(name, tags={tag.key: tag.value})

    def delete_registered_model_tag(self, name: str, key: str) -> None:
        _name(name)
        with _about_model(name, f"delete tag {key} of"):
            self.client.update_artifact(name, tags={key: None})

    # Model versions.

    def create_model_version(
        self,
        name: str,
        source: str,
        run_id: str | None = None,
        tags: list[ModelVersionTag] | None = None,
        run_link: str | None = None,
        description: str | None = None,
        local_model_path: str | None = None,
        model_id: str | None = None,
    ) -> ModelVersion:
        """Copy the model's files into Arca as a tree version (always new, as MLflow makes one per registration),
        then set its tags and description (a second request: a crash between leaves the version untagged). The
        artifact need not exist: its first version makes it (see `create_registered_model`)."""
        _name(name)
        tag_map = {t.key: t.value for t in tags or []}
        for key, value in tag_map.items():
            _check_version_tag(key, value)
        metadata = {
            entities.SOURCE: source,
            entities.RUN_ID: run_id,
            entities.RUN_LINK: run_link,
            entities.MODEL_ID: model_id,
        }
        with tempfile.TemporaryDirectory(prefix="arca-mlflow-") as scratch:
            directory = _local_files(source, local_model_path, Path(scratch))
            with translated(f"register a version of {name} from {source}"):
                published = self.client.publish_directory(
                    name,
                    directory,
                    metadata={k: v for k, v in metadata.items() if v},
                    force=True,
                    cache=HashCache.disabled(),  # a scratch copy: its hashes are worth nothing next time
                )
                number = int(published.published.version.version)
                if description:
                    tag_map[DESCRIPTION_TAG] = description
                if tag_map:
                    self.client.tag_version(name, number, tag_map)
        return self.get_model_version(name, number)

    def update_model_version(self, name: str, version: str | int, description: str | None) -> ModelVersion:
        number = self._live(name, version).version
        with translated(f"update the description of version {number} of {name}"):
            self.client.tag_version(name, int(number), {DESCRIPTION_TAG: description or None})
        return self.get_model_version(name, number)

    def transition_model_version_stage(
        self, name: str, version: str | int, stage: str, archive_existing_versions: bool
    ) -> ModelVersion:
        if get_canonical_stage(stage) != STAGE or archive_existing_versions:
            invalid(
                f"Arca has no stages: version {version} of {name} cannot move to {stage!r}; point an alias at it "
                f"(MlflowClient().set_registered_model_alias({name!r}, 'production', {version!r})) and load "
                f"models:/{name}@production"
            )
        return self.get_model_version(name, version)

    def delete_model_version(self, name: str, version: str | int) -> None:
        number = int(self._live(name, version).version)
        with translated(f"delete version {number} of {name}"):
            self.client.delete_version(name, number)

    def get_model_version(self, name: str, version: str | int) -> ModelVersion:
        live = self._live(name, version)
        return entities.model_version(live, self.registry.version_uri(name, live.version))

    def get_model_version_download_uri(self, name: str, version: str | int) -> str:
        return self.registry.version_uri(name, self._live(name, version).version)

    def get_model_version_stages(self, name: str, version: str | int) -> list[str]:
        return [STAGE]

    def search_model_versions(
        self,
        filter_string: str | None = None,
        max_results: int | None = None,
        order_by: list[str] | None = None,
        page_token: str | None = None,
    ) -> PagedList[ModelVersion]:
        limit = search.check_max_results(max_results, SEARCH_MODEL_VERSION_MAX_RESULTS_THRESHOLD)
        narrowing = search.Narrowing.of(SearchModelVersionUtils.parse_search_filter(filter_string))
        with translated("search model versions"):
            found = [
                entities.model_version(v, self.registry.version_uri(v.name, v.version))
                for v in self._candidate_versions(narrowing)
            ]
        matches = SearchModelVersionUtils.sort(
            SearchModelVersionUtils.filter(found, filter_string), order_by or _DEFAULT_ORDER
        )
        return search.page(matches, limit, page_token, lambda v: v)

    def set_model_version_tag(self, name: str, version: str | int, tag: ModelVersionTag) -> None:
        _check_version_tag(tag.key, tag.value)
        number = int(self._live(name, version).version)
        with translated(f"set tag {tag.key} of version {number} of {name}"):
            self.client.tag_version(name, number, {tag.key: tag.value})

    def delete_model_version_tag(self, name: str, version: str | int, key: str) -> None:
        _check_version_tag(key, None)
        number = int(self._live(name, version).version)
        with translated(f"delete tag {key} of version {number} of {name}"):
            self.client.tag_version(name, number, {key: None})

    # Aliases.

    def set_registered_model_alias(self, name: str, alias: str, version: str | int) -> None:
        _name(name)
        _validate_model_alias_name(alias)
        _validate_model_alias_name_reserved(alias)
        number = _validate_model_version(version)
        self._live(name, number)
        with translated(f"point alias {alias} of {name} at version {number}"):
            self.client.set_alias(name, alias, number, reason="set from MLflow (set_registered_model_alias)")

    def delete_registered_model_alias(self, name: str, alias: str) -> None:
        _name(name)
        _validate_model_alias_name(alias)
        with _about_model(name, f"delete alias {alias} of"):
            try:
                self.client.delete_alias(name, alias)
            except NotFoundError:
                self.client.get_artifact(name)  # a missing model is an error; a missing alias, as in MLflow, not

    def get_model_version_by_alias(self, name: str, alias: str) -> ModelVersion:
        """The version the alias serves this process: an alias with a canary routes by the registry URI's
        `routing_key` (or $ARCA_ROUTING_KEY, else this host's name), as Arca's resolve does, so a fleet loading
        `models:/name@alias` splits as the canary says and each host keeps its side."""
        _name(name)
        _validate_model_alias_name(alias)
        if alias.lower() == _LATEST_ALIAS:
            with _about_model(name, "read the latest version of"):
                newest = self._newest(name)
            if not newest:
                raise not_found(f"Registered Model with name={name} has no version")
            return newest[0]
        try:
            resolution = self.client.resolve(name, alias, routing_key=self.routing_key)
        except NotFoundError:
            with _about_model(name, "read"):
                self.client.get_artifact(name)  # a missing model is RESOURCE_DOES_NOT_EXIST, a missing alias:
            invalid(f"Registered model alias {alias} not found.")
        except ArcaError as error:
            raise translate(error, f"resolve alias {alias} of {name}") from error
        if resolution.version == LATEST:
            invalid(f"alias {alias} of {name} points at LATEST, which is not a version: point it at a version")
        return self.get_model_version(name, resolution.version)

    # Inside.

    def _live(self, name: str, version: str | int) -> Version:
        """The live version `version` of `name` (MLflow's errors for a bad number, a missing or deleted one)."""
        _name(name)
        number = _validate_model_version(version)
        missing = not_found(f"Model Version (name={name}, version={number}) not found")
        if not 1 <= number <= 999_999:
            raise missing
        try:
            found = self.client.get_version(name, number)
        except NotFoundError:
            raise missing from None
        except ArcaError as error:
            raise translate(error, f"read version {number} of {name}") from error
        if found.deleted or found.raw.get("expired"):
            raise missing
        return found

    def _newest(self, name: str) -> list[ModelVersion]:
        """The newest live version, as a list (MLflow's latest_versions); an expired one is only a number."""
        for version in self.client.iter_versions(name, page_size=10):
            if not version.raw.get("expired"):
                return [entities.model_version(version, self.registry.version_uri(name, version.version))]
        return []

    def _bare_model(self, name: str) -> RegisteredModel | None:
        """The model as far as a filter reads it (name, times, description, tags), or None if it went away."""
        try:
            summary = self.client.get_artifact(name)
        except NotFoundError:
            return None
        return entities.registered_model(summary, [], [])

    def _candidate_names(self, narrowing: search.Narrowing) -> Iterator[str]:
        names = narrowing.arca_names()
        if names is not None:
            return iter(names)
        tag = narrowing.arca_tag()
        if tag is False:
            return iter(())
        if isinstance(tag, tuple):
            return search.unique(e.name for e in self.client.iter_search_artifacts(tag) if not e.link)
        listed = self.client.iter_artifacts(narrowing.prefix or "", delimiter=None)
        return (e.name for e in listed if not e.is_prefix and not e.link)

    def _candidate_versions(self, narrowing: search.Narrowing) -> Iterator[Version]:
        tag = narrowing.arca_tag()
        if narrowing.names is None and tag is False:
            return
        if narrowing.names is None and isinstance(tag, tuple):
            for hit in self.client.iter_search_versions(tag=tag):
                if not hit.deleted:
                    yield self.client.get_version(hit.name, hit.version)
            return
        for name in self._candidate_names(search.Narrowing(narrowing.names, narrowing.prefix)):
            try:
                yield from (v for v in self.client.iter_versions(name) if not v.raw.get("expired"))
            except NotFoundError:
                continue


@contextmanager
def _about_model(name: str, what: str) -> Iterator[None]:
    """SDK calls about the model `name`: a miss is MLflow's "Registered Model with name=… not found"."""
    try:
        yield
    except NotFoundError as error:
        raise not_found(f"Registered Model with name={name} not found") from error
    except ArcaError as error:
        raise translate(error, f"{what} registered model {name}") from error


def _name(name: object) -> str:
    if not isinstance(name, str) or not name.strip():
        invalid("Missing value for required parameter 'name'.")
    if not _NAME.fullmatch(name):
        invalid(
            f"Invalid model name {name!r}: Arca's names are lower-case letters, digits, '.', '_' and '-', in one to "
            "eight segments joined by '/', each starting and ending with a letter or digit"
        )
    return name


def _no_deployment_job(job: str | None) -> None:
    if job:
        invalid("deployment jobs are a feature of Databricks' registry, not of Arca")


def _check_version_tag(key: str, value: str | None) -> None:
    if key in RESERVED_TAGS:
        invalid(f"tag {key!r} holds the version's description in Arca: set it with update_model_version")
    if value is not None:
        _validate_model_version_tag(key, value)


def _local_files(source: str, local_model_path: str | None, scratch: Path) -> Path:
    """A directory holding the model's files: MLflow's local copy when it has one, else a download of `source`
    through MLflow's own artifact repositories (runs:/, models:/, s3://, a path, …)."""
    if local_model_path and os.path.isdir(local_model_path):
        return Path(local_model_path)
    import mlflow.artifacts  # only registration downloads; importing it at the top would slow every store

    with translated(f"download {source}"):
        fetched = Path(mlflow.artifacts.download_artifacts(artifact_uri=source, dst_path=str(scratch / "model")))
    if fetched.is_dir():
        return fetched
    single = scratch / "single"
    single.mkdir()
    fetched.rename(single / fetched.name)
    return single
