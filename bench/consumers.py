"""What consumer leases cost, and what the SDK's Resolver costs when it answers from its cache (in process under
moto, through the real handlers).

Leases: the DynamoDB calls of each PUT/GET of …/consumers, and the write units of its writes, estimated as the
events section does (from the items' sizes as stored, read back after the request: 1 WCU per KB or part of one
for a single-item write, 2 per item of a TransactWriteItems). A renewal that changes neither the version nor the
labels must be exactly one UpdateItem and no transaction, else the bench fails.

Resolver: a `Resolver` over a real `Client` whose HTTP goes through the handlers (an adapter that counts every
request): after its first answer, `resolve()` within `fresh_for` answers from memory, and the bench fails if it
sends a single request. Throughput over the whole loop; p99 of each call, timed one by one.
"""

from __future__ import annotations

import contextlib
import json
import math
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from bench.harness import BenchFailure
from bench.report import table
from bench.world import World, blob

NAME = "bench/consumed"
_KB = 1024
WRITES = ("PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems")


@dataclass
class Cost:
    """One request: its DynamoDB calls by operation, its write units (estimated), its time."""

    calls: dict[str, int] = field(default_factory=dict)
    wcu: int = 0
    ms: float = 0.0

    def describe(self) -> str:
        total = sum(self.calls.values())
        return f"{total}: " + ", ".join(f"{op} {n}" for op, n in sorted(self.calls.items())) if total else "0"


def item_size(item: dict[str, Any]) -> int:
    from bench.events import item_size as size

    return size(item)


@contextlib.contextmanager
def costed(client: Any, table_name: str) -> Iterator[Cost]:
    """The DynamoDB calls `client` makes meanwhile, and the write units of its writes (items read back after)."""
    cost = Cost()
    written: list[tuple[str, dict[str, Any]]] = []  # (how: "single" | "transaction", key)

    def before(params: dict[str, Any], model: Any, **_: Any) -> None:
        cost.calls[model.name] = cost.calls.get(model.name, 0) + 1
        if model.name == "TransactWriteItems":
            for entry in params["TransactItems"]:
                ((_kind, body),) = entry.items()
                written.append(("transaction", body.get("Key") or {k: body["Item"][k] for k in ("pk", "sk")}))
        elif model.name in WRITES:
            written.append(("single", params.get("Key") or {k: params["Item"][k] for k in ("pk", "sk")}))

    client.meta.events.register("provide-client-params.dynamodb.*", before, unique_id="bench-consumers")
    started = time.perf_counter()
    try:
        yield cost
    finally:
        cost.ms = (time.perf_counter() - started) * 1000
        client.meta.events.unregister("provide-client-params.dynamodb.*", unique_id="bench-consumers")
    for how, key in written:
        stored = client.get_item(TableName=table_name, Key=key, ConsistentRead=True).get("Item") or {}
        units = max(1, math.ceil(item_size(stored) / _KB)) if stored else 1
        cost.wcu += 2 * units if how == "transaction" else units


class _Loopback:
    """A requests adapter that answers through the handlers in this process, and counts the requests."""

    def __init__(self, world: World) -> None:
        import requests.adapters

        api = world.arca.api
        counter = self

        class Adapter(requests.adapters.BaseAdapter):
            def send(self, request: Any, **_: Any) -> Any:
                import requests

                counter.requests += 1
                url = urlsplit(request.url)
                body = request.body.decode() if isinstance(request.body, bytes) else request.body
                reply = api.call(
                    request.method, url.path, raw=body, query=dict(parse_qsl(url.query)), headers=dict(request.headers)
                )
                response = requests.Response()
                response.status_code = reply.status
                response.headers.update(reply.headers)
                response._content = b"" if reply.body is None else json.dumps(reply.body).encode()
                response.url, response.request = request.url, request
                return response

            def close(self) -> None:
                pass

        self.requests = 0
        self.adapter = Adapter()


