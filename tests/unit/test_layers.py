"""The rooms of the Lambda package and the direction of their imports (docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "lambdas" / "arca"
# What each room may import from the package (besides itself). Everything points inward, towards domain/.
ALLOWED = {
    "domain": set(),
    "adapters": {"domain"},
    "services": {"domain", "adapters"},
    "api": {"domain", "services", "wiring", "observability", "routes", "settings"},
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
