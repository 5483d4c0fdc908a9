"""Arca as an OCI registry: the real clients (oras-py, skopeo) against `make local`'s server, unchanged.

oras-py pushes files and pulls them back byte for byte, lists tags; skopeo copies an OCI layout into Arca and back
out. What they push is Arca's own model underneath: a version whose files are the layers, an alias per tag.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import requests

from tests.e2e.test_cli import Cli, cli
from tests.oci.harness import (
    Registry,
    debian_tool,
    layout_files,
    make_layout,
    manifest_head,
    oras_attach,
    oras_client,
    oras_pull,
    oras_push,
    oras_tags,
    skopeo_copy,
)
from tests.oci.servers import Recorder

pytestmark = pytest.mark.xdist_group("oci")
__all__ = ["cli"]  # the CLI tests' fixture


@pytest.fixture(scope="module")
def registry(arca_url: str) -> Iterator[Registry]:
    yield Registry(urlsplit(arca_url).netloc, Recorder(), "arca")


@pytest.fixture
def repo() -> str:
    return f"oci/e2e-{uuid.uuid4().hex[:10]}"


def _files(tmp_path: Path, folder_name: str = "in", extra: bytes = b"") -> list[Path]:
    folder = tmp_path / folder_name
    folder.mkdir()
    contents = {
        "model.bin": bytes(range(256)) * 4000,
        "config.json": b'{"layers": 12}',
        "README.md": b"# hello\n" + extra,
    }
    paths = []
    for name, content in contents.items():
        path = folder / name
        path.write_bytes(content)
        paths.append(path)
    return paths


def test_oras_pushes_files_and_pulls_them_back_byte_identical(
    registry: Registry, repo: str, tmp_path: Path, arca_url: str
) -> None:
    files = _files(tmp_path)
    answer = oras_push(registry, f"{repo}:v1", files)
    assert answer.status_code == 201
    digest = answer.headers["Docker-Content-Digest"]

    pulled = oras_pull(registry, f"{repo}:v1", tmp_path / "out")
    assert pulled == {f.name: f.read_bytes() for f in files}

    # Underneath: a version whose sha256 is the manifest's digest, whose files are the manifest's (config and
    # layers), and an alias `v1` pointing at it.
    version = requests.get(f"{arca_url}/artifacts/{repo}/versions/1", timeout=30).json()
    assert version["sha256"] == digest.removeprefix("sha256:")
    assert version["files"] == 4  # three layers and the config
    assert version["size"] == sum(f.stat().st_size for f in files) + 2
    alias = requests.get(f"{arca_url}/artifacts/{repo}/aliases/v1", timeout=30).json()
    assert alias["version"] == 1

    # The manifest by digest, by version number and by LATEST is the same bytes.
    served = [
        requests.get(f"{arca_url}/v2/{repo}/manifests/{ref}", timeout=30) for ref in (digest, "1", "LATEST", "v1")
    ]
    assert {r.status_code for r in served} == {200}
    assert {hashlib.sha256(r.content).hexdigest() for r in served} == {digest.removeprefix("sha256:")}
    head = requests.head(f"{arca_url}/v2/{repo}/manifests/v1", timeout=30)
    assert head.headers["Content-Length"] == str(len(served[0].content))
    assert head.headers["Docker-Content-Digest"] == digest


def test_arca_download_of_a_pushed_tag_writes_its_files_each_checked(
    registry: Registry, repo: str, tmp_path: Path, cli: Cli
) -> None:
    # Given files pushed by oras-py as `v1`
    files = _files(tmp_path)
    assert oras_push(registry, f"{repo}:v1", files).status_code == 201
    # When `arca download` fetches the tag into a directory
    ran = cli("download", f"{repo}@v1", "-o", str(tmp_path / "out"), "--json")
    # Then every file of the manifest is there byte for byte (the layers by title, the config by digest)
    assert ran.code == 0, ran.err
    assert ran.json()["files"] == 4
    for f in files:
        assert (tmp_path / "out" / f.name).read_bytes() == f.read_bytes()
    assert (tmp_path / "out" / "blobs" / "sha256" / hashlib.sha256(b"{}").hexdigest()).read_bytes() == b"{}"


def test_a_second_push_of_the_same_files_publishes_nothing_and_tags_list_in_order(
    registry: Registry, repo: str, tmp_path: Path, arca_url: str
) -> None:
    files = _files(tmp_path)
    first = oras_push(registry, f"{repo}:b-tag", files)
    second = oras_push(registry, f"{repo}:a-tag", files)
    assert first.headers["Docker-Content-Digest"] == second.headers["Docker-Content-Digest"]
    versions = requests.get(f"{arca_url}/artifacts/{repo}/versions", timeout=30).json()["versions"]
    assert len(versions) == 1

    assert oras_tags(registry, repo) == ["a-tag", "b-tag"]
    page = requests.get(f"{arca_url}/v2/{repo}/tags/list?n=1", timeout=30)
    assert page.json() == {"name": repo, "tags": ["a-tag"]}
    assert page.headers["Link"] == f'</v2/{repo}/tags/list?last=a-tag&n=1>; rel="next"'
    rest = requests.get(f"{arca_url}/v2/{repo}/tags/list?n=1&last=a-tag", timeout=30)
    assert rest.json()["tags"] == ["b-tag"] and "Link" not in rest.headers

    deleted = requests.delete(f"{arca_url}/v2/{repo}/manifests/a-tag", timeout=30)
    assert deleted.status_code == 202
    assert oras_tags(registry, repo) == ["b-tag"]
    refused = requests.delete(f"{arca_url}/v2/{repo}/manifests/{first.headers['Docker-Content-Digest']}", timeout=30)
    assert refused.status_code == 409
    assert refused.json()["errors"][0]["code"] == "DENIED"


def test_skopeo_copies_a_layout_into_arca_and_back_out(registry: Registry, repo: str, tmp_path: Path) -> None:
    skopeo = debian_tool("skopeo", "skopeo")
    layout = make_layout(tmp_path / "src", "v1", {"a.txt": b"alpha\n" * 1000, "b.bin": bytes(range(256)) * 100})
    pushed = skopeo_copy(skopeo, layout.reference, f"docker://{registry.host}/{repo}:v1")
    assert pushed == layout.manifest_digest

    skopeo_copy(skopeo, f"docker://{registry.host}/{repo}:v1", f"oci:{tmp_path / 'back'}:v1")
    assert layout_files(tmp_path / "back", "v1") == layout.layers
    index = json.loads((tmp_path / "back" / "index.json").read_text())
    assert index["manifests"][0]["digest"] == layout.manifest_digest


def test_a_chunked_upload_session_stores_the_blob(registry: Registry, repo: str, arca_url: str) -> None:
    content = b"chunk-one," * 1000 + b"chunk-two"
    digest = "sha256:" + hashlib.sha256(content).hexdigest()
    started = requests.post(f"{arca_url}/v2/{repo}/blobs/uploads/", timeout=30)
    assert started.status_code == 202
    location = arca_url + started.headers["Location"]
    first = requests.patch(
        location, data=content[:10000], headers={"Content-Range": "0-9999", "Content-Type": "application/octet-stream"}
    )
    assert first.status_code == 202 and first.headers["Range"] == "0-9999"
    out_of_order = requests.patch(location, data=b"x", headers={"Content-Range": "5-5"}, timeout=30)
    assert out_of_order.status_code == 416
    assert requests.get(location, timeout=30).headers["Range"] == "0-9999"
    done = requests.put(f"{location}?digest={digest}", data=content[10000:], timeout=30)
    assert done.status_code == 201, done.text
    head = requests.head(f"{arca_url}/v2/{repo}/blobs/{digest}", timeout=30)
    assert head.status_code == 200 and head.headers["Content-Length"] == str(len(content))
    fetched = requests.get(f"{arca_url}/v2/{repo}/blobs/{digest}", timeout=30)
    assert fetched.content == content
    assert requests.get(location, timeout=30).status_code == 404


def test_another_callers_session_is_unknown(repo: str, arca_url: str) -> None:
    started = requests.post(f"{arca_url}/v2/{repo}/blobs/uploads/", timeout=30)
    location = arca_url + started.headers["Location"]
    other = requests.patch(location, data=b"x", headers={"X-Arca-Local-User": "mallory"}, timeout=30)
    assert other.status_code == 404
    assert other.json()["errors"][0]["code"] == "BLOB_UPLOAD_UNKNOWN"
    assert requests.delete(location, timeout=30).status_code == 204


def test_oras_attach_is_an_attestation_listed_among_the_subjects_referrers(
    registry: Registry, repo: str, tmp_path: Path, arca_url: str
) -> None:
    sbom_type = "application/vnd.example.sbom.v1+json"
    oras_push(registry, f"{repo}:v1", _files(tmp_path))
    oras_push(registry, f"{repo}:v2", _files(tmp_path, "v2", extra=b"v2"))
    subject, _, _ = manifest_head(registry, repo, "v2")
    # Given a policy on `prod` (at version 1) that requires an SBOM: moving it to version 2 is refused
    requests.put(f"{arca_url}/artifacts/{repo}/aliases/prod", json={"version": 1}, timeout=30).raise_for_status()
    policy = {"require_attestations": [sbom_type]}
    requests.put(f"{arca_url}/artifacts/{repo}/aliases/prod/policy", json=policy, timeout=30).raise_for_status()
    refused = requests.put(f"{arca_url}/artifacts/{repo}/aliases/prod", json={"version": 2}, timeout=30)
    assert refused.status_code == 403, refused.text
    sbom = tmp_path / "sbom.json"
    sbom.write_text('{"packages": []}')
    # When oras attaches an SBOM to v2
    attached = oras_attach(registry, repo, "v2", sbom_type, [sbom], {"org.example.format": "spdx"})
    # Then it is recorded against the subject, listed among its referrers and fetched by its digest
    assert attached.status_code == 201, attached.text
    assert attached.headers["OCI-Subject"] == subject
    digest = attached.headers["Docker-Content-Digest"]
    listed = requests.get(f"{arca_url}/v2/{repo}/referrers/{subject}", timeout=30)
    [referrer] = listed.json()["manifests"]
    assert (referrer["digest"], referrer["artifactType"]) == (digest, sbom_type)
    assert referrer["annotations"] == {"org.example.format": "spdx"}
    fetched = requests.get(f"{arca_url}/v2/{repo}/manifests/{digest}", timeout=30)
    assert fetched.status_code == 200 and hashlib.sha256(fetched.content).hexdigest() == digest.split(":")[1]
    # And it is no version, but an attestation of version 2, which the policy counts
    assert manifest_head(registry, repo, "LATEST")[0] == subject
    attestations = requests.get(f"{arca_url}/artifacts/{repo}/versions/2/attestations", timeout=30).json()
    assert [a["type"] for a in attestations["attestations"]] == [sbom_type]
    moved = requests.put(f"{arca_url}/artifacts/{repo}/aliases/prod", json={"version": 2}, timeout=30)
    assert moved.status_code == 200, moved.text


HELM_CONFIG = "application/vnd.cncf.helm.config.v1+json"
HELM_CHART = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"


def _chart(version: str, replicas: int) -> bytes:
    """A small chart as `helm package` writes it: a gzipped tar of `mychart/` (Chart.yaml, values.yaml,
    templates/)."""
    files = {
        "mychart/Chart.yaml": f"apiVersion: v2\nname: mychart\nversion: {version}\ntype: application\n".encode(),
        "mychart/values.yaml": f"replicaCount: {replicas}\n".encode(),
        "mychart/templates/deployment.yaml": b"kind: Deployment\nspec:\n  replicas: {{ .Values.replicaCount }}\n",
    }
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, content in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
    return out.getvalue()


def _helm_push(registry: Registry, repo: str, chart: bytes, tmp_path: Path) -> tuple[requests.Response, bytes]:
    """What `helm push mychart-0.1.0.tgz oci://<registry>/<repo>` sends, through oras-py: the chart's metadata as
    the config (Chart.yaml as JSON), the .tgz as the one layer (no title), the manifest's annotations, tagged with
    the chart's version. Answers the manifest PUT and the config's bytes."""
    client = oras_client(registry)
    container = client.get_container(f"{registry.host}/{repo}/mychart:0.1.0")
    config = json.dumps(
        {"name": "mychart", "version": "0.1.0", "apiVersion": "v2", "type": "application"}, separators=(",", ":")
    ).encode()
    descriptors = []
    for content, media_type in ((config, HELM_CONFIG), (chart, HELM_CHART)):
        path = tmp_path / hashlib.sha256(content).hexdigest()
        path.write_bytes(content)
        descriptor = {"mediaType": media_type, "digest": _sha256(content), "size": len(content)}
        answer = client.upload_blob(str(path), container, descriptor)
        assert answer.status_code in (200, 201), answer.text
        descriptors.append(descriptor)
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": descriptors[0],
        "layers": descriptors[1:],
        "annotations": {
            "org.opencontainers.image.created": "2026-11-27T00:00:00Z",
            "org.opencontainers.image.title": "mychart",
            "org.opencontainers.image.version": "0.1.0",
        },
    }
    answer = client.upload_manifest(manifest, container)
    assert isinstance(answer, requests.Response)
    return answer, config


def _sha256(content: bytes) -> str:
    return "sha256:" + hashlib.sha256(content).hexdigest()


def test_a_helm_chart_pushed_as_helm_lays_it_out_pulls_back_and_its_version_is_an_alias(
    registry: Registry, repo: str, tmp_path: Path, arca_url: str
) -> None:
    # Given a chart pushed as helm pushes it, tagged with its version
    chart = _chart("0.1.0", 1)
    pushed, config = _helm_push(registry, repo, chart, tmp_path)
    assert pushed.status_code == 201, pushed.text
    digest = pushed.headers["Docker-Content-Digest"]
    # When pulled back as helm pulls it (the manifest by tag, then its config and the chart by digest)
    client = oras_client(registry)
    container = client.get_container(f"{registry.host}/{repo}/mychart:0.1.0")
    manifest = client.get_manifest(container)
    # Then the media types and bytes are the pushed ones
    assert manifest["config"]["mediaType"] == HELM_CONFIG
    assert [layer["mediaType"] for layer in manifest["layers"]] == [HELM_CHART]
    assert client.get_blob(container, manifest["config"]["digest"]).content == config
    assert client.get_blob(container, manifest["layers"][0]["digest"]).content == chart
    with tarfile.open(fileobj=io.BytesIO(chart)) as tar:
        assert sorted(tar.getnames()) == [
            "mychart/Chart.yaml",
            "mychart/templates/deployment.yaml",
            "mychart/values.yaml",
        ]
    assert manifest_head(registry, f"{repo}/mychart", "0.1.0")[0] == digest
    # And the chart's version is an alias with history: a second push of 0.1.0 moves it, the first stays listed
    assert _helm_push(registry, repo, _chart("0.1.0", 3), tmp_path)[0].status_code == 201
    name = f"{repo}/mychart"
    alias = requests.get(f"{arca_url}/artifacts/{name}/aliases/0.1.0", timeout=30).json()
    assert alias["version"] == 2
    history = requests.get(f"{arca_url}/artifacts/{name}/aliases/0.1.0/history", timeout=30).json()
    assert [entry["version"] for entry in history["history"]] == [2, 1]
    first = requests.get(f"{arca_url}/artifacts/{name}/versions/1", timeout=30).json()
    assert first["sha256"] == digest.removeprefix("sha256:")


def test_basic_credentials_name_the_local_user(repo: str, arca_url: str) -> None:
    # Given a session opened by an OCI client logged in as alice (Basic credentials, which local mode never checks)
    started = requests.post(f"{arca_url}/v2/{repo}/blobs/uploads/", auth=("alice", "anything"), timeout=30)
    location = arca_url + started.headers["Location"]
    # Then alice finds it, an anonymous client (the default local user) does not, nor bob
    assert requests.get(location, auth=("alice", "other"), timeout=30).status_code == 204
    assert requests.get(location, timeout=30).status_code == 404
    assert requests.get(location, auth=("bob", "anything"), timeout=30).status_code == 404
    assert requests.get(location, headers={"X-Arca-Local-User": "alice"}, timeout=30).status_code == 204


def test_a_blob_over_one_requests_bound_is_413_in_ocis_shape_naming_the_proxy(repo: str, arca_url: str) -> None:
    # Over what Lambda takes (the dispatcher's bound), and over what API Gateway takes (the local server's own)
    for size in (4_669_441, 10 * 1024 * 1024 + 1):
        content = b"x" * size
        digest = "sha256:" + hashlib.sha256(content).hexdigest()
        answer = requests.post(f"{arca_url}/v2/{repo}/blobs/uploads/", params={"digest": digest}, data=content)
        assert answer.status_code == 413
        [error] = answer.json()["errors"]
        assert error["code"] == "SIZE_INVALID" and "push through `arca proxy`" in error["message"], error
        assert answer.headers["Docker-Distribution-API-Version"] == "registry/2.0"
    assert requests.head(f"{arca_url}/v2/{repo}/blobs/{digest}", timeout=30).status_code == 404
