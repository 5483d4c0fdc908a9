"""No answer nears Lambda's 6 MB response limit: every listing is cut by bytes as well as by count.

The worst case is built with legal input: 50 tags a version, keys of 128 characters, values of 256 characters
outside the Basic Multilingual Plane (12 bytes each as the JSON escapes the API answers with).
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

from arca.adapters import keys
from arca.adapters.dynamo import deserialize, serialize
from local.seed import clone_tagged_versions
from tests.helpers import HandlerApi, sha256

LAMBDA_LIMIT = 6 * 1000 * 1000
# Far below it: a page is cut at PAGE_BYTES (2 MiB) of items, plus the answer's envelope.
WELL_UNDER = 2_500_000
VALUE = "\U0001f642" * 256
WORST_TAGS = {f"{i:02d}" + "k" * 126: VALUE for i in range(50)}
COUNT = 40


def pages(api: HandlerApi, path: str, key: str, **query: str) -> tuple[list[Any], list[int]]:
    """Every page to the end at limit 1000: the items, and each answer's size in bytes as JSON."""
    items: list[Any] = []
    sizes: list[int] = []
    token: str | None = None
    while True:
        reply = api.call("GET", path, query={"limit": "1000", **query, **({"next_token": token} if token else {})})
        assert reply.status == 200, reply.body
        sizes.append(len(json.dumps(reply.body)))
        items += reply.body[key]
        token = reply.body["next_token"]
        if token is None:
            return items, sizes


@pytest.fixture
def worst(api: HandlerApi, aws: SimpleNamespace) -> SimpleNamespace:
    """COUNT versions of `app`, each with the largest tags allowed (JSON: 8 MB or more for all of them)."""
    api.publish("app", b"one")
    tagged = api.call("PATCH", "/artifacts/app/versions/1", {"tags": WORST_TAGS})
    assert tagged.status == 200, tagged.body
    assert len(json.dumps(tagged.body)) * COUNT > LAMBDA_LIMIT
    clone_tagged_versions(aws.dynamodb, aws.table, "app", [("app", n) for n in range(2, COUNT + 1)])
    return SimpleNamespace(tag=f"{next(iter(WORST_TAGS))}={VALUE}", digest=sha256(b"one"))


@pytest.mark.parametrize(
    ("path", "query"),
    [
        ("/artifacts/app/versions", {}),
        ("/artifacts/app/versions", {"order": "asc"}),
        ("/artifacts/app/versions", {"tag": "tag"}),  # a filtered listing (the filter is filled in below)
        ("/versions", {"sha256": "digest"}),
        ("/versions", {"tag": "tag"}),
    ],
)
def test_a_listing_of_the_largest_legal_versions_is_cut_by_bytes_and_pages_through_all_of_them_once(
    api: HandlerApi, worst: SimpleNamespace, path: str, query: dict[str, str]
) -> None:
    query = {k: getattr(worst, v, v) for k, v in query.items()}
    # When every page is read at the largest limit
    versions, sizes = pages(api, path, "versions", **query)
    # Then each answer stays far below Lambda's 6 MB, so the first one was cut with a token
    assert len(sizes) > 1
    assert max(sizes) < WELL_UNDER
    # And paging returns every version exactly once, with its tags
    assert sorted(v["version"] for v in versions) == list(range(1, COUNT + 1))
    assert all(v["tags"] == WORST_TAGS for v in versions)


def test_an_event_feed_of_the_largest_tag_changes_is_cut_by_bytes(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given COUNT events each announcing 50 of the largest tags (copies of one tag change's event)
    api.publish("app", b"one")
    assert api.call("PATCH", "/artifacts/app/versions/1", {"tags": WORST_TAGS}).status == 200
    feed = api.call("GET", "/artifacts/app/events", query={"limit": "1000"}).body["events"]
    tagged = next(e for e in feed if e["type"] == "version.tagged")
    item = deserialize(
        aws.dynamodb.get_item(TableName=aws.table, Key=serialize(keys.event_key("app", tagged["id"])))["Item"]
    )
    assert item is not None
    base = int(tagged["id"].split("-")[0])
    copies = [
        {**item, **keys.event_key("app", f"{base + n:016d}-00000000"), "id": f"{base + n:016d}-00000000"}
        for n in range(1, COUNT)
    ]
    for copy in copies:
        aws.dynamodb.put_item(TableName=aws.table, Item=serialize(copy))
    # When the whole feed is read at the largest limit
    events, sizes = pages(api, "/artifacts/app/events", "events")
    # Then it came in pages far below 6 MB, every event once
    assert len(sizes) > 1
    assert max(sizes) < WELL_UNDER
    ids = [e["id"] for e in events]
    assert len(ids) == len(set(ids)) == len(feed) + COUNT - 1
    assert ids == sorted(ids)


def test_a_listing_of_the_largest_legal_promotions_is_cut_by_bytes(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given COUNT pending promotions, each with a rollout of 100 alarms of the longest name (copies of one)
    api.publish("app", b"one")
    assert api.call("PUT", "/artifacts/app/aliases/prod", {"version": 1}).status == 201
    assert api.call("PUT", "/artifacts/app/aliases/prod/policy", {"approvals": 1}).status == 200
    alarms = [f"{i:02d}" + "\U0001f642" * 253 for i in range(100)]
    body = {"version": 1, "rollout": {"steps": [10], "interval_seconds": 60, "alarms": alarms}}
    requested = api.call("POST", "/artifacts/app/aliases/prod/promotions", body)
    assert requested.status == 201, requested.body
    assert len(json.dumps(requested.body)) * COUNT > LAMBDA_LIMIT
    item = deserialize(
        aws.dynamodb.get_item(
            TableName=aws.table, Key=serialize(keys.promotion_key("app", "prod", requested.body["id"]))
        )["Item"]
    )
    assert item is not None
    for n in range(1, COUNT):
        copy = f"{requested.body['id'][:14]}{n:010x}"
        put = {**item, **keys.promotion_key("app", "prod", copy), "id": copy}
        aws.dynamodb.put_item(TableName=aws.table, Item=serialize(put))
    # When every page is read at the largest limit, all of them and the pending ones
    for query in ({}, {"state": "pending"}):
        promotions, sizes = pages(api, "/artifacts/app/aliases/prod/promotions", "promotions", **query)
        # Then each answer stays far below Lambda's 6 MB, and every promotion comes once
        assert len(sizes) > 1
        assert max(sizes) < WELL_UNDER
        ids = [p["id"] for p in promotions]
        assert len(ids) == len(set(ids)) == COUNT
        assert ids == sorted(ids, reverse=True)
