"""An artifact created with no version yet (`PUT /artifacts/{name}`, decision 111), and every read and write of it
(moto)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from arca.adapters import keys
from tests.helpers import HandlerApi, sha256
from tests.integration.conftest import snapshot


def create(api: HandlerApi, name: str, body: Any = None, **headers: str) -> Any:
    return api.call("PUT", f"/artifacts/{name}", body, headers=headers or None)


def test_an_artifact_is_created_with_no_version_and_its_description_and_tags(api: HandlerApi) -> None:
    # When an artifact is created with a description and tags
    reply = create(api, "team/model", {"description": "not trained yet", "tags": {"team": "risk"}})
    # Then it answers 201 with a summary with no version, and reads back the same
    assert reply.status == 201, reply.body
    summary = reply.body
    assert (summary["name"], summary["description"], summary["tags"]) == (
        "team/model",
        "not trained yet",
        {"team": "risk"},
    )
    assert summary["newest_version"] is None
    assert summary["counts"] == {"versions": 0, "deleted_versions": 0, "aliases": 0}
    assert summary["latest"]["sha256"] is None
    assert api.call("GET", "/artifacts/team/model").body == summary
    # And it is listed, folded, and found by its tag
    assert [a["name"] for a in api.call("GET", "/artifacts").body["artifacts"]] == ["team/model"]
    folded = api.call("GET", "/artifacts", query={"prefix": "team/", "delimiter": "/"}).body
    assert [a["name"] for a in folded["artifacts"]] == ["team/model"]
    found = api.call("GET", "/artifacts", query={"tag": "team=risk"}).body
    assert [a["name"] for a in found["artifacts"]] == ["team/model"]
    # And its creation is announced, with its tags and description
    events = api.call("GET", "/artifacts/team/model/events").body["events"]
    assert [(e["type"], e["detail"]) for e in events] == [
        ("artifact.created", {"tags": {"team": "risk"}, "description": "not trained yet"})
    ]
    assert events[0]["by"] == "arca:local"


def test_an_empty_body_creates_a_bare_artifact_and_a_second_create_is_a_409_naming_name(
    api: HandlerApi, aws: SimpleNamespace
) -> None:
    assert create(api, "bare").status == 201
    assert create(api, "bare2", {}).status == 201
    before = snapshot(aws)
    again = create(api, "bare", {"description": "other"})
    assert again.status == 409, again.body
    assert again.body["error"]["field"] == "name"
    assert snapshot(aws) == before
    # An artifact made by publishing exists as well
    api.publish("published", b"one")
    assert create(api, "published").status == 409


def test_reads_of_an_artifact_with_no_version(api: HandlerApi) -> None:
    create(api, "empty")
    # Versions: an empty page; resolve of LATEST, a number or an alias: a 404 saying there is no version yet
    assert api.call("GET", "/artifacts/empty/versions").body["versions"] == []
    for ref in ("LATEST", "1"):
        missing = api.call("GET", f"/artifacts/empty/resolve/{ref}")
        assert missing.status == 404, missing.body
    latest = api.call("GET", "/artifacts/empty/resolve/LATEST")
    assert "no version yet" in latest.body["error"]["message"]
    assert api.call("GET", "/artifacts/empty/resolve/LATEST/content").status == 404
    assert api.call("GET", "/artifacts/empty/versions/LATEST").status == 404
    assert api.call("GET", "/artifacts/empty/resolve/LATEST/files/a.txt").status == 404
    assert api.call("GET", "/artifacts/empty/aliases/prod").status == 404
    assert api.call("GET", "/artifacts/empty/resolve/prod").status == 404
    # An alias cannot point at a version that does not exist
    assert api.call("PUT", "/artifacts/empty/aliases/prod", {"version": 1}).status in (404, 409)
    # Publishing LATEST as it stands has nothing to publish
    snap = api.call("POST", "/artifacts/empty/versions")
    assert snap.status == 404, snap.body
    assert "no version yet" in snap.body["error"]["message"]
    # Retention has nothing to do
    assert api.call("PUT", "/artifacts/empty/retention", {"keep_last": 1}).status == 200
    preview = api.call("GET", "/artifacts/empty/retention/preview")
    assert preview.status == 200, preview.body
    applied = api.call("POST", "/artifacts/empty/retention/apply", {})
    assert applied.status == 200, applied.body


def test_tags_and_description_of_an_empty_artifact_change_and_its_first_publish_is_version_1(api: HandlerApi) -> None:
    create(api, "model", {"description": "draft", "tags": {"team": "risk"}})
    patched = api.call("PATCH", "/artifacts/model", {"description": "ready", "tags": {"stage": "dev"}})
    assert patched.status == 200, patched.body
    assert (patched.body["description"], patched.body["tags"]) == ("ready", {"team": "risk", "stage": "dev"})
    # When its first version is published
    assert api.published("model", b"weights") == 1
    # Then it keeps its description and tags, and LATEST and its counts are the version's
    summary = api.call("GET", "/artifacts/model").body
    assert (summary["description"], summary["tags"]) == ("ready", {"team": "risk", "stage": "dev"})
    assert (summary["newest_version"], summary["counts"]["versions"]) == (1, 1)
    assert api.call("GET", "/artifacts/model/resolve/LATEST").body["sha256"] == sha256(b"weights")
    types = [e["type"] for e in api.call("GET", "/artifacts/model/events").body["events"]]
    assert types == ["artifact.created", "artifact.updated", "latest.updated", "version.published"]


def test_an_empty_artifact_is_purged_and_can_be_created_again(api: HandlerApi, aws: SimpleNamespace) -> None:
    create(api, "gone", {"tags": {"team": "risk"}})
    assert api.call("DELETE", "/artifacts/gone").status == 204
    assert api.call("GET", "/artifacts/gone").status == 404
    assert api.call("GET", "/artifacts").body["artifacts"] == []
    assert api.call("GET", "/artifacts", query={"tag": "team=risk"}).body["artifacts"] == []
    # Created again over its tombstone, then published: its version numbers go on
    api.publish("numbered", b"one")
    assert api.call("DELETE", "/artifacts/numbered").status == 204
    again = create(api, "numbered", {"description": "again"})
    assert again.status == 201, again.body
    assert again.body["newest_version"] == 1
    assert api.published("numbered", b"two") == 2
    assert api.call("GET", "/artifacts/numbered").body["description"] == "again"


def test_a_link_name_is_refused(api: HandlerApi) -> None:
    api.publish("target", b"one")
    assert api.call("PUT", "/artifacts/alias-name/link", {"target": "target"}).status == 201
    refused = create(api, "alias-name")
    assert refused.status == 409, refused.body


def test_an_idempotency_key_replays_the_creation(api: HandlerApi, aws: SimpleNamespace) -> None:
    first = create(api, "keyed", {"tags": {"a": "b"}}, **{"Idempotency-Key": "k-1"})
    assert first.status == 201, first.body
    again = create(api, "keyed", {"tags": {"a": "b"}}, **{"Idempotency-Key": "k-1"})
    assert (again.status, again.body) == (201, first.body)
    assert [e["type"] for e in api.call("GET", "/artifacts/keyed/events").body["events"]] == ["artifact.created"]
    item = aws.dynamodb.get_item(TableName=aws.table, Key={k: {"S": v} for k, v in keys.latest_key("keyed").items()})
    assert item["Item"]["version_count"] == {"N": "0"}
