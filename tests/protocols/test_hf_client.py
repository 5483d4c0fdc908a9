"""The real `huggingface_hub` (from PyPI) against the `/hf/…` dispatcher served over HTTP, the bytes on another
origin, as S3 serves them from a presigned URL. The backend is in memory (tests/protocols/hf_fakes.py); Arca's own
backend (arca.services.hf) is driven by the same client against local mode in tests/e2e/test_hf_e2e.py."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import huggingface_hub
import pytest
from huggingface_hub import HfApi, hf_hub_download, snapshot_download
from huggingface_hub.errors import EntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError

from arca.protocols.hf import commits, listing
from tests.protocols.hf_fakes import FakeHub, Servers, running

REPO = "team/bert"
V1 = {"config.json": b'{"hidden": 1}', "model.safetensors": b"\x01" * 4096, "tokenizer/vocab.txt": b"a\nb\n"}
V2 = {"config.json": b'{"hidden": 2}', "model.safetensors": b"\x02" * 5000, "tokenizer/vocab.txt": b"a\nb\nc\n"}


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    huggingface_hub.utils.disable_progress_bars()
    yield
    huggingface_hub.utils.enable_progress_bars()


@pytest.fixture
def hub() -> FakeHub:
    fake = FakeHub()
    fake.publish(REPO, V1)
    fake.publish(REPO, V2)
    fake.set_alias(REPO, "prod", 1)
    return fake


@pytest.fixture
def served(hub: FakeHub) -> Iterator[Servers]:
    # An endpoint with a path, as a stage's API has (https://…/prod/hf): every test runs under one.
    with running(hub, mount="/prod/hf") as servers:
        yield servers


def _snapshot(served: Servers, cache: Path, revision: str | None) -> Path:
    return Path(snapshot_download(REPO, revision=revision, endpoint=served.endpoint, cache_dir=cache, token=False))


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(("revision", "expected"), [("prod", V1), ("1", V1), ("2", V2), ("main", V2), (None, V2)])
def test_snapshot_download_reads_one_version_by_each_form_of_revision(
    served: Servers, tmp_path: Path, revision: str | None, expected: dict[str, bytes]
) -> None:
    # When
    folder = _snapshot(served, tmp_path, revision)
    # Then the snapshot is that version's files, in a folder named by its commit
    assert _files(folder) == expected
    assert commits.COMMIT.fullmatch(folder.name)
    # and every request stayed under the endpoint's path; the bytes came from the other origin
    assert all(path.startswith("/prod/hf/") for _, path in served.requests)
    assert set(served.blob_requests) == {hashlib.sha256(data).hexdigest() for data in expected.values()}


def test_snapshot_download_by_commit_skips_resolving_and_reads_the_same_files(
    served: Servers, hub: FakeHub, tmp_path: Path
) -> None:
    # Given the commit prod resolved to, then prod moved
    commit = HfApi(endpoint=served.endpoint, token=False).model_info(REPO, revision="prod").sha
    assert commit is not None
    hub.set_alias(REPO, "prod", 2)
    served.requests.clear()
    # When
    folder = _snapshot(served, tmp_path, commit)
    # Then
    assert _files(folder) == V1
    assert folder.name == commit
    assert not [path for _, path in served.requests if "/revision/" in path]  # a commit is never resolved again


def test_hf_hub_download_reads_one_file_by_each_form_of_revision(served: Servers, hub: FakeHub, tmp_path: Path) -> None:
    commit = commits.commit_id(REPO, 2, hub.repos[REPO].versions[2].digest)
    for revision, expected in (("prod", V1), ("2", V2), ("main", V2), (commit, V2)):
        path = hf_hub_download(
            REPO, "tokenizer/vocab.txt", revision=revision, endpoint=served.endpoint, cache_dir=tmp_path, token=False
        )
        assert Path(path).read_bytes() == expected["tokenizer/vocab.txt"]
    # A subfolder is part of the path
    path = hf_hub_download(
        REPO,
        "vocab.txt",
        subfolder="tokenizer",
        revision="1",
        endpoint=served.endpoint,
        cache_dir=tmp_path,
        token=False,
    )
    assert Path(path).read_bytes() == V1["tokenizer/vocab.txt"]


def test_a_snapshot_behind_a_canary_never_mixes_the_two_versions(served: Servers, hub: FakeHub, tmp_path: Path) -> None:
    # Given prod split between 1 and 2, and a backend that answers the other side at every resolve
    hub.set_alias(REPO, "prod", 1, secondary=2)
    seen = []
    for run in range(4):
        hub.resolves.clear()
        # When
        files = _files(_snapshot(served, tmp_path / f"cache-{run}", "prod"))
        # Then each snapshot is one whole version, resolved once
        assert files in (V1, V2)
        assert [ref for _, ref, _ in hub.resolves if ref == "prod"] == ["prod"]
        seen.append(files["config.json"])
    assert set(seen) == {V1["config.json"], V2["config.json"]}


def test_a_moved_alias_is_read_anew_and_the_earlier_snapshot_stays(
    served: Servers, hub: FakeHub, tmp_path: Path
) -> None:
    # Given a snapshot of prod at 1
    first = _snapshot(served, tmp_path, "prod")
    # When prod moves to 2 and the same cache downloads prod again
    hub.set_alias(REPO, "prod", 2)
    second = _snapshot(served, tmp_path, "prod")
    # Then
    assert (_files(first), _files(second)) == (V1, V2)
    assert first != second
    refs = tmp_path / "models--team--bert" / "refs" / "prod"
    assert refs.read_text() == second.name


def test_main_falls_back_to_latest_and_then_follows_the_alias_main(
    served: Servers, hub: FakeHub, tmp_path: Path
) -> None:
    assert _files(_snapshot(served, tmp_path / "a", "main")) == V2
    hub.set_alias(REPO, "main", 1)
    assert _files(_snapshot(served, tmp_path / "b", "main")) == V1


def test_the_downloaded_files_pass_the_clients_own_checksum_verification(served: Servers, tmp_path: Path) -> None:
    # Given
    _snapshot(served, tmp_path, "prod")
    # When the client compares every file with the SHA-256 the tree listing answered (each file reads as LFS)
    result = HfApi(endpoint=served.endpoint, token=False).verify_repo_checksums(
        REPO, revision="prod", cache_dir=tmp_path
    )
    # Then
    assert (result.checked_count, result.mismatches, result.missing_paths) == (3, [], [])


def test_model_info_and_tree_listings_read_as_on_the_hub(served: Servers, monkeypatch: pytest.MonkeyPatch) -> None:
    api = HfApi(endpoint=served.endpoint, token=False)
    # Model info, with the files' metadata
    info = api.model_info(REPO, revision="1", files_metadata=True)
    assert info.id == REPO
    assert {s.rfilename: (s.size, s.lfs.sha256 if s.lfs else None) for s in info.siblings or []} == {
        path: (len(data), hashlib.sha256(data).hexdigest()) for path, data in V1.items()
    }
    # One level, and recursively, followed across pages of one entry (the next link names the commit)
    monkeypatch.setattr(listing, "ENTRIES", 1)
    top = [(type(e).__name__, e.path) for e in api.list_repo_tree(REPO, revision="prod")]
    assert top == [("RepoFile", "config.json"), ("RepoFile", "model.safetensors"), ("RepoFolder", "tokenizer")]
    assert api.list_repo_files(REPO, revision="prod") == sorted(V1)
    nested = [e.path for e in api.list_repo_tree(REPO, "tokenizer", revision="1")]
    assert nested == ["tokenizer/vocab.txt"]


def test_unknown_repos_revisions_and_files_raise_the_clients_own_errors(served: Servers, tmp_path: Path) -> None:
    download = {"endpoint": served.endpoint, "cache_dir": tmp_path, "token": False}
    with pytest.raises(RepositoryNotFoundError):
        snapshot_download("team/nobody", **download)
    with pytest.raises(RepositoryNotFoundError):
        hf_hub_download("team/nobody", "config.json", **download)
    with pytest.raises(RevisionNotFoundError):
        snapshot_download(REPO, revision="staging", **download)
    with pytest.raises(RevisionNotFoundError):
        hf_hub_download(REPO, "config.json", revision="9", **download)
    with pytest.raises(RevisionNotFoundError):  # a commit id of another artifact
        hf_hub_download(REPO, "config.json", revision=commits.commit_id("team/other", 1, "0" * 64), **download)
    with pytest.raises(EntryNotFoundError):
        hf_hub_download(REPO, "missing.bin", revision="prod", **download)
    with pytest.raises(EntryNotFoundError):
        HfApi(endpoint=served.endpoint, token=False).list_repo_tree(REPO, "nowhere", revision="prod").__next__()


def test_a_newcomer_downloads_with_hf_endpoint_set(served: Servers, tmp_path: Path) -> None:
    # What the README says to type: HF_ENDPOINT is read when huggingface_hub is imported
    code = "from huggingface_hub import snapshot_download; print(snapshot_download('team/bert', revision='prod'))"
    env = {**os.environ, "HF_ENDPOINT": served.endpoint, "HF_HOME": str(tmp_path), "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
    env.pop("HF_TOKEN", None)
    # When
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    # Then
    assert done.returncode == 0, done.stderr
    assert _files(Path(done.stdout.strip().splitlines()[-1])) == V1
