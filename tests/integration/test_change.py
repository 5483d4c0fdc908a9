"""A staged change: the items of one write, committed once, its cancellation read from the refusals it carries."""

from __future__ import annotations

from types import SimpleNamespace

import boto3
import pytest
from boto3.dynamodb.conditions import Attr

from arca.adapters import keys
from arca.adapters.dynamo import Table, Write
from arca.adapters.store.change import Change
from arca.adapters.store.conditions import ITEM_EXISTS, ITEM_NOT_EXIST
from arca.adapters.store.feed import Feed
from arca.domain.errors import ConflictError, ContentionError, IdempotencyKeyTakenError, NotFoundError
from arca.domain.receipts import Answer, Receipt, Seal
from tests.integration.conftest import snapshot

NOW = "2026-01-01T00:00:00Z"


@pytest.fixture
def feed(aws: SimpleNamespace) -> Feed:
    return Feed(Table(boto3.client("dynamodb"), aws.table))


def latest(name: str, **fields: object) -> Write:
    return Write("latest", "Put", keys.latest_key(name), item={"kind": "latest", **fields})


def version(name: str, number: int) -> Write:
    return Write("version", "Put", keys.version_key(name, number), item={"kind": "version"}, condition=ITEM_NOT_EXIST)


def seal(key: str = "k1") -> Seal:
    receipt = Receipt(scope="publish", key=key, fingerprint="f", now=10**9)
    return Seal(receipt, lambda outcome: Answer(201, {"outcome": outcome}))


def test_a_change_commits_its_items_its_record_and_its_events_in_one_transaction(feed: Feed, aws) -> None:
    from arca.domain.events import ArtifactUpdated
    from arca.domain.events import Change as Announced

    # Given a change of LATEST and a version, sealed, announcing one event
    change = Change("app", by="alice", now=NOW)
    change.stage(latest("app", rev=1))
    change.stage(version("app", 1))
    change.seal(seal(), "done")
    change.announce(Announced(ArtifactUpdated(tags={"team": "ml"}), None))
    # When it is committed
    events = feed.commit(change)
    # Then every item is written with its event, and LATEST carries the event's id
    assert [e.by for e in events] == ["alice"]
    table = feed.table
    assert table.get(keys.latest_key("app"))["last_event"] == events[0].id
    assert table.get(keys.version_key("app", 1)) is not None
    assert table.get(keys.receipt_key("publish", "k1"))["body"] == {"outcome": "done"}
    assert table.get(keys.event_key("app", events[0].id)) is not None


def test_a_cancellation_raises_the_refusal_of_the_failed_item_and_writes_nothing(feed: Feed, aws) -> None:
    # Given version 1 exists
    feed.commit(_with(Change("app", by=None, now=NOW), latest("app"), version("app", 1)))
    before = snapshot(aws)
    # When a change stages it again, with a refusal saying what that means
    change = Change("app", by=None, now=NOW)
    change.stage(latest("app", rev=2))
    change.stage(version("app", 1), refused=ConflictError("version 1 exists", field="version"))
    # Then its refusal is raised, and nothing is written
    with pytest.raises(ConflictError, match="version 1 exists"):
        feed.commit(change)
    assert snapshot(aws) == before


def test_a_refusal_reads_the_item_as_it_was_and_may_pass_to_the_next(feed: Feed, aws) -> None:
    # Given a LATEST marked as being purged
    feed.commit(_with(Change("app", by=None, now=NOW), latest("app", purging=True)))
    # When a change requires it unmarked, with two refusals: one that passes, one that reads the item
    change = Change("app", by=None, now=NOW)
    change.stage(version("app", 1))
    key = keys.latest_key("app")
    change.require(key, ITEM_EXISTS, refused=lambda reason: None)
    change.require(
        key,
        Attr("purging").not_exists(),
        refused=lambda reason: ConflictError("being purged") if reason.item and reason.item.get("purging") else None,
    )
    # Then both conditions were joined on one item, and the second refusal speaks
    assert len(change.writes()) == 2
    with pytest.raises(ConflictError, match="being purged"):
        feed.commit(change)


def test_the_idempotency_record_is_said_first_whatever_else_failed(feed: Feed, aws) -> None:
    # Given a record taken, and version 1 existing
    first = _with(Change("app", by=None, now=NOW), latest("app"), version("app", 1))
    first.seal(seal(), "one")
    feed.commit(first)
    # When a change under the same key also stages version 1 again (staged before the record)
    change = Change("app", by=None, now=NOW)
    change.stage(version("app", 1), refused=NotFoundError("not this one"))
    change.seal(seal(), "two")
    # Then the key taken is what is said
    with pytest.raises(IdempotencyKeyTakenError):
        feed.commit(change)


def test_a_failed_item_with_no_refusal_is_contention_and_an_item_is_staged_once(feed: Feed, aws) -> None:
    feed.commit(_with(Change("app", by=None, now=NOW), latest("app"), version("app", 1)))
    change = _with(Change("app", by=None, now=NOW), version("app", 1))
    with pytest.raises(ContentionError):
        feed.commit(change)
    with pytest.raises(ValueError, match="staged once"):
        change.stage(version("app", 1))
    with pytest.raises(ValueError, match="one idempotency record"):
        change.seal(seal(), "x")
        change.seal(seal(), "y")


def test_one_item_may_carry_two_refusals_each_asked_at_its_rank(feed: Feed, aws) -> None:
    # Given version 1 exists, and version 2 does not
    feed.commit(_with(Change("app", by=None, now=NOW), latest("app"), version("app", 1)))
    # When a change stages version 1 again with a refusal that passes at rank 0 and one that speaks at rank 2, and
    # a missing version 2 checked with a refusal at rank 1
    change = Change("app", by=None, now=NOW)
    change.stage(latest("app", rev=2))
    change.stage(version("app", 1), refused=lambda reason: None, rank=0)
    change.refuse(keys.version_key("app", 1), ConflictError("version 1 exists"), rank=2)
    change.require(keys.version_key("app", 2), ITEM_EXISTS, refused=NotFoundError("version 2 is missing"), rank=1)
    # Then the item's second refusal is asked in its own place: after the other item's
    with pytest.raises(NotFoundError, match="version 2 is missing"):
        feed.commit(change)
    # And a refusal is added only to an item staged
    with pytest.raises(ValueError, match="no item is staged"):
        change.refuse(keys.version_key("app", 3), ConflictError("x"))


def _with(change: Change, *writes: Write) -> Change:
    for write in writes:
        change.stage(write)
    return change
