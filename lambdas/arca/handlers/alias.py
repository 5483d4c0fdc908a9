"""The `alias` function (its routes: arca.api.aliases)."""

from arca.api.aliases import router
from arca.handlers.http import entry_point
from arca.observability import traced

handler = traced(entry_point(router))
