"""The `resolve` function (its routers: arca.api.functions). Not traced by the X-Ray SDK: see docs/decisions.md."""

from arca.handlers.http import entry_point

entry = entry_point("resolve")
handler = entry
