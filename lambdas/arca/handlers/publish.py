"""The `publish` function (its routes: arca.routes.ROUTES where function == "publish")."""

from arca.handlers import entry_point

handler = entry_point("publish")
