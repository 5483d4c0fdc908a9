"""The MLflow plugin (arca_client.mlflow) without a server: its entry points, URIs, errors and search narrowing, and
MLflow's own register-and-load flow through it against a stand-in for the routes the API does not serve yet
(tests/client/mlflow_fake_api.py). Against local mode: tests/e2e/test_mlflow_registry.py."""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterator
from pathlib import Path

import mlflow
import pytest
from mlflow import MlflowClient
from mlflow.exceptions import MlflowException
from mlflow.store.artifact.artifact_repository_registry import get_artifact_repository
from mlflow.store.model_registry.abstract_store import AbstractStore
from mlflow.tracking._model_registry.utils import _get_store_registry

from arca_client.errors import AccessDeniedError, ArcaError, ConflictError, NotFoundError, ValidationError
from arca_client.mlflow.artifacts import ArcaArtifactRepository
from arca_client.mlflow.errors import translate
from arca_client.mlflow.search import Narrowing
from arca_client.mlflow.store import ArcaRegistryStore
from arca_client.mlflow.uris import Registry, parse_registry, parse_version_uri
from tests.client.mlflow_fake_api import FakeApi, serving

# What ArcaRegistryStore inherits from AbstractStore on purpose: built on the methods it implements.
INHERITED = {"copy_model_version", "supports_workspaces"}


def test_every_method_of_mlflows_registry_store_is_implemented_or_refused() -> None:
    # AbstractStore's metaclass is written the Python 2 way, so nothing enforces its abstract methods: check here
    public = {n for n, _ in inspect.getmembers(AbstractStore) if not n.startswith("_")}
    abstract = {n for n in public if getattr(getattr(AbstractStore, n), "__isabstractmethod__", False)}
    overridden = {n for n in public if getattr(ArcaRegistryStore, n) is not getattr(AbstractStore, n)}
    assert len(abstract) == 21
    assert abstract <= overridden
    assert public - overridden == INHERITED


def test_mlflow_finds_the_store_and_the_repository_by_their_schemes(tmp_path: Path) -> None:
    for scheme in ("arca+http", "arca+https"):
        builder = _get_store_registry().get_store_builder(f"{scheme}://127.0.0.1:3000")
        assert builder is ArcaRegistryStore
    repository = get_artifact_repository("arca+http://127.0.0.1:3000/artifacts/fraud/versions/3")
    assert isinstance(repository, ArcaArtifactRepository)
    assert (repository.name, repository.version) == ("fraud", 3)


# URIs.


def test_a_registry_uri_names_the_endpoint_and_how_to_sign() -> None:
    found = parse_registry("arca+https://abc.execute-api.eu-west-1.amazonaws.com/prod/?profile=ml&routing_key=h1")
    assert found == Registry("https://abc.execute-api.eu-west-1.amazonaws.com/prod", None, "ml", "h1")
    assert (
        found.version_uri("fraud", 3)
        == "arca+https://abc.execute-api.eu-west-1.amazonaws.com/prod/artifacts/fraud/versions/3"
    )


@pytest.mark.parametrize("uri", ["http://127.0.0.1:3000", "arca+http://", "arca+http://h?colour=red"])
def test_other_uris_are_refused_naming_the_form(uri: str) -> None:
    with pytest.raises(MlflowException) as refused:
        parse_registry(uri)
    assert refused.value.error_code == "INVALID_PARAMETER_VALUE"


def test_a_version_uri_reads_back_under_a_stage_path_and_even_one_named_artifacts() -> None:
    registry = parse_registry("arca+https://h.example/artifacts")
    uri = registry.version_uri("team/fraud", 12)
    assert parse_version_uri(uri, registry) == (registry, "team/fraud", 12)
    assert parse_version_uri("arca+http://h:3000/prod/artifacts/fraud/versions/1")[1:] == ("fraud", 1)
    with pytest.raises(MlflowException):
        parse_version_uri("arca+http://h:3000/prod/artifacts/fraud/aliases/prod")


# Errors.


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (ValidationError("bad", code="ValidationError", status=400), "INVALID_PARAMETER_VALUE"),
        (NotFoundError("gone", code="NotFoundError", status=404), "RESOURCE_DOES_NOT_EXIST"),
        (ConflictError("busy", code="ContentionError", status=409), "RESOURCE_CONFLICT"),
        (ArcaError("no", code="MethodNotAllowed", status=405), "NOT_IMPLEMENTED"),
        (ArcaError("odd", code="HTTP418", status=418), "INTERNAL_ERROR"),
    ],
)
def test_each_arca_error_has_mlflows_code_for_it(error: ArcaError, code: str) -> None:
    translated = translate(error, "do it")
    assert (translated.error_code, translated.json_kwargs["arca_code"]) == (code, error.code)
    assert translated.message.startswith("do it: ")


def test_a_policy_refusal_carries_every_violation() -> None:
    violations = [
        {"rule": "require_tags", "message": "validated=yes is missing"},
        {"rule": "approvals", "message": "1"},
    ]
    error = AccessDeniedError("refused", code="PolicyViolation", status=403, details={"violations": violations})
    translated = translate(error, "point champion at 3")
    assert translated.error_code == "PERMISSION_DENIED"
    assert translated.json_kwargs["violations"] == violations
    assert "require_tags: validated=yes is missing; approvals: 1" in translated.message


