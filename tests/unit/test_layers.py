"""The rooms of the Lambda package and the direction of their imports (docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "lambdas" / "arca"
# What each room may import from the package (besides itself). Everything points inward, towards domain/. A handler
# registers the SnapStart hooks (snapstart.py); the composition root (wiring.py) is reached from api/ only through
# api/dependencies.py.
ALLOWED = {
    "domain": set(),
    # Protocol packages (OCI, …) are pure: parsing and rendering over the domain, never a service or a store.
    "protocols": {"domain"},
    "adapters": {"domain"},
    # A service may implement a protocol's backend (services/hf.py), so it names that protocol's types.
    "services": {"domain", "adapters", "protocols"},
    "api": {"domain", "protocols", "services", "wiring", "observability", "settings"},
    "handlers": {"api", "observability", "snapstart"},
}
# What the stores share; a store imports no other store (each aggregate's writes are its own).
STORE_HELPERS = {"feed", "pages", "records", "conditions", "change"}
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


def _imported(path: Path) -> set[str]:
    """The `arca.…` modules a file imports, anywhere in it (a function's own imports too); `from arca import X` and
    `from arca.api import X` name `arca.X` and `arca.api.X`."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
    modules = {_module(f) for f in PACKAGE.rglob("*.py")}
    # `from arca.api.x import Y` names `arca.api.x.Y`, which is no module: keep the names that are modules.
    return {name for name in found if name.split(".")[0] == "arca" and name in modules}


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """The rooms of the package a file imports (the room is the first part after `arca`)."""
    return {name.split(".")[1] for name in _imported(path) if name.count(".") >= 1}


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


def test_the_package_has_no_import_circle() -> None:
    # Given every module of the package and the modules each imports (a function's own imports too)
    graph = {_module(f): _imported(f) - {_module(f)} for f in sorted(PACKAGE.rglob("*.py"))}
    # When the graph is walked depth first
    circles: list[list[str]] = []
    state: dict[str, str] = {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for imported in sorted(graph.get(module, ())):
            if state.get(imported) == "open":
                circles.append([*path[path.index(imported) :], imported] if imported in path else [module, imported])
            elif imported not in state:
                visit(imported, [*path, imported])
        state[module] = "done"

    for module in graph:
        if module not in state:
            visit(module, [module])
    # Then no module reaches itself
    assert not circles


def test_no_import_is_kept_for_its_side_effect() -> None:
    # Given every module of the package
    # When its lines are read
    kept = [
        f"{file.relative_to(PACKAGE)}:{number}"
        for file in sorted(PACKAGE.rglob("*.py"))
        for number, line in enumerate(file.read_text().splitlines(), 1)
        if "noqa" in line and ("F401" in line or "E402" in line)
    ]
    # Then no import is there for what importing it does (a route declared on another module's router, say)
    assert not kept


def test_routes_are_declared_only_on_their_own_modules_routers() -> None:
    # Given the api modules and the routers each creates
    declared = []
    for file in sorted((PACKAGE / "api").glob("*.py")):
        tree = _tree(file)
        own = {
            target.id
            for node in ast.walk(tree)
            if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and getattr(node.value.func, "id", "") == "Router"
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        # When each decorator of a function is read
        for node in ast.walk(tree):
            for decorator in getattr(node, "decorator_list", []):
                func = decorator.func if isinstance(decorator, ast.Call) else decorator
                verbs = ("get", "post", "put", "delete", "patch", "head", "route")
                if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.attr in verbs:
                    declared.append((file.name, func.value.id, func.value.id in own))
    # Then every route is declared on a router its own module made
    assert declared
    assert [d for d in declared if not d[2]] == []


def test_only_the_dependencies_module_of_api_reaches_the_composition_root() -> None:
    # Given the api modules
    reaching = sorted(f.name for f in (PACKAGE / "api").glob("*.py") if "arca.wiring" in _imported(f))
    # Then routes are given their services (Powertools Depends on wiring's providers), never locate them; the resolve
    # function's hot path, which answers before any route exists, is given its one provider as a default (decision 117)
    assert reaching == ["dependencies.py", "hot.py"]


def test_every_router_is_served_by_one_function_and_every_function_names_only_routers() -> None:
    from arca.api.functions import SERVED, routers
    from arca.api.routing import Router

    # Given every Router an api module makes, and the function table
    made = {
        f"{file.stem}.{name}"
        for file in sorted((PACKAGE / "api").glob("*.py"))
        for name, value in vars(__import__(f"arca.api.{file.stem}", fromlist=["_"])).items()
        if isinstance(value, Router)
    }
    listed = [entry for entries in SERVED.values() for entry in entries]
    # Then each router is served by exactly one function, and the table names nothing else
    assert sorted(listed) == sorted(made)
    assert all(isinstance(r, Router) for function in SERVED for r in routers(function))


@pytest.mark.parametrize("service", [f.name for f in sorted((PACKAGE / "services").glob("*.py"))])
def test_services_never_reach_the_low_level_table(service: str) -> None:
    # Given a service module
    # When its imports are read
    imported = _imported(PACKAGE / "services" / service)
    # Then it speaks to stores, never to the table beneath them (adapters/dynamo.py)
    assert "arca.adapters.dynamo" not in imported


def test_stores_import_only_the_shared_store_helpers() -> None:
    # Given every store of adapters/store/
    stores = sorted(
        f for f in (PACKAGE / "adapters" / "store").glob("*.py") if f.stem not in {"__init__", *STORE_HELPERS}
    )
    # When the store modules each imports are read
    borrowed = {
        f.stem: sorted(
            m for m in _imported(f) if m.startswith("arca.adapters.store.") and m.rsplit(".", 1)[1] not in STORE_HELPERS
        )
        for f in stores
    }
    # Then no store imports another store
    assert not {store: found for store, found in borrowed.items() if found}


def test_services_and_routes_take_the_aggregates_from_the_domain_not_from_the_stores_mappers() -> None:
    import arca.adapters.store.records as records

    # Given every module of the services and the routes, and the names each imports from the stores' mappers
    taken = [
        (str(f.relative_to(PACKAGE)), alias.name)
        for room in ("services", "api")
        for f in sorted((PACKAGE / room).rglob("*.py"))
        for node in ast.walk(_tree(f))
        if isinstance(node, ast.ImportFrom) and node.module == records.__name__
        for alias in node.names
    ]
    # Then none is a model: the aggregates are arca.domain.aggregates', the stores only map them to items and back
    assert not [(module, name) for module, name in taken if isinstance(getattr(records, name), type)]


# A module longer than this is a room holding two: split it by what it is about.
MAX_MODULE_LINES = 600


def test_no_module_of_the_functions_or_the_client_is_over_600_lines() -> None:
    # Given every module of the functions' package and of the client package
    client = PACKAGE.parents[1] / "client" / "arca_client"
    modules = [*PACKAGE.rglob("*.py"), *client.rglob("*.py")]
    # When their lines are counted
    long = {str(m): n for m in modules if (n := len(m.read_text().splitlines())) > MAX_MODULE_LINES}
    # Then none is over the bound
    assert modules and not long
