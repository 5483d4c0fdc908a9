"""Tags and search in the SDK (over a scripted HTTP adapter) and the `arca tag` / `arca search` commands."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from arca_client import ArtifactSummary, Version
from arca_client.cli import main
from arca_client.models import VersionHit
from tests.client.test_cli_unit import FakeClient, alias, run, version
from tests.client.test_sdk import Harness, make

DIGEST = "ab" * 32


@pytest.fixture
def h() -> Harness:
    return make()


def test_tag_version_sends_a_merge_patch_with_nulls_for_removals(h: Harness) -> None:
    # Given
    h.answer((200, {"name": "app", "version": 3, "sha256": DIGEST, "size": 1, "tags": {"env": "prod"}}))
    # When
    tagged = h.client.tag_version("app", 3, {"env": "prod", "old": None})
    # Then
    assert (h.sent[0].method, h.sent[0].path) == ("PATCH", "/artifacts/app/versions/3")
    assert h.sent[0].json() == {"tags": {"env": "prod", "old": None}}
    assert tagged.tags == {"env": "prod"}


def test_update_artifact_sends_only_what_is_given_and_none_clears_the_description(h: Harness) -> None:
    summary = {"name": "app", "latest": {}, "newest_version": 1, "counts": {}, "tags": {"t": "1"}, "description": "d"}
    h.answer((200, summary), (200, summary))
    assert h.client.update_artifact("app", tags={"t": "1"}).tags == {"t": "1"}
    h.client.update_artifact("app", description=None)
    assert [s.json() for s in h.sent] == [{"tags": {"t": "1"}}, {"description": None}]
    assert h.sent[0].path == "/artifacts/app"


def test_version_filters_become_repeated_query_parameters(h: Harness) -> None:
    # Given
    h.answer((200, {"versions": [], "next_token": None}))
    # When
    list(
        h.client.iter_versions(
            "app",
            tags={"env": "prod", "a:b": "c"},
            sha256=DIGEST,
            created_after=datetime(2026, 1, 1, tzinfo=UTC),
            created_before=datetime(2026, 2, 1),
        )
    )
    # Then
    query = h.sent[0].query
    assert query["tag"] == ["env=prod", "a:b=c"]
    assert query["sha256"] == [DIGEST]
    assert query["created_after"] == ["2026-01-01T00:00:00Z"]
    assert query["created_before"] == ["2026-02-01T00:00:00Z"]


def test_registry_search_pages_hits_and_artifacts(h: Harness) -> None:
    hit = {"name": "a", "version": 2, "sha256": DIGEST, "size": 3, "content_type": "x/y", "created_at": "t"}
    h.answer(
        (200, {"versions": [hit], "next_token": "n"}),
        (200, {"versions": [{**hit, "name": "b"}], "next_token": None}),
        (200, {"artifacts": [{"name": "x"}], "prefixes": [], "next_token": None}),
    )
    hits = list(h.client.iter_search_versions(tag=("env", "prod")))
    names = [e.name for e in h.client.iter_search_artifacts(("team", "core"))]
    assert [(x.name, x.version) for x in hits] == [("a", 2), ("b", 2)]
    assert h.sent[0].path == "/versions"
    assert h.sent[0].query["tag"] == ["env=prod"]
    assert h.sent[1].query["next_token"] == ["n"]
    assert (h.sent[2].path, h.sent[2].query["tag"]) == ("/artifacts", ["team=core"])
    assert names == ["x"]


# ---- the commands --------------------------------------------------------------------------------


def test_tag_command_sets_empties_and_removes_keys_of_a_version(capsys: pytest.CaptureFixture[str]) -> None:
    # Given
    fake = FakeClient(tag_version=version(3, tags={"env": "prod", "note": ""}))
    # When
    code, _ = run(["tag", "app@3", "env=prod", "note=", "--remove", "old"], fake)
    # Then
    assert code == 0
    assert fake.called("tag_version") == (("app", 3, {"env": "prod", "note": "", "old": None}), {})
    assert "app@3: env=prod, note=" in capsys.readouterr().out


def test_tag_command_takes_key_values_after_its_options_too() -> None:
    fake = FakeClient(tag_version=version(3))
    assert run(["tag", "app@3", "--remove", "old", "new=", "x=y"], fake)[0] == 0
    assert fake.called("tag_version")[0][2] == {"new": "", "x": "y", "old": None}
    assert main(["tag", "app@3", "--remove", "old", "stray"], client_factory=lambda args: fake) == 1


def test_tag_command_reaches_a_version_through_an_alias_or_its_content() -> None:
    fake = FakeClient(get_alias=alias("prod", 7), get_version=version(5), tag_version=version(7))
    assert run(["tag", "app@prod", "a=b"], fake)[0] == 0
    assert fake.called("tag_version")[0][1] == 7
    assert run(["tag", f"app@sha256:{DIGEST}", "a=b"], fake)[0] == 0
    assert fake.called("get_version")[0] == ("app", f"sha256:{DIGEST}")
    assert fake.called("tag_version")[0][1] == 5


def test_tag_command_without_a_version_tags_the_artifact(capsys: pytest.CaptureFixture[str]) -> None:
    summary = ArtifactSummary.from_dict(
        {"name": "app", "latest": {}, "counts": {}, "tags": {"team": "core"}, "description": "the app"}
    )
    fake = FakeClient(update_artifact=summary)
    assert run(["tag", "app", "team=core", "--description", "the app"], fake)[0] == 0
    assert fake.called("update_artifact") == (("app",), {"tags": {"team": "core"}, "description": "the app"})
    assert "team=core" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [
        ["tag", "app@3"],
        ["tag", "app@LATEST", "a=b"],
        ["tag", "app@3", "novalue"],
        ["tag", "app@3", "a=b", "--description", "x"],
        ["search"],
        ["search", "--tag", "a=b", "--sha256", DIGEST],
        ["search", "--sha256", "xyz"],
        ["search", "--sha256", DIGEST, "--artifacts"],
        ["versions", "app", "--since", "the day before"],
    ],
)
def test_tag_and_search_usage_errors_exit_1(argv: list[str]) -> None:
    fake = FakeClient()
    assert main(argv, client_factory=lambda args: fake) == 1
    assert not [c for c in fake.calls if c[0] not in ("close",)]


def test_search_prints_a_table_of_hits_or_artifact_names(capsys: pytest.CaptureFixture[str]) -> None:
    hit = VersionHit.from_dict(
        {
            "name": "a/b",
            "version": 4,
            "sha256": DIGEST,
            "size": 10,
            "created_at": None,
            "deleted": True,
            "tags": {"env": "prod"},
        }
    )
    assert hit.deleted and hit.tags == {"env": "prod"}
    fake = FakeClient(iter_search_versions=[hit], iter_search_artifacts=[])
    assert run(["search", "--sha256", f"sha256:{DIGEST.upper()}"], fake)[0] == 0
    assert fake.called("iter_search_versions") == ((), {"sha256": DIGEST, "tag": None})
    out = capsys.readouterr().out
    assert "a/b" in out and "NAME" in out
    header, row = out.splitlines()[:2]
    assert "DELETED" in header and "TAGS" in header
    assert "yes" in row and "env=prod" in row
    assert run(["search", "--tag", "team:core", "--artifacts"], fake)[0] == 0
    assert fake.called("iter_search_artifacts") == ((("team", "core"),), {})


def test_versions_command_passes_its_filters() -> None:
    fake = FakeClient(iter_versions=[])
    argv = ["versions", "app", "--tag", "env=prod", "--tag", "a:b", "--sha256", DIGEST, "--since", "2026-01-01"]
    assert run([*argv, "--until", "2026-02-01T00:00:00+01:00"], fake)[0] == 0
    kwargs: dict[str, Any] = fake.called("iter_versions")[1]
    assert kwargs["tags"] == {"env": "prod", "a": "b"}
    assert kwargs["sha256"] == DIGEST
    assert kwargs["created_after"] == datetime(2026, 1, 1, tzinfo=UTC)
    assert kwargs["created_before"].isoformat() == "2026-02-01T00:00:00+01:00"


def test_version_and_summary_models_carry_tags() -> None:
    assert Version.from_dict({"name": "a", "version": 1, "sha256": DIGEST, "size": 1}).tags == {}
    assert ArtifactSummary.from_dict({"name": "a", "latest": {}, "counts": {}}).description is None
