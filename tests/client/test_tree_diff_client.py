"""`Client.diff_files` and `arca diff` of two tree versions: the files added, removed and changed, with sizes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from arca_client.trees import TreeEntry, tree_diff
from tests.client.test_cli_unit import FakeClient, run, version
from tests.client.test_sdk import Harness, h  # noqa: F401 (the fixture)

A, B, C = "a" * 64, "b" * 64, "c" * 64


def _files(*files: tuple[str, str, int]) -> dict[str, Any]:
    return {
        "files": [{"path": p, "sha256": s, "size": n, "content_type": "text/plain"} for p, s, n in files],
        "next_token": None,
    }


def test_diff_files_lists_both_trees_and_resolves_an_alias_to_its_version(h: Harness) -> None:  # noqa: F811
    # Given version 1 of a tree, and an alias on version 2
    resolution = {
        "name": "app",
        "ref": "prod",
        "version": 2,
        "sha256": C,
        "size": 9,
        "content_type": "application/vnd.arca.tree+json",
        "download_url": "https://s3/x",
        "expires_at": "2024-05-01T12:00:00Z",
        "route": "primary",
        "files": 2,
    }
    h.answer(
        (200, _files(("a.txt", A, 1), ("b.txt", B, 2))),
        (200, resolution),
        (200, _files(("b.txt", C, 5), ("c.txt", C, 3))),
    )
    # When
    diff = h.client.diff_files("app", 1, "prod")
    # Then the files of version 1 and of version 2 (the alias's) were listed
    assert [s.path for s in h.sent] == [
        "/artifacts/app/versions/1/files",
        "/artifacts/app/resolve/prod",
        "/artifacts/app/versions/2/files",
    ]
    assert [e.path for e in diff.added] == ["c.txt"]
    assert [e.path for e in diff.removed] == ["a.txt"]
    assert [(c.path, c.before.size, c.after.size) for c in diff.changed] == [("b.txt", 2, 5)]
    assert diff.unchanged == 0


def _diff() -> Any:
    before = [TreeEntry("a.txt", A, 1), TreeEntry("b.txt", B, 2048), TreeEntry("same", C, 7)]
    after = [TreeEntry("b.txt", C, 4096), TreeEntry("c.txt", C, 3), TreeEntry("same", C, 7)]
    return tree_diff(before, after)


def test_arca_diff_of_two_trees_prints_the_files_section(capsys: pytest.CaptureFixture[str]) -> None:
    # Given two tree versions
    versions = {"1": version(1, files=3), "2": version(2, files=3, sha256=C)}
    fake = FakeClient(get_version=lambda name, ref, **_: versions[ref], diff_files=lambda *a, **k: _diff())
    # When
    code, _ = run(["diff", "app@1", "@2"], fake)
    # Then the fields, then the files: one row each, then the counts
    assert code == 0
    out = capsys.readouterr().out
    assert "sha256" in out
    assert "files: 1 added, 1 removed, 1 changed, 1 unchanged (+2.0 KiB)" in out
    rows = [line.split() for line in out.splitlines() if line[:2] in ("+ ", "- ", "~ ")]
    assert rows == [["+", "c.txt", "3", "B"], ["-", "a.txt", "1", "B"], ["~", "b.txt", "2.0", "KiB", "4.0", "KiB"]]
    assert [c for c in fake.calls if c[0] == "diff_files"] == [("diff_files", ("app", 1, 2), {"other": "app"})]


def test_arca_diff_json_carries_the_files(capsys: pytest.CaptureFixture[str]) -> None:
    # Given
    versions = {"1": version(1, files=3), "2": version(2, files=3, sha256=C)}
    fake = FakeClient(get_version=lambda name, ref, **_: versions[ref], diff_files=lambda *a, **k: _diff())
    # When
    assert run(["diff", "app@1", "@2", "--json"], fake)[0] == 0
    # Then
    files = json.loads(capsys.readouterr().out)["files"]
    assert [f["path"] for f in files["added"]] == ["c.txt"]
    assert [f["path"] for f in files["removed"]] == ["a.txt"]
    assert files["changed"] == [
        {"path": "b.txt", "from": {"sha256": B, "size": 2048}, "to": {"sha256": C, "size": 4096}, "size_change": 2048}
    ]
    assert files["unchanged"] == 1


def test_arca_diff_of_blobs_lists_no_files(capsys: pytest.CaptureFixture[str]) -> None:
    # Given two blob versions
    versions = {"1": version(1, size=1), "2": version(2, size=2)}
    fake = FakeClient(get_version=lambda name, ref, **_: versions[ref])
    # When
    assert run(["diff", "app@1", "@2", "--json"], fake)[0] == 0
    # Then no file was listed
    assert "files" not in json.loads(capsys.readouterr().out)
    assert not [c for c in fake.calls if c[0] == "diff_files"]