# Search.


def test_search_narrows_by_name_prefix_and_tag() -> None:
    from mlflow.utils.search_utils import SearchModelVersionUtils

    def narrowing(text: str) -> Narrowing:
        return Narrowing.of(SearchModelVersionUtils.parse_search_filter(text))

    assert narrowing("name = 'a' AND tags.k = 'v'") == Narrowing(frozenset({"a"}), None, ("k", "v"))
    assert narrowing("name IN ('a', 'b') AND name = 'b'").names == frozenset({"b"})
    assert narrowing("name LIKE 'team_x%'").prefix == "team"  # `_` is LIKE's one-character wildcard
    assert narrowing("name ILIKE 'A%'") == Narrowing()
    assert narrowing("tags.Bad = 'v'").arca_tag() is False  # a key no Arca tag can have
    assert narrowing("name = 'Not Arca'").arca_names() == []


# MLflow's flows through the plugin, against the stand-in API.


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeApi]:
    api = FakeApi()
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    monkeypatch.setenv("ARCA_SIGN", "0")
    with serving(api) as url:
        mlflow.set_tracking_uri((tmp_path / "mlruns").as_uri())
        mlflow.set_registry_uri(f"arca+{url}")
        yield api
        mlflow.set_registry_uri(None)  # type: ignore[arg-type]
        mlflow.set_tracking_uri(None)  # type: ignore[arg-type]


def _logged(tmp_path: Path) -> tuple[str, dict[str, bytes]]:
    files = {"MLmodel": b"flavors: {}\n", "data/weights.bin": os.urandom(3000), "data/config.json": b"{}"}
    folder = tmp_path / "logged"
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


def test_register_copies_the_files_and_models_uris_load_them(fake: FakeApi, tmp_path: Path) -> None:
    # Given a logged model
    uri, files = _logged(tmp_path)
    # When MLflow registers it (an empty artifact, then a version: a tree of the files) and aliases it
    version = mlflow.register_model(uri, "fraud", tags={"validated": "yes"})
    MlflowClient().set_registered_model_alias("fraud", "champion", version.version)
    # Then the files are Arca's, with MLflow's record of their origin in the version's metadata
    published = fake.artifacts["fraud"].versions[1]
    assert published["metadata"]["mlflow.run_id"] == uri.split("/")[1]
    assert published["metadata"]["mlflow.source"].endswith("/artifacts/model")
    assert sorted(f["path"] for f in fake.artifacts["fraud"].files[1]) == sorted(files)
    # and models:/ URIs load them back, each file checked
    assert _tree(mlflow.artifacts.download_artifacts("models:/fraud@champion", dst_path=str(tmp_path / "a"))) == files
    assert _tree(mlflow.artifacts.download_artifacts("models:/fraud/1", dst_path=str(tmp_path / "b"))) == files
    assert _tree(mlflow.artifacts.download_artifacts("models:/fraud/1/data", dst_path=str(tmp_path / "c"))) == {
        "weights.bin": files["data/weights.bin"],
        "config.json": files["data/config.json"],
    }
    found = MlflowClient().get_model_version("fraud", "1")
    assert (found.tags, found.run_id, found.status) == ({"validated": "yes"}, uri.split("/")[1], "READY")


def test_registering_again_is_a_new_version_and_content_already_stored_is_not_sent(
    fake: FakeApi, tmp_path: Path
) -> None:
    uri, _ = _logged(tmp_path)
    mlflow.register_model(uri, "fraud")
    puts = sum(1 for method, path in fake.requests if method == "PUT" and path.startswith("/blobs/"))
    # When
    second = mlflow.register_model(uri, "fraud")
    # Then
    assert second.version == "2"
    assert sum(1 for method, path in fake.requests if method == "PUT" and path.startswith("/blobs/")) == puts


def test_a_tampered_file_is_refused_and_not_kept(fake: FakeApi, tmp_path: Path) -> None:
    # Given a registered model whose stored bytes no longer match the sha256 listed
    uri, _ = _logged(tmp_path)
    mlflow.register_model(uri, "fraud")
    listed = next(f for f in fake.artifacts["fraud"].files[1] if f["path"] == "MLmodel")
    fake.blobs[listed["sha256"]] = b"flavors: {evil: true}\n"
    # When
    with pytest.raises(MlflowException) as refused:
        mlflow.artifacts.download_artifacts("models:/fraud/1", dst_path=str(tmp_path / "d"))
    # Then
    assert "ChecksumMismatch" in refused.value.message or "sha256" in refused.value.message
    assert not (tmp_path / "d" / "MLmodel").exists()


def test_a_version_is_immutable_through_the_artifact_repository(fake: FakeApi, tmp_path: Path) -> None:
    uri, _ = _logged(tmp_path)
    mlflow.register_model(uri, "fraud")
    repository = get_artifact_repository(MlflowClient().get_model_version_download_uri("fraud", "1"))
    with pytest.raises(MlflowException) as refused:
        repository.log_artifact(__file__)
    assert refused.value.error_code == "INVALID_PARAMETER_VALUE"
    assert [(i.path, i.is_dir) for i in repository.list_artifacts("")] == [
        ("MLmodel", False),
        ("data", True),
    ]
    assert repository.list_artifacts("MLmodel") == []
