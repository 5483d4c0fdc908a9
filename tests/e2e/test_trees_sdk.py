"""Trees of files through the SDK against a local Arca over HTTP: publish a directory, list its files, download it
back (every file checked), and publish it again sending nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from arca_client import Client
from arca_client.errors import ConflictError
from arca_client.trees import HashCache

FILES = {
    "config.json": b'{"hidden": 64}\n',
    "tokenizer/vocab.txt": b"a\nb\nc\n",
    "weights/model.bin": bytes(range(256)) * 64,
    "empty.txt": b"",
}


def _tree(root: Path, files: dict[str, bytes]) -> Path:
    for path, data in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return root


def test_a_directory_published_lists_its_files_and_downloads_back_byte_identical(
    arca_url: str, unique: str, tmp_path: Path
) -> None:
    # Given a directory
    source = _tree(tmp_path / "model", FILES)
    with Client(arca_url) as client:
        # When it is published, listed and downloaded
        published = client.publish_directory(unique, source, cache=HashCache.disabled())
        listed = [f.path for f in client.iter_files(unique, 1, page_size=2)]
        weights = client.list_files(unique, 1, prefix="weights/")
        done = client.download_tree(unique, "1", tmp_path / "out", cache=HashCache.disabled())
        # Then
        assert published.published.version.version == 1
        assert published.files == 4 and published.files_uploaded == 4
        assert listed == sorted(FILES)
        assert [f.path for f in weights.items] == ["weights/model.bin"]
        assert done.files == 4 and done.files_fetched == 4
        for path, data in FILES.items():
            assert (tmp_path / "out" / path).read_bytes() == data
        # And a second publish of the same directory sends nothing and makes no version
        again = client.publish_directory(unique, source, cache=HashCache.disabled())
        assert again.published.deduplicated is True
        assert again.files_uploaded == 0


def test_a_tree_published_by_reference_is_the_same_version(arca_url: str, unique: str, tmp_path: Path) -> None:
    # Given a directory published by its manifest (the inline bound set to nothing)
    source = _tree(tmp_path / "site", FILES)
    with Client(arca_url) as client:
        import arca_client.calls.trees as trees

        original = trees.publish_form
        try:
            trees.publish_form = lambda entries, **kw: original(entries, **kw, inline_event_bytes=0)  # type: ignore[assignment]
            by_reference = client.publish_directory(unique, source, cache=HashCache.disabled())
        finally:
            trees.publish_form = original
        inline = client.publish_directory(unique, source, cache=HashCache.disabled())
        # Then
        assert by_reference.by_reference is True
        assert inline.published.deduplicated is True
        assert inline.published.version.sha256 == by_reference.published.version.sha256


def test_one_file_is_downloaded_alone_and_a_blob_is_no_tree(arca_url: str, unique: str, tmp_path: Path) -> None:
    # Given a tree and a blob
    source = _tree(tmp_path / "model", FILES)
    blob = tmp_path / "blob.bin"
    blob.write_bytes(b"one blob")
    with Client(arca_url) as client:
        client.publish_directory(unique, source, cache=HashCache.disabled())
        client.publish(unique, blob)
        # When one file of version 1 is downloaded, and the blob version asked for its files
        done = client.download_tree(unique, 1, tmp_path / "one", only="config.json", cache=HashCache.disabled())
        with pytest.raises(ConflictError):
            client.list_files(unique, 2)
    # Then
    assert done.files_fetched == 1
    assert [p.name for p in (tmp_path / "one").rglob("*") if p.is_file()] == ["config.json"]
