"""Aggregates (what the items hold), their items both ways, apart from the entities (what the API answers)."""

from __future__ import annotations

import inspect

from pydantic import BaseModel

from arca.adapters import keys
from arca.adapters.store.records import (
    alias_item,
    alias_record,
    latest_item,
    latest_record,
    revision_item,
    revision_record,
    version_item,
    version_record,
)
from arca.domain import entities
from arca.domain.aggregates import AliasRecord, LatestRecord, RevisionRecord, VersionRecord, target_of
from arca.domain.entities import Latest

ITEM = {
    "name": "app",
    "sha256": "a" * 64,
    "size": 3,
    "content_type": "text/plain",
    "metadata": {"filename": "app.txt"},
    "created_at": "2026-01-01T00:00:00Z",
    "updated_at": "2026-01-02T00:00:00Z",
    "newest": 4,
    "rev": 9,
    "version_count": 4,
    "deleted_count": 1,
    "alias_count": 2,
    "purges": 1,
    "tags": {"team": "a"},
    "description": "the app",
    "tag_rev": 2,
    "last_event": "0000000000000001-00000000",
    "manifest": "{}",
    "signature": "c2ln",
    "part_size": 5,
    "parts_sha256": "b" * 64,
}


def test_the_entity_has_no_field_it_does_not_answer() -> None:
    assert not [name for name, field in Latest.model_fields.items() if field.exclude]


def test_no_entity_has_a_field_it_does_not_answer() -> None:
    # What the services need besides an answer is on the aggregates (arca.domain.aggregates), not hidden here
    models = [m for _, m in inspect.getmembers(entities, inspect.isclass) if issubclass(m, BaseModel)]
    assert len(models) > 30
    excluded = [f"{m.__name__}.{name}" for m in models for name, field in m.model_fields.items() if field.exclude]
    assert excluded == []


def test_the_record_keeps_the_items_state_and_answers_as_the_entity() -> None:
    # Given LATEST's item read as its record
    record = latest_record(ITEM)
    # Then the state the writes need is on the record
    assert isinstance(record, LatestRecord)
    assert (record.rev, record.newest, record.purges, record.tag_rev, record.tags) == (9, 4, 1, 2, {"team": "a"})
    assert target_of(record).parts_sha256 == "b" * 64 and target_of(record).manifest == "{}"
    # And the API's answer is the working copy alone, as before
    assert record.entity().model_dump(mode="json") == {
        "name": "app",
        "version": "LATEST",
        "sha256": "a" * 64,
        "size": 3,
        "content_type": "text/plain",
        "metadata": {"filename": "app.txt"},
        "updated_at": "2026-01-02T00:00:00Z",
        "newest_version": 4,
        "part_size": 5,
    }


VERSION_ITEM = {
    "name": "app",
    "sk": "000004",
    "sha256": "a" * 64,
    "size": 12,
    "content_type": "text/plain",
    "metadata": {"filename": "app.txt"},
    "created_at": "2026-01-01T00:00:00Z",
    "deleted": False,
    "pinned_by": {"prod"},
    "tags": {"team": "a"},
    "tag_rev": 3,
    "part_size": 5,
    "parts_sha256": "b" * 64,
    "manifest": "{}",
    "signature": "c2ln",
}


def test_the_version_record_keeps_the_items_state_and_answers_as_the_entity() -> None:
    # Given a version's item read as its record
    record = version_record(VERSION_ITEM)
    # Then the state the services need is on the record: the tags' counter, the multipart layout's name
    assert isinstance(record, VersionRecord)
    assert (record.tag_rev, record.parts_sha256, record.part_count) == (3, "b" * 64, 3)
    assert target_of(record).parts_sha256 == "b" * 64
    # And the API's answer is the version alone, as before (the part hashes when given)
    answer = record.entity(parts=["c" * 64, "d" * 64, "e" * 64]).model_dump(mode="json")
    assert answer == {
        "name": "app",
        "version": 4,
        "sha256": "a" * 64,
        "size": 12,
        "content_type": "text/plain",
        "metadata": {"filename": "app.txt"},
        "created_at": "2026-01-01T00:00:00Z",
        "deleted": False,
        "deleted_at": None,
        "aliases": ["prod"],
        "tags": {"team": "a"},
        "attestations": [],
        "part_size": 5,
        "part_count": 3,
        "parts": ["c" * 64, "d" * 64, "e" * 64],
        "manifest": "{}",
        "signature": "c2ln",
    }
    assert "parts" not in record.entity().model_dump(mode="json")


TARGET = {"sha256": "a" * 64, "size": 12, "content_type": "text/plain", "part_size": 5, "parts_sha256": "b" * 64}
ALIAS_ITEM = {
    "kind": "alias",
    "name": "app",
    "alias": "prod",
    "version": 4,
    "secondary_version": 5,
    "secondary_version_weight": 10,
    "revision": 7,
    "updated_at": "2026-01-02T00:00:00Z",
    "updated_by": "alice",
    "created_at": "2026-01-01T00:00:00Z",
    "primary": TARGET,
    "secondary": {**TARGET, "sha256": "c" * 64},
    "deleted": False,
    "first_revision": 3,
}


