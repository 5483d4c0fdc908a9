"""Tags on versions and artifacts, filtered listings, registry-wide search and `sha256:` references (moto)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from arca import wiring
from arca.adapters import keys
from arca.domain.tags import MAX_TAGS
from local import iam
from tests.helpers import HandlerApi, sha256
from tests.integration.conftest import snapshot


def tag(api: HandlerApi, name: str, version: int, tags: dict[str, Any]) -> Any:
    return api.call("PATCH", f"/artifacts/{name}/versions/{version}", {"tags": tags})


def items_in(aws: SimpleNamespace, pk: str) -> list[dict[str, Any]]:
    """Test-only: the items of one partition."""
    return aws.dynamodb.query(
        TableName=aws.table,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": pk}},
        ConsistentRead=True,
    )["Items"]


def test_version_tags_merge_and_null_removes_a_key(api: HandlerApi) -> None:
    # Given a version tagged env=dev, team=core
    api.publish("app", b"one")
    assert tag(api, "app", 1, {"env": "dev", "team": "core"}).status == 200
    # When env changes, team is removed and owner is added
    reply = tag(api, "app", 1, {"env": "prod", "team": None, "owner": "ana"})
    # Then the merge keeps what the patch did not name, and every version answer carries the tags
    assert reply.status == 200, reply.body
    assert reply.body["tags"] == {"env": "prod", "owner": "ana"}
    assert api.call("GET", "/artifacts/app/versions/1").body["tags"] == {"env": "prod", "owner": "ana"}
    assert api.call("GET", "/artifacts/app/versions").body["versions"][0]["tags"] == {"env": "prod", "owner": "ana"}


def test_version_tags_keep_metadata_and_content_immutable(api: HandlerApi) -> None:
    # Given a version with metadata
    api.publish("app", b"one", metadata={"commit": "abc"})
    before = api.call("GET", "/artifacts/app/versions/1").body
    # When it is tagged
    tag(api, "app", 1, {"env": "prod"})
    # Then only its tags changed
    after = api.call("GET", "/artifacts/app/versions/1").body
    assert {k: v for k, v in after.items() if k != "tags"} == {k: v for k, v in before.items() if k != "tags"}


def test_soft_deleted_version_can_be_tagged(api: HandlerApi) -> None:
    # Given two versions, the first soft-deleted
    api.publish("app", b"one")
    api.publish("app", b"two")
    assert api.call("DELETE", "/artifacts/app/versions/1").status == 200
    # When the deleted version is tagged
    reply = tag(api, "app", 1, {"state": "bad"})
    # Then it is, and it stays deleted
    assert reply.status == 200, reply.body
    assert reply.body["deleted"] is True
    assert reply.body["tags"] == {"state": "bad"}


def test_tagging_a_missing_version_or_artifact_is_a_404(api: HandlerApi) -> None:
    api.publish("app", b"one")
    assert tag(api, "app", 9, {"a": "b"}).status == 404
    assert tag(api, "nope", 1, {"a": "b"}).status == 404
    assert api.call("PATCH", "/artifacts/nope", {"tags": {"a": "b"}}).status == 404


def test_tags_over_the_limit_after_the_merge_are_refused_and_write_nothing(
    api: HandlerApi, aws: SimpleNamespace
) -> None:
    # Given a version with MAX_TAGS - 1 tags
    api.publish("app", b"one")
    assert tag(api, "app", 1, {f"k{i}": "v" for i in range(MAX_TAGS - 1)}).status == 200
    before = snapshot(aws)
    # When two more are added
    reply = tag(api, "app", 1, {"x1": "v", "x2": "v"})
    # Then 400 naming tags, nothing written; replacing one while adding one is fine
    assert reply.status == 400, reply.body
    assert reply.error["field"] == "tags"
    assert snapshot(aws) == before
    assert tag(api, "app", 1, {"k0": None, "x1": "v"}).status == 200
    assert tag(api, "app", 1, {"x2": "v", "x3": "v"}).status == 400


def test_exactly_the_limit_of_tags_is_accepted(api: HandlerApi) -> None:
    api.publish("app", b"one")
    reply = tag(api, "app", 1, {f"k{i}": "v" * 256 for i in range(MAX_TAGS)})
    assert reply.status == 200, reply.body
    assert len(reply.body["tags"]) == MAX_TAGS


def test_artifact_tags_and_description_show_on_the_summary(api: HandlerApi) -> None:
    # Given an artifact
    api.publish("app", b"one")
    # When its description and tags are patched, then a tag removed
    first = api.call("PATCH", "/artifacts/app", {"description": "the app", "tags": {"team": "core", "tier": "1"}})
    second = api.call("PATCH", "/artifacts/app", {"tags": {"tier": None}})
    # Then the summary carries both; the description stays unless named
    assert first.status == 200, first.body
    assert first.body["description"] == "the app"
    assert second.body["tags"] == {"team": "core"}
    assert second.body["description"] == "the app"
    summary = api.call("GET", "/artifacts/app").body
    assert summary["tags"] == {"team": "core"}
    assert api.call("PATCH", "/artifacts/app", {"description": None}).body["description"] is None


def test_artifact_tag_patch_leaves_latest_content_and_publishing_alone(api: HandlerApi) -> None:
    # Given an artifact tagged between two publishes
    api.publish("app", b"one")
    api.call("PATCH", "/artifacts/app", {"tags": {"team": "core"}})
    # When a new version is published
    reply = api.publish("app", b"two")
    # Then it is published as usual and the artifact keeps its tags
    assert reply.status == 201
    assert api.call("GET", "/artifacts/app").body["tags"] == {"team": "core"}


def test_tag_patch_is_one_transaction_with_its_index_rows(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given a version
    api.publish("app", b"one")
    calls: list[str] = []
    client = wiring.services().stores.table.client
    original = client._make_api_call

    def spy(operation: str, params: dict[str, Any]) -> Any:
        calls.append(operation)
        return original(operation, params)

    client._make_api_call = spy
    try:
        # When it is tagged
        tag(api, "app", 1, {"env": "prod", "team": "core"})
    finally:
        client._make_api_call = original
    # Then one write call wrote the version and one row a tag
    assert [c for c in calls if c not in ("GetItem", "Query")] == ["TransactWriteItems"]
    rows = items_in(aws, keys.tags_pk("app"))
    assert sorted(r["sk"]["S"] for r in rows) == ["v#000001#env", "v#000001#team"]


def test_a_tag_patch_that_loses_a_race_merges_again_and_keeps_the_winners_keys(api: HandlerApi) -> None:
    # Given a version, and a second writer that tags it right after the first one has read it
    api.publish("app", b"one")
    repository = wiring.services().stores.versions
    read = repository.version
    rival = wiring.build()
    raced: list[int] = []

    def read_then_race(name: str, number: int) -> Any:
        found = read(name, number)
        if not raced:
            raced.append(number)
            rival.tagging.tag_version(name, number, {"rival": "yes"})
        return found

    repository.version = read_then_race  # type: ignore[method-assign]
    try:
        # When the first writer patches with what it read
        reply = tag(api, "app", 1, {"mine": "yes"})
    finally:
        del repository.version
    # Then its compare-and-set failed, it re-read, and both keys are kept (rows too)
    assert reply.status == 200, reply.body
    assert reply.body["tags"] == {"mine": "yes", "rival": "yes"}
    assert api.call("GET", "/artifacts/app/versions/1").body["tags"] == {"mine": "yes", "rival": "yes"}
    assert [v["version"] for v in api.call("GET", "/versions", query={"tag": "rival:yes"}).body["versions"]] == [1]


def test_an_artifact_tag_patch_that_loses_a_race_keeps_the_winners_keys(api: HandlerApi) -> None:
    # Given an artifact, and a rival that tags it right after the first writer read LATEST
    api.publish("app", b"one")
    reading = wiring.services().reading
    read = reading.live_latest
    rival = wiring.build()
    raced: list[str] = []

    def read_then_race(name: str) -> Any:
        found = read(name)
        if not raced:
            raced.append(name)
            rival.tagging.update_artifact(name, patch={"rival": "yes"})
        return found

    reading.live_latest = read_then_race  # type: ignore[method-assign]
    try:
        reply = api.call("PATCH", "/artifacts/app", {"tags": {"mine": "yes"}})
    finally:
        del reading.live_latest
    assert reply.status == 200, reply.body
    assert reply.body["tags"] == {"mine": "yes", "rival": "yes"}


def test_versions_filters_combine_with_and(api: HandlerApi) -> None:
    # Given four versions: tags and contents vary
    for data in (b"a", b"b", b"a", b"c"):
        api.publish("app", data, force=True)
    tag(api, "app", 1, {"env": "prod", "team": "core"})
    tag(api, "app", 2, {"env": "prod"})
    tag(api, "app", 3, {"env": "prod", "team": "core"})
    tag(api, "app", 4, {"env": "dev", "team": "core"})

    def numbers(query: dict[str, Any]) -> list[int]:
        reply = api.call("GET", "/artifacts/app/versions", query=query)
        assert reply.status == 200, reply.body
        return [v["version"] for v in reply.body["versions"]]

    # Then each filter, and their AND
    assert numbers({"tag": "env:prod"}) == [3, 2, 1]
    assert numbers({"tag": ["env:prod", "team=core"]}) == [3, 1]
    assert numbers({"sha256": sha256(b"a")}) == [3, 1]
    assert numbers({"sha256": sha256(b"a"), "tag": "team:core", "order": "asc"}) == [1, 3]
    assert numbers({"tag": "env:staging"}) == []


def test_versions_time_range_uses_creation_times(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given three versions created at known times
    times = ["2026-01-01T00:00:00.000Z", "2026-02-01T00:00:00.000Z", "2026-03-01T00:00:00.000Z"]
    for moment in times:
        wiring.services().policy.clock = lambda moment=moment: _parse(moment)
        api.publish("app", moment.encode())

    def numbers(query: dict[str, Any]) -> list[int]:
        reply = api.call("GET", "/artifacts/app/versions", query=query)
        assert reply.status == 200, reply.body
        return [v["version"] for v in reply.body["versions"]]

    # Then the bounds are strict, combinable, and in ISO 8601 with any offset
    assert numbers({"created_after": "2026-01-01T00:00:00Z"}) == [3, 2]
    assert numbers({"created_before": "2026-03-01T00:00:00Z"}) == [2, 1]
    assert numbers({"created_after": "2026-01-15T00:00:00Z", "created_before": "2026-02-15T00:00:00Z"}) == [2]
    assert numbers({"created_after": "2026-01-31T18:00:00-05:00", "order": "asc"}) == [2, 3]
    tag(api, "app", 2, {"ok": "yes"})
    assert numbers({"created_after": "2025-01-01T00:00:00Z", "tag": "ok:yes"}) == [2]
    # An empty window (a strict after at or past before) is an empty page, not a query DynamoDB refuses
    assert numbers({"created_after": "2026-02-01T00:00:00Z", "created_before": "2026-02-01T00:00:00Z"}) == []
    assert numbers({"created_after": "2026-03-01T00:00:00Z", "created_before": "2026-01-01T00:00:00Z"}) == []


def _parse(moment: str) -> Any:
    from datetime import datetime

    return datetime.fromisoformat(moment.replace("Z", "+00:00"))


def test_filtered_listing_pages_with_tokens_bound_to_the_filters(api: HandlerApi) -> None:
    # Given five versions tagged env=prod
    for i in range(5):
        api.publish("app", f"v{i}".encode())
        tag(api, "app", i + 1, {"env": "prod"})
    # When listed two at a time by tag, by content-free time range, by digest
    for query in ({"tag": "env:prod"}, {"created_after": "2000-01-01T00:00:00Z"}):
        seen: list[int] = []
        token = None
        while True:
            reply = api.call("GET", "/artifacts/app/versions", query={**query, "limit": "2", **_token(token)})
            assert reply.status == 200, reply.body
            seen += [v["version"] for v in reply.body["versions"]]
            token = reply.body["next_token"]
            if token is None:
                break
            # Then a token of one filter is refused by another
            other = api.call("GET", "/artifacts/app/versions", query={"tag": "env:dev", "next_token": token})
            assert other.status == 400
            assert other.error["field"] == "next_token"
        assert seen == [5, 4, 3, 2, 1]


def _token(token: str | None) -> dict[str, str]:
    return {} if token is None else {"next_token": token}


def test_registry_search_by_digest_and_by_tag_pages_across_artifacts(api: HandlerApi) -> None:
    # Given the same content in three artifacts, tagged in two
    for name in ("a", "b/c", "d"):
        api.publish(name, b"shared")
        api.publish(name, b"own-" + name.encode())
    tag(api, "a", 1, {"release": "2026.1"})
    tag(api, "d", 2, {"release": "2026.1"})
    # When searched by digest one hit a page
    hits: list[tuple[str, int]] = []
    token = None
    while True:
        reply = api.call("GET", "/versions", query={"sha256": sha256(b"shared"), "limit": "1", **_token(token)})
        assert reply.status == 200, reply.body
        hits += [(v["name"], v["version"]) for v in reply.body["versions"]]
        token = reply.body["next_token"]
        if token is None:
            break
    # Then every holder is found, once
    assert sorted(hits) == [("a", 1), ("b/c", 1), ("d", 1)]
    by_tag = api.call("GET", "/versions", query={"tag": "release=2026.1"}).body["versions"]
    assert [(v["name"], v["version"], v["sha256"]) for v in by_tag] == [
        ("a", 1, sha256(b"shared")),
        ("d", 2, sha256(b"own-d")),
    ]


def test_registry_search_hits_carry_their_tags_and_say_when_deleted(api: HandlerApi) -> None:
    # Given two tagged versions of the same content, the first soft-deleted, and a third untagged since
    for data in (b"same", b"same", b"same"):
        api.publish("app", data, force=True)
    for number in (1, 2, 3):
        tag(api, "app", number, {"release": "r1", "n": str(number)})
    tag(api, "app", 3, {"release": None})
    assert api.call("DELETE", "/artifacts/app/versions/1").status == 200
    # When searched by tag and by digest
    by_tag = api.call("GET", "/versions", query={"tag": "release=r1"}).body["versions"]
    by_digest = api.call("GET", "/versions", query={"sha256": sha256(b"same")}).body["versions"]
    # Then each hit says its tags and whether it is deleted; a version no longer tagged is no hit
    expected = [
        (1, True, {"n": "1", "release": "r1"}),
        (2, False, {"n": "2", "release": "r1"}),
    ]
    assert [(v["version"], v["deleted"], v["tags"]) for v in by_tag] == expected
    assert sorted((v["version"], v["deleted"], v["tags"]) for v in by_digest) == [*expected, (3, False, {"n": "3"})]


def test_registry_search_needs_exactly_one_criterion(api: HandlerApi) -> None:
    assert api.call("GET", "/versions").error["field"] == "sha256"
    assert api.call("GET", "/versions", query={"tag": ["a:b", "c:d"]}).error["field"] == "tag"


def test_artifacts_search_by_their_own_tags(api: HandlerApi) -> None:
    # Given three artifacts, two of team core, and a version of the third tagged team=core
    for name in ("x", "y/z", "w"):
        api.publish(name, b"one")
    api.call("PATCH", "/artifacts/x", {"tags": {"team": "core"}})
    api.call("PATCH", "/artifacts/y/z", {"tags": {"team": "core"}})
    tag(api, "w", 1, {"team": "core"})
    # When searched
    reply = api.call("GET", "/artifacts", query={"tag": "team:core"})
    # Then only the artifacts' own tags count
    assert reply.status == 200, reply.body
    assert [a["name"] for a in reply.body["artifacts"]] == ["x", "y/z"]
    # And a removed tag stops matching
    api.call("PATCH", "/artifacts/x", {"tags": {"team": None}})
    assert [a["name"] for a in api.call("GET", "/artifacts", query={"tag": "team:core"}).body["artifacts"]] == ["y/z"]


def test_content_reference_resolves_to_the_newest_live_version_with_that_content(api: HandlerApi) -> None:
    # Given versions 1 and 3 with the same content, 3 then deleted
    api.publish("app", b"same")
    api.publish("app", b"other")
    api.publish("app", b"same", force=True)
    digest = sha256(b"same")
    ref = f"sha256:{digest}"
    # Then every read that takes a version takes the reference
    assert api.call("GET", f"/artifacts/app/versions/{ref}").body["version"] == 3
    assert api.call("GET", f"/artifacts/app/resolve/{ref}").body["version"] == 3
    content = api.call("GET", f"/artifacts/app/resolve/{ref}/content")
    assert content.status == 302
    assert content.body["version"] == 3
    api.call("DELETE", "/artifacts/app/versions/3")
    assert api.call("GET", f"/artifacts/app/resolve/{ref}").body["version"] == 1
    api.call("DELETE", "/artifacts/app/versions/1")
    missing = api.call("GET", f"/artifacts/app/resolve/{ref}")
    assert missing.status == 404
    assert api.call("GET", f"/artifacts/nope/versions/{ref}").status == 404


def test_content_reference_of_another_artifact_is_not_found(api: HandlerApi) -> None:
    # Given the content only in `app/x` (whose name starts with `app`)
    api.publish("app", b"mine")
    api.publish("app/x", b"theirs")
    # Then `app` does not see it
    assert api.call("GET", f"/artifacts/app/resolve/sha256:{sha256(b'theirs')}").status == 404


def test_purge_removes_tag_rows_and_index_entries(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given a tagged artifact with tagged versions
    api.publish("app", b"one")
    api.publish("app", b"two")
    tag(api, "app", 1, {"env": "prod"})
    api.call("PATCH", "/artifacts/app", {"tags": {"team": "core"}, "description": "d"})
    # When it is purged
    assert api.call("DELETE", "/artifacts/app").status == 204
    # Then no row is left, and no search finds it
    assert items_in(aws, keys.tags_pk("app")) == []
    assert api.call("GET", "/versions", query={"tag": "env:prod"}).body["versions"] == []
    assert api.call("GET", "/versions", query={"sha256": sha256(b"one")}).body["versions"] == []
    assert api.call("GET", "/artifacts", query={"tag": "team:core"}).body["artifacts"] == []
    # And a re-created artifact starts without tags
    api.publish("app", b"three")
    summary = api.call("GET", "/artifacts/app").body
    assert summary["tags"] == {}
    assert summary["description"] is None


def test_tag_write_on_a_purging_artifact_is_a_409(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given an artifact marked by a purge
    api.publish("app", b"one")
    with iam.acting_as("publish"):
        wiring.services().stores.purge.mark_purging(
            "app", token="t", force=True, now="2026-01-01T00:00:00.000Z", aliases=list, links=list
        )
    before = snapshot(aws)
    # Then tag patches are refused and write nothing
    assert tag(api, "app", 1, {"a": "b"}).status == 409
    assert api.call("PATCH", "/artifacts/app", {"tags": {"a": "b"}}).status == 409
    assert snapshot(aws) == before


@pytest.mark.parametrize(
    ("query", "scope"),
    [
        ({"tag": "env:prod"}, "versions"),
        ({"sha256": "0" * 64}, "versions"),
        ({"created_after": "2000-01-01T00:00:00Z"}, "versions"),
    ],
)
def test_forged_tokens_cannot_leave_their_index_range(api: HandlerApi, query: dict[str, str], scope: str) -> None:
    # Given a token whose key lies in another artifact's range of the index
    api.publish("app", b"one")
    forged = keys.encode_token({"pk": "other", "sk": "000001", "gsi2sk": "x"}, "versions:app:desc:False")
    reply = api.call("GET", f"/artifacts/app/{scope}", query={**query, "next_token": forged})
    assert reply.status == 400
    assert reply.error["field"] == "next_token"


def test_content_reference_confirms_the_index_with_a_consistent_read(
    api: HandlerApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given versions 1 and 2 with the same content, and the search index as it stood then
    api.publish("app", b"same")
    api.publish("app", b"same", force=True)
    ref = f"sha256:{sha256(b'same')}"
    table = wiring.services().stores.table
    query_index = table.query_index
    seen: list[Any] = []
    monkeypatch.setattr(table, "query_index", lambda *a, **kw: seen.append(query_index(*a, **kw)) or seen[-1])
    assert api.call("GET", f"/artifacts/app/resolve/{ref}").body["version"] == 2
    # When version 2 is deleted while the index still shows it live (it lags the table)
    monkeypatch.setattr(table, "query_index", lambda *a, **kw: seen[0])
    assert api.call("DELETE", "/artifacts/app/versions/2").status == 200
    resolved = api.call("GET", f"/artifacts/app/resolve/{ref}")
    # Then the reference answers the newest version that is live in the table, never the deleted one
    assert resolved.body["version"] == 1, resolved.body
    # And with both deleted, none
    assert api.call("DELETE", "/artifacts/app/versions/1").status == 200
    assert api.call("GET", f"/artifacts/app/resolve/{ref}").status == 404
