"""What an event costs, and how long it takes to reach the bus, on the local stack (DynamoDB Local, its stream,
the real `events` handler, moto's EventBridge): the same code as on AWS, with local mode's stream consumer.

Cost: the items of each write's TransactWriteItems, captured as sent, split into the event Puts and the rest;
write units are those of a transactional write (2 per KB or part of one, per item), from the items' sizes as
stored (read back after the write; DynamoDB's size rules, estimated: names plus values).
Delay: from the return of a publish (its transaction committed) to the return of the handler's PutEvents for
that event, over `publishes` publishes one after the other.
Idle: the CPU time the local stack spends while nothing happens (the server's own process, all its threads, and
DynamoDB Local's JVM, from /proc), with the stream consumer's pacing and with a read every 20 ms.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import statistics
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from arca.adapters import keys
from bench.report import table

_KB = 1024


def _cpu_seconds(pid: int | str) -> float:
    """User + system CPU seconds of a process, all its threads (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _children(name: str) -> list[int]:
    """This process's children whose command is `name` (DynamoDB Local: `java`)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                comm, rest = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)
                if comm.split("(", 1)[1] == name and int(rest.split()[1]) == os.getpid():
                    found.append(int(entry))
    return found


def _idle_cpu(seconds: float) -> tuple[float, float]:
    """Percent of one core used over `seconds` of sleep by this process and by its `java` children."""
    jvms = _children("java")
    own, jvm, started = _cpu_seconds("self"), sum(_cpu_seconds(p) for p in jvms), time.perf_counter()
    time.sleep(seconds)
    elapsed = time.perf_counter() - started
    own_used = _cpu_seconds("self") - own
    jvm_used = sum(_cpu_seconds(p) for p in jvms) - jvm
    return 100 * own_used / elapsed, 100 * jvm_used / elapsed


def _size(value: Any) -> int:
    """DynamoDB's item size rules, roughly: strings and binaries by length, numbers ~ digits / 2 + 1."""
    kind, inner = next(iter(value.items()))
    if kind in ("S", "B"):
        return len(inner.encode() if isinstance(inner, str) else inner)
    if kind == "N":
        return len(inner.lstrip("-").replace(".", "")) // 2 + 1
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "M":
        return 3 + sum(len(k) + _size(v) for k, v in inner.items())
    if kind in ("L",):
        return 3 + sum(_size(v) + 1 for v in inner)
    return sum(len(str(v)) for v in inner)  # sets


def item_size(item: dict[str, Any]) -> int:
    return sum(len(name) + _size(value) for name, value in item.items())


def _units(sizes: list[int]) -> int:
    return sum(2 * max(1, math.ceil(s / _KB)) for s in sizes)


@contextlib.contextmanager
def _captured(client: Any) -> Iterator[list[list[dict[str, Any]]]]:
    """The TransactItems of every TransactWriteItems the client sends inside the block."""
    sent: list[list[dict[str, Any]]] = []

    def hook(params: dict[str, Any], **_: Any) -> None:
        sent.append(params["TransactItems"])

    client.meta.events.register("provide-client-params.dynamodb.TransactWriteItems", hook, unique_id="bench-events")
    try:
        yield sent
    finally:
        client.meta.events.unregister("provide-client-params.dynamodb.TransactWriteItems", unique_id="bench-events")


def _cost(client: Any, table_name: str, items: list[dict[str, Any]]) -> tuple[int, int, int, int]:
    """(items, of which events, write units, of which events) of one transaction, sizes read back as stored."""
    sizes, event_sizes = [], []
    for entry in items:
        ((_kind, body),) = entry.items()
        key = body.get("Key") or {k: body["Item"][k] for k in ("pk", "sk")}
        stored = client.get_item(TableName=table_name, Key=key, ConsistentRead=True).get("Item") or body.get("Item", {})
        is_event = key["pk"]["S"].endswith("-events")
        (event_sizes if is_event else sizes).append(item_size(stored))
    return len(items), len(event_sizes), _units(sizes + event_sizes), _units(event_sizes)


def section(publishes: int = 200, idle_seconds: float = 10.0) -> str:
    """The `## Events` section: cost per write, stream-to-bus delay and idle CPU in local mode."""
    from arca import wiring
    from arca.domain.models import AliasBody, Content
    from local import iam, stream
    from local.server import load_handler, running_arca

    delivered: dict[str, float] = {}
    lock = threading.Lock()

    def load(function: str) -> Any:
        handler = load_handler(function)
        if function != "events":
            return handler

        def timed(event: dict[str, Any], context: Any) -> Any:
            result = handler(event, context)
            now = time.perf_counter()
            failed = {f["itemIdentifier"] for f in (result or {}).get("batchItemFailures", [])}
            with lock:
                for record in event["Records"]:
                    if record["dynamodb"]["SequenceNumber"] not in failed:
                        delivered[record["dynamodb"]["NewImage"]["sk"]["S"]] = now
            return result

        return timed

    # The local stack checks each call against the calling function's role: these calls are the publish
    # function's, the alias writes the alias function's.
    with running_arca(port=0, load=load), iam.acting_as("publish"):
        services = wiring.build()
        client, table_name = services.stores.table.client, services.stores.table.name
        name, data = "bench/events", b"bench events"
        digest = hashlib.sha256(data).hexdigest()
        # The blob is put straight into the bucket: the upload is not what is measured.
        services.blobs.client.put_object(Bucket=services.blobs.bucket, Key=keys.blob_key(name, digest), Body=data)
        content = Content(sha256=digest, size=len(data))
        publishing, aliases = services.publishing, services.aliases
        as_alias = iam.acting_as("alias")
        publishing.put_latest(name, content)
        publishing.publish(name, None, force=True)  # version 1; the publish row makes 2, for the alias rows
        rows = []
        writes = (
            ("publish (snapshot of LATEST)", lambda: publishing.publish(name, None, force=True)),
            ("PUT latest", lambda: publishing.put_latest(name, content)),
            ("alias set (new alias)", lambda: as_alias(aliases.set)(name, "prod", AliasBody(version=1))),
            ("alias set (move)", lambda: as_alias(aliases.set)(name, "prod", AliasBody(version=2))),
            ("delete a version", lambda: services.removal.delete_version(name, 1)),
        )
        for label, write in writes:
            with _captured(client) as sent:
                write()
            items, events, units, event_units = _cost(client, table_name, sent[-1])
            rows.append([label, str(items - events), str(items), str(units - event_units), str(units)])

        # Delay: publish one at a time, each time waiting for its event on the bus.
        committed: dict[str, float] = {}
        for _ in range(publishes):
            publishing.publish(name, None, force=True)
            now = time.perf_counter()
            event_id = _newest_event(services, name)
            committed[event_id] = now
            deadline = now + 10
            while event_id not in delivered and time.perf_counter() < deadline:
                time.sleep(0.001)
        delays = sorted((delivered[i] - t) * 1000 for i, t in committed.items() if i in delivered)

        # Idle: once the consumer has backed off, then with it held at the busy pace (the fixed 20 ms poll).
        time.sleep(stream.QUIET_AFTER + 1)
        paced = _idle_cpu(idle_seconds)
        idle_pause, stream.IDLE_PAUSE = stream.IDLE_PAUSE, stream.BUSY_PAUSE
        try:
            time.sleep(1)
            fixed = _idle_cpu(idle_seconds)
        finally:
            stream.IDLE_PAUSE = idle_pause
    missing = publishes - len(delays)
    cost = table(["write", "items without events", "items with events", "WCU without", "WCU with"], rows)
    p90 = delays[max(0, math.ceil(0.9 * len(delays)) - 1)] if delays else float("nan")
    delay = table(
        ["stream to bus (local mode)", "n", "median ms", "p90 ms", "never delivered"],
        [
            [
                "publish → PutEvents returned",
                str(len(delays)),
                f"{statistics.median(delays):.1f}",
                f"{p90:.1f}",
                str(missing),
            ]
        ],
    )
    idle = table(
        [f"idle local stack, {idle_seconds:g} s", "server process % of a core", "DynamoDB Local % of a core"],
        [
            [f"stream read every {stream.IDLE_PAUSE * 1000:.0f} ms once quiet", f"{paced[0]:.1f}", f"{paced[1]:.1f}"],
            [f"stream read every {stream.BUSY_PAUSE * 1000:.0f} ms", f"{fixed[0]:.1f}", f"{fixed[1]:.1f}"],
        ],
    )
    note = (
        "Items and write units (WCU) of each write's one TransactWriteItems, as sent: transactional writes cost 2 WCU "
        "per KB of each item (sizes estimated from the stored items). An event adds one item (its Put); LATEST's "
        "`last_event` rides in the LATEST write the transaction has anyway (an alias move's ConditionCheck of LATEST "
        "becomes an Update: the same item). The delay runs from the return of a "
        "publish to the return of the events handler's PutEvents for its event, with local mode's stream consumer "
        "(DynamoDB Local's stream read again at once after records, every 20 ms for 2 s after the last ones, then "
        "backing off to every 250 ms, the pace at which Lambda polls a shard on AWS). Idle CPU: user + system time "
        "of the server's process (all threads: HTTP server, stream consumer, moto) and of DynamoDB Local's JVM "
        "while nothing happens, paced and with the stream read every 20 ms."
    )
    return "\n".join(["## Events", "", cost, "", delay, "", idle, "", note])


def _newest_event(services: Any, name: str) -> str:
    """The id of the artifact's newest event: LATEST's `last_event`."""
    latest = services.stores.artifacts.latest(name)
    return str(latest.last_event)
