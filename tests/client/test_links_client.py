"""Links in the SDK and the CLI: `arca link`, `arca unlink`, and outputs that show `via` and `link`."""

from __future__ import annotations

import json
import re

import pytest

from arca_client import ArtifactSummary, Link, ListEntry, NotFoundError, Resolution, Version
from tests.client.test_cli_unit import FakeClient, run
from tests.client.test_sdk import Harness, error, h, version

__all__ = ["h"]  # the SDK tests' fixture


def test_sdk_link_puts_the_target_and_reads_the_link(h: Harness) -> None:
    # Given
    h.answer((201, {"name": "app", "link": "team/app", "created_at": "t", "updated_at": "t"}))
    # When
    link = h.client.link("app", "team/app")
    # Then
    assert (h.sent[0].method, h.sent[0].path, h.sent[0].json()) == (
        "PUT",
        "/artifacts/app/link",
        {"target": "team/app"},
    )
    assert (link.name, link.link) == ("app", "team/app")


def test_sdk_unlink_deletes_the_link_and_maps_404(h: Harness) -> None:
    # Given
    h.answer((204, b""), (404, error("NotFoundError", "'app' is not a link")))
    # When
    h.client.unlink("team/x")
    with pytest.raises(NotFoundError):
        h.client.unlink("team/x")
    # Then
    assert [(s.method, s.path) for s in h.sent] == [("DELETE", "/artifacts/team/x/link")] * 2


def test_sdk_reads_carry_via_and_listings_carry_link(h: Harness) -> None:
    # Given
    h.answer(
        (200, version(1, name="team/app", via="app")),
        (200, {"artifacts": [{"name": "app", "link": "team/app"}, {"name": "team/app"}], "prefixes": []}),
    )
    # When
    got = h.client.get_version("app", 1)
    page = h.client.list_artifacts("", delimiter=None)
    # Then
    assert (got.name, got.via) == ("team/app", "app")
    assert page.items == [ListEntry("app", link="team/app"), ListEntry("team/app")]


def test_cli_link_and_unlink(capsys: pytest.CaptureFixture[str]) -> None:
    # Given
    fake = FakeClient(link=Link(name="app", link="team/app"))
    # When
    linked, _ = run(["link", "app", "team/app"], fake)
    unlinked, _ = run(["unlink", "app"], fake)
    deleted, _ = run(["link", "--delete", "app"], fake)
    # Then
    assert (linked, unlinked, deleted) == (0, 0, 0)
    assert fake.called("link")[0] == ("app", "team/app")
    assert [a for m, a, _ in fake.calls if m == "unlink"] == [("app",), ("app",)]
    assert capsys.readouterr().out.splitlines() == ["app -> team/app", "app: link removed", "app: link removed"]


@pytest.mark.parametrize("argv", [["link", "app"], ["link", "--delete", "app", "team/app"]])
def test_cli_link_needs_exactly_its_arguments(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    # When
    code, fake = run(argv)
    # Then a usage error, and no call
    assert code == 1
    assert not fake.calls
    assert "link" in capsys.readouterr().err


def test_cli_ls_shows_links_with_their_targets(capsys: pytest.CaptureFixture[str]) -> None:
    # Given
    fake = FakeClient(iter_artifacts=lambda prefix, **kw: iter([ListEntry("app", link="team/app"), ListEntry("b")]))
    # When
    run(["ls"], fake)
    text = capsys.readouterr().out
    run(["ls", "--json"], fake)
    # Then
    assert text.splitlines() == ["app -> team/app", "b"]
    assert json.loads(capsys.readouterr().out) == [
        {"name": "app", "type": "link", "link": "team/app"},
        {"name": "b", "type": "artifact"},
    ]


def test_cli_show_and_resolve_say_which_link_they_went_through(capsys: pytest.CaptureFixture[str]) -> None:
    # Given
    summary = ArtifactSummary.from_dict(
        {
            "name": "app",
            "link": "team/app",
            "via": "app",
            "latest": {"name": "team/app", "version": "LATEST"},
            "newest_version": 1,
            "counts": {"versions": 1},
        }
    )
    one = Version.from_dict({"name": "team/app", "version": 1, "sha256": "ab" * 32, "size": 1, "via": "app"})
    resolved = Resolution.from_dict(
        {
            "name": "team/app",
            "ref": "1",
            "version": 1,
            "sha256": "ab" * 32,
            "size": 1,
            "download_url": "u",
            "via": "app",
        }
    )
    fake = FakeClient(get_artifact=summary, get_version=one, resolve=resolved)
    # When
    run(["show", "app"], fake)
    shown = capsys.readouterr().out
    run(["show", "app@1"], fake)
    shown_version = capsys.readouterr().out
    run(["resolve", "app@1"], fake)
    resolved_out = capsys.readouterr().out
    # Then
    assert re.search(r"^link to\s+team/app$", shown, re.M)
    assert "app is a link to team/app" in shown_version
    assert re.search(r"^via\s+app$", resolved_out, re.M)
