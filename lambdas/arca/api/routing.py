"""The routers that record each route as it is declared (Powertools routers); the routes as data and the reading of
paths are arca.api.paths, which imports no web framework."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

from aws_lambda_powertools.event_handler.router import APIGatewayRouter

from arca.api.paths import Declared

F = TypeVar("F", bound=Callable[..., Any])


class Router(APIGatewayRouter):
    """A Powertools router for one resource's routes of one Lambda function, recording each declaration.

    The records become the route table (arca.api.functions): the CDK API, the local server and direct invocation
    read them, so a route exists exactly where it is declared. `stub=True` declares a placeholder of a later
    feature: it is routed and deployed, but left out of the OpenAPI document; `foreign=True` a route of another
    protocol's API (the Hugging Face Hub's, OCI Distribution's), served but left out of the document too: its
    answers are that protocol's, not Arca's.
    """

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.declared: list[Declared] = []

    def route(
        self, rule: str, method: Any, *args: Any, stub: bool = False, foreign: bool = False, **kwargs: Any
    ) -> Callable[[F], F]:
        if stub or foreign:
            kwargs["include_in_schema"] = False
        register = super().route(rule, method, *args, **kwargs)
        path = re.sub(r"<(\w+)>", r"{\1}", rule)

        def record(func: F) -> F:
            for verb in (method,) if isinstance(method, str) else method:
                summary = (func.__doc__ or "").strip().split("\n")[0]
                documented = not (stub or foreign)
                self.declared.append(Declared(verb.upper(), path, func.__name__, summary, stub, documented))
            return register(func)

        return record
