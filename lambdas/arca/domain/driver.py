"""The rollout driver's event: what the state machine (or the local server's timer) hands the `rollout`
function, and what that function answers for the next step."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

from arca.domain.entities import Rollout


class DriverEvent(BaseModel):
    """Which rollout, the step it is at, how long to wait before the next one, whether it ended.

    Parsed once at the function's edge: a missing or mistyped field is refused there, naming it, before
    anything is read or written. Other keys (an API answer passed as the first input) are ignored.
    """

    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)

    name: StrictStr = Field(min_length=1)
    alias: StrictStr = Field(min_length=1)
    rollout_id: StrictStr = Field(min_length=1)
    step: StrictInt
    interval_seconds: StrictInt
    done: StrictBool = False

    @classmethod
    def of(cls, rollout: Rollout) -> DriverEvent:
        return cls(
            name=rollout.name,
            alias=rollout.alias,
            rollout_id=rollout.id,
            step=rollout.step,
            interval_seconds=rollout.interval_seconds,
            done=rollout.state != "running",
        )
