"""The same random sequences of registry operations against Arca's store (arca_client.mlflow, over local mode) and
MLflow's own FileStore registry: the same answers and the same error codes, except where the mapping documents a
difference. Each difference is written here as the rule that expects it, so that none passes unnoticed:

1. Versions come into being differently: MLflow's through `create_model_version` of a source URI, Arca's published
   with the SDK (the plugin's copies a model's directory). Models are created by `create_registered_model` in both,
   with no version yet (decision 111), and the machine deletes and re-creates them.
2. Stages: Arca has none, so a transition to any stage but "None" is INVALID_PARAMETER_VALUE and changes nothing.
3. A version an alias points at is not deleted (RESOURCE_CONFLICT); MLflow deletes the version and its aliases.
4. Tag keys outside Arca's grammar (upper case here) are INVALID_PARAMETER_VALUE; MLflow takes them. (Alias
   names take OCI's tag grammar, upper case too: the same answers.)
5. An empty description is no description in Arca (the version's is a tag, removed when empty); MLflow keeps "".
6. Timestamps are not compared (Arca's last_updated_timestamp of a version is its creation), nor sources, so
   searches are compared in an explicit order, never MLflow's default (last_updated_timestamp DESC first).
7. The alias `latest` of a model with no version: MLflow's FileStore fails with a ValueError (the max of no
   versions); Arca answers RESOURCE_DOES_NOT_EXIST, as for a missing alias.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from mlflow.entities.model_registry import ModelVersion, ModelVersionTag, RegisteredModel, RegisteredModelTag
from mlflow.exceptions import MlflowException
from mlflow.store.model_registry.file_store import FileStore

from arca_client import Client
from arca_client.mlflow.store import ArcaRegistryStore

MODELS = 2
KEYS = st.sampled_from(["team", "validated", "a.b", "x-y"])
VALUES = st.sampled_from(["yes", "no", "", "risk team"])
ALIASES = st.sampled_from(["champion", "challenger", "prod"])
DESCRIPTIONS = st.sampled_from(["", "first", "scores payments"])
VERSIONS = st.integers(min_value=1, max_value=4)
Outcome = tuple[str, Any]


def _model(found: RegisteredModel) -> tuple[Any, ...]:
    return (
        found.name,
        found.description or None,
        sorted(found.tags.items()),
        sorted(found.aliases.items()),
        [str(v.version) for v in found.latest_versions],
    )


def _version(found: ModelVersion) -> tuple[Any, ...]:
    return (
        found.name,
        str(found.version),
        found.description or None,
        sorted(found.tags.items()),
        sorted(found.aliases),
        found.current_stage,
    )


def _normal(value: Any) -> Any:
    if isinstance(value, RegisteredModel):
        return _model(value)
    if isinstance(value, ModelVersion):
        return _version(value)
    if isinstance(value, list):  # a page or a list of versions
        return [_normal(item) for item in value]
    return value


def _outcome(call: Callable[[], Any]) -> Outcome:
    try:
        return ("ok", _normal(call()))
    except MlflowException as error:
        return ("error", error.error_code)


class RegistryMachine(RuleBasedStateMachine):
    arca_url = ""

    def __init__(self) -> None:
        super().__init__()
        self.prefix = f"diff-{uuid.uuid4().hex[:10]}"
        self.names = [f"{self.prefix}-m{n}" for n in range(MODELS)]
        self.scratch = tempfile.TemporaryDirectory(prefix="arca-diff-")
        self.arca = ArcaRegistryStore(f"arca+{self.arca_url}")
        self.reference = FileStore(self.scratch.name)

    def teardown(self) -> None:
        # The registry is shared with the other end-to-end tests, whose contract fuzzing explores what it finds.
        with Client(self.arca_url) as sdk:
            for entry in sdk.iter_artifacts(self.prefix, delimiter=None):
                sdk.purge(entry.name, force=True)
        self.scratch.cleanup()

    @initialize(counts=st.lists(st.integers(min_value=0, max_value=3), min_size=MODELS, max_size=MODELS))
    def create(self, counts: list[int]) -> None:
        """The same models, created alike; difference 1: their versions made each store's own way."""
        with Client(self.arca_url) as sdk:
            for name, count in zip(self.names, counts, strict=True):
                self.same(lambda s, name=name: s.create_registered_model(name))
                for n in range(count):
                    self.reference.create_model_version(name, source=f"file:///models/{name}/{n}")
                    blob = Path(self.scratch.name) / f"{name}-{n}.bin"
                    blob.write_bytes(os.urandom(32))
                    sdk.publish(name, blob)

    def same(self, call: Callable[[Any], Any]) -> Outcome:
        """Apply `call` to both stores; their outcomes must be equal."""
        arca, reference = _outcome(lambda: call(self.arca)), _outcome(lambda: call(self.reference))
        assert arca == reference
        return arca

    # Models.

    @rule(model=st.integers(0, MODELS - 1), key=KEYS, value=VALUES)
    def set_model_tag(self, model: int, key: str, value: str) -> None:
        self.same(lambda s: s.set_registered_model_tag(self.names[model], RegisteredModelTag(key, value)))

    @rule(model=st.integers(0, MODELS - 1), key=KEYS)
    def delete_model_tag(self, model: int, key: str) -> None:
        self.same(lambda s: s.delete_registered_model_tag(self.names[model], key))

    @rule(model=st.integers(0, MODELS - 1), text=DESCRIPTIONS)
    def describe_model(self, model: int, text: str) -> None:
        self.same(lambda s: s.update_registered_model(self.names[model], text))

    @rule(model=st.integers(0, MODELS - 1))
    def read_model(self, model: int) -> None:
        self.same(lambda s: s.get_registered_model(self.names[model]))

    @rule(model=st.integers(0, MODELS - 1))
    def create_again(self, model: int) -> None:
        self.same(lambda s: s.create_registered_model(self.names[model]))

    @rule(model=st.integers(0, MODELS - 1), text=DESCRIPTIONS)
    def delete_and_recreate(self, model: int, text: str) -> None:
        """A deleted model reads as missing in both; created again, it has no version (and a description)."""
        name = self.names[model]
        self.same(lambda s: s.delete_registered_model(name))
        self.same(lambda s: s.get_registered_model(name))
        self.same(lambda s: s.delete_registered_model(name))
        tags = [RegisteredModelTag("team", "yes")]
        self.same(lambda s: s.create_registered_model(name, tags=tags, description=text or None))

    # Versions.

    @rule(model=st.integers(0, MODELS - 1), version=VERSIONS, key=KEYS, value=VALUES)
    def set_version_tag(self, model: int, version: int, key: str, value: str) -> None:
        self.same(lambda s: s.set_model_version_tag(self.names[model], str(version), ModelVersionTag(key, value)))

    @rule(model=st.integers(0, MODELS - 1), version=VERSIONS, key=KEYS)
    def delete_version_tag(self, model: int, version: int, key: str) -> None:
        self.same(lambda s: s.delete_model_version_tag(self.names[model], str(version), key))

    @rule(model=st.integers(0, MODELS - 1), version=VERSIONS, text=DESCRIPTIONS)
    def describe_version(self, model: int, version: int, text: str) -> None:
        self.same(lambda s: s.update_model_version(self.names[model], str(version), text))

    @rule(model=st.integers(0, MODELS - 1), version=VERSIONS)
    def read_version(self, model: int, version: int) -> None:
        self.same(lambda s: s.get_model_version(self.names[model], str(version)))

    @rule(model=st.integers(0, MODELS - 1), version=VERSIONS)
    def delete_version(self, model: int, version: int) -> None:
        name = self.names[model]
        aliased = _outcome(lambda: self.reference.get_model_version(name, str(version)))
        if aliased[0] == "ok" and aliased[1][4]:
            # Difference 3: Arca keeps a version an alias serves
            assert _outcome(lambda: self.arca.delete_model_version(name, str(version))) == (
                "error",
                "RESOURCE_CONFLICT",
            )
            return
        self.same(lambda s: s.delete_model_version(name, str(version)))

    @rule(model=st.integers(0, MODELS - 1), version=VERSIONS, stage=st.sampled_from(["Staging", "Production"]))
    def transition(self, model: int, version: int, stage: str) -> None:
        # Difference 2: no stages
        refused = _outcome(
            lambda: self.arca.transition_model_version_stage(self.names[model], str(version), stage, False)
        )
        assert refused == ("error", "INVALID_PARAMETER_VALUE")

    # Aliases.

    @rule(model=st.integers(0, MODELS - 1), alias=ALIASES, version=VERSIONS)
    def set_alias(self, model: int, alias: str, version: int) -> None:
        self.same(lambda s: s.set_registered_model_alias(self.names[model], alias, str(version)))

    @rule(model=st.integers(0, MODELS - 1), alias=ALIASES)
    def delete_alias(self, model: int, alias: str) -> None:
        self.same(lambda s: s.delete_registered_model_alias(self.names[model], alias))

    @rule(model=st.integers(0, MODELS - 1), alias=st.one_of(ALIASES, st.just("latest")))
    def read_alias(self, model: int, alias: str) -> None:
        name = self.names[model]
        if alias == "latest" and not self.reference.get_latest_versions(name):
            # Difference 7: MLflow's FileStore fails on `latest` of a model with no version (max() of nothing)
            with pytest.raises(ValueError):
                self.reference.get_model_version_by_alias(name, alias)
            assert _outcome(lambda: self.arca.get_model_version_by_alias(name, alias)) == (
                "error",
                "RESOURCE_DOES_NOT_EXIST",
            )
            return
        self.same(lambda s: s.get_model_version_by_alias(name, alias))

    @rule(model=st.integers(0, MODELS - 1), key=st.sampled_from(["Team", "CamelCase"]))
    def outside_arcas_grammar(self, model: int, key: str) -> None:
        # Difference 4
        name = self.names[model]
        tagged = _outcome(lambda: self.arca.set_registered_model_tag(name, RegisteredModelTag(key, "x")))
        assert tagged == ("error", "INVALID_PARAMETER_VALUE")
        # Aliases take OCI's tag grammar (upper case too), as MLflow's: the same answer from both
        self.same(lambda s: s.set_registered_model_alias(name, key, "1"))

    # Searches (difference 6: an explicit order).

    @rule(which=st.sampled_from(["prefix", "name", "tag"]), model=st.integers(0, MODELS - 1))
    def search_models(self, which: str, model: int) -> None:
        text = {
            "prefix": f"name LIKE '{self.prefix}%'",
            "name": f"name = '{self.names[model]}'",
            "tag": f"tags.team = 'yes' AND name LIKE '{self.prefix}%'",
        }[which]
        self.same(lambda s: list(s.search_registered_models(text, max_results=10, order_by=["name ASC"])))

    @rule(which=st.sampled_from(["name", "tag", "prefix"]), model=st.integers(0, MODELS - 1))
    def search_versions(self, which: str, model: int) -> None:
        text = {
            "name": f"name = '{self.names[model]}'",
            "tag": f"tags.validated = 'yes' AND name LIKE '{self.prefix}%'",
            "prefix": f"name LIKE '{self.prefix}%'",
        }[which]
        order = ["name ASC", "version_number DESC"]
        self.same(lambda s: list(s.search_model_versions(text, max_results=50, order_by=order)))

    @invariant()
    def the_newest_versions_agree(self) -> None:
        for name in self.names:
            self.same(lambda s, name=name: s.get_latest_versions(name))


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_arcas_store_answers_as_mlflows_file_store(arca_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    RegistryMachine.arca_url = arca_url
    machine = settings(
        max_examples=6,
        stateful_step_count=15,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )(RegistryMachine)
    machine.TestCase().runTest()
