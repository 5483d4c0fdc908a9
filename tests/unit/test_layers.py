"""The rooms of the Lambda package and the direction of their imports (docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "lambdas" / "arca"
# What each room may import from the package (besides itself). Everything points inward, towards domain/.
ALLOWED = {
    "domain": set(),
    # Protocol packages (OCI, …) are pure: parsing and rendering over the domain, never a service or a store.
    "protocols": {"domain"},
    "adapters": {"domain"},
    "services": {"domain", "adapters"},
    "api": {"domain", "protocols", "services", "wiring", "observability", "routes", "settings"},
    "handlers": {"api", "observability"},
}
# Words of DynamoDB expressions and boto3's condition builders: only the stores of adapters/store/ and the low-level
# table may spell them.
EXPRESSION_WORDS = (
    "attribute_exists",
    "attribute_not_exists",
    "begins_with",
    "ConditionExpression",
    "UpdateExpression",
    "boto3.dynamodb.conditions",
)


def _imports(path: Path) -> set[str]:
    """The `arca.<room>` modules a file imports (the room is the first part after `arca`)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "arca" and len(parts) > 1:
                found.add(parts[1])
    return found


@pytest.mark.parametrize("room", sorted(ALLOWED))
def test_each_room_imports_only_rooms_further_in(room: str) -> None:
    # Given
    files = sorted((PACKAGE / room).rglob("*.py"))
    assert files
    # Then
    for file in files:
        outward = _imports(file) - ALLOWED[room] - {room}
        assert not outward, f"{file.relative_to(PACKAGE)} imports {sorted(outward)}"


def test_only_the_stores_and_the_table_spell_dynamodb_expressions() -> None:
    spelled = {
        str(file.relative_to(PACKAGE))
        for file in PACKAGE.rglob("*.py")
        if any(word in file.read_text() for word in EXPRESSION_WORDS)
    }
    assert {s for s in spelled if not s.startswith("adapters/store/")} <= {"adapters/dynamo.py"}


def _tree(path: Path) -> ast.AST:
    return ast.parse(path.read_text())


def _modules(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    return [node.module or ""] if isinstance(node, ast.ImportFrom) else []


def test_routes_reach_the_table_only_through_services() -> None:
    # Given the routes, and what would take them past a service to a store: the adapters, the stores' container
    # (`wiring.services().stores`) or the Services object that holds it (only `wiring.<service>()` is theirs)
    reached = []
    for file in sorted((PACKAGE / "api").rglob("*.py")):
        for node in ast.walk(_tree(file)):
            reached += [(file.name, m) for m in _modules(node) if m.startswith("arca.adapters")]
            if not isinstance(node, ast.Attribute):
                continue
            if node.attr == "stores" or node.attr.endswith("Store"):
                reached.append((file.name, node.attr))
            through = isinstance(node.value, ast.Name) and node.value.id == "wiring"
            if through and node.attr in ("services", "build", "Stores", "Services"):
                reached.append((file.name, f"wiring.{node.attr}"))
    # Then
    assert not reached


# Modules that name HTTP statuses (HTTPStatus) or build responses.
HTTP_MODULES = ("http", "aws_lambda_powertools")


def _http_status(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and 100 <= node.value <= 599


def _status_choices(node: ast.AST) -> list[str]:
    """What in this node picks an HTTP status: building an answer or a response, a `status` of one's own, a
    choice between two status codes, a module that names them."""
    found = [m for m in _modules(node) if m.split(".")[0] in HTTP_MODULES]
    if isinstance(node, ast.Call):
        called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        found += [called] if called in ("Answer", "answer", "Response") else []
        found += [str(k.arg) for k in node.keywords if k.arg in ("status", "status_code")]
    if isinstance(node, ast.Assign | ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        found += [t.id for t in targets if isinstance(t, ast.Name) and "status" in t.id]
    if isinstance(node, ast.IfExp) and _http_status(node.body) and _http_status(node.orelse):
        found.append("a choice between two status codes")
    return found


def test_services_never_choose_an_http_status() -> None:
    # Given every module of the services
    files = sorted((PACKAGE / "services").rglob("*.py"))
    # When
    named = [
        (f.name, getattr(n, "lineno", 0), c) for f in files for n in ast.walk(_tree(f)) for c in _status_choices(n)
    ]
    # Then the routes render every status (api/); the services only say what happened
    assert not named


def test_protocol_packages_perform_no_io() -> None:
    # Given every module of the protocol packages
    files = sorted((PACKAGE / "protocols").rglob("*.py"))
    assert files
    # Then none imports an AWS SDK, a socket or HTTP library, or reads the environment
    forbidden = ("boto3", "botocore", "socket", "requests", "urllib.request", "http.client")
    for file in files:
        imported = {m for node in ast.walk(_tree(file)) for m in _modules(node)}
        assert not {m for m in imported if m.split(".")[0] in forbidden or m in forbidden}, file.name
        assert "os.environ" not in file.read_text(), file.name
