"""Retention under concurrency, on DynamoDB Local: applies race alias moves, restores and publishes of the same
content, and never delete or expire what an alias came to point at, nor remove bytes a version still holds."""

from __future__ import annotations

import random
from typing import Any

import pytest

from arca.domain.errors import ConflictError, NotFoundError, VersionPinnedError
from arca.domain.models import AliasBody, Content
from arca.domain.retention import RetentionBody
from arca.wiring import build
from tests.e2e.conftest import ArcaHttp
from tests.e2e.test_races import publish_versions, race
from tests.helpers import acting, sha256


@pytest.mark.parametrize("seed", [1, 2])
def test_retention_never_deletes_what_an_alias_came_to_point_at(arca: ArcaHttp, unique: str, seed: int) -> None:
    # Given 8 versions, prod and beta, and a policy that keeps only the newest and expires deletions at once
    name = f"{unique}/retained"
    publish_versions(arca, name, 8)
    contents = [f"{name} v{i}".encode() for i in range(8)]
    arca.put(f"/artifacts/{name}/aliases/prod", json={"version": 1})
    arca.put(f"/artifacts/{name}/aliases/beta", json={"version": 2, "secondary_version": 3})
    acting("publish", build().retention).put(name, RetentionBody(keep_last=1, rollback_window=0, expire_after_days=0))

    # When appliers, alias movers, restorers and publishers of old content interleave freely
    def worker(t: int) -> dict[str, int]:
        rng = random.Random(seed * 100 + t)
        services = build()
        retention = acting("publish", services.retention)
        publishing, aliases = acting("publish", services.publishing), acting("alias", services.aliases)
        tally: dict[str, int] = {}
        for _ in range(12):
            outcome = "ok"
            try:
                if t % 4 == 0:
                    retention.apply(name)
                elif t % 4 == 1:
                    alias = rng.choice(["prod", "beta"])
                    body: dict[str, Any] = {"version": rng.randint(1, 8)}
                    if alias == "beta":
                        body.update(secondary_version=rng.randint(1, 8), secondary_version_weight=10)
                        if body["secondary_version"] == body["version"]:
                            body.pop("secondary_version")
                            body.pop("secondary_version_weight")
                    aliases.set(name, alias, AliasBody(**body))
                elif t % 4 == 2:
                    acting("publish", services.removal).restore_version(name, rng.randint(1, 8))
                else:
                    data = rng.choice(contents)
                    publishing.publish(name, Content(sha256=sha256(data), size=len(data)), force=True)
            except VersionPinnedError:
                outcome = "pinned"
            except (ConflictError, NotFoundError):
                outcome = "conflict"
            tally[outcome] = tally.get(outcome, 0) + 1
        return tally

    tallies = race(worker)
    # Then every alias target is live, pins are exactly the aliases' targets, expired versions are deleted ones
    versions = arca.get(f"/artifacts/{name}/versions", params={"include_deleted": "true", "limit": "1000"}).json()
    by_number = {v["version"]: v for v in versions["versions"]}
    for alias in arca.get(f"/artifacts/{name}/aliases").json()["aliases"]:
        for target in (alias["version"], alias["secondary_version"]):
            if target is not None:
                assert not by_number[target].get("expired"), (alias, target)
                assert not by_number[target]["deleted"], (alias, by_number[target])
    # And the bytes of every version that is not expired are still stored and served
    for number, version in by_number.items():
        if not version.get("expired"):
            stored = acting("publish", build().blobs).stat(f"artifacts/{name}/_blobs/{version['sha256']}")
            assert stored is not None, f"the bytes of version {number} were removed"
    assert sum(t.get("ok", 0) for t in tallies) > 0
