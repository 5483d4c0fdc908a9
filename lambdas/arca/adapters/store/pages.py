"""The bounded page loop of every listing, over the table or a secondary index, and its opaque tokens.

A listing request makes at most QUERY_BUDGET Queries (the first of `limit` items, then PAGE_SIZE or more), so its
time is bounded however many skipped items lie between two kept ones; a page is also cut at PAGE_BYTES of its
items' JSON (`json_size`), whatever `limit` says, and its token goes on from there: a Lambda answer may not exceed
6 MB, and 95 versions each carrying 50 tags of 256 characters outside ASCII (12 bytes each as JSON escapes) come to
15 MB. One item always fits: the input limits keep any item's JSON far below it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from arca.adapters import keys
from arca.adapters.dynamo import Item, Page, Table
from arca.adapters.keys import Key

QUERY_BUDGET = 5
PAGE_SIZE = 100
PAGE_BYTES = 2 * 1024 * 1024
# Rows read and deleted per purge step: one BatchWriteItem call (its limit is 25).
PURGE_PAGE = 25


def page(
    table: Table, pk: str, scope: str, *, limit: int, token: str | None, keep: Callable[[Item], bool], **query: Any
) -> tuple[list[Item], str | None]:
    """Up to `limit` kept items of a partition, and an opaque token for the rest (None at the end).

    Bounded whatever was skipped (soft-deleted versions, emptied folders): at most QUERY_BUDGET Queries, the first
    of `limit` items and the rest of max(limit, PAGE_SIZE). When the budget is spent the page may hold fewer than
    `limit` items, even none, and the token continues after the last key read. Bounded in bytes too (PAGE_BYTES,
    `_budgeted`). A token is honoured only by its own listing and only inside its partition and range.
    """
    start = keys.decode_token(token, scope, pk=pk, within=sk_test(**query)) if token else None
    return _budgeted(
        lambda begin, size: table.query(pk, start=begin, limit=size, **query),
        start,
        limit=limit,
        keep=keep,
        token_of=lambda key: keys.encode_token(key, scope),
        key_of=lambda item: {"pk": item["pk"], "sk": item["sk"]},
    )


def index_page(
    table: Table,
    index: str,
    pk: str,
    scope: str,
    *,
    limit: int,
    token: str | None,
    keep: Callable[[Item], bool],
    sk_between: tuple[str, str] | None = None,
    sk_prefix: str | None = None,
    forward: bool = True,
    enrich: Callable[[list[Item]], list[Item]] | None = None,
) -> tuple[list[Item], str | None]:
    """`page` over a secondary index: the same budgets, tokens bound to the index partition and range.

    `enrich` completes each Query's items before they are kept and measured (one read for the page)."""
    index_keys = keys.INDEX_KEYS[index]
    within = sk_test(sk_between=sk_between, sk_prefix=sk_prefix)
    start = keys.decode_index_token(token, scope, index=index, pk=pk, within=within) if token else None

    def query(begin: dict[str, str] | None, size: int) -> Page:
        found = table.query_index(
            index,
            index_keys,
            pk,
            start=begin,
            limit=size,
            sk_between=sk_between,
            sk_prefix=sk_prefix,
            forward=forward,
        )
        return found if enrich is None else Page(enrich(found.items), found.last_key)

    return _budgeted(
        query,
        start,
        limit=limit,
        keep=keep,
        token_of=lambda key: keys.encode_index_token(key, scope, index=index),
        key_of=lambda item: {k: str(item[k]) for k in ("pk", "sk", *index_keys)},
    )


def first_at(table: Table, key: Key) -> Item | None:
    """The first item of the partition at or after `key`: the item itself if it exists, for the cost of a GetItem
    (one item read, strongly consistent); in a link's partition, the link's record."""
    found = table.query(key["pk"], sk_from=key["sk"], limit=1, consistent=True)
    return found.items[0] if found.items else None


def _budgeted(
    query: Callable[[dict[str, str] | None, int], Page],
    start: dict[str, str] | None,
    *,
    limit: int,
    keep: Callable[[Item], bool],
    token_of: Callable[[dict[str, str]], str],
    key_of: Callable[[Item], dict[str, str]],
) -> tuple[list[Item], str | None]:
    """The budgeted page loop of every listing: up to `limit` kept items, within QUERY_BUDGET Queries and
    PAGE_BYTES of JSON, and the token (`token_of` a key) that goes on after the last item kept or read."""
    kept: list[Item] = []
    spent_bytes = 0
    last_read: dict[str, str] | None = None
    for spent in range(1, QUERY_BUDGET + 1):
        size = limit if spent == 1 else max(limit - len(kept), PAGE_SIZE)
        page = query(start, size)
        for item in page.items:
            if not keep(item):
                continue
            weight = json_size(item)
            if kept and spent_bytes + weight > PAGE_BYTES:
                return kept, token_of(key_of(kept[-1]))  # this item and what follows: the next page
            kept.append(item)
            spent_bytes += weight
            if len(kept) == limit:
                more = item is not page.items[-1] or page.last_key is not None
                return kept, token_of(key_of(item)) if more else None
        if page.last_key is None:
            return kept, None
        start = last_read = page.last_key
    return kept, token_of(dict(last_read or {}))


def fitting(items: list[Item]) -> int:
    """How many of `items`, from the first, fit in PAGE_BYTES of JSON (one at least, when there is one)."""
    spent = 0
    for count, item in enumerate(items):
        spent += json_size(item)
        if count and spent > PAGE_BYTES:
            return count
    return len(items)


def json_size(item: Item) -> int:
    """An item's size as JSON with every non-ASCII character escaped (as the API answers): an upper bound of
    what it adds to an answer, whose fields are the item's or fewer."""
    return len(json.dumps(item, default=_plain))


def _plain(value: Any) -> Any:
    """What JSON cannot hold as read from DynamoDB (sets; numbers inside lists stay Decimals), as near its size."""
    return sorted(value) if isinstance(value, set | frozenset) else str(value)


def sk_test(
    *, sk_between: tuple[str, str] | None = None, sk_prefix: str | None = None, **_: Any
) -> Callable[[str], bool]:
    """Whether a sort key lies in a listing's range (a token's key must)."""
    if sk_between is not None:
        low, high = sk_between
        return lambda sk: low <= sk <= high
    return lambda sk: sk.startswith(sk_prefix or "")


def digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value).encode()).hexdigest()[:16]
