"""MLflow's registry over Arca (arca_client.mlflow) with the real mlflow-skinny from PyPI, against local mode.

Registering a model through MLflow copies its files into Arca as a tree version; the test of creating a registered
model with no version is marked as expected to fail until the API serves artifacts created empty (strict: it must be
unmarked the day it passes).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import mlflow
import pytest
from mlflow import MlflowClient
from mlflow.exceptions import MlflowException

from arca_client import Client
from arca_client.mlflow.uris import parse_version_uri


@pytest.fixture
def registry(arca_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[MlflowClient]:
    """MLflow with a file tracking store of this test's own and Arca as its registry."""
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    mlflow.set_tracking_uri((tmp_path / "mlruns").as_uri())
    mlflow.set_registry_uri(f"arca+{arca_url}")
    yield MlflowClient()
    mlflow.set_registry_uri(None)  # type: ignore[arg-type]
    mlflow.set_tracking_uri(None)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _purged_afterwards(arca_url: str, unique: str) -> Iterator[None]:
    """Every artifact a test makes (its names start with `unique`) is purged at its end: the registry is shared
    with the other end-to-end tests, whose contract fuzzing explores whatever artifacts it finds."""
    yield
    with Client(arca_url) as arca:
        for entry in arca.iter_artifacts(unique, delimiter=None):
            arca.purge(entry.name, force=True)


@pytest.fixture
def model(arca_url: str, unique: str, tmp_path: Path) -> str:
    """A model with two versions, published with the SDK (one file each)."""
    name = f"{unique}-fraud"
    with Client(arca_url) as arca:
        for n in (1, 2):
            source = tmp_path / f"weights-{n}.bin"
            source.write_bytes(os.urandom(64) + bytes([n]))
            arca.publish(name, source)
    return name


def _code(error: pytest.ExceptionInfo[MlflowException]) -> str:
    return str(error.value.error_code)


def test_a_registered_model_is_the_artifact_with_its_newest_version(registry: MlflowClient, model: str) -> None:
    # When
    found = registry.get_registered_model(model)
    # Then
    assert found.name == model
    assert [v.version for v in found.latest_versions] == ["2"]
    assert found.latest_versions[0].current_stage == "None"
    assert found.latest_versions[0].status == "READY"
    assert (found.description, found.tags, found.aliases) == (None, {}, {})
    assert found.creation_timestamp <= found.last_updated_timestamp


def test_descriptions_and_tags_of_models_and_versions(registry: MlflowClient, model: str, arca_url: str) -> None:
    # When
    registry.update_registered_model(model, "scores card payments")
    registry.set_registered_model_tag(model, "team", "risk")
    registry.set_registered_model_tag(model, "gone", "soon")
    registry.delete_registered_model_tag(model, "gone")
    registry.set_model_version_tag(model, "1", "validated", "yes")
    registry.update_model_version(model, "1", "the first one")
    # Then MLflow reads them back
    found = registry.get_registered_model(model)
    assert (found.description, found.tags) == ("scores card payments", {"team": "risk"})
    version = registry.get_model_version(model, "1")
    assert (version.description, version.tags) == ("the first one", {"validated": "yes"})
    # and they are Arca's description and tags (the version's description is a tag of its own)
    with Client(arca_url) as arca:
        summary = arca.get_artifact(model)
        tags = arca.get_version(model, 1).tags
    assert (summary.description, summary.tags) == ("scores card payments", {"team": "risk"})
    assert tags == {"validated": "yes", "mlflow.description": "the first one"}
    # Clearing the version's description removes the tag
    registry.update_model_version(model, "1", "")
    assert registry.get_model_version(model, "1").description is None


def test_aliases_are_arca_aliases_with_their_history(registry: MlflowClient, model: str, arca_url: str) -> None:
    # When
    registry.set_registered_model_alias(model, "champion", "1")
    first = registry.get_model_version_by_alias(model, "champion")
    registry.set_registered_model_alias(model, "champion", "2")
    second = registry.get_model_version_by_alias(model, "champion")
    # Then
    assert (first.version, second.version) == ("1", "2")
    assert registry.get_registered_model(model).aliases == {"champion": "2"}
    assert registry.get_model_version(model, "2").aliases == ["champion"]
    with Client(arca_url) as arca:
        history = list(arca.iter_alias_history(model, "champion"))
    assert [(r.revision, r.version) for r in history] == [(2, 2), (1, 1)]
    assert all("MLflow" in (r.reason or "") for r in history)
    # Deleting it is kept in the history; deleting it again changes nothing, as in MLflow
    registry.delete_registered_model_alias(model, "champion")
    registry.delete_registered_model_alias(model, "champion")
    with pytest.raises(MlflowException) as missing:
        registry.get_model_version_by_alias(model, "champion")
    assert _code(missing) == "INVALID_PARAMETER_VALUE"
    # "latest" is the newest version, as MLflow's stores answer it
    assert registry.get_model_version_by_alias(model, "latest").version == "2"


