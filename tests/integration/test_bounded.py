"""Every request does a bounded number of DynamoDB calls, however much was deleted or written before."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from arca import wiring
from arca.adapters import keys
from arca.adapters.dynamo import serialize
from arca.adapters.store.pages import QUERY_BUDGET
from arca.adapters.store.versions import DELETE_BATCH
from arca.services.removal import PRUNE_PAGES
from local.seed import clone_revisions, clone_versions
from tests.helpers import HandlerApi


@pytest.fixture
def calls(api: HandlerApi) -> Iterator[Counter[str]]:
    """DynamoDB calls the handlers make, by operation (a before-call hook on their client)."""
    counted: Counter[str] = Counter()

    def count(event_name: str, **_: Any) -> None:
        counted[event_name.split(".")[-1]] += 1

    client = wiring.services().stores.table.client
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


def test_resolve_at_a_moment_reads_two_items_however_long_the_history(
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
        # Then two item reads: the revision in force (one Query of the time rows, Limit 1), then its version
        assert reply.status == 200, reply.body
        assert reply.body["alias_revision"] == revision
        assert calls == Counter(Query=2), calls
    # And before the alias existed: the time rows hold nothing, its oldest record says so (one read more)
    calls.clear()
    assert api.call("GET", "/artifacts/app/resolve/prod", query={"at": "2001-01-01T00:00:00Z"}).status == 404
    assert calls == Counter(Query=2), calls


def test_resolve_at_a_moment_over_revisions_written_without_time_rows_searches_them(
    api: HandlerApi, aws: SimpleNamespace, calls: Counter[str]
) -> None:
    # Given 303 revisions, the first 301 written before time rows existed (their time rows deleted)
    api.publish("app", b"one")
    assert api.call("PUT", "/artifacts/app/aliases/prod", {"version": 1}).status == 201
    times = clone_revisions(aws.dynamodb, aws.table, "app", "prod", 302)
    for revision in range(1, 302):
        key = keys.history_time_key("app", "prod", times[revision - 1], revision)
        aws.dynamodb.delete_item(TableName=aws.table, Key=serialize(key), ConditionExpression="attribute_exists(pk)")
    for revision in (1, 2, 150, 300, 301, 302, 303):
        calls.clear()
        # When
        reply = api.call("GET", "/artifacts/app/resolve/prod", query={"at": times[revision - 1]})
        # Then the same answers: a timed revision in two reads, an older one by a binary search of its records
        assert reply.status == 200, reply.body
        assert reply.body["alias_revision"] == revision
        assert sum(calls.values()) <= (2 if revision > 301 else (301).bit_length() + 4), (revision, calls)
    calls.clear()
    assert api.call("GET", "/artifacts/app/resolve/prod", query={"at": "2001-01-01T00:00:00Z"}).status == 404
    assert calls == Counter(Query=2), calls


def prune_to_the_end(api: HandlerApi, calls: Counter[str], body: dict[str, Any]) -> tuple[list[Any], int]:
    """POST …/prune again with each next_token; returns the replies and the most calls any one request made."""
    replies, most, token = [], 0, None
    while True:
        calls.clear()
        reply = api.call("POST", "/artifacts/app/prune", {**body, **({"next_token": token} if token else {})})
        assert reply.status == 200, reply.body
        most = max(most, sum(calls.values()))
        replies.append(reply.body)
        token = reply.body["next_token"]
        if token is None:
            return replies, most


@pytest.mark.parametrize("keep_last", [1, 550])
def test_prune_goes_page_by_page_with_bounded_calls_and_a_token_to_go_on(
    api: HandlerApi, aws: SimpleNamespace, calls: Counter[str], keep_last: int
) -> None:
    # Given 600 live versions, version 3 pinned by an alias
    api.publish("app", b"one")
    clone_versions(aws.dynamodb, aws.table, "app", range(2, 601), deleted=False)
    assert api.call("PUT", "/artifacts/app/aliases/prod", {"version": 3}).status == 201
    # When pruned, a dry run first, each request sent again with the token it returned
    planned, _ = prune_to_the_end(api, calls, {"keep_last": keep_last, "dry_run": True})
    replies, most = prune_to_the_end(api, calls, {"keep_last": keep_last})
    # Then each request read its 5 pages of DELETE_BATCH versions, and none made more than a bounded number of
    # calls: LATEST, 5 Queries (no version was ever leased: no listing of leases), 5 transactions
    assert len(replies) == math.ceil(600 / (PRUNE_PAGES * DELETE_BATCH))
    assert most <= 1 + 5 + 5
    # And together they deleted exactly what the dry run planned: all but the newest `keep_last` and version 3
    deleted = sorted(n for r in replies for n in r["deleted"])
    assert deleted == sorted(n for r in planned for n in r["deleted"])
    assert deleted == [n for n in range(1, 601 - keep_last) if n != 3]
    assert [s["version"] for r in replies for s in r["skipped"]] == [3]
    live = api.call("GET", "/artifacts/app").body["counts"]["versions"]
    assert live == keep_last + 1


def test_prune_of_leased_versions_spends_its_lease_listings_from_the_same_query_budget(
    api: HandlerApi, aws: SimpleNamespace, calls: Counter[str]
) -> None:
    # Given 600 live versions, versions 7 and 450 leased by two consumers
    api.publish("app", b"one")
    clone_versions(aws.dynamodb, aws.table, "app", range(2, 601), deleted=False)
    for consumer, version in (("ecs:a", 7), ("ecs:b", 450)):
        reply = api.call("PUT", f"/artifacts/app/consumers/{consumer}", {"version": version, "ttl_seconds": 3600})
        assert reply.status == 200, reply.body
    # When pruned to the end, each request sent again with the token it returned
    queries: list[int] = []
    replies, token = [], None
    while True:
        calls.clear()
        reply = api.call("POST", "/artifacts/app/prune", {"keep_last": 1, **({"next_token": token} if token else {})})
        assert reply.status == 200, reply.body
        queries.append(calls["Query"])
        replies.append(reply.body)
        if (token := reply.body["next_token"]) is None:
            break
    # Then no request made more Queries than its budget, pages and lease listings together
    assert max(queries) <= PRUNE_PAGES, queries
    # And the leased versions are kept, naming their consumers, and every other one but the newest is deleted
    skipped = [s for r in replies for s in r["skipped"]]
    assert [(s["version"], s["consumers"]) for s in skipped] == [(450, ["ecs:b"]), (7, ["ecs:a"])]
    deleted = sorted(n for r in replies for n in r["deleted"])
    assert deleted == [n for n in range(1, 600) if n not in (7, 450)]


def test_prune_token_of_other_parameters_is_refused(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given a prune that stopped halfway
    api.publish("app", b"one")
    clone_versions(aws.dynamodb, aws.table, "app", range(2, 601), deleted=False)
    token = api.call("POST", "/artifacts/app/prune", {"keep_last": 1, "dry_run": True}).body["next_token"]
    # When its token is sent with another keep_last
    reply = api.call("POST", "/artifacts/app/prune", {"keep_last": 2, "dry_run": True, "next_token": token})
    # Then
    assert reply.status == 400 and reply.error["field"] == "next_token"


def test_resolve_names_the_published_file_in_one_read(api: HandlerApi, calls: Counter[str]) -> None:
    # Given a version published from app-v1.zip, and an alias on it
    api.publish("team/api", b"build one", metadata={"filename": "app-v1.zip"}, content_type="application/zip")
    assert api.call("PUT", "/artifacts/team/api/aliases/prod", {"version": 1}).status == 201
    for ref in ("prod", "1", "LATEST"):
        calls.clear()
        # When it is resolved (the content redirect resolves the same way)
        reply = api.call("GET", f"/artifacts/team/api/resolve/{ref}")
        # Then the download is saved under the published name, and the alias still costs one read
        assert reply.status == 200, reply.body
        query = parse_qs(urlsplit(reply.body["download_url"]).query)
        assert query["response-content-disposition"] == ['attachment; filename="app-v1.zip"'], ref
        assert "filename" not in reply.body  # the answer's shape is unchanged
        assert sum(calls.values()) == 1, calls
