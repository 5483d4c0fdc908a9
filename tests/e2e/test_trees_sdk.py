"""Trees of files through the SDK against a local Arca over HTTP: publish a directory, list its files, download it
back (every file checked), and publish it again sending nothing."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests

from arca.adapters import keys
from arca_client import Client
from arca_client.cli import main
from arca_client.errors import ConflictError
from arca_client.trees import HashCache
from tests.e2e.test_signed_downloads import aws

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

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


class _Sent:
    """The client's requests to the API (method, path), recorded as the transport sends them."""

    def __init__(self, client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[tuple[str, str]] = []
        send = client.transport.send

        def recording(method: str, url: str, **kwargs: Any) -> Any:
            if kwargs.get("sign", True):  # the API's requests (presigned S3 URLs are sent unsigned)
                self.calls.append((method, urlsplit(url).path))
            return send(method, url, **kwargs)

        monkeypatch.setattr(client.transport, "send", recording)

    def uploads(self) -> int:
        return sum(1 for method, path in self.calls if method == "POST" and path.endswith("/uploads"))


def test_a_second_publish_with_one_file_changed_asks_about_that_file_alone(
    arca_url: str, unique: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a published directory of 30 files
    files = {f"part/{i:02d}.txt": f"file {i}\n".encode() for i in range(30)}
    source = _tree(tmp_path / "many", files)
    with Client(arca_url) as client:
        client.publish_directory(unique, source, cache=HashCache.disabled())
        (source / "part" / "07.txt").write_bytes(b"changed\n")
        sent = _Sent(client, monkeypatch)
        # When it is published again with one file changed
        again = client.publish_directory(unique, source, cache=HashCache.disabled())
        # Then the newest tree's contents were known: one upload request, one resolve, one publish
        assert again.published.version.version == 2 and again.files_uploaded == 1
        assert sent.uploads() == 1
        assert len(sent.calls) == 3, sent.calls
        assert client.download_tree(unique, "2", tmp_path / "out", cache=HashCache.disabled()).files == 30


def test_a_content_of_the_newest_tree_gone_since_is_uploaded_again(
    arca_url: str, unique: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a published tree one of whose contents left the bucket since (as a collection would remove it)
    source = _tree(tmp_path / "model", FILES)
    with Client(arca_url) as client:
        client.publish_directory(unique, source, cache=HashCache.disabled())
        gone = hashlib.sha256(FILES["tokenizer/vocab.txt"]).hexdigest()
        aws("s3").delete_object(Bucket=os.environ["ARCA_BUCKET_NAME"], Key=keys.blob_key(unique, gone))
        (source / "config.json").write_bytes(b'{"hidden": 128}\n')
        sent = _Sent(client, monkeypatch)
        # When the directory is published again with another file changed
        again = client.publish_directory(unique, source, cache=HashCache.disabled())
        # Then the refused publish was followed by a check of every content: the gone one was sent again
        assert again.published.version.version == 2
        assert again.files_uploaded == 2
        assert [c for c in sent.calls if c[0] == "POST" and c[1].endswith("/versions")] == [
            ("POST", f"/artifacts/{unique}/versions")
        ] * 2
        done = client.download_tree(unique, "2", tmp_path / "out", cache=HashCache.disabled())
        assert done.files == 4
        assert (tmp_path / "out" / "tokenizer/vocab.txt").read_bytes() == FILES["tokenizer/vocab.txt"]


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
        # And its files keep the types they were published with, sent as a types document
        assert client.list_files(unique, 1, prefix="config").items[0].content_type == "application/json"


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


def test_the_cli_publishes_a_directory_lists_it_and_downloads_it(
    arca_url: str, unique: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a directory, and no hash cache of the user's
    monkeypatch.setenv("ARCA_CACHE_DIR", str(tmp_path / "cache"))
    source = _tree(tmp_path / "model", FILES)

    def arca(*argv: str) -> tuple[int, str]:
        capsys.readouterr()
        code = main(["--endpoint", arca_url, *argv])
        out = "".join(line for line in capsys.readouterr().out.splitlines(True) if not line.startswith('{"_aws":'))
        return code, out

    # When it is published, its files listed, and it is downloaded whole and one file alone
    published = arca("publish", unique, str(source), "--exclude", "empty.txt", "--json")
    listed = arca("files", f"{unique}@1", "--json")
    table = arca("files", f"{unique}@1", "--prefix", "tok")
    whole = arca("download", f"{unique}@1", "-o", str(tmp_path / "out"), "--json")
    one = arca("download", f"{unique}@1", "-o", str(tmp_path / "one"), "--file", "weights/model.bin")
    # Then
    assert published[0] == 0, published
    assert json.loads(published[1])["files"] == 3
    assert [f["path"] for f in json.loads(listed[1])] == ["config.json", "tokenizer/vocab.txt", "weights/model.bin"]
    assert "tokenizer/vocab.txt" in table[1] and "config.json" not in table[1]
    assert whole[0] == 0, whole
    for path in ("config.json", "tokenizer/vocab.txt", "weights/model.bin"):
        assert (tmp_path / "out" / path).read_bytes() == FILES[path]
    assert one[0] == 0 and (tmp_path / "one" / "weights/model.bin").read_bytes() == FILES["weights/model.bin"]
    assert not (tmp_path / "one" / "config.json").exists()


def test_the_content_types_a_directory_is_published_with_are_listed_and_served(
    arca_url: str, unique: str, tmp_path: Path
) -> None:
    # Given a directory published (each file typed by its name, as the CLI and SDK guess it)
    source = _tree(tmp_path / "model", FILES)
    with Client(arca_url) as client:
        client.publish_directory(unique, source, cache=HashCache.disabled())
        # When its files are listed and one is resolved
        listed = {f.path: f.content_type for f in client.iter_files(unique, 1)}
        one = client.resolve_file(unique, "1", "config.json")
    # Then each answers its type, and the download URL serves it
    assert listed == {
        "config.json": "application/json",
        "empty.txt": "text/plain",
        "tokenizer/vocab.txt": "text/plain",
        "weights/model.bin": "application/octet-stream",
    }
    assert one["content_type"] == "application/json"
    assert requests.get(one["download_url"], timeout=10).headers["Content-Type"] == "application/json"


def test_arca_diff_of_two_trees_shows_the_files_added_removed_and_changed(
    arca_url: str, unique: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given two versions of a tree: one file changed (and grown), one removed, one added
    monkeypatch.setenv("ARCA_CACHE_DIR", str(tmp_path / "cache"))
    second = {**FILES, "config.json": b'{"hidden": 128, "layers": 2}\n', "notes.md": b"# notes\n"}
    del second["empty.txt"]
    with Client(arca_url) as client:
        client.publish_directory(unique, _tree(tmp_path / "one", FILES), cache=HashCache.disabled())
        client.publish_directory(unique, _tree(tmp_path / "two", second), cache=HashCache.disabled())
        client.set_alias(unique, "prod", 1)
        # When the SDK compares them
        sdk = client.diff_files(unique, "prod", 2)

    def arca(*argv: str) -> tuple[int, str]:
        capsys.readouterr()
        code = main(["--endpoint", arca_url, *argv])
        out = "".join(line for line in capsys.readouterr().out.splitlines(True) if not line.startswith('{"_aws":'))
        return code, out

    # And the CLI does, as a table and as JSON
    text = arca("diff", f"{unique}@prod", "@2")
    as_json = arca("diff", f"{unique}@1", f"{unique}@2", "--json")
    # Then
    assert [e.path for e in sdk.added] == ["notes.md"]
    assert [e.path for e in sdk.removed] == ["empty.txt"]
    assert [(c.path, c.before.size, c.after.size) for c in sdk.changed] == [
        ("config.json", len(FILES["config.json"]), len(second["config.json"]))
    ]
    assert sdk.unchanged == 2
    assert text[0] == 0, text
    assert "files: 1 added, 1 removed, 1 changed, 2 unchanged" in text[1]
    rows = {line.split()[1]: line.split() for line in text[1].splitlines() if line[:1] in "+-~" and line[1:2] == " "}
    assert rows["notes.md"][0] == "+" and rows["empty.txt"][0] == "-" and rows["config.json"][0] == "~"
    assert "size" in text[1]  # the version fields are shown as before
    files = json.loads(as_json[1])["files"]
    assert [f["path"] for f in files["added"]] == ["notes.md"]
    assert [f["path"] for f in files["removed"]] == ["empty.txt"]
    assert files["changed"][0]["path"] == "config.json"
    assert files["changed"][0]["to"]["size"] == len(second["config.json"])
    assert files["unchanged"] == 2


def test_arca_diff_of_a_tree_and_a_blob_has_no_files_section(
    arca_url: str, unique: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a tree then a blob
    blob = tmp_path / "blob.bin"
    blob.write_bytes(b"one blob")
    with Client(arca_url) as client:
        client.publish_directory(unique, _tree(tmp_path / "one", FILES), cache=HashCache.disabled())
        client.publish(unique, blob)
    # When
    capsys.readouterr()
    code = main(["--endpoint", arca_url, "diff", f"{unique}@1", "@2", "--json"])
    out = "".join(line for line in capsys.readouterr().out.splitlines(True) if not line.startswith('{"_aws":'))
    # Then
    assert code == 0
    assert "files" not in json.loads(out)