def test_a_download_uri_names_the_version_in_arca(registry: MlflowClient, model: str, arca_url: str) -> None:
    uri = registry.get_model_version_download_uri(model, "2")
    assert uri == f"arca+{arca_url}/artifacts/{model}/versions/2"
    assert parse_version_uri(uri)[1:] == (model, 2)


def test_an_alias_with_a_canary_splits_by_routing_key_and_each_key_keeps_its_side(
    registry: MlflowClient, model: str, arca_url: str
) -> None:
    # Given champion at 1 with 2 as a 50% canary
    with Client(arca_url) as arca:
        arca.set_alias(model, "champion", 1, secondary_version=2, secondary_version_weight=50)
    # When each of several hosts (routing keys) loads by alias, twice
    served = {}
    for key in (f"host-{n}" for n in range(24)):
        client = MlflowClient(registry_uri=f"arca+{arca_url}?routing_key={key}")
        twice = {client.get_model_version_by_alias(model, "champion").version for _ in range(2)}
        assert len(twice) == 1  # sticky
        served[key] = twice.pop()
    # Then both sides serve some hosts
    assert set(served.values()) == {"1", "2"}


def test_search_filters_by_name_and_tags_and_pages(
    registry: MlflowClient, model: str, unique: str, arca_url: str
) -> None:
    # Given a second model, and tags
    with Client(arca_url) as arca:
        other = f"{unique}-churn"
        arca.publish(other, __file__)
    registry.set_registered_model_tag(model, "team", "risk")
    registry.set_model_version_tag(model, "2", "validated", "yes")
    # Registered models
    by_prefix = registry.search_registered_models(f"name LIKE '{unique}%'", order_by=["name ASC"])
    assert [m.name for m in by_prefix] == [other, model]
    assert [m.name for m in registry.search_registered_models(f"name = '{model}'")] == [model]
    tagged = registry.search_registered_models(f"tags.team = 'risk' AND name LIKE '{unique}%'")
    assert [m.name for m in tagged] == [model]
    first = registry.search_registered_models(f"name LIKE '{unique}%'", max_results=1, order_by=["name DESC"])
    second = registry.search_registered_models(
        f"name LIKE '{unique}%'", max_results=1, order_by=["name DESC"], page_token=first.token
    )
    assert ([m.name for m in first], [m.name for m in second], second.token) == ([model], [other], None)
    # Versions
    versions = registry.search_model_versions(f"name = '{model}'", order_by=["version_number ASC"])
    assert [v.version for v in versions] == ["1", "2"]
    hits = registry.search_model_versions(f"tags.validated = 'yes' AND name = '{model}'")
    assert [(v.name, v.version) for v in hits] == [(model, "2")]
    assert [v.version for v in registry.search_model_versions(f"tags.validated = 'yes' AND name LIKE '{unique}%'")] == [
        "2"
    ]


def test_a_refused_alias_move_is_an_mlflow_exception_carrying_the_violations(
    registry: MlflowClient, model: str, arca_url: str
) -> None:
    # Given champion may only point at a version tagged validated=yes
    with Client(arca_url) as arca:
        arca.set_policy(model, "champion", require_tags={"validated": "yes"})
    # When
    with pytest.raises(MlflowException) as refused:
        registry.set_registered_model_alias(model, "champion", "1")
    # Then
    assert _code(refused) == "PERMISSION_DENIED"
    violations = refused.value.json_kwargs["violations"]
    assert [v["rule"] for v in violations] == ["require_tags"]
    assert "require_tags" in refused.value.message
    # and once the version carries the tag, the same move passes
    registry.set_model_version_tag(model, "1", "validated", "yes")
    registry.set_registered_model_alias(model, "champion", "1")
    assert registry.get_model_version_by_alias(model, "champion").version == "1"


