"""The client's layout holds: every command module is registered, every command is typed against `Client` and
prints only through `arca_client.output`, every group of calls is part of `Client`, and no module is long."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

from arca_client import cli, commands
from arca_client.calls.http import HttpCalls
from arca_client.sdk import Client

PACKAGE = Path(commands.__file__).resolve().parents[1]
COMMANDS = Path(commands.__file__).resolve().parent
CALLS = PACKAGE / "calls"
SHARED = {"__init__", "base"}


def _modules(folder: Path) -> list[str]:
    return sorted(p.stem for p in folder.glob("*.py") if p.stem not in SHARED)


def test_every_command_module_is_registered_once() -> None:
    registered = [group.__name__.rsplit(".", 1)[-1] for group in cli.GROUPS]
    assert sorted(registered) == _modules(COMMANDS)


def test_every_command_takes_a_client_and_never_chooses_the_output_format_itself() -> None:
    for name in _modules(COMMANDS):
        source = (COMMANDS / f"{name}.py").read_text()
        tree = ast.parse(source)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("cmd_"):
                client = node.args.args[1].annotation
                assert client is not None and ast.unparse(client) in ("Client", "Client | None"), (name, node.name)
            # JSON or human is render's choice (arca_client.output), never a command's
            if isinstance(node, ast.Attribute):
                assert ast.unparse(node) != "args.json", f"commands/{name}.py:{node.lineno} reads args.json"
        assert "print_json" not in source, name


def test_every_group_of_calls_is_a_base_of_client() -> None:
    for name in _modules(CALLS):
        if name == "http":
            continue
        module = importlib.import_module(f"arca_client.calls.{name}")
        groups = [
            cls
            for _, cls in inspect.getmembers(module, inspect.isclass)
            if issubclass(cls, HttpCalls) and cls is not HttpCalls and cls.__module__ == module.__name__
        ]
        assert groups, name
        assert all(issubclass(Client, cls) for cls in groups), name


def test_no_module_of_the_client_is_over_600_lines() -> None:
    long = {
        p.relative_to(PACKAGE).as_posix(): n
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text().splitlines())) > 600
    }
    assert not long, long
