"""MLflow's artifact repository for a version's files in Arca (`arca+http://…/artifacts/NAME/versions/N`).

MLflow loads `models:/name@alias` and `models:/name/3` by asking the registry for the version's download URI and
reading it through this repository. A version never changes, so its file listing (`GET …/versions/{n}/files`) is
read once, a page at a time, and kept; each file is resolved (`GET …/resolve/{n}/files/{path}`), downloaded from
its presigned URL and checked against the size and sha256 listed before it is put in place. A version is written
only by registering it (the registry store copies the model's files): logging artifacts into one is refused.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import NoReturn

from mlflow.entities import FileInfo
from mlflow.exceptions import MlflowException
from mlflow.protos.databricks_pb2 import INVALID_PARAMETER_VALUE, RESOURCE_DOES_NOT_EXIST
from mlflow.store.artifact.artifact_repo import ArtifactRepository

from arca_client.calls.transfers import CHUNK
from arca_client.calls.trees import TreeFile
from arca_client.errors import ArcaError
from arca_client.mlflow.errors import translated
from arca_client.mlflow.uris import SCHEMES, parse_registry, parse_version_uri
from arca_client.sdk import Client
from arca_client.trees import Placement, TreeEntry, receive


class ArcaArtifactRepository(ArtifactRepository):
    def __init__(self, artifact_uri: str, tracking_uri: str | None = None, registry_uri: str | None = None) -> None:
        super().__init__(artifact_uri, tracking_uri, registry_uri)
        registry = parse_registry(registry_uri) if registry_uri and registry_uri.startswith(SCHEMES) else None
        self.registry, self.name, self.version = parse_version_uri(artifact_uri, registry)
        with translated(f"connect to Arca at {self.registry.endpoint}"):
            self.client = Client(self.registry.endpoint, region=self.registry.region, profile=self.registry.profile)
        self._files: dict[str, TreeFile] | None = None
        self._lock = threading.Lock()

    def log_artifact(self, local_file: str, artifact_path: str | None = None) -> None:
        self._immutable()

    def log_artifacts(self, local_dir: str, artifact_path: str | None = None) -> None:
        self._immutable()

    def list_artifacts(self, path: str | None = None) -> list[FileInfo]:
        """What is directly under `path` ("" or None: the root): files with their sizes, folders; [] for a file."""
        files = self._tree()
        prefix = f"{path.strip('/')}/" if path and path.strip("/") else ""
        listed: dict[str, FileInfo] = {}
        for file_path, file in files.items():
            if not file_path.startswith(prefix):
                continue
            child, _, deeper = file_path[len(prefix) :].partition("/")
            full = prefix + child
            listed.setdefault(full, FileInfo(full, True, None) if deeper else FileInfo(full, False, file.size))
        return sorted(listed.values(), key=lambda info: info.path)

    def _download_file(self, remote_file_path: str, local_path: str) -> None:
        file = self._tree().get(remote_file_path.strip("/"))
        if file is None:
            raise MlflowException(
                f"version {self.version} of {self.name} has no file {remote_file_path!r}", RESOURCE_DOES_NOT_EXIST
            )
        with translated(f"download {remote_file_path} of version {self.version} of {self.name}"):
            answer = self.client.resolve_file(self.name, self.version, file.path)
            response = self.client.transport.send("GET", answer["download_url"], sign=False, stream=True)
            entry = TreeEntry(file.path, file.sha256, file.size)
            with response:
                if response.status_code != 200:
                    raise ArcaError(
                        f"the download URL of {file.path} answered HTTP {response.status_code}", code="BadResponse"
                    )
                receive(Placement(entry, Path(local_path), present=False), response.iter_content(CHUNK))

    def delete_artifacts(self, artifact_path: str | None = None) -> None:
        self._immutable()

    def _tree(self) -> dict[str, TreeFile]:
        with self._lock:
            if self._files is None:
                with translated(f"list the files of version {self.version} of {self.name}"):
                    self._files = {f.path: f for f in self.client.iter_files(self.name, self.version)}
            return self._files

    def _immutable(self) -> NoReturn:
        raise MlflowException(
            f"version {self.version} of {self.name} is immutable in Arca: register the model again to make a new "
            "version (its files are copied at registration)",
            INVALID_PARAMETER_VALUE,
        )
