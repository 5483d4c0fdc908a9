"""Purge under races and budgets, with interleavings forced by wrapping one step of a purge or a publish."""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any

import pytest
from botocore.exceptions import ClientError
from botocore.stub import Stubber

from arca import wiring
from arca.domain.errors import ConflictError, ThrottledError
from arca.domain.models import AliasBody, Content
from arca.services.retry import Budget
from tests.helpers import PATIENCE, HandlerApi, acting, hooked


def stored(aws: SimpleNamespace, name: str) -> dict[str, list[str]]:
    """Every item of the artifact's partitions (test-only Scan), by partition."""
    found: dict[str, list[str]] = {}
    for item in aws.dynamodb.scan(TableName=aws.table, ConsistentRead=True)["Items"]:
        pk = item["pk"]["S"]
        if pk in (name, f"__{name}-alias", f"__{name}-history", f"__{name}-events"):
            found.setdefault(pk, []).append(item["sk"]["S"])
    return found


def latest_item(aws: SimpleNamespace, name: str) -> dict[str, Any]:
    return aws.dynamodb.get_item(TableName=aws.table, Key={"pk": {"S": name}, "sk": {"S": "LATEST"}})["Item"]


def test_plain_purge_never_clears_the_mark_of_a_concurrent_forced_purge(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given an artifact with one version and no alias, a plain purge past its alias check, and then an
    # alias made and a forced purge that marks LATEST before the plain purge marks it
    api.publish("app", b"a")
    plain, forced, aliases = (
        acting("publish", wiring.build().removal),
        acting("publish", wiring.build().removal),
        acting("alias", wiring.build().aliases),
    )
    forced_marked, plain_done = threading.Event(), threading.Event()
    outcome: dict[str, Any] = {}
    delete_rows = forced.purging.delete_rows

    def forced_pauses_after_marking(*args: Any, **kwargs: Any) -> bool:
        forced_marked.set()
        plain_done.wait(PATIENCE)
        return delete_rows(*args, **kwargs)

    forced.purging.delete_rows = forced_pauses_after_marking  # type: ignore[method-assign]

    def run_forced() -> None:
        try:
            outcome["forced"] = forced.purge("app", force=True)
        except Exception as error:  # the assertion below names it
            outcome["forced"] = error

    thread = threading.Thread(target=run_forced)
    mark = plain.purging.mark_purging

    def alias_then_forced_purge_first(*args: Any, **kwargs: Any) -> None:
        aliases.set("app", "prod", AliasBody(version=1))
        thread.start()
        assert forced_marked.wait(PATIENCE)
        mark(*args, **kwargs)

    plain.purging.mark_purging = alias_then_forced_purge_first  # type: ignore[method-assign]
    # When both run
    with pytest.raises(ConflictError) as refused:
        plain.purge("app", force=False)
    plain_done.set()
    thread.join(10)
    # Then the plain purge was refused, and the forced one finished the purge: nothing is left but the tombstone
    assert outcome["forced"] is True
    assert stored(aws, "app") == {"app": ["LATEST"]}
    assert "purged" in latest_item(aws, "app") and "purging" not in latest_item(aws, "app")
    assert "forced purge" in refused.value.message


def test_plain_purge_is_refused_when_an_alias_is_made_before_its_mark(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given a plain purge whose alias check passed, then an alias made before it marks LATEST
    api.publish("app", b"a")
    plain, aliases = acting("publish", wiring.build().removal), acting("alias", wiring.build().aliases)
    mark = plain.purging.mark_purging

    def alias_first(*args: Any, **kwargs: Any) -> None:
        aliases.set("app", "prod", AliasBody(version=1))
        mark(*args, **kwargs)

    plain.purging.mark_purging = alias_first  # type: ignore[method-assign]
    # When it runs
    with pytest.raises(ConflictError) as refused:
        plain.purge("app", force=False)
    # Then the mark (one condition with the alias count) refused it, naming the alias, and nothing changed
    assert refused.value.details == {"aliases": ["prod"]}
    assert "purging" not in latest_item(aws, "app")
    assert api.call("GET", "/artifacts/app/aliases/prod").body["version"] == 1


def test_publish_that_verified_its_blob_before_a_whole_purge_does_not_commit(
    api: HandlerApi, aws: SimpleNamespace
) -> None:
    # Given an artifact, and a publish of new content whose blob checks (verify, then keep) pass just before
    # a purge runs whole
    api.publish("app", b"a")
    digest = api.upload("app", b"b")
    publisher, purger = acting("publish", wiring.build().publishing), acting("publish", wiring.build().removal)
    keep = publisher.blobs.keep

    def keep_then_purge(*args: Any, **kwargs: Any) -> None:
        keep(*args, **kwargs)
        publisher.blobs.keep = keep  # type: ignore[method-assign]
        purger.purge("app", force=False)

    publisher.blobs.keep = keep_then_purge  # type: ignore[method-assign]
    # When the publish goes on
    with pytest.raises(ConflictError) as refused:
        publisher.publish("app", Content(sha256=digest, size=1))
    # Then it fails on the missing blob rather than commit a version whose content the purge deleted
    assert refused.value.field == "sha256"
    assert stored(aws, "app") == {"app": ["LATEST"]}


def test_publish_that_read_latest_before_the_mark_fails_its_condition(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given a publish that read LATEST, then a purge that marks it and stops at its budget
    api.publish("app", b"a")
    digest = api.upload("app", b"b")
    publisher, purger = acting("publish", wiring.build().publishing), acting("publish", wiring.build().removal)
    stage_latest = publisher.artifacts.stage_latest

    def purge_marks_first(*args: Any, **kwargs: Any) -> Any:
        assert not purger.purge("app", force=False, budget=Budget(calls=0))
        return stage_latest(*args, **kwargs)

    publisher.artifacts.stage_latest = purge_marks_first  # type: ignore[method-assign]
    # When the publish commits
    with pytest.raises(ConflictError):
        publisher.publish("app", Content(sha256=digest, size=1))
    # Then no version 2 exists
    assert sorted(stored(aws, "app")["app"]) == ["000001", "LATEST"]


def test_alias_writes_are_refused_once_a_purge_has_marked_the_artifact(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given a forced purge paused right after its mark, over an artifact with an alias
    api.publish("app", b"a")
    api.call("PUT", "/artifacts/app/aliases/prod", {"version": 1})
    purger, aliases = acting("publish", wiring.build().removal), acting("alias", wiring.build().aliases)
    delete_rows = purger.purging.delete_rows
    attempts: dict[str, Any] = {}
    reads: list[dict[str, Any]] = []
    query = purger.purging.table.query

    def recorded_query(*args: Any, **kwargs: Any) -> Any:
        reads.append(kwargs)
        return query(*args, **kwargs)

    def alias_writes_first(*args: Any, **kwargs: Any) -> bool:
        for label, write in (
            ("delete", lambda: aliases.delete("app", "prod")),
            ("create", lambda: aliases.set("app", "beta", AliasBody(version=1))),
        ):
            try:
                write()
                attempts[label] = "written"
            except ConflictError:
                attempts[label] = "refused"
        purger.purging.table.query = recorded_query  # type: ignore[method-assign]
        return delete_rows(*args, **kwargs)

    purger.purging.delete_rows = alias_writes_first  # type: ignore[method-assign]
    # When the purge runs
    assert purger.purge("app", force=True)
    # Then both alias writes were refused, the purge read every partition consistently, and no row survived
    assert attempts == {"delete": "refused", "create": "refused"}
    assert reads and all(r["consistent"] for r in reads)
    assert stored(aws, "app") == {"app": ["LATEST"]}
    # and a re-created artifact starts its alias history cleanly
    api.publish("app", b"b")
    assert api.call("PUT", "/artifacts/app/aliases/prod", {"version": 2}).status == 201


def test_purge_over_budget_answers_202_and_the_same_delete_continues(
    api: HandlerApi, aws: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given 30 versions (two pages of rows) with their 60 events (three pages), and a budget of one batch call
    # per request
    for i in range(30):
        api.publish("app", f"v{i}".encode())
    monkeypatch.setenv("ARCA_PURGE_MAX_CALLS", "1")
    wiring.reset()
    # When DELETE is sent until it answers 204
    answers = []
    for _ in range(10):
        reply = api.call("DELETE", "/artifacts/app")
        answers.append(reply.status)
        if reply.status == 204:
            break
        assert reply.body["status"] == "purging"
        assert api.publish("app", b"new").status == 409
    # Then each request did one call's worth (25 and 5 blob counts, 25, 25 and 10 events, 25 and 5 versions, then
    # the blobs), the last one finished, and publishes meanwhile were refused
    assert answers == [202, 202, 202, 202, 202, 202, 202, 204]
    assert stored(aws, "app") == {"app": ["LATEST"]}
    assert aws.s3.list_objects_v2(Bucket=aws.bucket).get("KeyCount") == 0


def test_alias_revisions_go_on_after_a_purge_so_an_old_etag_never_matches(api: HandlerApi) -> None:
    # Given an alias moved to revision 3, then a forced purge, then the artifact and the alias made anew
    api.publish("app", b"a")
    api.publish("app", b"b")
    for version in (1, 2, 1):
        assert api.call("PUT", "/artifacts/app/aliases/prod", {"version": version}).status in (200, 201)
    before = api.call("GET", "/artifacts/app/resolve/prod").body
    assert api.call("DELETE", "/artifacts/app", query={"force": "true"}).status == 204
    api.publish("app", b"c")
    # When
    created = api.call("PUT", "/artifacts/app/aliases/prod", {"version": 3})
    stale = api.call("PUT", "/artifacts/app/aliases/prod", {"version": 3}, headers={"If-Match": '"1"'})
    # Then the new incarnation numbers on from 3: an ETag of the old one matches nothing
    assert created.status == 201 and created.body["revision"] == 4 and created.headers["ETag"] == '"4"'
    assert stale.status == 412
    history = api.call("GET", "/artifacts/app/aliases/prod/history").body["history"]
    assert [h["revision"] for h in history] == [4]
    # And time travel knows the alias only from its new first revision on
    at_creation = api.call("GET", "/artifacts/app/resolve/prod", query={"at": created.body["updated_at"]})
    assert at_creation.status == 200 and at_creation.body["alias_revision"] == 4
    assert before["alias_revision"] == 3
    earlier = api.call("GET", "/artifacts/app/resolve/prod", query={"at": "2000-01-01T00:00:00Z"})
    assert earlier.status == 404


def test_purge_that_s3_did_not_wholly_delete_does_not_answer_204(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given a published artifact, and S3 answering its next DeleteObjects with a key it could not delete
    api.publish("app", b"kept by S3")
    failures = [{"Key": "artifacts/app/_blobs/x", "Code": "AccessDenied", "Message": "Access Denied"}]
    answered: list[int] = []

    def partly(**_: Any) -> tuple[Any, dict[str, Any]] | None:
        if answered:
            return None
        answered.append(1)
        return SimpleNamespace(status_code=200, headers={}), {"Errors": failures, "ResponseMetadata": {}}

    # When the artifact is purged (DeleteObjects answering 200 with per-key Errors), then purged again
    with hooked("before-call.s3.DeleteObjects", partly):
        first = api.call("DELETE", "/artifacts/app")
    again = api.call("DELETE", "/artifacts/app")
    # Then the first purge failed rather than report success with the blob left, and the second finished
    assert first.status == 500, first.body
    assert again.status == 204, again.body
    assert aws.s3.list_objects_v2(Bucket=aws.bucket).get("KeyCount") == 0


@pytest.mark.parametrize(("code", "raised"), [("SlowDown", ThrottledError), ("AccessDenied", ClientError)])
def test_delete_prefix_raises_on_the_per_key_errors_of_delete_objects(
    aws: SimpleNamespace, code: str, raised: type[Exception]
) -> None:
    # Given S3 listing one object and answering its DeleteObjects with that key among the Errors
    blobs = wiring.services().blobs
    stub = Stubber(blobs.client)
    key = "artifacts/app/_blobs/x"
    stub.add_response("list_objects_v2", {"Contents": [{"Key": key}], "KeyCount": 1, "IsTruncated": False})
    stub.add_response("delete_objects", {"Errors": [{"Key": key, "Code": code, "Message": "no"}]})
    # When / Then the prefix is not reported deleted
    with stub, pytest.raises(raised):
        blobs.delete_prefix("artifacts/app/_blobs/")
