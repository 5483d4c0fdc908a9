"""The `publish` function (its routers: arca.api.functions)."""

from arca.handlers.http import entry_point
from arca.observability import traced

entry = entry_point("publish")
handler = traced(entry)