def test_the_alias_record_keeps_the_items_state_and_answers_as_the_entity() -> None:
    # Given an alias item read as its record
    record = alias_record(ALIAS_ITEM)
    # Then the targets' content, the tombstone and where its history starts are on the record
    assert isinstance(record, AliasRecord)
    assert record.primary is not None and record.primary.parts_sha256 == "b" * 64
    assert record.secondary is not None and record.secondary.sha256 == "c" * 64
    assert (record.deleted, record.first_revision, record.pinned) == (False, 3, {4, 5})
    assert record.model_copy(update={"deleted": True}).pinned == set()
    # And it is written back as the same item
    assert alias_item(record) == {**ALIAS_ITEM, **keys.alias_key("app", "prod")}
    # And the API's answer is the alias alone, as before
    assert record.entity().model_dump(mode="json") == {
        "name": "app",
        "alias": "prod",
        "version": 4,
        "secondary_version": 5,
        "secondary_version_weight": 10,
        "description": None,
        "revision": 7,
        "updated_at": "2026-01-02T00:00:00Z",
        "updated_by": "alice",
        "reason": None,
        "created_at": "2026-01-01T00:00:00Z",
    }


def test_the_revision_record_keeps_the_targets_and_answers_as_the_entity() -> None:
    # Given a history record (the alias item with its action) read as its record
    record = revision_record({**ALIAS_ITEM, "kind": "alias-history", "action": "rollback"})
    assert isinstance(record, RevisionRecord)
    assert record.primary is not None and target_of(version_record(VERSION_ITEM)).sha256 == record.primary.sha256
    # Then the API's answer is the revision alone, its deletion flag included, as before
    assert record.entity().model_dump(mode="json") == {
        "action": "rollback",
        "version": 4,
        "secondary_version": 5,
        "secondary_version_weight": 10,
        "description": None,
        "revision": 7,
        "updated_at": "2026-01-02T00:00:00Z",
        "updated_by": "alice",
        "reason": None,
        "deleted": False,
    }


def test_the_openapi_document_shows_no_field_of_a_record_alone() -> None:
    # What only the records hold (counters, layouts, copied targets, tombstones) is nowhere in the contract
    from arca.api.openapi import document

    schemas = document()["components"]["schemas"]
    internal = {"tag_rev", "parts_sha256", "primary", "secondary", "first_revision", "rev", "last_event"}
    shown = {(name, p) for name, s in schemas.items() for p in s.get("properties", {}) if p in internal}
    assert shown == set()
    assert "Target" not in schemas


def test_each_aggregate_is_written_as_the_item_it_is_read_from() -> None:
    # Given each aggregate read from its item
    latest, version = latest_record(ITEM), version_record(VERSION_ITEM)
    alias = alias_record(ALIAS_ITEM)
    # When each is written back as its item
    # Then it reads back as the same aggregate
    assert latest_record(latest_item(latest)) == latest
    assert version_record(version_item(version)) == version
    assert alias_record(alias_item(alias)) == alias
    assert revision_record(revision_item(alias, "rollback")) == revision_record(
        {**ALIAS_ITEM, "kind": "alias-history", "action": "rollback"}
    )


def test_a_published_version_is_put_with_its_content_its_index_and_nothing_unset() -> None:
    # Given a version as a publish makes it (content with no multipart layout)
    content = {"sha256": "a" * 64, "size": 3, "content_type": "text/plain", "metadata": {}}
    layout = {"part_size": None, "parts_sha256": None, "files": None, "file_types": None}
    made = VersionRecord(name="app", version=2, **content, **layout, created_at="2026-01-01T00:00:00Z")
    # When it is written as its item
    item = version_item(made)
    # Then every content attribute is there (nulls too), the rest only when set, with its key and index
    assert item == {
        "kind": "version",
        "name": "app",
        **content,
        **layout,
        "created_at": "2026-01-01T00:00:00Z",
        "deleted": False,
        "counted": True,
        **keys.version_index_attributes("app", 2, "a" * 64, "2026-01-01T00:00:00Z"),
        **keys.version_key("app", 2),
    }


def test_latest_is_put_as_a_link_or_an_artifact_with_no_content_with_only_what_it_holds() -> None:
    # Given a link's LATEST and a new artifact's with no content, as the stores put them
    now = "2026-01-01T00:00:00Z"
    link = LatestRecord(name="app", link="other", purged=now, created_at=now, updated_at=now, rev=1)
    created = LatestRecord(name="app", created_at=now, updated_at=now, rev=1, tags={"a": "b"}, tag_rev=1, tagged_at=now)
    # Then the link holds its target and the counters a name keeps, no count of an artifact
    times = {"created_at": now, "updated_at": now}
    assert latest_item(link) == {
        "kind": "link",
        "name": "app",
        "link": "other",
        "purged": now,
        **times,
        "rev": 1,
        "newest": 0,
        "purges": 0,
        "revision_base": 0,
        **keys.latest_key("app"),
    }
    # And the artifact its tags and counts, and no content attribute at all
    assert latest_item(created) == {
        "kind": "latest",
        "name": "app",
        "tags": {"a": "b"},
        "tag_rev": 1,
        "tagged_at": now,
        **times,
        "newest": 0,
        "rev": 1,
        "purges": 0,
        "revision_base": 0,
        "version_count": 0,
        "deleted_count": 0,
        "alias_count": 0,
        **keys.latest_key("app"),
    }
