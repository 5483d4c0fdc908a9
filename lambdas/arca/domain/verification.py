"""The background verification's event: what the state machine (or the local server's thread) hands the `verify`
function, and what that function answers for the next step."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr


class VerifyEvent(BaseModel):
    """Which upload to go on hashing, whether it is done, and how far it got (for the execution's history).

    Parsed once at the function's edge: a missing or mistyped field is refused there, naming it, before anything is
    read or written.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    name: StrictStr = Field(min_length=1)
    upload: StrictStr = Field(pattern=r"^[0-9a-f]{64}\.[0-9a-f]{64}$")
    done: StrictBool = False
    hashed: StrictInt = 0
