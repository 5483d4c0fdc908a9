"""The ready banner's lines for the CLI walkthrough: how to put `arca` on PATH, and the endpoint off port 3000."""

from __future__ import annotations

from pathlib import Path

from local.server import cli_lines


def virtualenv(root: Path, *, activate: bool = True) -> Path:
    """A virtual environment's bin folder with `python` and `arca` (and `activate`); its python's path."""
    bin_dir = root / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for name in ("python", "arca", *(["activate"] if activate else [])):
        (bin_dir / name).write_text("")
    return bin_dir / "python"


def test_make_local_on_port_3000_says_how_to_activate_the_virtualenv(tmp_path: Path) -> None:
    python = virtualenv(tmp_path)
    assert cli_lines("http://127.0.0.1:3000", str(python), tmp_path) == [
        "CLI: in the shell where you type `arca`, run:",
        "  source .venv/bin/activate",
    ]


def test_another_port_adds_the_endpoint_to_export(tmp_path: Path) -> None:
    python = virtualenv(tmp_path)
    assert cli_lines("http://127.0.0.1:3001", str(python), tmp_path) == [
        "CLI: in the shell where you type `arca`, run:",
        "  source .venv/bin/activate",
        "  export ARCA_ENDPOINT=http://127.0.0.1:3001",
    ]


def test_a_virtualenv_elsewhere_is_named_by_its_whole_path(tmp_path: Path) -> None:
    python = virtualenv(tmp_path / "elsewhere")
    lines = cli_lines("http://127.0.0.1:3000", str(python), tmp_path / "repo")
    assert lines[1] == f"  source {tmp_path / 'elsewhere' / '.venv' / 'bin' / 'activate'}"


def test_without_an_activate_script_the_bin_folder_goes_on_path(tmp_path: Path) -> None:
    python = virtualenv(tmp_path, activate=False)
    lines = cli_lines("http://127.0.0.1:3000", str(python), tmp_path)
    assert lines[1] == f'  export PATH="{python.parent}:$PATH"'


def test_nothing_to_say_is_no_lines(tmp_path: Path) -> None:
    (tmp_path / "python").write_text("")
    assert cli_lines("http://127.0.0.1:3000", str(tmp_path / "python"), tmp_path) == []
