"""What an alias policy costs an alias write: the same move without a policy, under principals only, under
required tags, under tags and a soak, and a write refused by every rule (403)."""

from __future__ import annotations

import time
from typing import Any

from bench.harness import Case, Group
from bench.world import KIB, World, blob

A_GUARDED = "bench/guarded"
GUARD_GROUP = "Guarded promotion: what a policy costs an alias write"
SOAK_SECONDS = 1


def guard_group(w: World, cfg: Any) -> Group:
    """Aliases of one artifact with versions 1-3 (1 and 2 tagged qa=passed, staging on 2 for a second): `free`
    (no policy), `principals` (allowed_principals only), `tagged` (two required tags), `soaked` (the tags and a
    soak on staging), `closed` (every rule, which version 3 breaks)."""
    a = w.arca
    a.create(A_GUARDED, blob(KIB, 91), versions=3)
    base = f"/artifacts/{A_GUARDED}"
    for number in (1, 2):
        a.call("PATCH", f"{base}/versions/{number}", {"tags": {"qa": "passed", "team": "pay"}})
    a.call("PUT", f"{base}/aliases/staging", {"version": 2}, expect=201)
    tags = {"qa": "passed", "team": "pay"}
    policies: dict[str, dict[str, Any]] = {
        "principals": {"allowed_principals": ["*"]},
        "tagged": {"require_tags": tags},
        "soaked": {"require_tags": tags, "require_soak": {"alias": "staging", "seconds": SOAK_SECONDS}},
        "closed": {
            "require_tags": {"qa": "never"},
            "require_soak": {"alias": "staging", "seconds": 86_400},
            "require_rollout": True,
            "approvals": 2,
        },
    }
    for alias in ("free", *policies):
        a.call("PUT", f"{base}/aliases/{alias}", {"version": 1}, expect=201)
    for alias, policy in policies.items():
        a.call("PUT", f"{base}/aliases/{alias}/policy", policy)
    time.sleep(SOAK_SECONDS)  # staging's run of version 2 has to be old enough (stored times are wall-clock)

    def move(alias: str) -> Any:
        return lambda i: a.call("PUT", f"{base}/aliases/{alias}", {"version": 2 - i % 2})

    def back_to_1(alias: str) -> Any:
        def step(i: int) -> None:
            if a.call("GET", f"{base}/aliases/{alias}")["version"] == 2:
                a.call("POST", f"{base}/aliases/{alias}/rollback", {"to_revision": 1})

        return step

    return Group(
        GUARD_GROUP,
        [
            Case(
                "alias set, no policy (moves between versions 1 and 2)",
                move("free"),
                note="a Query of the alias and of the version, one TransactWriteItems: the alias item says it has "
                "no policy, and its condition holds that (as before policies existed)",
            ),
            Case(
                "alias set, policy: allowed_principals only",
                move("principals"),
                note="one GetItem of the policy more; the principal is matched in memory, the policy's revision "
                "checked on the alias item",
            ),
            Case(
                "alias set, policy: 2 required tags",
                move("tagged"),
                note="one Query more (the arriving version's tags); the transaction checks each tag's row",
            ),
            Case(
                "alias set, policy: 2 tags and a soak on staging (moves 1 -> 2)",
                lambda i: a.call("PUT", f"{base}/aliases/soaked", {"version": 2}),
                arca_setup=back_to_1("soaked"),
                note="a Query of staging and one of its history more; the transaction checks staging's "
                "revision (the way back to 1 is a rollback, exempt, run untimed before each call)",
            ),
            Case(
                "alias set refused by every rule (403, nothing written)",
                lambda i: a.call("PUT", f"{base}/aliases/closed", {"version": 3}, expect=403),
                note="the reads of the verdict and no write",
            ),
        ],
    )
