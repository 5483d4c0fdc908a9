"""docs/architecture.md stays true: it names every module of the Lambda package, each in its own room."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "lambdas" / "arca"
DOC = ROOT / "docs" / "architecture.md"


def _rooms(text: str) -> dict[str, str]:
    """The text of each room of the doc's first diagram: from a line that starts with `<room>/` to the next."""
    diagram = text.split("```")[1]
    rooms: dict[str, str] = {}
    current = None
    for line in diagram.splitlines():
        found = re.match(r"^(\w+)/", line)
        if found:
            current = found.group(1)
        if current is not None:
            rooms[current] = rooms.get(current, "") + line + "\n"
    return rooms


def test_the_architecture_names_every_module_in_its_room() -> None:
    # Given the doc's diagram of rooms, and every module of the package
    text = DOC.read_text()
    rooms = _rooms(text)
    modules = sorted(f.relative_to(PACKAGE) for f in PACKAGE.rglob("*.py") if f.name != "__init__.py")
    # When each module is looked for: in its room's part of the diagram, or anywhere for one beside the rooms
    missing = [
        str(module)
        for module in modules
        if module.name not in (rooms.get(module.parts[0], "") if len(module.parts) > 1 else text)
    ]
    # Then none is left out
    assert set(rooms) >= {"handlers", "api", "services", "adapters", "domain"}
    assert not missing, f"docs/architecture.md does not name {missing}"


def test_the_architecture_counts_the_functions() -> None:
    # Given the functions: one entry point module each in handlers/ (http.py builds those behind the API)
    names = sorted(f.stem for f in (PACKAGE / "handlers").glob("*.py") if f.stem not in ("__init__", "http"))
    # Then the doc says how many, and names each
    text = DOC.read_text()
    words = {4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}
    assert f"{words[len(names)]} Lambda functions" in text
    assert all(f"`{name}`" in text for name in names)
