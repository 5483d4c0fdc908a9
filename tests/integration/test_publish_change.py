"""The publish path staged into one change: each item's refusal says what its failed condition means, asked in the
order the old reading of a cancellation asked (the record, a collection holding the content, LATEST moved, the
version taken), whatever the order of the items in the transaction."""

from __future__ import annotations

from types import SimpleNamespace

import boto3
import pytest

from arca.adapters import keys
from arca.adapters.dynamo import Table, Update, Write
from arca.adapters.store.artifacts import ArtifactStore
from arca.adapters.store.change import Change
from arca.adapters.store.feed import Feed
from arca.adapters.store.versions import VersionStore, VersionUnchanged
from arca.domain.errors import ConflictError, ContentionError, NotFoundError, VersionPinnedError
from arca.domain.models import Content

NOW = "2026-01-01T00:00:00.000Z"
A, B, C = (Content(sha256=c * 64, size=1) for c in "abc")


@pytest.fixture
def stores(aws: SimpleNamespace) -> SimpleNamespace:
    table = Table(boto3.client("dynamodb"), aws.table)
    feed = Feed(table)
    return SimpleNamespace(table=table, artifacts=ArtifactStore(table, feed), versions=VersionStore(table, feed))


def publish(stores: SimpleNamespace, content: Content, number: int | None, *, seen: object = "read") -> None:
    latest = stores.artifacts.latest("app") if seen == "read" else seen
    change = Change("app", by="alice", now=NOW)
    stores.artifacts.stage_latest(change, latest, content, publish_as=number)
    stores.artifacts.commit(change)


def raw(stores: SimpleNamespace, *writes: Write) -> None:
    stores.table.transact(list(writes))


def test_a_publish_over_a_stale_latest_is_re_read_though_the_version_is_taken_too(stores: SimpleNamespace) -> None:
    # Given version 1, LATEST read, then version 2 published by another writer
    publish(stores, A, 1)
    seen = stores.artifacts.latest("app")
    publish(stores, B, 2)
    # When a publish staged over what was read commits (its counter moved, and its version exists)
    with pytest.raises(ConflictError) as refused:
        publish(stores, C, 2, seen=seen)
    # Then it is contention (the service re-reads), not the version taken
    assert type(refused.value) is ContentionError


def test_a_version_taken_while_latest_is_as_read_is_a_conflict_naming_it(stores: SimpleNamespace) -> None:
    # Given version 1, and an item at version 2 that no LATEST write counted
    publish(stores, A, 1)
    raw(stores, Write("v", "Put", keys.version_key("app", 2), item={"kind": "version"}))
    # When a publish of version 2 commits over LATEST as it is
    with pytest.raises(ConflictError, match="version 2 of 'app' exists") as refused:
        publish(stores, B, 2)
    # Then the version taken is what is said
    assert type(refused.value) is ConflictError


def test_a_reference_to_content_being_collected_is_said_before_latest_moved(stores: SimpleNamespace) -> None:
    # Given LATEST read, then moved, and the content to reference held by a collection
    publish(stores, A, 1)
    seen = stores.artifacts.latest("app")
    publish(stores, C, None)
    held = {"kind": "blob-count", "refs": 0, "collecting": "t", "claimed_at": NOW}
    raw(stores, Write("count", "Put", keys.blob_count_key("app", B.sha256), item=held))
    # When a write of LATEST over what was read references it
    with pytest.raises(ConflictError) as refused:
        publish(stores, B, None, seen=seen)
    # Then the collection is named, with when it began
    assert refused.value.details == {"collecting": True} and B.sha256 in refused.value.message
    assert NOW in refused.value.message


def test_a_deletion_is_refused_by_the_version_as_it_was(stores: SimpleNamespace) -> None:
    # Given versions 1 and 2, version 2 pinned by an alias
    publish(stores, A, 1)
    publish(stores, B, 2)
    pin = Write("pin", "Update", keys.version_key("app", 2), update=Update(set={"pinned_by": {"prod"}}))
    raw(stores, pin)

    def delete(number: int) -> None:
        change = Change("app", by="alice", now=NOW)
        stores.versions.stage_deleted(change, [number], deleted=True)
        stores.versions.commit(change)

    # When version 1 is deleted twice, version 2 and a version 7 that does not exist once each
    delete(1)
    with pytest.raises(VersionUnchanged) as unchanged:
        delete(1)
    with pytest.raises(VersionPinnedError) as pinned:
        delete(2)
    with pytest.raises(NotFoundError, match="no version 7"):
        delete(7)
    # Then the second delete answers the version as it is, and the pinned one names its aliases
    assert unchanged.value.record.version == 1 and unchanged.value.record.deleted
    assert pinned.value.details == {"aliases": ["prod"]}


def test_an_unexplained_batch_is_contention_and_writes_nothing(stores: SimpleNamespace) -> None:
    # Given versions 1 and 2, version 2 deleted already
    publish(stores, A, 1)
    publish(stores, B, 2)
    one = Change("app", by="alice", now=NOW)
    stores.versions.stage_deleted(one, [2], deleted=True)
    stores.versions.commit(one)
    # When a batch deleting both commits, staged without explanations
    batch = Change("app", by="alice", now=NOW)
    stores.versions.stage_deleted(batch, [1, 2], deleted=True, explained=False)
    with pytest.raises(ContentionError):
        stores.versions.commit(batch)
    # Then version 1 is still live (the caller goes on one by one)
    assert not stores.versions.version("app", 1).deleted
