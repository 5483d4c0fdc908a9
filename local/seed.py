"""Large fixtures written straight into the table (tests and the bench): thousands of versions or alias
revisions in seconds, where publishing them one request at a time would take minutes.

Each clone copies an item the handlers wrote themselves and changes only its key and state, so the
item shapes stay the stores' own.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from arca.adapters import keys
from arca.adapters.dynamo import deserialize, serialize
from arca.domain.moments import from_iso, to_iso


def _write(client: Any, table: str, items: list[dict[str, Any]]) -> None:
    for start in range(0, len(items), 25):
        pending: dict[str, Any] = {table: [{"PutRequest": {"Item": item}} for item in items[start : start + 25]]}
        while pending:
            pending = client.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}


def clone_versions(client: Any, table: str, name: str, numbers: Iterable[int], *, deleted: bool) -> None:
    """Copies of version 1 as versions `numbers` (deleted or live); LATEST's counters follow."""
    source = client.get_item(TableName=table, Key=serialize(keys.version_key(name, 1)))["Item"]
    numbers = list(numbers)
    state = {"deleted": deleted, **({"deleted_at": "2026-01-01T00:00:00.000Z"} if deleted else {})}
    _write(client, table, [{**source, **serialize({**keys.version_key(name, n), **state})} for n in numbers])
    client.update_item(
        TableName=table,
        Key=serialize(keys.latest_key(name)),
        UpdateExpression="SET newest = :newest ADD version_count :n, deleted_count :d",
        ExpressionAttributeValues=serialize(
            {":newest": max(numbers), ":n": len(numbers), ":d": len(numbers) if deleted else 0}
        ),
    )


def clone_revisions(client: Any, table: str, name: str, alias: str, count: int) -> list[str]:
    """Revisions 2..count+1 of `alias` (copies of revision 1, with their time rows), each one second after the
    one before; the alias item moves to the last. Returns the `updated_at` of revisions 1..count+1."""
    first = client.get_item(TableName=table, Key=serialize(keys.history_key(name, alias, 1)))["Item"]
    times = [str((deserialize(first) or {})["updated_at"])]
    base = from_iso(times[0])
    items = []
    for revision in range(2, count + 2):
        moment = to_iso(base + timedelta(seconds=revision - 1))
        times.append(moment)
        items.append({**first, **serialize({**keys.history_key(name, alias, revision), "revision": revision})})
        items[-1]["updated_at"] = {"S": moment}
        items.append({**items[-1], **serialize(keys.history_time_key(name, alias, moment, revision))})
        items[-1]["kind"] = {"S": "alias-history-time"}
    _write(client, table, items)
    alias_item = client.get_item(TableName=table, Key=serialize(keys.alias_key(name, alias)))["Item"]
    alias_item.update(serialize({"revision": count + 1, "updated_at": times[-1]}))
    _write(client, table, [alias_item])
    return times


def clone_tagged_versions(client: Any, table: str, source: str, targets: Iterable[tuple[str, int]]) -> int:
    """Copies of `source`'s version 1 and its tag rows as version `n` of artifact `name` for each target (the
    artifacts' LATEST items are not written: registry-wide search never reads them). Each copy carries the
    index keys of its own name and number, as the version store writes them. Returns the items written."""
    version = deserialize(client.get_item(TableName=table, Key=serialize(keys.version_key(source, 1)))["Item"]) or {}
    rows = [
        deserialize(item) or {}
        for item in client.query(
            TableName=table,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :v)",
            ExpressionAttributeValues=serialize({":pk": keys.tags_pk(source), ":v": "v#000001#"}),
        )["Items"]
    ]
    items = []
    for name, number in targets:
        index = keys.version_index_attributes(name, number, version["sha256"], version["created_at"])
        items.append(serialize({**version, **index, "name": name, **keys.version_key(name, number)}))
        for row in rows:
            copy = {**row, "name": name, "version": number, "gsi1sk": keys.version_search_sk(name, number)}
            items.append(serialize({**copy, **keys.version_tag_key(name, number, row["tag"])}))
    _write(client, table, items)
    return len(items)
