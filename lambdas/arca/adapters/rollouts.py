"""The AWS services a rollout uses besides the table: CloudWatch (its alarms) and Step Functions (its driver)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from botocore.exceptions import ClientError

from arca.adapters.faults import reraise
from arca.domain.driver import DriverEvent
from arca.domain.entities import Rollout

ClientFactory = Callable[[], Any]


class CloudWatchAlarms:
    """Reads alarms by name (DescribeAlarms, metric and composite). The client is built on first use, so a
    function that never reads alarms never builds it."""

    def __init__(self, client: ClientFactory) -> None:
        self._factory = client
        self._client: Any = None

    def missing(self, names: Sequence[str]) -> list[str]:
        """The names among `names` that no alarm (metric or composite) has, in their order."""
        if not names:
            return []
        found: set[str] = set()
        for page in self._read(names):
            found.update(str(a["AlarmName"]) for a in (*page.get("MetricAlarms", ()), *page.get("CompositeAlarms", ())))
        return [name for name in names if name not in found]

    def _read(self, names: Sequence[str]) -> Iterator[dict[str, Any]]:
        """DescribeAlarms of `names`, page by page; throttling is a ThrottledError."""
        if self._client is None:
            self._client = self._factory()
        try:
            yield from self._client.get_paginator("describe_alarms").paginate(
                AlarmNames=list(names), AlarmTypes=["MetricAlarm", "CompositeAlarm"]
            )
        except ClientError as error:
            reraise(error, "CloudWatch")

    def firing(self, names: Sequence[str]) -> tuple[str, str] | None:
        """The first of `names` in ALARM, else the first that does not exist, as (name, why); None when every
        one exists and none is in ALARM. A missing alarm stops the rollout as a firing one does (fails closed):
        a misspelt name must not silently take a rollout's protection away."""
        if not names:
            return None
        found: set[str] = set()
        for page in self._read(names):
            for alarm in (*page.get("MetricAlarms", ()), *page.get("CompositeAlarms", ())):
                found.add(str(alarm["AlarmName"]))
                if alarm.get("StateValue") == "ALARM":
                    return str(alarm["AlarmName"]), "is in ALARM"
        missing = [name for name in names if name not in found]
        return (missing[0], "does not exist") if missing else None


class StepFunctionsDriver:
    """Starts the rollout's state machine execution, named after the rollout (StartExecution is idempotent
    for the same name and input, so a retried start makes no second execution)."""

    def __init__(self, client: ClientFactory, state_machine_arn: str) -> None:
        self._factory = client
        self.state_machine_arn = state_machine_arn

    def start(self, rollout: Rollout) -> None:
        self._factory().start_execution(
            stateMachineArn=self.state_machine_arn,
            name=rollout.id,
            input=json.dumps(DriverEvent.of(rollout).model_dump()),
        )


class ExternalDriver:
    """No managed scheduler (local mode): the local server drives the steps itself."""

    def start(self, rollout: Rollout) -> None:
        return None
