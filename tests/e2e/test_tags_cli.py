"""Tags, search and content references end to end: the `arca` command against the local server (DynamoDB
Local, the faithful engine, whose secondary indexes are the schema's), and concurrent tag patches racing there."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from arca.domain.models import Content
from arca.wiring import build
from tests.e2e.conftest import ArcaHttp
from tests.e2e.test_cli import Cli, cli, publish
from tests.e2e.test_races import race
from tests.helpers import acting, sha256

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]
__all__ = ["cli"]  # the fixture, used by name below


def test_tag_search_and_content_references_from_the_command_line(cli: Cli, unique: str, tmp_path: Path) -> None:
    # Given two artifacts sharing a content, and versions 1 and 2 of the first
    name, other = f"{unique}/svc", f"{unique}/mirror"
    data = f"release one of {unique}".encode()  # a content, and below tags, no other test has
    digest = hashlib.sha256(data).hexdigest()
    assert publish(cli, tmp_path, name, data) == 1
    assert publish(cli, tmp_path, name, b"release two") == 2
    assert publish(cli, tmp_path, other, data) == 1
    # When version 1 is tagged through its content reference, version 2 by number, and the artifact itself
    assert cli("tag", f"{name}@sha256:{digest}", "env=prod", "owner=ana").code == 0
    assert cli("tag", f"{name}@2", f"env={unique}").code == 0
    assert cli("tag", f"{name}@1", "--remove", "owner").code == 0
    assert cli("tag", name, f"team={unique}", "--description", "the service").code == 0
    # Then the versions, the summary and the searches show them
    shown = cli("show", f"{name}@1", "--json").json()
    assert shown["tags"] == {"env": "prod"}
    summary = cli("show", name, "--json").json()
    assert (summary["tags"], summary["description"]) == ({"team": unique}, "the service")
    assert [v["version"] for v in cli("versions", name, "--tag", "env=prod", "--json").json()] == [1]
    assert [v["version"] for v in cli("versions", name, "--sha256", digest, "--json").json()] == [1]
    assert [v["version"] for v in cli("versions", name, "--since", "2000-01-01", "--json").json()] == [2, 1]
    assert cli("versions", name, "--until", "2000-01-01", "--json").json() == []
    hits = cli("search", "--sha256", digest, "--json").json()
    assert sorted((h["name"], h["version"]) for h in hits) == [(other, 1), (name, 1)]
    assert [(h["name"], h["version"]) for h in cli("search", "--tag", f"env:{unique}", "--json").json()] == [(name, 2)]
    assert cli("search", "--tag", f"team={unique}", "--artifacts", "--json").json() == [{"name": name}]
    resolved = cli("resolve", f"{name}@sha256:{digest}", "--json").json()
    assert resolved["version"] == 1
    table = cli("search", "--sha256", digest)
    assert table.code == 0 and name in table.out


def test_concurrent_tag_patches_keep_every_key(arca: ArcaHttp, unique: str) -> None:
    # Given a version, and eight writers with registries of their own
    name = f"{unique}/tags"
    data = b"tag me"
    arca.upload(name, data)
    acting("publish", build().publishing).publish(name, Content(sha256=sha256(data), size=len(data)))

    # When each adds its own key to the version, and to the artifact, at once
    def writer(index: int) -> None:
        services = build()
        tagging = acting("publish", services.tagging)
        tagging.tag_version(name, 1, {f"w{index}": str(index)})
        tagging.update_artifact(name, patch={f"w{index}": str(index)})

    race(writer)
    # Then no patch lost another's key, and each key has its index row
    expected = {f"w{i}": str(i) for i in range(8)}
    assert arca.get(f"/artifacts/{name}/versions/1").json()["tags"] == expected
    assert arca.get(f"/artifacts/{name}").json()["tags"] == expected
    for i in range(8):
        found = arca.get("/versions", params={"tag": f"w{i}={i}"}).json()["versions"]
        assert [(h["name"], h["version"]) for h in found if h["name"] == name] == [(name, 1)]
