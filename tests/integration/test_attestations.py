"""Attestations through the real handlers under moto: content-addressed, one transaction with their event."""

from __future__ import annotations

import json
from types import SimpleNamespace

import requests

from arca.adapters import keys
from arca.domain.models import MAX_ATTESTATIONS
from arca.services.attestations import attestation_id, canonical
from tests.helpers import HandlerApi, sha256
from tests.integration.conftest import snapshot

PROVENANCE = {"builder": {"id": "ci"}, "subject": [{"name": "app", "digest": {"sha256": "ab" * 32}}]}
BASE = "/artifacts/team/app/versions/1/attestations"


def published(api: HandlerApi) -> None:
    assert api.publish("team/app", b"v1").status == 201


def test_inline_attestation_is_created_then_the_same_document_is_the_same_attestation(
    api: HandlerApi, aws: SimpleNamespace
) -> None:
    # Given
    published(api)
    data = canonical(PROVENANCE)
    # When
    first = api.call("POST", BASE, {"type": "slsa-provenance", "content": PROVENANCE})
    before = snapshot(aws)
    again = api.call("POST", BASE, {"type": "slsa-provenance", "content": dict(reversed(PROVENANCE.items()))})
    # Then
    assert first.status == 201, first.body
    assert set(first.body) == {"id", "type", "sha256", "size", "media_type", "created_at", "created_by"}
    assert first.body["sha256"] == sha256(data)
    assert first.body["id"] == sha256(f"slsa-provenance\n{sha256(data)}".encode())
    assert (first.body["size"], first.body["media_type"]) == (len(data), "application/json")
    assert first.body["created_by"] != first.body["id"]  # the caller, not the attestation
    assert first.body["created_by"] == api.identity
    assert again.status == 200 and again.body == first.body
    assert snapshot(aws) == before  # nothing written the second time
    stored = aws.s3.get_object(Bucket=aws.bucket, Key=keys.attestation_blob_key("team/app", 1, first.body["id"]))
    assert stored["Body"].read() == data


def test_the_version_carries_its_attestation_types_and_the_event_is_written(api: HandlerApi) -> None:
    # Given
    published(api)
    # When
    api.call("POST", BASE, {"type": "slsa-provenance", "content": {"a": 1}})
    api.call("POST", BASE, {"type": "test-report", "content": {"passed": 10}})
    api.call("POST", BASE, {"type": "test-report", "content": {"passed": 11}})
    # Then
    version = api.call("GET", "/artifacts/team/app/versions/1").body
    assert version["attestations"] == ["slsa-provenance", "test-report"]
    events = api.call("GET", "/artifacts/team/app/events").body["events"]
    added = [e for e in events if e["type"] == "attestation.added"]
    assert len(added) == 3 and {e["detail"]["type"] for e in added} == {"slsa-provenance", "test-report"}
    assert all(e["version"] == 1 for e in added)


def test_list_filters_by_type_and_pages_and_one_has_a_download_url(api: HandlerApi) -> None:
    # Given
    published(api)
    made = [api.call("POST", BASE, {"type": "test-report", "content": {"run": i}}).body for i in range(3)]
    api.call("POST", BASE, {"type": "sbom-spdx", "content": {"spdx": "2.3"}})
    # When
    everything = api.call("GET", BASE).body
    reports = api.call("GET", BASE, query={"type": "test-report", "limit": "2"}).body
    rest = api.call("GET", BASE, query={"type": "test-report", "limit": "2", "next_token": reports["next_token"]})
    one = api.call("GET", f"{BASE}/{made[0]['id']}")
    # Then
    assert len(everything["attestations"]) == 4 and everything["next_token"] is None
    assert len(reports["attestations"]) == 2 and reports["next_token"]
    ids = {a["id"] for a in reports["attestations"] + rest.body["attestations"]}
    assert ids == {m["id"] for m in made}
    assert one.status == 200 and one.body["id"] == made[0]["id"]
    assert json.loads(requests.get(one.body["download_url"], timeout=10).content) == {"run": 0}


