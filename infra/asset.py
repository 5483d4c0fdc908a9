"""The functions' code asset: the `arca` package with its bytecode compiled by the runtime's own Python, so that no
cold start compiles Arca's source (docs/decisions.md). CDK runs `build` as the asset's local bundling (no Docker);
the bench builds the same asset to measure the cold start the deployed code has.

The bytecode is `unchecked-hash` (PEP 552): Python loads it without comparing it to the source's timestamp, which
the asset's zip does not keep, and never tries to rewrite it in Lambda's read-only file system.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

# What the asset leaves out: bytecode of another Python, caches, the package's build metadata.
IGNORED = ("__pycache__", "*.pyc", "*.egg-info")


def build(source: Path, out: Path, python: str | None) -> bool:
    """Copy the asset root `source` (`lambdas/`: the package) into `out`, and compile it with `python` (the
    runtime's interpreter); False when there is none to compile with (the asset then ships source only)."""
    shutil.copytree(source, out, ignore=shutil.ignore_patterns(*IGNORED), dirs_exist_ok=True)
    if python is None:
        return False
    # A fixed hash seed: the same source makes the same bytecode (the order of a set constant depends on it).
    subprocess.run(
        [python, "-m", "compileall", "-q", "-j", "0", "--invalidation-mode", "unchecked-hash", str(out)],
        check=True,
        stdout=subprocess.DEVNULL,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    return True


def runtime_python(version: str, environ: Mapping[str, str] = os.environ) -> str | None:
    """An interpreter of Python `version` (`"3.12"`): `PYTHON312` (the variable `make test-deploy` reads too), this
    interpreter when it is that version, pyenv's, or one on the PATH; None when there is none."""
    digits = version.replace(".", "")
    root = environ.get("PYENV_ROOT") or str(Path.home() / ".pyenv")
    candidates = [
        environ.get(f"PYTHON{digits}", ""),
        sys.executable if f"{sys.version_info[0]}.{sys.version_info[1]}" == version else "",
        *sorted(glob.glob(f"{root}/versions/{version}*/bin/python{version}"), reverse=True),
        shutil.which(f"python{version}") or "",
    ]
    for candidate in filter(None, candidates):
        try:
            found = subprocess.run(
                [candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                capture_output=True,
                text=True,
                timeout=30,
            )
        except OSError:
            continue
        if found.returncode == 0 and found.stdout.strip() == version:
            return candidate
    return None
