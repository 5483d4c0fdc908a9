"""Free text a caller writes (alarm names, reasons, descriptions): any Unicode but the control characters.

U+0000 to U+001F and U+007F are refused where such text is accepted: they break the lines of logs, terminals and
the CLI's tables, and each is one byte stored but six as the JSON escape an answer carries, so a listing of them
would grow six-fold between the table and the answer.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field, StrictStr

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def no_control(value: str) -> str:
    """`value`, or ValueError naming the first control character and where it is."""
    found = _CONTROL.search(value)
    if found is not None:
        raise ValueError(
            f"holds a control character (U+{ord(found.group()):04X} at position {found.start()}); "
            "U+0000 to U+001F and U+007F are not allowed"
        )
    return value


# The validator of every such field; Reason and AlarmName are the shapes several requests share.
NoControl = AfterValidator(no_control)
Reason = Annotated[StrictStr, Field(max_length=512), NoControl]
# CloudWatch's alarm names are 1 to 255 characters.
AlarmName = Annotated[StrictStr, Field(min_length=1, max_length=255), NoControl]
