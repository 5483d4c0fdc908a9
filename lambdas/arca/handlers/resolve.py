"""The `resolve` function (its routes: arca.routes.ROUTES where function == "resolve")."""

from arca.handlers import entry_point

handler = entry_point("resolve")
