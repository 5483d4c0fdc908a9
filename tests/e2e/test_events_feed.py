"""The event feed under concurrency, on DynamoDB Local: ids follow the order of commits."""

from __future__ import annotations

import threading
from typing import Any

from arca.domain.models import AliasBody, Content
from arca.wiring import build
from tests.e2e.conftest import ArcaHttp
from tests.e2e.test_races import THREADS, race
from tests.helpers import acting, path_quote, sha256


def read_feed(arca: ArcaHttp, name: str, *, limit: int = 7) -> list[dict[str, Any]]:
    """Every event, page by page with `after` = the last id seen, as a poller would."""
    found: list[dict[str, Any]] = []
    while True:
        query = {"limit": limit, **({"after": found[-1]["id"]} if found else {})}
        reply = arca.get(f"/artifacts/{path_quote(name)}/events", params=query)
        assert reply.status_code == 200, reply.text
        page = reply.json()["events"]
        if not page:
            return found
        found.extend(page)


def test_concurrent_publishers_make_one_event_per_version_in_number_order(arca: ArcaHttp, unique: str) -> None:
    # Given 8 publishers with 5 distinct blobs each, uploaded beforehand
    name = f"{unique}/feed"
    blobs = {(t, i): f"publisher {t} build {i}".encode() for t in range(THREADS) for i in range(5)}
    for data in blobs.values():
        arca.upload(name, data)

    # When they all publish at once
    def publisher(t: int) -> None:
        registry = acting("publish", build().publishing)
        for i in range(5):
            data = blobs[(t, i)]
            registry.publish(name, Content(sha256=sha256(data), size=len(data)))

    race(publisher)
    # Then the feed holds exactly 40 version.published, one per number, and in id order the numbers ascend
    feed = read_feed(arca, name)
    ids = [e["id"] for e in feed]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    published = [e["version"] for e in feed if e["type"] == "version.published"]
    assert published == list(range(1, 41))


def test_a_reader_polling_during_writes_sees_every_event_once(arca: ArcaHttp, unique: str) -> None:
    # Given an artifact with a version, four writers moving aliases and a reader polling the feed meanwhile
    name = f"{unique}/polled"
    data = b"base"
    arca.upload(name, data)
    acting("publish", build().publishing).publish(name, Content(sha256=sha256(data), size=len(data)))
    done = threading.Event()
    seen: list[dict[str, Any]] = []

    def poll() -> list[dict[str, Any]]:
        query = {"limit": 3, **({"after": seen[-1]["id"]} if seen else {})}
        page: list[dict[str, Any]] = arca.get(f"/artifacts/{path_quote(name)}/events", params=query).json()["events"]
        seen.extend(page)
        return page

    def reader() -> None:
        while not done.is_set():
            poll()

    polling = threading.Thread(target=reader)
    polling.start()

    # When each writer sets its own alias 5 times
    def writer(t: int) -> None:
        aliases = acting("alias", build().aliases)
        for _ in range(5):
            aliases.set(name, f"a{t}", AliasBody(version=1))

    race(writer, threads=4)
    done.set()
    polling.join()
    while poll():  # and the reader catches up
        pass
    # Then the reader saw the whole feed, each event once, in order
    assert seen == read_feed(arca, name)
    assert sum(e["type"] == "alias.updated" for e in seen) == 20
