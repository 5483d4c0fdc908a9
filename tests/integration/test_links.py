"""Links: one artifact under a second name. Reads follow a link once (with `via`), writes are refused."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from arca import wiring
from arca.domain.errors import ConflictError
from tests.helpers import HandlerApi, acting, counted
from tests.integration.conftest import snapshot


@pytest.fixture
def shared(api: HandlerApi) -> HandlerApi:
    """`team/app` with versions 1 and 2, alias `prod` on 1, and the link `app` → `team/app`."""
    api.publish("team/app", b"one")
    api.publish("team/app", b"two")
    assert api.call("PUT", "/artifacts/team/app/aliases/prod", {"version": 1}).status == 201
    reply = api.call("PUT", "/artifacts/app/link", {"target": "team/app"})
    assert reply.status == 201, reply.body
    return api


def test_link_is_created_then_repointed_and_the_same_target_again_changes_nothing(api: HandlerApi) -> None:
    # Given two artifacts
    api.publish("team/app", b"one")
    api.publish("team/next", b"two")
    # When a name is linked, linked again to the same target, then re-pointed
    created = api.call("PUT", "/artifacts/app/link", {"target": "team/app"})
    again = api.call("PUT", "/artifacts/app/link", {"target": "team/app"})
    moved = api.call("PUT", "/artifacts/app/link", {"target": "team/next"})
    # Then 201, 200, 200, and reads follow the new target
    assert (created.status, again.status, moved.status) == (201, 200, 200)
    assert created.body["link"] == "team/app"
    assert moved.body == {**moved.body, "name": "app", "link": "team/next"}
    assert (
        api.call("GET", "/artifacts/app/versions/1").body["sha256"]
        == api.call("GET", "/artifacts/team/next/versions/1").body["sha256"]
    )
    # and the old target counts no link any more: a plain purge of it goes through
    assert api.call("DELETE", "/artifacts/team/app").status == 204


def test_a_link_to_a_link_is_refused_naming_it(shared: HandlerApi, aws: SimpleNamespace) -> None:
    # Given the link `app`
    before = snapshot(aws)
    # When another name is linked to it
    reply = shared.call("PUT", "/artifacts/other/link", {"target": "app"})
    # Then 409 on the target, naming where to link instead, and nothing was written
    assert reply.status == 409
    assert reply.error["field"] == "target"
    assert "team/app" in reply.error["message"]
    assert snapshot(aws) == before


def test_an_artifact_cannot_become_a_link(shared: HandlerApi, aws: SimpleNamespace) -> None:
    # Given the artifact `team/app` and another artifact
    shared.publish("solo", b"x")
    before = snapshot(aws)
    # When the artifact is linked to it
    reply = shared.call("PUT", "/artifacts/solo/link", {"target": "team/app"})
    # Then 409 on the name, and nothing was written
    assert reply.status == 409
    assert reply.error["field"] == "name"
    assert snapshot(aws) == before


def test_a_purged_artifact_may_become_a_link_and_later_an_artifact_again_without_reusing_numbers(
    api: HandlerApi,
) -> None:
    # Given `old` with three versions, purged, and a target
    for data in (b"1", b"2", b"3"):
        api.publish("old", data)
    assert api.call("DELETE", "/artifacts/old").status == 204
    api.publish("team/app", b"a")
    # When `old` becomes a link, is unlinked and published to again
    assert api.call("PUT", "/artifacts/old/link", {"target": "team/app"}).status == 201
    assert api.call("GET", "/artifacts/old/versions/1").body["via"] == "old"
    assert api.call("DELETE", "/artifacts/old/link").status == 204
    published = api.publish("old", b"again")
    # Then its numbers go on after the purged ones
    assert published.status == 201
    assert published.body["version"] == 4


READS = [
    ("/artifacts/app/versions", None, lambda body: [v["version"] for v in body["versions"]] == [2, 1]),
    ("/artifacts/app/versions/1", None, lambda body: body["name"] == "team/app" and body["aliases"] == ["prod"]),
    ("/artifacts/app/versions/LATEST", None, lambda body: body["name"] == "team/app"),
    ("/artifacts/app/aliases", None, lambda body: [a["alias"] for a in body["aliases"]] == ["prod"]),
    ("/artifacts/app/aliases/prod", None, lambda body: body["name"] == "team/app" and body["version"] == 1),
    ("/artifacts/app/aliases/prod/history", None, lambda body: [h["revision"] for h in body["history"]] == [1]),
    ("/artifacts/app/resolve/prod", None, lambda body: body["version"] == 1 and body["name"] == "team/app"),
    ("/artifacts/app/resolve/2", None, lambda body: body["version"] == 2),
    ("/artifacts/app/resolve/LATEST", None, lambda body: body["version"] == "LATEST"),
    ("/artifacts/app/resolve/prod", {"at": "2999-01-01T00:00:00Z"}, lambda body: body["version"] == 1),
]


@pytest.mark.parametrize(("path", "query", "check"), READS, ids=[f"{p} {q}" for p, q, _ in READS])
def test_every_read_under_a_link_answers_for_the_target_with_via(
    shared: HandlerApi, path: str, query: dict[str, str] | None, check: Any
) -> None:
    # When the read goes through the link
    reply = shared.call("GET", path, query=query)
    # Then it answers for the target, saying which link it went through
    assert reply.status == 200, reply.body
    assert reply.body["via"] == "app"
    assert check(reply.body), reply.body
    # and the direct read says nothing of links
    direct = shared.call("GET", path.replace("/artifacts/app/", "/artifacts/team/app/"), query=query)
    assert "via" not in direct.body


def test_resolve_content_through_a_link_redirects_to_the_targets_blob(shared: HandlerApi) -> None:
    # When the content of an alias is asked for through the link
    reply = shared.call("GET", "/artifacts/app/resolve/prod/content")
    # Then it is the target's blob
    assert reply.status == 302
    assert "/artifacts/team/app/_blobs/" in reply.headers["Location"]
    assert reply.body["via"] == "app"


def test_summary_of_a_link_names_the_link_and_its_target(shared: HandlerApi) -> None:
    # When
    reply = shared.call("GET", "/artifacts/app")
    # Then it keeps the name asked for, says where it leads, and carries the target's summary
    assert reply.status == 200
    assert (reply.body["name"], reply.body["link"], reply.body["via"]) == ("app", "team/app", "app")
    assert reply.body["newest_version"] == 2
    assert reply.body["counts"]["aliases"] == 1


def test_a_missing_alias_or_version_under_a_link_is_a_404(shared: HandlerApi) -> None:
    # When
    replies = [shared.call("GET", p) for p in ("/artifacts/app/aliases/none", "/artifacts/app/versions/9")]
    # Then the target's 404s (the link was followed)
    assert [r.status for r in replies] == [404, 404]
    assert "team/app" in replies[0].error["message"]


def test_a_rollout_is_read_through_a_link(shared: HandlerApi) -> None:
    # Given a rollout of version 2 on the target's `prod`
    body = {"version": 2, "steps": [50], "interval_seconds": 60}
    assert shared.call("PUT", "/artifacts/team/app/aliases/prod/rollout", body).status == 201
    # When it is read through the link
    reply = shared.call("GET", "/artifacts/app/aliases/prod/rollout")
    # Then it is the target's rollout, with `via`
    assert reply.status == 200, reply.body
    assert (reply.body["name"], reply.body["state"], reply.body["via"]) == ("team/app", "running", "app")


WRITES: list[tuple[str, str, Any]] = [
    ("POST", "/artifacts/app/uploads", {"sha256": "0" * 64, "size": 1}),
    ("PUT", "/artifacts/app/latest", {"sha256": "0" * 64, "size": 1}),
    ("POST", "/artifacts/app/versions", None),
    ("POST", "/artifacts/app/versions", {"sha256": "0" * 64, "size": 1}),
    ("DELETE", "/artifacts/app/versions/2", None),
    ("POST", "/artifacts/app/versions/2/restore", None),
    ("POST", "/artifacts/app/prune", {"keep_last": 1}),
    ("DELETE", "/artifacts/app", None),
    ("PUT", "/artifacts/app/aliases/prod", {"version": 2}),
    ("PUT", "/artifacts/app/aliases/beta", {"version": 2}),
    ("DELETE", "/artifacts/app/aliases/prod", None),
    ("POST", "/artifacts/app/aliases/prod/rollback", None),
    ("PUT", "/artifacts/app/aliases/prod/rollout", {"version": 2, "steps": [50], "interval_seconds": 60}),
    ("DELETE", "/artifacts/app/aliases/prod/rollout", None),
]


@pytest.mark.parametrize(("method", "path", "body"), WRITES, ids=[f"{m} {p} {b}" for m, p, b in WRITES])
def test_writes_under_a_link_are_refused_naming_the_target(
    shared: HandlerApi, aws: SimpleNamespace, method: str, path: str, body: Any
) -> None:
    # Given the link `app` → `team/app`
    before = snapshot(aws)
    # When a write goes to the link name
    reply = shared.call(method, path, body)
    # Then 409 naming the target, and nothing was written
    assert reply.status == 409, reply.body
    assert reply.error["code"] == "LinkedNameError"
    assert reply.error["target"] == "team/app"
    assert "'team/app'" in reply.error["message"]
    assert snapshot(aws) == before


def test_listings_show_a_link_with_its_target(shared: HandlerApi) -> None:
    # Given also a link inside a folder
    assert shared.call("PUT", "/artifacts/team/mirror/link", {"target": "team/app"}).status == 201
    # When listed flat and by folder
    flat = shared.call("GET", "/artifacts").body["artifacts"]
    top = shared.call("GET", "/artifacts", query={"delimiter": "/"}).body
    team = shared.call("GET", "/artifacts", query={"delimiter": "/", "prefix": "team/"}).body
    # Then each link shows its target
    assert flat == [
        {"name": "app", "link": "team/app"},
        {"name": "team/app"},
        {"name": "team/mirror", "link": "team/app"},
    ]
    assert top["artifacts"] == [{"name": "app", "link": "team/app"}]
    assert top["prefixes"] == ["team/"]
    assert team["artifacts"] == [{"name": "team/app"}, {"name": "team/mirror", "link": "team/app"}]


def test_unlink_removes_the_link_and_never_the_target(shared: HandlerApi, aws: SimpleNamespace) -> None:
    # When the link is removed, and removed again
    removed = shared.call("DELETE", "/artifacts/app/link")
    again = shared.call("DELETE", "/artifacts/app/link")
    # Then 204, then 404; the name reads as nothing, leaves the listings, and the target is whole
    assert (removed.status, again.status) == (204, 404)
    assert shared.call("GET", "/artifacts/app").status == 404
    assert shared.call("GET", "/artifacts/app/aliases/prod").status == 404
    assert shared.call("GET", "/artifacts").body["artifacts"] == [{"name": "team/app"}]
    assert shared.call("GET", "/artifacts/team/app/resolve/prod").body["version"] == 1
    # and no row of the link is left but its tombstone
    items = aws.dynamodb.scan(TableName=aws.table, ConsistentRead=True)["Items"]
    assert [(i["pk"]["S"], i["sk"]["S"]) for i in items if i["pk"]["S"] == "app" or "__app" in i["pk"]["S"]] == [
        ("app", "LATEST")
    ]
    assert not [i for i in items if i["pk"]["S"] == "__team/app-links"]


def test_unlink_of_an_artifact_is_a_404(shared: HandlerApi, aws: SimpleNamespace) -> None:
    # Given
    before = snapshot(aws)
    # When
    reply = shared.call("DELETE", "/artifacts/team/app/link")
    # Then
    assert reply.status == 404
    assert snapshot(aws) == before


def test_purge_of_a_link_target_is_refused_naming_the_links(shared: HandlerApi, aws: SimpleNamespace) -> None:
    # Given the target without aliases, and a second link to it
    assert shared.call("DELETE", "/artifacts/team/app/aliases/prod").status == 204
    assert shared.call("PUT", "/artifacts/zz/link", {"target": "team/app"}).status == 201
    before = snapshot(aws)
    # When it is purged without force
    reply = shared.call("DELETE", "/artifacts/team/app")
    # Then 409 naming both links, and nothing changed
    assert reply.status == 409
    assert reply.error["links"] == ["app", "zz"]
    assert snapshot(aws) == before


def test_forced_purge_removes_the_links_in_the_same_purge(shared: HandlerApi, aws: SimpleNamespace) -> None:
    # Given a second link
    assert shared.call("PUT", "/artifacts/zz/link", {"target": "team/app"}).status == 201
    # When the target is purged with force
    reply = shared.call("DELETE", "/artifacts/team/app", query={"force": "true"})
    # Then the links are gone with it: their names read as nothing and leave the listings
    assert reply.status == 204
    assert shared.call("GET", "/artifacts/app").status == 404
    assert shared.call("GET", "/artifacts/zz/resolve/prod").status == 404
    assert shared.call("GET", "/artifacts").body["artifacts"] == []
    pks = {i["pk"]["S"] for i in aws.dynamodb.scan(TableName=aws.table, ConsistentRead=True)["Items"]}
    assert pks - {"__dir#"} == {"team/app", "app", "zz"}  # three tombstones, and the emptied folder's row
    # and a name freed so can be published to again
    assert shared.publish("app", b"fresh").status == 201


def test_a_link_cannot_be_made_to_a_target_a_purge_has_marked(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given a purge of `team/app` that has set its mark and then, before deleting anything, sees a link
    # request for the target run whole
    api.publish("team/app", b"a")
    purger, links = acting("publish", wiring.build().removal), acting("publish", wiring.build().links)
    delete_rows = purger.purging.delete_rows
    outcome: dict[str, Any] = {}

    def link_after_the_mark(*args: Any, **kwargs: Any) -> bool:
        try:
            outcome["link"] = links.link("app", "team/app")
        except ConflictError as refused:
            outcome["link"] = refused
        return delete_rows(*args, **kwargs)

    purger.purging.delete_rows = link_after_the_mark  # type: ignore[method-assign]
    # When the purge runs
    assert purger.purge("team/app", force=False)
    # Then the link was refused (the target was marked), and no link row outlives the purge
    assert isinstance(outcome["link"], ConflictError)
    assert outcome["link"].field == "target"
    assert api.call("GET", "/artifacts/app").status == 404
    pks = {i["pk"]["S"] for i in aws.dynamodb.scan(TableName=aws.table, ConsistentRead=True)["Items"]}
    assert pks - {"__dir#"} == {"team/app"}


def test_a_plain_purge_is_refused_when_a_link_is_made_before_its_mark(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given a plain purge that read the target, and a link made just before it sets its mark
    api.publish("team/app", b"a")
    purger, links = acting("publish", wiring.build().removal), acting("publish", wiring.build().links)
    mark = purger.purging.mark_purging

    def link_first(*args: Any, **kwargs: Any) -> None:
        links.link("app", "team/app")
        mark(*args, **kwargs)

    purger.purging.mark_purging = link_first  # type: ignore[method-assign]
    # When it runs
    with pytest.raises(ConflictError) as refused:
        purger.purge("team/app", force=False)
    # Then the mark's condition on `link_count` refused it, naming the link; the link works
    assert refused.value.details == {"links": ["app"]}
    assert api.call("GET", "/artifacts/app/versions/1").body["via"] == "app"


CALLS = [
    ("/artifacts/team/app/resolve/prod", ["Query"]),
    ("/artifacts/app/resolve/prod", ["Query", "Query"]),
    ("/artifacts/team/app/versions/1", ["Query"]),
    ("/artifacts/app/versions/1", ["Query", "Query"]),
    ("/artifacts/team/app/resolve/2", ["Query"]),
    ("/artifacts/app/resolve/2", ["Query", "Query"]),
    ("/artifacts/team/app/aliases/prod", ["Query"]),
    ("/artifacts/app/aliases/prod", ["Query", "Query"]),
    ("/artifacts/team/app", ["GetItem"]),
    ("/artifacts/app", ["GetItem", "GetItem"]),
    ("/artifacts/team/app/resolve/LATEST", ["GetItem"]),
    ("/artifacts/app/resolve/LATEST", ["GetItem", "GetItem"]),
]


@pytest.mark.parametrize(("path", "expected"), CALLS, ids=[p for p, _ in CALLS])
def test_a_read_through_a_link_costs_one_call_more_than_the_direct_read(
    shared: HandlerApi, path: str, expected: list[str]
) -> None:
    # When
    with counted() as calls:
        reply = shared.call("GET", path)
    # Then each point read is one item read (a Query of Limit 1 costs what a GetItem does), and the link one more
    assert reply.status == 200
    assert calls == expected


def test_forced_purge_drops_a_reverse_row_whose_link_is_gone(shared: HandlerApi, aws: SimpleNamespace) -> None:
    # Given a reverse-index row naming a link that no longer points at the target (written directly)
    aws.dynamodb.put_item(
        TableName=aws.table, Item={"pk": {"S": "__team/app-links"}, "sk": {"S": "ghost"}, "kind": {"S": "link-row"}}
    )
    # When the target is purged with force
    reply = shared.call("DELETE", "/artifacts/team/app", query={"force": "true"})
    # Then the purge finishes, the real link is gone and so is the stray row
    assert reply.status == 204
    pks = {i["pk"]["S"] for i in aws.dynamodb.scan(TableName=aws.table, ConsistentRead=True)["Items"]}
    assert pks - {"__dir#"} == {"team/app", "app"}


@pytest.mark.parametrize(
    "path", ["/artifacts/team/app/aliases/prod/link", "/artifacts/team/app/versions/1/link", "/artifacts/link"]
)
def test_a_link_path_inside_another_route_makes_no_link(shared: HandlerApi, aws: SimpleNamespace, path: str) -> None:
    # Given (a prefix grant on `team/app/*/aliases/*` must not be a way to create links)
    before = snapshot(aws)
    # When
    reply = shared.call("PUT", path, {"target": "team/app"})
    # Then refused, and nothing written
    assert reply.status in (400, 404, 405), reply.body
    assert snapshot(aws) == before
