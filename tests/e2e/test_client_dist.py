"""The client as a user gets it: a wheel built from client/, installed with its declared dependencies into a
fresh virtual environment, driving the local server; and the walkthroughs of the docs, run verbatim with it
against a fresh `make local` server."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.processes import REPO, local_server

MARK = "<!-- walkthrough -->"
# Printed values that differ from run to run: hashes, times, URLs, and the elisions the docs write as "…".
_VOLATILE = re.compile(r"[0-9a-f]{12}|\d{4}-\d{2}-\d{2}|https?://|…")


@dataclass(frozen=True)
class Installed:
    wheel: Path
    bin: Path

    @property
    def arca(self) -> str:
        return str(self.bin / "arca")

    @property
    def python(self) -> str:
        return str(self.bin / "python")


def run(*argv: str | Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    ran = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=600, **kwargs)  # type: ignore[call-overload]
    assert ran.returncode == 0, f"{argv}:\n{ran.stdout}\n{ran.stderr}"
    return ran  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    """`pip wheel` of a copy of client/ (the checkout stays clean), then a fresh venv with that wheel."""
    work = tmp_path_factory.mktemp("dist")
    source = work / "client"
    shutil.copytree(REPO / "client", source, ignore=shutil.ignore_patterns("*.egg-info", "build", "__pycache__"))
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "--disable-pip-version-check", "-w", work, source)
    (wheel,) = work.glob("arca_client-*.whl")
    run(sys.executable, "-m", "venv", work / "venv")
    bin_dir = work / "venv" / "bin"
    run(bin_dir / "python", "-m", "pip", "install", "-q", "--disable-pip-version-check", wheel)
    yield Installed(wheel, bin_dir)


def test_the_wheel_carries_every_file_of_the_package(installed: Installed) -> None:
    # Given every file of the import package in the checkout: modules, py.typed, console_static/** when present
    package = REPO / "client" / "arca_client"
    expected = {
        f"arca_client/{path.relative_to(package).as_posix()}"
        for path in package.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    # When
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = set(wheel.namelist())
        metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
        requires = [line for line in wheel.read(metadata).decode().splitlines() if line.startswith("Requires-Dist")]
    # Then
    assert expected <= names
    assert "arca_client/py.typed" in names
    # The base install needs three packages; MLflow comes only with the `mlflow` extra (the registry plugin)
    base = [r for r in requires if "extra ==" not in r]
    assert [re.split(r"[\s<>=!~;,(]", r.removeprefix("Requires-Dist: "))[0] for r in base] == [
        "requests",
        "botocore",
        "cryptography",
    ]
    extras = [r.removeprefix("Requires-Dist: ") for r in requires if "extra ==" in r]
    assert [(re.split(r"[\s<>=!~;,(]", r)[0], r.split(";")[1].strip()) for r in extras] == [
        ("mlflow-skinny", 'extra == "mlflow"')
    ]
    assert installed.wheel.name.startswith("arca_client-")


def test_the_installed_wheel_runs_end_to_end_with_only_its_own_dependencies(
    installed: Installed, arca_url: str, unique: str, tmp_path: Path
) -> None:
    # Given a working directory and a config directory of this test's own
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARCA_", "AWS_"))}
    env |= {"XDG_CONFIG_HOME": str(tmp_path / "config"), "ARCA_ENDPOINT": arca_url}
    source = tmp_path / "build" / "model-v1.onnx"
    source.parent.mkdir()
    source.write_bytes(os.urandom(70_000))
    name = f"{unique}/model"

    def arca(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        ran = subprocess.run(
            [installed.arca, *argv], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
        )
        assert not check or ran.returncode == 0, (argv, ran.stderr)
        return ran

    # When
    version = arca("--version").stdout
    published = json.loads(arca("publish", name, str(source), "--alias", "prod", "--json").stdout)
    downloaded = arca("download", f"{name}@prod")
    missing = arca("show", f"{unique}/nothing", "--json", check=False)
    arca("config", "set-endpoint", "here", arca_url)
    arca("config", "use", "here")
    del env["ARCA_ENDPOINT"]
    via_config = json.loads(arca("show", f"{name}@1", "--json").stdout)
    completion = arca("completion", "bash").stdout
    boto3 = subprocess.run([installed.python, "-c", "import boto3"], capture_output=True, text=True)
    # Then
    assert version == "arca 0.1.0\n"
    assert (published["version"], published["alias"]["alias"]) == (1, "prod")
    assert downloaded.stdout.endswith("-> model-v1.onnx\n")
    assert (tmp_path / "model-v1.onnx").read_bytes() == source.read_bytes()
    assert missing.returncode == 2
    assert json.loads(missing.stderr)["error"]["code"] == "NotFoundError"
    assert via_config["metadata"] == {"filename": "model-v1.onnx"}
    assert "complete -o default -F _arca arca" in completion
    assert boto3.returncode != 0  # the client stands on requests and botocore alone


def walkthrough(document: Path) -> tuple[str, str, list[str]]:
    """The blocks of `document` marked as walkthrough: (bash script, python script, expected output lines).

    Expected output is every `# ` line that directly follows a command (or another such line) in a bash block,
    minus volatile values; a comment after a blank line is a remark.
    """
    lines = document.read_text().splitlines()
    bash: list[str] = []
    python: list[str] = []
    expected: list[str] = []
    for i, line in enumerate(lines):
        if line != MARK:
            continue
        fence = lines[i + 1]
        assert fence in ("```bash", "```python"), f"{document.name}:{i + 2}: a walkthrough block is bash or python"
        end = lines.index("```", i + 2)
        block = lines[i + 2 : end]
        (bash if fence == "```bash" else python).extend([*block, ""])
        if fence == "```bash":
            after_command = False
            for code in block:
                if code.startswith("#"):
                    output = code[2:]
                    if after_command and output.strip() and not _VOLATILE.search(output):
                        expected.append(output)
                else:
                    after_command = bool(code.strip())
    return "\n".join(bash), "\n".join(python), expected


def test_the_walkthroughs_run_verbatim_in_order_on_one_local_server(installed: Installed, tmp_path: Path) -> None:
    """README.md's walkthroughs (curl, then the CLI), then docs/cli.md's, as a reader runs them: one server, one
    checkout. The README starts from a shell where nothing put `arca` on PATH (its first line activates
    `.venv`, which `make local` made: here a link to the installed wheel's environment); docs/cli.md is read
    after installing the client, so its shell has `arca` on PATH."""
    # Given the prerequisites the docs name, a fresh server, and a checkout with .venv
    for tool in ("jq", "curl", "sha256sum"):
        assert shutil.which(tool), f"the walkthroughs need {tool} (a documented prerequisite)"
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / ".venv").symlink_to(installed.bin.parent)
    (checkout / "deploy").mkdir()  # the repository's own deploy/ folder, which no walkthrough may write into
    with local_server(tmp_path) as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ARCA_", "AWS_", "VIRTUAL_ENV"))}
        env |= {
            "PATH": os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if not Path(p, "arca").exists()),
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            # The one change to the text: the server listens on a free port, not 3000.
            "ARCA_ENDPOINT": server.url,
        }
        # When
        readme = _run_walkthrough(REPO / "README.md", checkout, env, installed, server.url, tmp_path)
        cli = _run_walkthrough(
            REPO / "docs" / "cli.md",
            checkout,
            env | {"PATH": f"{installed.bin}{os.pathsep}{env['PATH']}"},
            installed,
            server.url,
            tmp_path,
        )
    # Then
    for ran in (readme, cli):
        assert ran.returncode == 0, ran.stdout
    assert list((checkout / "deploy").iterdir()) == []
    _, server_log = server.output()
    assert " 500 " not in server_log
    assert " 502 " not in server_log
    assert "Traceback" not in server_log


def _run_walkthrough(
    document: Path, checkout: Path, env: dict[str, str], installed: Installed, url: str, tmp_path: Path
) -> subprocess.CompletedProcess[str]:
    """Run `document`'s walkthrough blocks in one bash in `checkout` (then its Python in the directory the bash
    ended in); the result's stdout says what failed, and returncode is 0 when everything ran and printed what
    the document shows."""
    bash, python, expected = walkthrough(document)
    assert bash
    script = bash.replace("A=http://127.0.0.1:3000", f"A={url}")
    last_dir = tmp_path / f"{document.stem}-last-dir"
    script = f'set -euo pipefail\n{script}\npwd > "{last_dir}"\n'
    ran = subprocess.run(["bash", "-c", script], cwd=checkout, env=env, capture_output=True, text=True, timeout=600)
    if ran.returncode != 0:
        return subprocess.CompletedProcess(ran.args, 1, f"{document.name}:\n{ran.stdout}\n{ran.stderr}")
    printed = [p.rstrip() for p in (ran.stdout + ran.stderr).splitlines()]
    missing = [line for line in expected if line.rstrip() not in printed]
    if missing:
        shown = "\n".join(missing)
        return subprocess.CompletedProcess(ran.args, 1, f"{document.name} shows output it did not print:\n{shown}")
    if python:
        sdk = subprocess.run(
            [installed.python, "-c", python],
            cwd=last_dir.read_text().strip(),
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if sdk.returncode != 0:
            return subprocess.CompletedProcess(sdk.args, 1, f"{document.name} (Python):\n{sdk.stderr}")
    return ran
