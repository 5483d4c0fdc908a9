"""The `alias` function (its routes: arca.routes.ROUTES where function == "alias")."""

from arca.handlers import entry_point

handler = entry_point("alias")
