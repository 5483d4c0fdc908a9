"""Progressive rollouts of an alias: start, read, abort and watch."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from arca_client.calls.http import HttpCalls, alias_path
from arca_client.models import Rollout


def warnings(header: str | None) -> list[str]:
    """The texts of a `Warning` header (RFC 9111's `code agent "text"`, comma-separated)."""
    return re.findall(r'\d{3} \S+ "((?:[^"\\]|\\.)*)"', header or "")


class RolloutCalls(HttpCalls):
    def start_rollout(
        self,
        name: str,
        alias: str,
        version: int,
        *,
        steps: list[int],
        interval_seconds: int,
        alarms: list[str] | None = None,
        reason: str | None = None,
    ) -> Rollout:
        """Start a progressive rollout: `version` as the alias's canary at each weight of `steps` in turn,
        `interval_seconds` apart, then its primary; any of `alarms` in ALARM before a step rolls it back.

        Not retried after a lost answer: a second start would meet the first rollout (409). `warnings` names an
        alarm that does not exist (it counts as firing: the rollout rolls back at its first step).
        """
        body: dict[str, Any] = {"version": version, "steps": list(steps), "interval_seconds": interval_seconds}
        if alarms:
            body["alarms"] = list(alarms)
        if reason is not None:
            body["reason"] = reason
        data, headers = self._call("PUT", alias_path(name, alias, "rollout"), body=body, idempotent=False)
        return Rollout.from_dict(data or {}, warnings=warnings(headers.get("Warning")))

    def get_rollout(self, name: str, alias: str) -> Rollout:
        """The alias's latest rollout (NotFoundError when it never had one)."""
        return Rollout.from_dict(self._get(alias_path(name, alias, "rollout")))

    def abort_rollout(self, name: str, alias: str) -> Rollout:
        """Abort the running rollout: the alias keeps its primary and loses the canary. AccessDeniedError
        (PolicyViolation) when the alias's `allowed_principals` do not include the caller."""
        data, _ = self._call("DELETE", alias_path(name, alias, "rollout"), idempotent=False)
        return Rollout.from_dict(data or {})

    def watch_rollout(
        self,
        name: str,
        alias: str,
        *,
        poll_seconds: float = 2.0,
        on_change: Callable[[Rollout], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> Rollout:
        """Poll the rollout until it has ended; `on_change` sees each new step or state. Returns the last."""
        last: tuple[str, int] | None = None
        while True:
            rollout = self.get_rollout(name, alias)
            if (rollout.state, rollout.step) != last:
                last = (rollout.state, rollout.step)
                if on_change is not None:
                    on_change(rollout)
            if not rollout.running:
                return rollout
            sleep(poll_seconds)
