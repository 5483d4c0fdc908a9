"""Every request does a bounded number of DynamoDB calls, however much was deleted or written before."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from arca import wiring
from arca.adapters.repository import QUERY_BUDGET
from local.seed import clone_revisions, clone_versions
from tests.helpers import HandlerApi


@pytest.fixture
def calls(api: HandlerApi) -> Iterator[Counter[str]]:
    """DynamoDB calls the handlers make, by operation (a before-call hook on their client)."""
    counted: Counter[str] = Counter()

    def count(event_name: str, **_: Any) -> None:
        counted[event_name.split(".")[-1]] += 1

    client = wiring.services().repository.table.client
    client.meta.events.register("before-call.dynamodb.*", count, unique_id="test-call-counter")
    yield counted
    client.meta.events.unregister("before-call.dynamodb.*", unique_id="test-call-counter")


def every_page(api: HandlerApi, path: str, key: str, calls: Counter[str], **query: str) -> tuple[list[Any], int]:
    """Follow next_token to the end; returns the items and the most Queries any one request made."""
    items: list[Any] = []
    token: str | None = None
    most = 0
    while True:
        calls.clear()
        reply = api.call("GET", path, query={**query, **({"next_token": token} if token else {})})
        assert reply.status == 200, reply.body
        most = max(most, calls["Query"])
        items += reply.body[key]
        token = reply.body["next_token"]
        if token is None:
            return items, most


def test_listing_one_version_over_many_deleted_ones_is_bounded_and_paging_finds_the_live_ones(
    api: HandlerApi, aws: SimpleNamespace, calls: Counter[str]
) -> None:
    # Given versions 1 and 2 live, 3..600 deleted, 601 live
    api.publish("app", b"one")
    api.publish("app", b"two")
    clone_versions(aws.dynamodb, aws.table, "app", range(3, 601), deleted=True)
    clone_versions(aws.dynamodb, aws.table, "app", [601], deleted=False)
    calls.clear()
    # When
    first = api.call("GET", "/artifacts/app/versions", query={"limit": "1"})
    # Then one request makes at most the budget of Queries and hands back a token
    assert first.status == 200
    assert calls["Query"] <= QUERY_BUDGET
    assert first.body["next_token"] is not None
    # And paging to the end yields exactly the live versions, each request within the budget
    for order in ("desc", "asc"):
        versions, most = every_page(api, "/artifacts/app/versions", "versions", calls, limit="1", order=order)
        numbers = [v["version"] for v in versions]
        assert numbers == ([601, 2, 1] if order == "desc" else [1, 2, 601])
        assert most <= QUERY_BUDGET


def test_listing_with_deleted_versions_included_pages_through_all_of_them(
    api: HandlerApi, aws: SimpleNamespace, calls: Counter[str]
) -> None:
    # Given
    api.publish("app", b"one")
    clone_versions(aws.dynamodb, aws.table, "app", range(2, 251), deleted=True)
    # When
    versions, most = every_page(api, "/artifacts/app/versions", "versions", calls, limit="100", include_deleted="true")
    # Then
    assert [v["version"] for v in versions] == list(range(250, 0, -1))
    assert most == 1


def test_resolve_at_a_moment_reads_a_logarithmic_number_of_items(
    api: HandlerApi, aws: SimpleNamespace, calls: Counter[str]
) -> None:
    # Given an alias with 301 revisions, one second apart
    api.publish("app", b"one")
    assert api.call("PUT", "/artifacts/app/aliases/prod", {"version": 1}).status == 201
    times = clone_revisions(aws.dynamodb, aws.table, "app", "prod", 300)
    for revision in (1, 2, 150, 300, 301):
        calls.clear()
        # When resolved as it stood at that revision's time
        reply = api.call("GET", "/artifacts/app/resolve/prod", query={"at": times[revision - 1]})
        # Then
        assert reply.status == 200, reply.body
        assert reply.body["alias_revision"] == revision
        assert sum(calls.values()) <= (301).bit_length() + 2, calls
        assert calls["Query"] == 0