def test_what_arca_does_not_map_is_a_clear_mlflow_exception(registry: MlflowClient, model: str) -> None:
    cases = {
        "INVALID_PARAMETER_VALUE": [
            lambda: registry.transition_model_version_stage(model, "1", "Production"),
            lambda: registry.get_latest_versions(model, ["Staging"]),
            lambda: registry.get_registered_model("Fraud Model"),  # outside Arca's name grammar
            lambda: registry.set_registered_model_tag(model, "Team", "x"),  # outside Arca's tag keys
            lambda: registry.update_registered_model(model, "x" * 1025),  # longer than Arca keeps
            lambda: registry.set_model_version_tag(model, "1", "mlflow.description", "x"),  # reserved
            lambda: registry.set_registered_model_alias(model, "v3", "1"),  # reserved by MLflow
            lambda: registry.get_model_version(model, "one"),
        ],
        "NOT_IMPLEMENTED": [
            lambda: registry.rename_registered_model(model, f"{model}-renamed"),
            lambda: registry.create_prompt("greeting"),
            lambda: registry.list_webhooks(),
        ],
        "RESOURCE_DOES_NOT_EXIST": [
            lambda: registry.get_registered_model(f"{model}-missing"),
            lambda: registry.get_model_version(model, "9"),
            lambda: registry.set_model_version_tag(model, "9", "k", "v"),
        ],
    }
    for code, calls in cases.items():
        for call in calls:
            with pytest.raises(MlflowException) as refused:
                call()
            assert (_code(refused), bool(refused.value.message)) == (code, True), refused.value.message
    # Staying in stage "None" is no change at all
    assert registry.transition_model_version_stage(model, "1", "None").current_stage == "None"


def test_a_version_an_alias_serves_is_not_deleted(registry: MlflowClient, model: str) -> None:
    # Given
    registry.set_registered_model_alias(model, "champion", "1")
    # When
    with pytest.raises(MlflowException) as refused:
        registry.delete_model_version(model, "1")
    # Then
    assert _code(refused) == "RESOURCE_CONFLICT"
    assert refused.value.json_kwargs["aliases"] == ["champion"]
    # and a version no alias serves is deleted (soft), then not found
    registry.delete_model_version(model, "2")
    with pytest.raises(MlflowException) as gone:
        registry.get_model_version(model, "2")
    assert _code(gone) == "RESOURCE_DOES_NOT_EXIST"


def test_deleting_a_registered_model_purges_the_artifact(registry: MlflowClient, model: str) -> None:
    registry.delete_registered_model(model)
    with pytest.raises(MlflowException) as gone:
        registry.get_registered_model(model)
    assert _code(gone) == "RESOURCE_DOES_NOT_EXIST"


# Registering through MLflow: trees of files and artifacts with no version.


def _logged_model(tmp_path: Path) -> tuple[str, dict[str, bytes]]:
    """A run whose artifacts hold a model directory (an MLmodel file and two more): its runs:/ URI."""
    files = {
        "MLmodel": b"artifact_path: model\nflavors:\n  python_function:\n    loader_module: m\n",
        "weights/w.bin": os.urandom(2048),
        "requirements.txt": b"numpy\n",
    }
    folder = tmp_path / "model"
    for path, data in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(data)
    with mlflow.start_run() as run:
        mlflow.log_artifacts(str(folder), "model")
    return f"runs:/{run.info.run_id}/model", files