def test_attestation_by_reference_to_an_uploaded_blob(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given an SBOM uploaded as a blob
    published(api)
    sbom = b"SPDXVersion: SPDX-2.3\n" * 100
    digest = api.upload("team/app", sbom)
    # When
    reply = api.call(
        "POST", BASE, {"type": "sbom-spdx", "sha256": digest, "size": len(sbom), "media_type": "text/spdx"}
    )
    # Then it is copied under the version, without the upload tag that would expire it
    assert reply.status == 201, reply.body
    assert (reply.body["sha256"], reply.body["media_type"], reply.body["size"]) == (digest, "text/spdx", len(sbom))
    assert reply.body["id"] == attestation_id("sbom-spdx", digest)
    key = keys.attestation_blob_key("team/app", 1, reply.body["id"])
    assert aws.s3.get_object(Bucket=aws.bucket, Key=key)["Body"].read() == sbom
    assert aws.s3.get_object_tagging(Bucket=aws.bucket, Key=key)["TagSet"] == []


def test_a_reference_to_bytes_never_uploaded_or_of_another_size_is_refused(
    api: HandlerApi, aws: SimpleNamespace
) -> None:
    # Given
    published(api)
    digest = api.upload("team/app", b"real")
    before = snapshot(aws)
    # When
    missing = api.call("POST", BASE, {"type": "sbom-spdx", "sha256": "0" * 64, "size": 4})
    wrong = api.call("POST", BASE, {"type": "sbom-spdx", "sha256": digest, "size": 5})
    # Then
    assert (missing.status, missing.body["error"]["field"]) == (409, "sha256")
    assert (wrong.status, wrong.body["error"]["field"]) == (400, "size")
    assert snapshot(aws) == before


def test_refused_on_a_deleted_version_and_a_missing_one(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given
    published(api)
    assert api.call("DELETE", "/artifacts/team/app/versions/1").status == 200
    before = snapshot(aws)
    # When
    deleted = api.call("POST", BASE, {"type": "test-report", "content": {}})
    missing = api.call("POST", "/artifacts/team/app/versions/2/attestations", {"type": "test-report", "content": {}})
    # Then
    assert (deleted.status, deleted.body["error"]["field"]) == (409, "version")
    assert missing.status == 404
    assert snapshot(aws) == before


def test_a_version_deleted_after_the_check_is_refused_by_the_transaction(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given a version read live, then deleted before the transaction
    from arca import wiring

    published(api)
    attesting = wiring.attesting()
    original = attesting.reading.version

    def read_then_delete(name: str, number: int):  # type: ignore[no-untyped-def]
        found = original(name, number)
        assert api.call("DELETE", "/artifacts/team/app/versions/1").status == 200
        return found

    attesting.reading.version = read_then_delete  # type: ignore[method-assign]
    # When
    reply = api.call("POST", BASE, {"type": "test-report", "content": {"late": True}})
    # Then
    assert (reply.status, reply.body["error"]["field"]) == (409, "version")
    items = aws.dynamodb.query(
        TableName=aws.table,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": "__team/app-attestations"}},
    )["Items"]
    assert items == []


def test_at_most_100_a_version(api: HandlerApi) -> None:
    # Given a version with the most attestations it may have
    published(api)
    for i in range(MAX_ATTESTATIONS):
        assert api.call("POST", BASE, {"type": "test-report", "content": {"run": i}}).status == 201
    # When
    reply = api.call("POST", BASE, {"type": "test-report", "content": {"run": "one more"}})
    # Then
    assert reply.status == 409
    assert reply.body["error"]["code"] == "AttestationLimitError"
    assert reply.body["error"]["limit"] == MAX_ATTESTATIONS


def test_inline_content_over_256_kib_is_413(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given
    published(api)
    before = snapshot(aws)
    # When
    reply = api.call("POST", BASE, {"type": "sbom-spdx", "content": {"x": "a" * (256 * 1024)}})
    # Then
    assert (reply.status, reply.body["error"]["field"]) == (413, "content")
    assert snapshot(aws) == before


def test_bad_bodies_are_400_naming_the_field(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given
    published(api)
    before = snapshot(aws)
    # When / Then
    for body, field in [
        ({"type": "Bad Type", "content": {}}, "type"),
        ({"content": {}}, "type"),
        ({"type": "x"}, "body"),
        ({"type": "x", "content": [1]}, "content"),
        ({"type": "x", "content": {}, "sha256": "0" * 64, "size": 1}, "body"),
    ]:
        reply = api.call("POST", BASE, body)
        assert reply.status == 400, (body, reply.body)
        assert reply.body["error"]["field"] == field, (body, reply.body)
    assert snapshot(aws) == before


def test_reads_of_unknown_things_are_404(api: HandlerApi) -> None:
    published(api)
    assert api.call("GET", f"{BASE}/{'0' * 64}").status == 404
    assert api.call("GET", "/artifacts/team/app/versions/9/attestations").status == 404
    assert api.call("GET", f"{BASE}/not-hex").status == 400


def test_inline_content_is_stored_canonically_and_text_that_is_not_unicode_is_refused() -> None:
    import pytest

    from arca.domain.errors import ValidationError

    assert canonical({"b": [1, {"z": 1, "a": "é"}], "a": None}) == '{"a":null,"b":[1,{"a":"é","z":1}]}'.encode()
    with pytest.raises(ValidationError) as refused:
        canonical({"x": "a\ud800"})
    assert refused.value.field == "content"


def test_the_same_document_under_another_type_is_another_attestation(api: HandlerApi) -> None:
    # Given a document attested as a test report
    published(api)
    report = api.call("POST", BASE, {"type": "test-report", "content": PROVENANCE}).body
    # When the same document is posted as provenance (a type a policy may require)
    squat = api.call("POST", BASE, {"type": "slsa-provenance", "content": PROVENANCE})
    # Then it is an attestation of its own, of that type: the first one is not answered for it
    assert squat.status == 201 and squat.body["type"] == "slsa-provenance"
    assert squat.body["id"] != report["id"] and squat.body["sha256"] == report["sha256"]
    listed = api.call("GET", BASE).body["attestations"]
    assert sorted(a["type"] for a in listed) == ["slsa-provenance", "test-report"]


def test_content_that_is_not_strict_json_is_a_400_naming_content_and_writes_nothing(
    api: HandlerApi, aws: SimpleNamespace
) -> None:
    published(api)
    before = snapshot(aws)
    for number in ("NaN", "Infinity", "-Infinity", "1e400"):
        raw = '{"type": "test-report", "content": {"score": [1, {"x": NUMBER}]}}'.replace("NUMBER", number)
        reply = api.call("POST", BASE, raw=raw)
        assert reply.status == 400, (number, reply.body)
        assert reply.error["field"] == "content" and "strict JSON" in reply.error["message"]
    assert snapshot(aws) == before


def test_an_attestation_made_when_ids_were_the_contents_sha256_is_found_by_its_document_and_type(
    api: HandlerApi, aws: SimpleNamespace
) -> None:
    from arca import wiring
    from arca.adapters.store.change import Change
    from arca.domain.entities import Attestation
    from tests.helpers import acting

    # Given an attestation stored as before, its id the content's sha256
    published(api)
    data = canonical(PROVENANCE)
    old = Attestation(
        id=sha256(data),
        type="slsa-provenance",
        sha256=sha256(data),
        size=len(data),
        media_type="application/json",
        created_at="2026-01-01T00:00:00.000Z",
    )
    store = acting("publish", wiring.services().stores.attestations)
    change = Change("team/app", by=None, now=old.created_at)
    store.stage_add(change, 1, old)
    store.commit(change)
    before = snapshot(aws)
    # When the same document of that type is posted, and then under another type
    again = api.call("POST", BASE, {"type": "slsa-provenance", "content": PROVENANCE})
    assert snapshot(aws) == before
    other = api.call("POST", BASE, {"type": "test-report", "content": PROVENANCE})
    # Then the first is that attestation (nothing written), the second a new one; the old one reads by its id
    assert again.status == 200 and again.body["id"] == old.id
    assert other.status == 201 and other.body["id"] == attestation_id("test-report", old.sha256)
    assert api.call("GET", f"{BASE}/{old.id}").body["type"] == "slsa-provenance"


def test_an_attestation_a_concurrent_request_made_first_is_the_answer_and_nothing_more_is_written(
    api: HandlerApi, monkeypatch
) -> None:
    from arca import wiring

    # Given an attestation made by a request that committed after this one read and found none
    published(api)
    first = api.call("POST", BASE, {"type": "slsa-provenance", "content": PROVENANCE})
    store = wiring.services().stores.attestations
    read = store.get
    reads: list[tuple[object, ...]] = []

    def before_the_other_committed(*args: object) -> object:
        reads.append(args)
        return None if len(reads) <= 2 else read(*args)  # by id, then by the content's sha256

    monkeypatch.setattr(store, "get", before_the_other_committed)
    # When the same document is posted
    again = api.call("POST", BASE, {"type": "slsa-provenance", "content": PROVENANCE})
    # Then its transaction is refused, and the answer is the attestation there is, written once and announced once
    assert again.status == 200 and again.body == first.body
    assert len(reads) == 3
    version = api.call("GET", "/artifacts/team/app/versions/1").body
    assert version["attestations"] == ["slsa-provenance"]
    events = api.call("GET", "/artifacts/team/app/events").body["events"]
    assert [e["type"] for e in events].count("attestation.added") == 1
