"""The steps of retention: its policy, previews and applies, and days passing."""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from tests.model.spec import Retention
from tests.model.steps import Steps


class RetentionSteps(Steps):
    # Retention.

    @rule(
        keep_last=st.integers(1, 3),
        keep_days=st.sampled_from([None, 1, 2]),
        keep_tag=st.sampled_from([None, "ok", ""]),
        window=st.sampled_from([0, 1, 2, 5]),
        expire_after=st.sampled_from([0, 1]),
    )
    def put_retention(
        self, keep_last: int, keep_days: int | None, keep_tag: str | None, window: int, expire_after: int
    ) -> None:
        keep_tags = () if keep_tag is None else (("qa", self.tag_value(keep_tag) or ""),)
        policy = Retention(keep_last, keep_days, keep_tags, window, expire_after)
        body = {
            "keep_last": keep_last,
            "keep_tags": [f"{k}:{v}" for k, v in keep_tags],
            "rollback_window": window,
            "expire_after_days": expire_after,
            **({"keep_days": keep_days} if keep_days is not None else {}),
        }
        reply = self.local.call("PUT", f"{self.base}/retention", body)
        self.settle("PUT retention", self.model.put_retention(policy), reply)

    @rule()
    def delete_retention(self) -> None:
        reply = self.local.call("DELETE", f"{self.base}/retention")
        self.settle("DELETE retention", self.model.delete_retention(), reply)

    @precondition(lambda self: self.model.retention is not None)
    @rule()
    def apply_retention(self) -> None:
        reply = self.local.call("POST", f"{self.base}/retention/apply")
        self.settle("apply retention", self.model.apply_retention(), reply)
        if reply.status == 200:
            self.world.seen["versions expired"] += len(reply.body["expired"])
            self.world.seen["versions deleted by retention"] += len(reply.body["deleted"])

    @precondition(lambda self: self.model.retention is not None)
    @rule()
    def preview_retention(self) -> None:
        reply = self.local.call("GET", f"{self.base}/retention/preview", query={"limit": "100"})
        assert reply.status == 200, reply.body
        self.model.check_preview(reply.body["versions"])

    @rule()
    def a_day_passes(self) -> None:
        self.clock.next_day()
        self.model.day += 1