def _tree(folder: str) -> dict[str, bytes]:
    """The files under `folder`, without the `registered_model_meta` MLflow writes beside a models:/ download."""
    root = Path(folder)
    files = {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    files.pop("registered_model_meta", None)
    return files


def test_create_registered_model_makes_an_artifact_with_no_version(registry: MlflowClient, unique: str) -> None:
    name = f"{unique}-empty"
    created = registry.create_registered_model(name, tags={"team": "risk"}, description="not trained yet")
    assert (created.name, created.tags, created.description, created.latest_versions) == (
        name,
        {"team": "risk"},
        "not trained yet",
        [],
    )
    with pytest.raises(MlflowException) as again:
        registry.create_registered_model(name)
    assert _code(again) == "RESOURCE_ALREADY_EXISTS"


def test_register_alias_and_load_by_alias_and_by_number(registry: MlflowClient, unique: str, tmp_path: Path) -> None:
    # Given a logged model
    uri, files = _logged_model(tmp_path)
    name = f"{unique}-registered"
    # When it is registered (its files copied into Arca) and aliased
    version = mlflow.register_model(uri, name, tags={"validated": "yes"})
    registry.set_registered_model_alias(name, "champion", version.version)
    # Then it loads by alias and by number, file for file, and MLflow's record of its origin is kept
    assert _tree(mlflow.artifacts.download_artifacts(f"models:/{name}@champion", dst_path=str(tmp_path / "a"))) == files
    assert _tree(mlflow.artifacts.download_artifacts(f"models:/{name}/1", dst_path=str(tmp_path / "b"))) == files
    found = registry.get_model_version(name, version.version)
    assert (found.run_id, found.tags) == (uri.split("/")[1], {"validated": "yes"})


def test_moving_the_alias_loads_the_new_version_and_arca_keeps_the_history(
    registry: MlflowClient, unique: str, tmp_path: Path, arca_url: str
) -> None:
    name = f"{unique}-moved"
    first, _ = _logged_model(tmp_path / "one")
    second, files = _logged_model(tmp_path / "two")
    for uri in (first, second):
        version = mlflow.register_model(uri, name)
        registry.set_registered_model_alias(name, "champion", version.version)
    loaded = mlflow.artifacts.download_artifacts(f"models:/{name}@champion", dst_path=str(tmp_path / "loaded"))
    assert _tree(loaded) == files
    with Client(arca_url) as arca:
        assert [r.version for r in arca.iter_alias_history(name, "champion")] == [2, 1]


def test_a_copied_model_version_is_a_new_version_of_the_other_model(
    registry: MlflowClient, unique: str, tmp_path: Path
) -> None:
    uri, files = _logged_model(tmp_path)
    source = mlflow.register_model(uri, f"{unique}-source")
    copied = registry.copy_model_version(f"models:/{source.name}/{source.version}", f"{unique}-copy")
    assert copied.version == "1"
    assert _tree(mlflow.artifacts.download_artifacts(f"models:/{unique}-copy/1", dst_path=str(tmp_path / "c"))) == files


def test_a_model_with_no_version_is_read_searched_and_deleted_and_its_first_version_is_1(
    registry: MlflowClient, model: str, unique: str, tmp_path: Path
) -> None:
    # A new name with neither tags nor a description (as mlflow.register_model asks) is an artifact with no version
    name = f"{unique}-later"
    created = registry.create_registered_model(name)
    assert (created.name, created.latest_versions, created.tags) == (name, [], {})
    found = registry.get_registered_model(name)
    assert (found.name, found.latest_versions, found.aliases) == (name, [], {})
    assert registry.get_latest_versions(name) == []
    assert [m.name for m in registry.search_registered_models(f"name = '{name}'")] == [name]
    # Its tags and description change while it has no version, and its first version is 1 and keeps them
    registry.set_registered_model_tag(name, "team", "risk")
    registry.update_registered_model(name, "a model")
    assert [m.name for m in registry.search_registered_models("tags.team = 'risk'")] == [name]
    uri, _ = _logged_model(tmp_path)
    registry.create_model_version(name, uri, run_id=uri.split("/")[1])
    after = registry.get_registered_model(name)
    assert ([v.version for v in after.latest_versions], after.tags, after.description) == (
        ["1"],
        {"team": "risk"},
        "a model",
    )
    # A name that exists is RESOURCE_ALREADY_EXISTS, as MLflow's stores answer
    with pytest.raises(MlflowException) as again:
        registry.create_registered_model(model)
    assert _code(again) == "RESOURCE_ALREADY_EXISTS"
    # A model with no version is deleted
    empty = f"{unique}-deleted"
    registry.create_registered_model(empty, description="never trained")
    registry.delete_registered_model(empty)
    with pytest.raises(MlflowException) as gone:
        registry.get_registered_model(empty)
    assert _code(gone) == "RESOURCE_DOES_NOT_EXIST"


def test_a_version_that_is_one_blob_is_refused_saying_so(registry: MlflowClient, model: str, tmp_path: Path) -> None:
    # The model fixture's versions were published as one file each (arca publish), not as trees of files
    with pytest.raises(MlflowException) as refused:
        mlflow.artifacts.download_artifacts(f"models:/{model}/1", dst_path=str(tmp_path / "blob"))
    assert "not a tree" in refused.value.message or "one blob" in refused.value.message, refused.value.message
