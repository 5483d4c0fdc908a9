"""`python -m infra.figures` (`make docs`): the figures docs/infra.md quotes about the API and the stacks, measured
from the synthesized templates and written between its `<!-- figures -->` marks, never typed in. An infra test fails
when the committed block is not what the templates say now.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arca.domain.names import MAX_SEGMENTS
from arca.routes import Route

DOC = Path(__file__).resolve().parent.parent / "docs" / "infra.md"
BEGIN = "<!-- figures: `make docs` writes this block from the synthesized templates; do not edit -->"
END = "<!-- /figures -->"
# API Gateway resources per REST API: AWS's default quota, and the bound the infra tests keep to below it.
QUOTA = 300
CAP = 250
# Routes' worth of resources the infra tests keep free under CAP.
MIN_ROUTES_FREE = 40


def api_resources(body: dict[str, Any]) -> set[str]:
    """The resources API Gateway creates for a definition's paths: every path and every path above it."""
    paths = [path.split("/") for path in body["paths"]]
    return {"/".join(parts[:end]) or "/" for parts in paths for end in range(1, len(parts) + 1)}


@dataclass(frozen=True)
class Figures:
    routes: int
    placeholders: int
    paths: int
    operations: int
    resources: int
    dev_stack: int
    retained_stack: int

    @property
    def free(self) -> int:
        return CAP - self.resources

    @property
    def per_route(self) -> float:
        """Resources per route of the table as it is (placeholders counted: they are the routes still to come)."""
        return self.resources / self.routes

    @property
    def routes_free(self) -> int:
        """How many more routes fit under CAP at the table's resources per route."""
        return int(self.free / self.per_route)


def measure(routes: Iterable[Route], dev: dict[str, Any], retained: dict[str, Any]) -> Figures:
    """The figures of the route table and of the service templates of dev and of a retained stage."""
    routes = tuple(routes)
    (api,) = [r for r in dev["Resources"].values() if r["Type"] == "AWS::ApiGateway::RestApi"]
    body = api["Properties"]["Body"]
    return Figures(
        routes=len(routes),
        placeholders=sum(1 for r in routes if r.stub),
        paths=len(body["paths"]),
        operations=sum(len(item) for item in body["paths"].values()),
        resources=len(api_resources(body)),
        dev_stack=len(dev["Resources"]),
        retained_stack=len(retained["Resources"]),
    )


def render(f: Figures) -> str:
    rows = [
        (
            "routes in the route table",
            f"{f.routes}"
            + (f", of which {f.placeholders} are placeholders of later features" if f.placeholders else ""),
        ),
        ("the API's definition", f"{f.paths} paths, {f.operations} operations"),
        (
            "API Gateway resources (the root included)",
            f"{f.resources}, of the {CAP} the infra tests allow (AWS's default quota: {QUOTA} per REST API)",
        ),
        (
            "headroom",
            f"{f.free} resources: {f.routes_free} routes at the table's {f.per_route:.2f} resources a route (the infra "
            f"tests keep {MIN_ROUTES_FREE}); a route below a family costs none, a new family outside names 2, a new "
            f"reserved word after a name {MAX_SEGMENTS} ({2 * MAX_SEGMENTS} with a family below it)",
        ),
        (
            "CloudFormation resources of the service stack",
            f"{f.dev_stack} on `dev`, {f.retained_stack} on a retained stage (of the 500 a stack may hold)",
        ),
    ]
    table = ["| figure | value |", "|---|---|", *(f"| {name} | {value} |" for name, value in rows)]
    return "\n".join([BEGIN, *table, END])


def block(text: str) -> str:
    """The figures block of a document's text."""
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[start:end]


def _synth(stage: str) -> dict[str, Any]:
    import aws_cdk as cdk
    from aws_cdk.assertions import Template

    from infra.stack import add_stage

    cdk_json = Path(__file__).resolve().parent.parent / "cdk.json"
    app = cdk.App(
        context={**json.loads(cdk_json.read_text())["context"], "stage": stage},
        builtin_cloud_formation_validation=False,
    )
    env = None if stage == "dev" else cdk.Environment(account="123456789012", region="eu-west-1")
    return dict(Template.from_stack(add_stage(app, stage, env=env).service).to_json())


def main() -> None:
    from arca.routes import ROUTES

    figures = render(measure(ROUTES, _synth("dev"), _synth("prod")))
    text = DOC.read_text()
    DOC.write_text(text.replace(block(text), figures))
    print(f"wrote the figures of {DOC}")


if __name__ == "__main__":
    main()