def _resolver_rows(w: World, resolves: int) -> tuple[list[list[str]], int]:
    from arca_client import Client
    from arca_client.resolver import Resolver

    loop = _Loopback(w)
    client = Client("http://arca.bench", sign=False)
    client.session.mount("http://", loop.adapter)
    with contextlib.ExitStack() as scope:
        import tempfile

        cache = scope.enter_context(tempfile.TemporaryDirectory())
        resolver = scope.enter_context(
            Resolver(client, NAME, "prod", fresh_for=3600, max_stale=3600, cache_dir=cache, background=False)
        )
        first = resolver.resolve()
        if loop.requests != 1 or first.stale:
            raise BenchFailure(f"the Resolver's first answer took {loop.requests} requests (expected 1)")
        before = loop.requests
        clock: Callable[[], int] = time.perf_counter_ns
        each = []
        started = clock()
        for _ in range(resolves):
            t = clock()
            resolver.resolve()
            each.append(clock() - t)
        total = (clock() - started) / 1e9
        sent = loop.requests - before
    if sent:
        raise BenchFailure(
            f"the Resolver sent {sent} requests answering {resolves} resolves from its cache (expected 0)"
        )
    each.sort()
    p99 = each[min(len(each) - 1, math.ceil(0.99 * len(each)) - 1)] / 1000
    median = statistics.median(each) / 1000
    rows = [
        [
            f"Resolver.resolve() from its cache ({resolves:,})",
            f"{resolves / total:,.0f}",
            f"{median:.1f}",
            f"{p99:.1f}",
            str(sent),
        ]
    ]
    return rows, sent


def section(w: World, iterations: int, resolves: int, leases_listed: int = 20) -> str:
    """The `## Consumers` section."""
    a = w.arca
    client, table_name = a.services.stores.table.client, a.services.stores.table.name
    a.create(NAME, blob(1024, 88_001), versions=1)
    a.ensure_uploaded(NAME, blob(1024, 88_002))
    a.put_latest(NAME, blob(1024, 88_002))
    a.publish(NAME)
    a.call("PUT", f"/artifacts/{NAME}/aliases/prod", {"version": 1}, expect=201)

    def lease(consumer: str, version: int) -> Cost:
        body = {"version": version, "ttl_seconds": 3600, "labels": {"region": "eu-west-1"}}
        with costed(client, table_name) as cost:
            a.call("PUT", f"/artifacts/{NAME}/consumers/{consumer}", body)
        return cost

    def listing(**query: str) -> Cost:
        with costed(client, table_name) as cost:
            a.call("GET", f"/artifacts/{NAME}/consumers", query=query)
        return cost

    runs: dict[str, list[Cost]] = {"first": [], "renew": [], "move": []}
    for i in range(max(1, iterations)):
        consumer = f"ecs:bench.c{i}"
        runs["first"].append(lease(consumer, 1))
        runs["renew"].append(lease(consumer, 1))
        runs["move"].append(lease(consumer, 2))
    for renewal in runs["renew"]:
        if renewal.calls.get("UpdateItem") != 1 or renewal.calls.get("TransactWriteItems"):
            raise BenchFailure(f"a lease renewal must be one UpdateItem and no transaction, made {renewal.describe()}")
    for i in range(iterations, leases_listed):
        lease(f"ecs:bench.c{i}", 1)
    listed = [listing() for _ in range(max(1, iterations))]
    by_version = [listing(version="2") for _ in range(max(1, iterations))]

    def row(label: str, costs: list[Cost]) -> list[str]:
        shapes = sorted({c.describe() for c in costs})
        wcus = sorted({c.wcu for c in costs})
        return [
            label,
            " / ".join(shapes),
            f"{wcus[0]}-{wcus[-1]}" if wcus[0] != wcus[-1] else str(wcus[0]),
            f"{statistics.median(c.ms for c in costs):.1f}",
            str(len(costs)),
        ]

    rows = [
        row("first lease (PUT …/consumers/{id})", runs["first"]),
        row("renewal (same version and labels)", runs["renew"]),
        row("version move (the lease to version 2)", runs["move"]),
        row(f"list the live leases ({leases_listed})", listed),
        row("list the leases on one version", by_version),
    ]
    leases = table(["lease write or read", "DynamoDB calls", "WCU", "median ms", "n"], rows)
    resolver_rows, _ = _resolver_rows(w, resolves)
    cache = table(["Resolver", "resolves per second", "median µs", "p99 µs", "HTTP requests"], resolver_rows)
    note = (
        "DynamoDB calls per request (in process under moto, through the handlers); WCU estimated from the items' "
        "sizes as stored: 1 per KB for a single-item write, 2 per item of a transaction (each request's event item "
        "included). A renewal is checked to be exactly one UpdateItem. The Resolver row answers from memory "
        "within `fresh_for`; the bench fails if it sends any request."
    )
    return "\n".join(["## Consumers", "", leases, "", cache, "", note])


def main() -> None:
    """`python -m bench.consumers`: this section alone, at the full run's sizes."""
    from bench.__main__ import _Discard
    from bench.cases import Config
    from bench.world import world

    cfg = Config()
    with world() as w, contextlib.redirect_stdout(_Discard()):  # type: ignore[type-var]
        text = section(w, cfg.consumer_iterations, cfg.resolver_resolves)
    print(text)


if __name__ == "__main__":
    main()
