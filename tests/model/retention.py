"""The model's retention, as the contract states it.

Never deleted or expired: a version an alias points at, the versions of every alias's last `rollback_window`
revisions (a deleted alias's too), a version holding LATEST's content. A live version is also kept while it
is among the newest `keep_last` live versions, younger than `keep_days`, or carries a `keep_tags` tag; else it
is soft-deleted. A soft-deleted version is expired `expire_after_days` after its deletion (0: at the next
apply, never by the apply that deleted it); an expired version carries no tags, and its bytes are removed
once no other version (soft-deleted ones included) and not LATEST hold them.

Open readings, where both answers are allowed: whether the deletion revision of an alias counts as one of
its last revisions, and whether `keep_tags` and `keep_days` also keep a soft-deleted version from expiry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.model.spec import Option, Options, Retention, State, _eq, if_pending, pending, refused


@dataclass
class Plan:
    """What an apply must do now, and what it may do as well (an open reading)."""

    delete: set[int] = field(default_factory=set)
    may_delete: set[int] = field(default_factory=set)
    expire: set[int] = field(default_factory=set)
    may_expire: set[int] = field(default_factory=set)

    def check(self, deleted: set[int], expired: set[int]) -> None:
        for what, got, must, may in (
            ("deleted", deleted, self.delete, self.may_delete),
            ("expired", expired, self.expire, self.may_expire),
        ):
            assert must <= got <= must | may, (
                f"{what}: answered {sorted(got)}, the model says {sorted(must)} (and may {sorted(may)})"
            )


class RetentionRules(State):
    def put_retention(self, policy: Retention) -> Options:
        # The unfixed code refuses an empty keep_tags value as bad input, before it looks for the artifact.
        empty = any(value == "" for _, value in policy.keep_tags)
        old_ways = if_pending("keep-tags-empty", [refused(400, "keep_tags: an empty value", "keep-tags-empty")])
        if not self.exists:
            return [refused(404, "no such artifact"), *(old_ways if empty else [])]

        def effect(_: Any) -> None:
            self.retention = policy

        def check(body: Any) -> None:
            _eq(body["keep_last"], policy.keep_last, "keep_last")
            _eq(body["keep_days"], policy.keep_days, "keep_days")
            _eq(body["keep_tags"], [f"{k}:{v}" for k, v in policy.keep_tags], "keep_tags")
            _eq(body["rollback_window"], policy.rollback_window, "rollback_window")
            _eq(body["expire_after_days"], policy.expire_after_days, "expire_after_days")

        return [Option(200, effect=effect, check=check), *(old_ways if empty else [])]

    def delete_retention(self) -> Options:
        if not self.exists or self.retention is None:
            return [refused(404, "no retention policy")]

        def effect(_: Any) -> None:
            self.retention = None

        return [Option(204, effect=effect)]

    def roots(self, policy: Retention) -> tuple[set[int], set[int]]:
        """The versions every reading protects, and those only some readings do."""
        must: set[int] = set()
        may: set[int] = set()
        window = policy.rollback_window
        for alias, history in self.aliases.items():
            live = self.live_alias(alias)
            if live is not None:
                must |= {t for t in live.targets() if isinstance(t, int)}
            counted = history[-window:] if window else []
            written = [r for r in history if not r.deleted][-window:] if window else []
            protected = must if live is not None or not pending("deleted-alias-window") else may
            for revision in counted:
                protected |= {t for t in revision.targets() if isinstance(t, int)}
            for revision in written:
                may |= {t for t in revision.targets() if isinstance(t, int)}
        return must, may - must

    def plan(self) -> Plan:
        policy = self.retention
        assert policy is not None
        roots, maybe = self.roots(policy)
        latest = self.latest.sha256 if self.latest else None
        plan = Plan()
        live_rank = 0
        for number in sorted(self.versions, reverse=True):
            version = self.versions[number]
            if version.expired:
                continue
            young = policy.keep_days is not None and self.day - version.created < policy.keep_days
            tagged = any(version.tags.get(k) == v for k, v in policy.keep_tags)
            if number in roots or version.content.sha256 == latest:
                if not version.deleted:
                    live_rank += 1
                continue
            if not version.deleted:
                live_rank += 1
                if live_rank <= policy.keep_last or young or tagged:
                    continue
                (plan.may_delete if number in maybe else plan.delete).add(number)
                continue
            assert version.deleted_day is not None
            if self.day - version.deleted_day < policy.expire_after_days:
                continue
            (plan.may_expire if number in maybe or young or tagged else plan.expire).add(number)
        return plan

    def apply_retention(self) -> Options:
        if not self.exists or self.retention is None:
            return [refused(404, "no retention policy")]
        plan = self.plan()

        def check(body: Any) -> None:
            plan.check(set(body["deleted"]), set(body["expired"]))
            _eq(body["next_token"], None, "next_token")

        def effect(body: Any) -> None:
            for number in body["deleted"]:
                version = self.versions[number]
                version.deleted, version.deleted_day = True, self.day
            for number in body["expired"]:
                version = self.versions[number]
                version.expired = True
                if not pending("expired-no-tags"):
                    version.tags = {}
            held = self.references()
            for number in body["expired"]:
                sha256 = self.versions[number].content.sha256
                if not held.get(sha256):
                    self.stored.discard(sha256)

        return [Option(200, effect=effect, check=check)]

    def check_preview(self, rows: list[dict[str, Any]]) -> None:
        """A preview says what apply would do now: its deletions and expiries are the plan's."""
        plan = self.plan()
        expired = {n for n, v in self.versions.items() if v.expired}
        listed = {r["version"] for r in rows}
        assert listed == set(self.versions) - expired, f"preview lists {sorted(listed)}"
        plan.check(
            {r["version"] for r in rows if r["action"] == "delete"},
            {r["version"] for r in rows if r["action"] == "expire"},
        )
