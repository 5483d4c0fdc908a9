"""Aliases, canary routing, history, rollback and resolve through the real handlers, under moto."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import requests

from local import iam
from tests.helpers import HandlerApi, sha256
from tests.integration.conftest import snapshot


@pytest.fixture
def app(api: HandlerApi) -> HandlerApi:
    """An artifact `team/app` with versions 1, 2, 3."""
    for i in (1, 2, 3):
        assert api.publish("team/app", f"release {i}".encode()).status == 201
    return api


def put_alias(api: HandlerApi, alias: str, headers: dict[str, str] | None = None, **body: object) -> object:
    return api.call("PUT", f"/artifacts/team/app/aliases/{alias}", body, headers=headers)


def test_create_then_move_alias_advances_revision_and_etag(app: HandlerApi) -> None:
    # When
    created = put_alias(app, "prod", version=1, description="production")
    moved = put_alias(app, "prod", version=2, reason="release 2")
    fetched = app.call("GET", "/artifacts/team/app/aliases/prod")
    # Then
    assert created.status == 201 and created.body["revision"] == 1 and created.headers["ETag"] == '"1"'
    assert moved.status == 200 and moved.body["revision"] == 2 and moved.body["version"] == 2
    assert fetched.body["description"] is None or fetched.body["version"] == 2
    assert fetched.body["updated_by"] == "arca:local"
    assert fetched.headers["ETag"] == '"2"'


def test_the_deployed_api_ignores_the_local_user_header(app: HandlerApi) -> None:
    # When a caller names another user with local mode's header (API Gateway passes every header on)
    created = put_alias(app, "prod", headers={"X-Arca-Local-User": "someone-else"}, version=1)
    # Then the author is the identity API Gateway verified, as without the header
    assert created.status == 201
    assert created.body["updated_by"] == "arca:local"


def test_alias_pins_its_versions_against_delete_prune_and_purge(app: HandlerApi) -> None:
    # Given
    put_alias(app, "prod", version=1)
    put_alias(app, "canary", version=3, secondary_version=2, secondary_version_weight=10)
    # When
    delete_primary = app.call("DELETE", "/artifacts/team/app/versions/1")
    delete_secondary = app.call("DELETE", "/artifacts/team/app/versions/2")
    pruned = app.call("POST", "/artifacts/team/app/prune", {"keep_last": 0})
    purge = app.call("DELETE", "/artifacts/team/app")
    version = app.call("GET", "/artifacts/team/app/versions/1")
    # Then
    assert delete_primary.status == 409 and delete_primary.error["aliases"] == ["prod"]
    assert delete_secondary.status == 409 and delete_secondary.error["aliases"] == ["canary"]
    assert pruned.body["deleted"] == []
    assert {s["version"] for s in pruned.body["skipped"]} == {1, 2, 3}
    assert purge.status == 409 and sorted(purge.error["aliases"]) == ["canary", "prod"]
    assert version.body["aliases"] == ["prod"]


def test_moving_alias_releases_the_old_version(app: HandlerApi) -> None:
    # Given
    put_alias(app, "prod", version=1)
    put_alias(app, "prod", version=2)
    # When
    deleted = app.call("DELETE", "/artifacts/team/app/versions/1")
    # Then
    assert deleted.status == 200


def test_swapping_primary_and_secondary_and_reweighting_keep_pins_right(app: HandlerApi) -> None:
    # Given
    put_alias(app, "prod", version=1, secondary_version=2, secondary_version_weight=10)
    # When
    reweighted = put_alias(app, "prod", version=1, secondary_version=2, secondary_version_weight=50)
    swapped = put_alias(app, "prod", version=2, secondary_version=1, secondary_version_weight=5)
    promoted = put_alias(app, "prod", version=2)
    # Then
    assert reweighted.status == swapped.status == promoted.status == 200
    assert app.call("GET", "/artifacts/team/app/versions/2").body["aliases"] == ["prod"]
    assert app.call("GET", "/artifacts/team/app/versions/1").body["aliases"] == []
    assert app.call("DELETE", "/artifacts/team/app/versions/1").status == 200


def test_alias_to_missing_or_deleted_version_is_refused_and_writes_nothing(
    app: HandlerApi, aws: SimpleNamespace
) -> None:
    # Given
    app.call("DELETE", "/artifacts/team/app/versions/3")
    before = snapshot(aws)
    # When
    missing = put_alias(app, "prod", version=9)
    deleted = put_alias(app, "prod", version=1, secondary_version=3, secondary_version_weight=5)
    # Then
    assert missing.status == 409 and missing.error["field"] == "version"
    assert deleted.status == 409 and deleted.error["field"] == "secondary_version"
    assert snapshot(aws) == before


def test_alias_on_missing_artifact_is_404(api: HandlerApi) -> None:
    reply = api.call("PUT", "/artifacts/nope/aliases/prod", {"version": 1})
    assert reply.status == 404


@pytest.mark.parametrize(
    ("body", "headers", "field"),
    [
        ({}, None, "version"),
        ({"version": "1"}, None, "version"),
        ({"version": True}, None, "version"),
        ({"version": 0}, None, "version"),
        ({"version": 1, "secondary_version": 1}, None, "secondary_version"),
        ({"version": 1, "secondary_version_weight": 10}, None, "secondary_version_weight"),
        ({"version": 1, "secondary_version": 2, "secondary_version_weight": 100}, None, "secondary_version_weight"),
        ({"version": 1, "secondary_version": 2, "secondary_version_weight": True}, None, "secondary_version_weight"),
        ({"version": 1, "secondary_version": 2, "secondary_version_weight": 5.5}, None, "secondary_version_weight"),
        ({"version": 1, "description": "x" * 300}, None, "description"),
        ({"version": 1, "target": 2}, None, "target"),
        ({"version": 1}, {"If-Match": "abc"}, "If-Match"),
        ({"version": 1}, {"If-Match": "\u0661"}, "If-Match"),  # ARABIC-INDIC DIGIT ONE: a digit, not ASCII
        ({"version": 1}, {"If-Match": '"\uff11"'}, "If-Match"),  # FULLWIDTH DIGIT ONE
        ({"version": 1}, {"If-Match": "1" * 5000}, "If-Match"),
        ({"version": 1}, {"If-None-Match": "1"}, "If-None-Match"),
    ],
)
def test_bad_alias_input_names_the_field_and_writes_nothing(
    app: HandlerApi, aws: SimpleNamespace, body: dict[str, object], headers: dict[str, str] | None, field: str
) -> None:
    # Given
    before = snapshot(aws)
    # When
    reply = put_alias(app, "prod", headers, **body)
    # Then
    assert reply.status == 400, reply.body
    assert reply.error["field"] == field
    assert snapshot(aws) == before


@pytest.mark.parametrize("alias", ["LATEST", "123", "a~b", "-x", ".x"])
def test_bad_alias_names_are_refused(app: HandlerApi, alias: str) -> None:
    reply = put_alias(app, alias, version=1)
    assert reply.status == 400 and reply.error["field"] == "alias"


def test_conditional_writes_answer_412(app: HandlerApi) -> None:
    # Given
    put_alias(app, "prod", version=1)
    # When
    stale = put_alias(app, "prod", {"If-Match": '"5"'}, version=2)
    fresh = put_alias(app, "prod", {"If-Match": '"1"'}, version=2)
    create_only = put_alias(app, "prod", {"If-None-Match": "*"}, version=3)
    expected_wrong = put_alias(app, "prod", version=3, expected_version=1)
    expected_right = put_alias(app, "prod", version=3, expected_version=2)
    # Then
    assert stale.status == 412 and stale.error["code"] == "PreconditionFailedError"
    assert fresh.status == 200
    assert create_only.status == 412
    assert expected_wrong.status == 412 and expected_wrong.error["field"] == "expected_version"
    assert expected_right.status == 200 and expected_right.body["version"] == 3


def test_history_newest_first_with_delete_and_rollback(app: HandlerApi) -> None:
    # Given
    put_alias(app, "prod", version=1, reason="first")
    put_alias(app, "prod", version=2, secondary_version=3, secondary_version_weight=20, reason="canary")
    # When
    rolled = app.call("POST", "/artifacts/team/app/aliases/prod/rollback")
    deleted = app.call("DELETE", "/artifacts/team/app/aliases/prod")
    gone = app.call("GET", "/artifacts/team/app/aliases/prod")
    history = app.call("GET", "/artifacts/team/app/aliases/prod/history")
    # Then
    assert rolled.status == 200 and rolled.body["version"] == 1 and rolled.body["revision"] == 3
    assert rolled.body["reason"] == "rollback to revision 1"
    assert deleted.status == 204 and gone.status == 404
    revisions = history.body["history"]
    assert [h["revision"] for h in revisions] == [4, 3, 2, 1]
    assert [h["action"] for h in revisions] == ["delete", "rollback", "set", "set"]
    assert revisions[2]["secondary_version"] == 3 and revisions[2]["secondary_version_weight"] == 20
    assert all(h["updated_by"] == "arca:local" and h["updated_at"] for h in revisions)
    assert app.call("DELETE", "/artifacts/team/app/versions/1").status == 200  # released by the delete


def test_rollback_to_a_given_revision_and_refusals(app: HandlerApi) -> None:
    # Given
    put_alias(app, "prod", version=1)
    # When
    nothing = app.call("POST", "/artifacts/team/app/aliases/prod/rollback")
    put_alias(app, "prod", version=2)
    put_alias(app, "prod", version=3)
    to_first = app.call("POST", "/artifacts/team/app/aliases/prod/rollback", {"to_revision": 1})
    future = app.call("POST", "/artifacts/team/app/aliases/prod/rollback", {"to_revision": 9})
    # Then
    assert nothing.status == 409
    assert to_first.status == 200 and to_first.body["version"] == 1 and to_first.body["revision"] == 4
    assert future.status == 409 and future.error["field"] == "to_revision"


def test_resolve_alias_version_and_latest_with_working_download(app: HandlerApi) -> None:
    # Given
    put_alias(app, "prod", version=2)
    # When
    by_alias = app.call("GET", "/artifacts/team/app/resolve/prod")
    by_number = app.call("GET", "/artifacts/team/app/resolve/1")
    by_latest = app.call("GET", "/artifacts/team/app/resolve/LATEST")
    content = app.call("GET", "/artifacts/team/app/resolve/prod/content")
    # Then
    assert by_alias.body["version"] == 2 and by_alias.body["route"] == "primary"
    assert by_alias.body["alias_revision"] == 1
    assert by_alias.body["sha256"] == sha256(b"release 2")
    assert by_number.body["version"] == 1 and "alias_revision" not in by_number.body
    assert by_latest.body["version"] == "LATEST" and by_latest.body["sha256"] == sha256(b"release 3")
    assert requests.get(by_alias.body["download_url"], timeout=10).content == b"release 2"
    assert content.status == 302 and content.headers["Location"].startswith("http")


def test_resolve_canary_is_deterministic_per_key_and_shares_traffic(app: HandlerApi) -> None:
    # Given
    put_alias(app, "prod", version=1, secondary_version=2, secondary_version_weight=30)
    # When
    routes = [
        app.call("GET", "/artifacts/team/app/resolve/prod", query={"routing_key": f"user-{i}"}).body for i in range(200)
    ]
    again = [
        app.call("GET", "/artifacts/team/app/resolve/prod", query={"routing_key": f"user-{i}"}).body["route"]
        for i in range(20)
    ]
    # Then
    assert again == [r["route"] for r in routes[:20]]
    secondary = [r for r in routes if r["route"] == "secondary"]
    assert all(r["version"] == 2 for r in secondary)
    assert 0.18 < len(secondary) / len(routes) < 0.42


def test_resolve_alias_pointing_at_latest_follows_latest(app: HandlerApi) -> None:
    # Given
    put_alias(app, "edge", version="LATEST")
    app.set_latest("team/app", b"fresh")
    # When
    reply = app.call("GET", "/artifacts/team/app/resolve/edge")
    # Then
    assert reply.body["version"] == "LATEST" and reply.body["sha256"] == sha256(b"fresh")


def test_resolve_at_a_past_time_uses_history(app: HandlerApi) -> None:
    # Given
    first = put_alias(app, "prod", version=1)
    moment = first.body["updated_at"]
    put_alias(app, "prod", version=2)
    # When
    past = app.call("GET", "/artifacts/team/app/resolve/prod", query={"at": moment})
    before = app.call("GET", "/artifacts/team/app/resolve/prod", query={"at": "2001-01-01T00:00:00Z"})
    bad = app.call("GET", "/artifacts/team/app/resolve/prod", query={"at": "yesterday"})
    # Then
    assert past.status == 200 and past.body["version"] == 1 and past.body["alias_revision"] == 1
    assert before.status == 404
    assert bad.status == 400 and bad.error["field"] == "at"


def test_resolve_at_a_time_never_serves_a_version_deleted_since(app: HandlerApi) -> None:
    # Given prod on version 1, then moved to version 2, and version 1 deleted once no alias pins it
    moment = put_alias(app, "prod", version=1).body["updated_at"]
    put_alias(app, "prod", version=2)
    assert app.call("DELETE", "/artifacts/team/app/versions/1").status == 200
    # When prod is resolved as it stood before the move, for its answer and for its content
    answer = app.call("GET", "/artifacts/team/app/resolve/prod", query={"at": moment})
    content = app.call("GET", "/artifacts/team/app/resolve/prod/content", query={"at": moment})
    # Then neither hands out a download URL: a 404 naming the deleted version
    for reply in (answer, content):
        assert reply.status == 404, reply.body
        assert "download_url" not in reply.body and "Location" not in reply.headers
        assert reply.error["version"] == 1
        assert "version 1" in reply.error["message"]


def test_resolve_of_deleted_version_or_unknown_alias_is_404(app: HandlerApi) -> None:
    app.call("DELETE", "/artifacts/team/app/versions/1")
    assert app.call("GET", "/artifacts/team/app/resolve/1").status == 404
    assert app.call("GET", "/artifacts/team/app/resolve/nope").status == 404


def test_purge_with_force_removes_aliases_too(app: HandlerApi) -> None:
    # Given
    put_alias(app, "prod", version=1)
    # When
    purged = app.call("DELETE", "/artifacts/team/app", query={"force": "true"})
    # Then
    assert purged.status == 204
    assert app.call("GET", "/artifacts/team/app/aliases/prod").status == 404
    assert app.publish("team/app", b"again").body["version"] == 4
    assert app.call("GET", "/artifacts/team/app/aliases").body == {"aliases": [], "next_token": None}


def test_prune_skips_a_version_pinned_meanwhile_and_deletes_the_rest(app: HandlerApi) -> None:
    # Given versions 1..3, and prune's plan made before an alias pins version 1
    from arca import wiring

    table = wiring.services().stores.table
    from arca.adapters.store.change import Change

    batch = Change("team/app", by=None, now="2026-01-01")
    wiring.services().stores.versions.stage_deleted(batch, [1, 2], deleted=True, explained=False)
    planned = batch.writes()
    put_alias(app, "prod", version=1)
    # When the planned batch is tried, and prune runs for real
    from arca.adapters.dynamo import TransactionCancelled

    with pytest.raises(TransactionCancelled), iam.acting_as("publish"):
        table.transact(planned)
    pruned = app.call("POST", "/artifacts/team/app/prune", {"keep_last": 1})
    # Then nothing of the cancelled batch was written, and the real prune skipped the pinned version
    assert pruned.body["deleted"] == [2]
    assert pruned.body["skipped"] == [{"version": 1, "aliases": ["prod"]}]
    assert app.call("GET", "/artifacts/team/app").body["counts"]["deleted_versions"] == 1


def test_prune_falls_back_to_one_by_one_when_an_alias_pins_a_version_mid_prune(
    app: HandlerApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an alias write that lands between prune's plan and its batch
    from arca import wiring

    table = wiring.services().stores.table
    original = table.transact
    raced: list[bool] = []

    def transact(writes: list[object], **kwargs: object) -> None:
        if not raced and len(writes) > 2:
            raced.append(True)
            assert put_alias(app, "prod", version=1).status == 201  # type: ignore[attr-defined]
        original(writes, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(table, "transact", transact)
    # When
    pruned = app.call("POST", "/artifacts/team/app/prune", {"keep_last": 1})
    # Then the batch was cancelled whole, and the fallback deleted what it could and reported the pin
    assert raced
    assert pruned.body["deleted"] == [2]
    assert pruned.body["skipped"] == [{"version": 1, "aliases": ["prod"]}]
    assert app.call("GET", "/artifacts/team/app").body["counts"] == {
        "versions": 2,
        "deleted_versions": 1,
        "aliases": 1,
    }


def test_resolves_emit_a_metric_per_artifact_alias_and_route(
    app: HandlerApi, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a canary
    put_alias(app, "prod", version=1, secondary_version=2, secondary_version_weight=50)
    capsys.readouterr()
    # When keys land on both sides
    routes = {
        app.call("GET", "/artifacts/team/app/resolve/prod", query={"routing_key": f"k{i}"}).body["route"]
        for i in range(20)
    }
    # Then each resolve is one EMF data point with the artifact, alias and route as dimensions
    import json

    emitted = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"Resolves"' in line]
    assert routes == {"primary", "secondary"}
    assert len(emitted) == 20
    assert {(m["artifact"], m["alias"], m["route"]) for m in emitted} == {
        ("team/app", "prod", "primary"),
        ("team/app", "prod", "secondary"),
    }
    assert emitted[0]["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [["artifact", "alias", "route", "service"]]


def test_aliases_are_capped_per_artifact_and_a_deletion_frees_a_place(
    app: HandlerApi, aws: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an artifact at its cap of aliases
    monkeypatch.setattr("arca.adapters.store.aliases.MAX_ALIASES", 3)
    for alias in ("a", "b", "c"):
        assert put_alias(app, alias, version=1).status == 201
    before = snapshot(aws)
    # When one more is created
    refused = put_alias(app, "d", version=2)
    # Then it is a 409 naming the limit, and nothing was written
    assert refused.status == 409, refused.body
    assert refused.error["code"] == "AliasLimitError"
    assert refused.error["limit"] == 3 and "3 aliases" in refused.error["message"]
    assert snapshot(aws) == before
    # And moving an alias at the cap is still allowed
    assert put_alias(app, "a", version=3).status == 200
    # And once one is deleted, another may be created, and the summary counts them
    assert app.call("DELETE", "/artifacts/team/app/aliases/b").status == 204
    assert put_alias(app, "d", version=2).status == 201
    assert app.call("POST", "/artifacts/team/app/aliases/b/rollback", {}).error["code"] == "AliasLimitError"
    assert app.call("GET", "/artifacts/team/app").body["counts"]["aliases"] == 3


def test_alias_list_pages_past_deleted_aliases(app: HandlerApi) -> None:
    # Given five aliases of which two were deleted
    for alias in ("a", "b", "c", "d", "e"):
        assert put_alias(app, alias, version=1).status == 201
    for alias in ("b", "d"):
        assert app.call("DELETE", f"/artifacts/team/app/aliases/{alias}").status == 204
    # When listed two at a time
    first = app.call("GET", "/artifacts/team/app/aliases", query={"limit": "2"})
    second = app.call(
        "GET", "/artifacts/team/app/aliases", query={"limit": "2", "next_token": first.body["next_token"]}
    )
    # Then
    assert [a["alias"] for a in first.body["aliases"]] == ["a", "c"]
    assert [a["alias"] for a in second.body["aliases"]] == ["e"]
    assert second.body["next_token"] is None
    assert app.call("GET", "/artifacts/team/app").body["counts"]["aliases"] == 3
