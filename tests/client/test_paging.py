"""One paging loop for every listing and for prune: it ends, and a token it has followed before is refused."""

from __future__ import annotations

import ast
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from arca_client import ArcaError
from arca_client.calls.http import iso, paged
from tests.client.test_sdk import Harness, make


@pytest.fixture
def h() -> Harness:
    return make()


CALLS = Path(__file__).resolve().parents[2] / "client" / "arca_client" / "calls"


def test_a_token_seen_two_pages_earlier_is_refused_instead_of_cycling(h: Harness) -> None:
    # Given a server whose tokens go round: a, b, a, b, ...
    h.answer(
        (200, {"versions": [{"name": "app", "version": 3}], "next_token": "a"}),
        (200, {"versions": [{"name": "app", "version": 2}], "next_token": "b"}),
        (200, {"versions": [{"name": "app", "version": 1}], "next_token": "a"}),
    )
    # When / Then
    with pytest.raises(ArcaError) as raised:
        list(h.client.iter_versions("app"))
    assert raised.value.code == "PaginationLoop"
    assert len(h.sent) == 3


def test_iter_artifacts_refuses_a_repeated_token_like_every_listing(h: Harness) -> None:
    # Given
    h.answer(
        (200, {"artifacts": [{"name": "a"}], "prefixes": [], "next_token": "same"}),
        (200, {"artifacts": [{"name": "b"}], "prefixes": [], "next_token": "same"}),
    )
    # When / Then
    with pytest.raises(ArcaError) as raised:
        list(h.client.iter_artifacts())
    assert raised.value.code == "PaginationLoop"


def test_prune_pages_through_the_same_loop_and_refuses_a_cycle(h: Harness) -> None:
    # Given
    h.answer(
        (200, {"name": "app", "dry_run": False, "deleted": [9], "skipped": [], "next_token": "x"}),
        (200, {"name": "app", "dry_run": False, "deleted": [8], "skipped": [], "next_token": "y"}),
        (200, {"name": "app", "dry_run": False, "deleted": [], "skipped": [], "next_token": "x"}),
    )
    # When / Then
    with pytest.raises(ArcaError) as raised:
        h.client.prune("app", keep_last=1)
    assert raised.value.code == "PaginationLoop"
    assert [s.json().get("next_token") for s in h.sent] == [None, "x", "y"]


def test_a_listing_that_never_ends_stops_at_the_page_bound() -> None:
    # Given a server that hands out a new token on every page
    fetched: list[str | None] = []

    def fetch(token: str | None) -> dict[str, object]:
        fetched.append(token)
        return {"items": [], "next_token": f"t{len(fetched)}"}

    # When / Then
    with pytest.raises(ArcaError) as raised:
        list(paged("GET /endless", fetch, max_pages=5))
    assert raised.value.code == "PaginationLimit"
    assert len(fetched) == 5


def test_pages_are_fetched_only_as_they_are_read() -> None:
    # Given
    fetched: list[str | None] = []

    def fetch(token: str | None) -> dict[str, object]:
        fetched.append(token)
        return {"next_token": "more"} if token is None else {"next_token": None}

    # When
    first = next(paged("GET /x", fetch))
    # Then
    assert first == {"next_token": "more"}
    assert fetched == [None]


def test_one_iso_formatter_sends_every_time_in_utc_with_z(h: Harness) -> None:
    # Given a filter time in another zone, and a naive one (taken as UTC)
    h.answer((200, {"versions": [], "next_token": None}), (200, {"versions": [], "next_token": None}))
    paris = timezone(timedelta(hours=2))
    # When
    h.client.list_versions("app", created_after=datetime(2026, 1, 1, 14, 0, tzinfo=paris))
    h.client.list_versions("app", created_before=datetime(2026, 2, 1))
    # Then
    assert h.sent[0].query["created_after"] == ["2026-01-01T12:00:00Z"]
    assert h.sent[1].query["created_before"] == ["2026-02-01T00:00:00Z"]
    assert iso(datetime(2024, 5, 1, 12, 0)) == "2024-05-01T12:00:00Z"


def test_no_call_module_loops_over_pages_by_itself() -> None:
    # Every listing goes through `paged`: no other `while` loop reads a next_token.
    for module in CALLS.glob("*.py"):
        tree = ast.parse(module.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.While):
                assert "next_token" not in ast.unparse(node), f"{module.name}:{node.lineno} pages by itself"
