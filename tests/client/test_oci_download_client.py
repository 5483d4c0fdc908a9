"""`arca download` of a version pushed through OCI: its document is an OCI image manifest, not Arca's tree manifest,
so its files come from the files route, each checked against the manifest the version's sha256 holds."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from arca_client.errors import ChecksumMismatchError
from arca_client.trees import TreeError
from tests.client.test_sdk import Harness, h

__all__ = ["h"]  # the SDK tests' fixture

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
LAYER = "application/vnd.oci.image.layer.v1.tar"
CONFIG = b"{}"
FILES = {"README.md": b"# app\n", "model.bin": b"weights" * 100}
S3 = "http://s3.test"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _manifest() -> bytes:
    def descriptor(content: bytes, media_type: str, title: str | None = None) -> dict[str, Any]:
        d: dict[str, Any] = {"mediaType": media_type, "digest": "sha256:" + _sha(content), "size": len(content)}
        if title:
            d["annotations"] = {"org.opencontainers.image.title": title}
        return d

    document = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": descriptor(CONFIG, "application/vnd.unknown.config.v1+json"),
        "layers": [descriptor(content, LAYER, title) for title, content in FILES.items()],
    }
    return json.dumps(document).encode()


MANIFEST = _manifest()
CONFIG_PATH = f"blobs/sha256/{_sha(CONFIG)}"
CONTENTS = {CONFIG_PATH: CONFIG, **FILES}


def _resolution() -> dict[str, Any]:
    return {
        "name": "team/app",
        "ref": "v1",
        "version": 1,
        "sha256": _sha(MANIFEST),
        "size": sum(len(c) for c in CONTENTS.values()),
        "download_url": f"{S3}/manifest",
        "content_type": OCI_MANIFEST,
        "files": len(CONTENTS),
    }


def _listing(contents: dict[str, bytes]) -> dict[str, Any]:
    files = [
        {"path": path, "sha256": _sha(data), "size": len(data), "content_type": LAYER}
        for path, data in sorted(contents.items())
    ]
    return {"files": files}


def _file(path: str) -> dict[str, Any]:
    return {"path": path, "download_url": f"{S3}/{path}"}


def test_download_of_an_oci_version_writes_its_listed_files_each_checked(h: Harness, tmp_path: Path) -> None:
    # Given the version's OCI manifest, its files as listed, and each file's bytes
    h.answer((200, _resolution()), (200, MANIFEST), (200, _listing(CONTENTS)))
    for path in sorted(CONTENTS):
        h.answer((200, _file(path)), (200, CONTENTS[path]))
    # When it is downloaded
    done = h.client.download("team/app", "v1", tmp_path / "out", parallel=1)
    # Then its files are listed by the files route (the version resolved first), and each is written
    assert h.sent[2].path == "/artifacts/team/app/versions/1/files"
    assert done.transfer is not None and done.transfer.files == 3  # type: ignore[union-attr]
    for path, data in CONTENTS.items():
        assert (tmp_path / "out" / path).read_bytes() == data


def test_a_file_whose_bytes_are_not_its_listed_sha256_is_not_kept(h: Harness, tmp_path: Path) -> None:
    # Given README.md answered with other bytes
    h.answer((200, _resolution()), (200, MANIFEST), (200, _listing(CONTENTS)), (200, _file("README.md")))
    h.answer((200, b"# tampered\n"))
    # When it is downloaded, then the download fails and the file is not there
    with pytest.raises(ChecksumMismatchError):
        h.client.download("team/app", "v1", tmp_path / "out", parallel=1, only="README.md")
    assert not (tmp_path / "out" / "README.md").exists()


def test_a_listing_that_names_other_blobs_than_the_manifest_is_refused(h: Harness, tmp_path: Path) -> None:
    # Given a listing with a file the manifest does not name
    h.answer((200, _resolution()), (200, MANIFEST), (200, _listing({**CONTENTS, "model.bin": b"other"})))
    # When it is downloaded, then nothing is fetched
    with pytest.raises(TreeError, match="not those its manifest"):
        h.client.download("team/app", "v1", tmp_path / "out", parallel=1)
    assert len(h.sent) == 3


def test_a_manifest_that_is_not_the_versions_is_refused(h: Harness, tmp_path: Path) -> None:
    h.answer((200, _resolution()), (200, MANIFEST + b" "))
    with pytest.raises(ChecksumMismatchError):
        h.client.download("team/app", "v1", tmp_path / "out", parallel=1)
