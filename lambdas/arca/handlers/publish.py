"""The `publish` function (its routes: arca.api.publishing)."""

from arca.api import retention  # noqa: F401  (declares its routes on the publish router)
from arca.api.publishing import router
from arca.handlers.http import entry_point
from arca.observability import traced

handler = traced(entry_point(router))
