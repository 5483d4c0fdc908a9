"""LATEST's record (what its item holds) apart from the `Latest` entity (what the API answers)."""

from __future__ import annotations

from arca.adapters.store.records import LatestRecord, latest_record, target_of
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
