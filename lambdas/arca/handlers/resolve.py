"""The `resolve` function (its routes: arca.api.reads). Not traced by the X-Ray SDK: see docs/decisions.md."""

from arca.api.reads import router
from arca.handlers.http import entry_point

handler = entry_point(router)
