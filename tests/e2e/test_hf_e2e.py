"""The real `huggingface_hub` against a local Arca over HTTP: a directory published with the SDK downloads back
byte-identical with `snapshot_download` and `hf_hub_download` (by alias, version number and `main`), the files on
another origin (moto's S3, as a presigned URL is on AWS), and a missing repo, revision or file raises the client's
own error."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import huggingface_hub
import pytest
import requests
from huggingface_hub import HfApi, hf_hub_download, snapshot_download
from huggingface_hub.errors import EntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError

from arca_client import Client
from arca_client.trees import HashCache

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

V1 = {
    "config.json": b'{"hidden": 64}\n',
    "tokenizer/vocab.txt": b"a\nb\nc\n",
    "weights/model.safetensors": bytes(range(256)) * 64,
}
V2 = {**V1, "config.json": b'{"hidden": 128}\n', "README.md": b"# two\n"}


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    huggingface_hub.utils.disable_progress_bars()
    yield
    huggingface_hub.utils.enable_progress_bars()


def _write(root: Path, files: dict[str, bytes]) -> Path:
    for path, data in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    return root


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def repo(arca_url: str, unique: str, tmp_path: Path) -> str:
    """`<unique>/model`: version 1 and 2 (trees), `prod` on version 1."""
    name = f"{unique}/model"
    with Client(arca_url) as client:
        client.publish_directory(name, _write(tmp_path / "v1", V1), cache=HashCache.disabled())
        client.publish_directory(name, _write(tmp_path / "v2", V2), cache=HashCache.disabled())
        client.set_alias(name, "prod", 1)
    return name


@pytest.mark.parametrize(("revision", "expected"), [("prod", V1), ("1", V1), ("2", V2), (None, V2)])
def test_snapshot_download_of_an_alias_a_version_or_main_is_that_version_byte_identical(
    arca_url: str, repo: str, tmp_path: Path, revision: str | None, expected: dict[str, bytes]
) -> None:
    # When the real client downloads a snapshot from the local server's /hf endpoint
    folder = snapshot_download(
        repo, revision=revision, endpoint=f"{arca_url}/hf", cache_dir=tmp_path / "cache", token=False
    )
    # Then every file is there, byte-identical, and nothing else
    assert _files(Path(folder)) == expected
    # And the snapshot is named by a commit id naming the version (its first 8 hex digits)
    version = 1 if expected is V1 else 2
    assert Path(folder).name.startswith(f"{version:08x}")


def test_hf_hub_download_model_info_and_file_listing(arca_url: str, repo: str, tmp_path: Path) -> None:
    # Given the client's API on the local endpoint
    api = HfApi(endpoint=f"{arca_url}/hf", token=False)
    # When one file is downloaded by alias, and the model's info and files are read
    path = hf_hub_download(
        repo, "weights/model.safetensors", revision="prod", endpoint=f"{arca_url}/hf", cache_dir=tmp_path, token=False
    )
    info = api.model_info(repo, revision="prod")
    files = api.list_repo_files(repo, revision="2")
    # Then
    assert Path(path).read_bytes() == V1["weights/model.safetensors"]
    assert info.id == repo and info.sha is not None and info.sha.startswith("00000001")
    assert sorted(s.rfilename for s in info.siblings or []) == sorted(V1)
    assert sorted(files) == sorted(V2)
    # And a download by the commit id the info answered is the same version
    again = hf_hub_download(
        repo, "config.json", revision=info.sha, endpoint=f"{arca_url}/hf", cache_dir=tmp_path / "c2", token=False
    )
    assert Path(again).read_bytes() == V1["config.json"]


def test_a_file_redirects_to_another_origin_with_the_headers_the_client_reads(arca_url: str, repo: str) -> None:
    # When a file is resolved as the client does (HEAD, no redirect followed)
    answer = requests.head(f"{arca_url}/hf/{repo}/resolve/prod/config.json", allow_redirects=False, timeout=30)
    # Then it is a 302 to S3 (not this server's origin) with the commit, the ETag (its SHA-256) and the size
    assert answer.status_code == 302
    assert not answer.headers["Location"].startswith(arca_url)
    assert answer.headers["X-Repo-Commit"].startswith("00000001")
    assert answer.headers["X-Linked-Size"] == str(len(V1["config.json"]))
    fetched = requests.get(answer.headers["Location"], timeout=30)
    assert fetched.content == V1["config.json"]


def test_a_missing_repo_revision_or_file_is_the_clients_own_error(arca_url: str, repo: str, tmp_path: Path) -> None:
    endpoint = f"{arca_url}/hf"
    with pytest.raises(RepositoryNotFoundError):
        snapshot_download(f"{repo}-absent", endpoint=endpoint, cache_dir=tmp_path, token=False)
    with pytest.raises(RevisionNotFoundError):
        snapshot_download(repo, revision="staging", endpoint=endpoint, cache_dir=tmp_path, token=False)
    with pytest.raises(RevisionNotFoundError):
        snapshot_download(repo, revision="9", endpoint=endpoint, cache_dir=tmp_path, token=False)
    with pytest.raises(RevisionNotFoundError):  # sent as refs%2Fpr%2F1, decoded on the way
        snapshot_download(repo, revision="refs/pr/1", endpoint=endpoint, cache_dir=tmp_path, token=False)
    with pytest.raises(RevisionNotFoundError):
        hf_hub_download(repo, "config.json", revision="refs/pr/1", endpoint=endpoint, cache_dir=tmp_path, token=False)
    with pytest.raises(EntryNotFoundError):
        hf_hub_download(repo, "absent.bin", revision="prod", endpoint=endpoint, cache_dir=tmp_path, token=False)


def test_a_version_of_one_blob_is_a_repo_of_one_file(arca_url: str, unique: str, tmp_path: Path) -> None:
    # Given a single file published as a version (not a tree)
    source = tmp_path / "model.gguf"
    source.write_bytes(b"GGUF" + bytes(1000))
    with Client(arca_url) as client:
        client.publish(unique, source)
    # When the client downloads the snapshot at version 1
    folder = snapshot_download(unique, revision="1", endpoint=f"{arca_url}/hf", cache_dir=tmp_path / "c", token=False)
    # Then it holds that one file, under the name it was published from
    assert _files(Path(folder)) == {"model.gguf": source.read_bytes()}


def test_a_listing_of_more_than_a_page_follows_its_link_on_this_endpoint(
    arca_url: str, unique: str, tmp_path: Path
) -> None:
    # Given a tree of 1,001 files (the Hub pages a listing by 1,000)
    files = {f"shards/{i:04d}.txt": f"{i}\n".encode() for i in range(1001)}
    with Client(arca_url) as client:
        client.publish_directory(unique, _write(tmp_path / "many", files), cache=HashCache.disabled())
    # When the client lists the repo's files
    listed = HfApi(endpoint=f"{arca_url}/hf", token=False).list_repo_files(unique, revision="1")
    # Then it read both pages (the next page's link is on this server's endpoint)
    assert sorted(listed) == sorted(files)
