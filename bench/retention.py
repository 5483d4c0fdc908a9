"""Retention's cost: the preview and apply requests over an artifact with many versions and alias revisions, and
the scheduled sweep per artifact (in process under moto, through the real handlers and service).

Every request is bounded: a preview page reads its `limit` versions in one Query plus the roots (LATEST, the
policy, the aliases, the rollouts, each live alias's last `rollback_window` revisions); an apply request reads
at most four pages of 49 versions and soft-deletes each page in one transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from bench.harness import BenchFailure
from bench.report import table
from bench.world import World, blob

NAME = "bench/retained"
KEEP_LAST = 10
APPLY_REQUESTS = 1


@dataclass
class Tally:
    calls: int = 0
    items: int = 0
    per_operation: dict[str, int] = field(default_factory=dict)


@contextmanager
def tallied(client: Any) -> Iterator[Tally]:
    """DynamoDB calls made by `client` meanwhile, and the items they read (Query pages, GetItems)."""
    tally = Tally()

    def after(parsed: dict[str, Any], model: Any, **_: Any) -> None:
        tally.calls += 1
        tally.per_operation[model.name] = tally.per_operation.get(model.name, 0) + 1
        tally.items += len(parsed.get("Items", [])) + (1 if parsed.get("Item") else 0)

    client.meta.events.register("after-call.dynamodb.*", after)
    try:
        yield tally
    finally:
        client.meta.events.unregister("after-call.dynamodb.*", after)


def _requests(
    step: Callable[[str | None], dict[str, Any]], client: Any, most: int = 10_000
) -> tuple[list[Tally], list[dict[str, Any]]]:
    """Call `step` with each `next_token` until there is none (or `most` requests); each request's tally and
    answer."""
    tallies, answers, token = [], [], None
    while len(tallies) < most:
        with tallied(client) as tally:
            answer = step(token)
        tallies.append(tally)
        answers.append(answer)
        token = answer.get("next_token")
        if token is None:
            return tallies, answers
    return tallies, answers


def section(w: World, versions: int, revisions: int) -> str:
    from local.seed import clone_revisions, clone_versions

    a = w.arca
    client, table_name = a.services.stores.table.client, a.services.stores.table.name
    a.create(NAME, blob(1024, 77_001), versions=1)
    clone_versions(client, table_name, NAME, range(2, versions + 1), deleted=False)
    a.ensure_uploaded(NAME, blob(1024, 77_002))
    a.put_latest(NAME, blob(1024, 77_002))  # copies hold version 1's content: LATEST moves off it, or it keeps all
    a.call("PUT", f"/artifacts/{NAME}/aliases/prod", {"version": versions}, expect=201)
    clone_revisions(client, table_name, NAME, "prod", revisions - 1)
    policy = {"keep_last": KEEP_LAST, "rollback_window": 100, "expire_after_days": 3650}
    a.call("PUT", f"/artifacts/{NAME}/retention", policy)
    path = f"/artifacts/{NAME}/retention"

    def preview(token: str | None) -> dict[str, Any]:
        return dict(
            a.call("GET", f"{path}/preview", query={"limit": "100", **({"next_token": token} if token else {})})
        )

    def apply(token: str | None) -> dict[str, Any]:
        return dict(a.call("POST", f"{path}/apply", {"next_token": token} if token else None))

    previews, pages = _requests(preview, client)
    shown = sum(len(p["versions"]) for p in pages)
    if shown != versions:
        raise BenchFailure(f"the preview listed {shown} versions, expected {versions}")
    # Apply's first requests: each soft-deletes up to 196 versions (moto copies the table for every item of every
    # transaction, so applying all 5,000 here would take many minutes; every request does the same bounded work).
    applies, answers = _requests(apply, client, most=APPLY_REQUESTS)
    deleted = sum(len(x["deleted"]) for x in answers)
    expected = min(versions, APPLY_REQUESTS * 4 * 49) - KEEP_LAST  # the newest are read and kept
    if deleted != expected:
        raise BenchFailure(f"apply deleted {deleted} versions, expected {expected}")
    rest = versions - KEEP_LAST - deleted
    if rest:  # the rest soft-deleted directly, so that the sweep below finds nothing to do (its steady state)
        clone_versions(client, table_name, NAME, range(1, rest + 1), deleted=True)
    with tallied(client) as sweep:
        progress = a.services.retention.sweep(start=None, budget=_unbounded())
    if progress.artifacts < 1 or progress.next_token is not None or progress.deleted:
        raise BenchFailure(f"the sweep did not complete, or found work: {progress}")

    def row(label: str, tallies: list[Tally]) -> list[str]:
        return [
            label,
            str(len(tallies)),
            str(max(t.calls for t in tallies)),
            str(max(t.items for t in tallies)),
            f"{sum(t.calls for t in tallies) / len(tallies):.1f}",
        ]

    headers = ["operation", "requests", "max calls / request", "max items read / request", "mean calls / request"]
    rows = [
        row("preview, limit=100, every page", previews),
        row(f"apply, the first {len(applies)} requests ({deleted:,} soft-deleted)", applies),
        row("sweep, steady state (nothing to do), per artifact", [sweep]),
    ]
    note = (
        f"An artifact with {versions:,} versions, an alias with {revisions} revisions, a policy keeping the newest "
        f"{KEEP_LAST} with a rollback window of 100. Calls are DynamoDB calls of the handler (S3 is not called: "
        "nothing expires); items read are those Query pages and GetItems returned. The sweep row includes its "
        "Query of the policies' index."
    )
    return "\n".join(["## Retention", "", table(headers, rows), "", note])


def _unbounded() -> Any:
    from arca.services.retry import Budget

    return Budget()
