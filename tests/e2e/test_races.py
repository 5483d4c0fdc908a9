"""Correct under concurrency, on DynamoDB Local (the faithful engine): threads race real transactions.

Each thread has a registry with clients of its own, as concurrent Lambda instances would.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import pytest
import requests

from arca.domain.errors import AliasLimitError, ConflictError, PreconditionFailedError, VersionPinnedError
from arca.domain.models import AliasBody, Content
from arca.wiring import build
from tests.e2e.conftest import ArcaHttp
from tests.helpers import HTTP_TIMEOUT, acting, sha256

T = TypeVar("T")
THREADS = 8


def race(work: Callable[[int], T], threads: int = THREADS) -> list[T]:
    """Run work(0..threads-1) at once, released together by a barrier."""
    barrier = threading.Barrier(threads)

    def run(index: int) -> T:
        barrier.wait()
        return work(index)

    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(run, range(threads)))


def test_concurrent_publishers_number_versions_one_to_two_hundred(arca: ArcaHttp, unique: str) -> None:
    # Given 8 publishers with 25 distinct blobs each, uploaded beforehand
    name = f"{unique}/race"
    blobs = {(t, i): f"publisher {t} release {i}".encode() for t in range(THREADS) for i in range(25)}
    for data in blobs.values():
        arca.upload(name, data)

    # When they all publish at once
    def publisher(t: int) -> list[tuple[int, str]]:
        registry = acting("publish", build().publishing)
        numbers = []
        for i in range(25):
            data = blobs[(t, i)]
            published = registry.publish(name, Content(sha256=sha256(data), size=len(data)))
            assert not published.deduplicated
            numbers.append((published.version, sha256(data)))
        return numbers

    results = race(publisher)
    # Then numbers 1..200 were each taken once, by the publisher whose content they hold
    taken = sorted(n for numbers in results for n, _ in numbers)
    assert taken == list(range(1, 201))
    for numbers in results:
        assert [n for n, _ in numbers] == sorted(n for n, _ in numbers)
    listing = arca.get(f"/artifacts/{name}/versions", params={"order": "asc", "limit": "1000"}).json()
    stored = {v["version"]: v["sha256"] for v in listing["versions"]}
    assert stored == {n: digest for numbers in results for n, digest in numbers}
    summary = arca.get(f"/artifacts/{name}").json()
    assert summary["newest_version"] == 200 and summary["counts"]["versions"] == 200


def publish_versions(arca: ArcaHttp, name: str, count: int) -> None:
    for i in range(count):
        arca.published(name, f"{name} v{i}".encode())


def test_if_match_race_has_exactly_one_winner(arca: ArcaHttp, unique: str) -> None:
    # Given an alias at revision 1
    name = f"{unique}/if-match"
    publish_versions(arca, name, THREADS + 1)
    assert arca.put(f"/artifacts/{name}/aliases/prod", json={"version": 1}).status_code == 201

    # When 8 writers move it, each to its own version, all conditional on revision 1
    def writer(t: int) -> str:
        aliases = acting("alias", build().aliases)
        try:
            aliases.set(name, "prod", AliasBody(version=t + 2), if_match=1, identity=f"writer-{t}")
        except PreconditionFailedError:
            return "412"
        return "won"

    outcomes = race(writer)
    # Then one won, seven were refused, and history grew by exactly one revision
    assert sorted(outcomes) == ["412"] * (THREADS - 1) + ["won"]
    history = arca.get(f"/artifacts/{name}/aliases/prod/history").json()["history"]
    assert [h["revision"] for h in history] == [2, 1]
    alias = arca.get(f"/artifacts/{name}/aliases/prod").json()
    assert alias["revision"] == 2 and alias["updated_by"] == f"writer-{alias['version'] - 2}"


@pytest.mark.parametrize("seed", [1, 2])
def test_alias_moves_and_version_deletes_never_leave_a_dangling_alias(arca: ArcaHttp, unique: str, seed: int) -> None:
    # Given 6 versions and two aliases
    name = f"{unique}/dangle"
    publish_versions(arca, name, 6)
    arca.put(f"/artifacts/{name}/aliases/prod", json={"version": 1})
    arca.put(f"/artifacts/{name}/aliases/beta", json={"version": 2, "secondary_version": 3})

    # When movers and deleters interleave freely
    def worker(t: int) -> dict[str, int]:
        rng = random.Random(seed * 100 + t)
        services = build()
        registry, aliases = acting("publish", services.removal), acting("alias", services.aliases)
        tally: dict[str, int] = {}
        for _ in range(15):
            outcome = "ok"
            try:
                if t % 2:
                    alias = rng.choice(["prod", "beta"])
                    primary, secondary = rng.sample(range(1, 7), 2)
                    body: dict[str, Any] = {"version": primary}
                    if alias == "beta":
                        body.update(secondary_version=secondary, secondary_version_weight=rng.randint(0, 99))
                    aliases.set(name, alias, AliasBody(**body))
                elif rng.random() < 0.6:
                    registry.delete_version(name, rng.randint(1, 6))
                else:
                    registry.restore_version(name, rng.randint(1, 6))
            except VersionPinnedError:
                outcome = "pinned"
            except ConflictError:
                outcome = "conflict"
            tally[outcome] = tally.get(outcome, 0) + 1
        return tally

    tallies = race(worker, threads=6)
    # Then every alias target is live, and each version's pins are exactly the aliases that target it
    versions = arca.get(f"/artifacts/{name}/versions", params={"include_deleted": "true"}).json()["versions"]
    by_number = {v["version"]: v for v in versions}
    expected: dict[int, set[str]] = {n: set() for n in by_number}
    for alias in arca.get(f"/artifacts/{name}/aliases").json()["aliases"]:
        for target in (alias["version"], alias["secondary_version"]):
            if target is not None:
                assert not by_number[target]["deleted"], (alias, by_number[target])
                expected[target].add(alias["alias"])
    assert {n: set(v["aliases"]) for n, v in by_number.items()} == expected
    assert sum(t.get("ok", 0) for t in tallies) > 0


def test_concurrent_retries_with_one_idempotency_key_make_one_version(arca: ArcaHttp, unique: str) -> None:
    # Given a forced publish (never deduplicated) whose request 8 clients send at once with one key
    name = f"{unique}/idem"
    publish_versions(arca, name, 1)
    data = b"the one release"
    body = {"sha256": arca.upload(name, data), "size": len(data), "force": True}
    headers = {"Idempotency-Key": f"{unique}-release"}

    # When
    def sender(_: int) -> tuple[int, dict[str, Any]]:
        reply = requests.post(f"{arca.url}/artifacts/{name}/versions", json=body, headers=headers, timeout=HTTP_TIMEOUT)
        return reply.status_code, reply.json()

    answers = race(sender)
    # Then one version was made and every sender got its answer
    assert {(status, answer["version"]) for status, answer in answers} == {(201, 2)}
    versions = arca.get(f"/artifacts/{name}/versions").json()["versions"]
    assert [v["version"] for v in versions] == [2, 1]


def test_concurrent_alias_creations_never_pass_the_cap(
    arca: ArcaHttp, unique: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an artifact that may have 5 aliases
    monkeypatch.setattr("arca.adapters.store.aliases.MAX_ALIASES", 5)
    name = f"{unique}/capped"
    assert arca.set_latest(name, b"one").status_code == 200
    assert arca.post(f"/artifacts/{name}/versions").status_code == 201

    # When 8 writers each create an alias at once
    def creator(t: int) -> str:
        try:
            acting("alias", build().aliases).set(name, f"alias{t}", AliasBody(version=1))
        except AliasLimitError:
            return "refused"
        return "created"

    outcomes = race(creator)
    # Then exactly 5 were created, and the count agrees with the list
    assert sorted(outcomes).count("created") == 5
    assert len(arca.get(f"/artifacts/{name}/aliases").json()["aliases"]) == 5
    assert arca.get(f"/artifacts/{name}").json()["counts"]["aliases"] == 5
