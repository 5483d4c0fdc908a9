"""Local mode runs on what `make local` installs, and nothing more: requirements-local.txt, the client and the
Lambda package, in a virtualenv of their own (the development one holds every test tool, which could hide a
dependency local mode lacks: moto's EventBridge needs `jsonpath_ng`, which only its `events` extra brings).

The virtualenv is built by the Makefile's own rule, once per content of the files it installs from, under
.artifacts/ (gitignored); later runs reuse it.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import requests

from local.stream import delivered_events
from tests.e2e.conftest import ArcaHttp
from tests.e2e.processes import REPO, local_server
from tests.helpers import PATIENCE, wait_for

INSTALLED_FROM = ("requirements.txt", "requirements-local.txt", "client/pyproject.toml", "pyproject.toml", "Makefile")


def local_venv() -> Path:
    """The virtualenv `make local` would build, for the current content of what it installs from."""
    digest = hashlib.sha256(b"".join((REPO / name).read_bytes() for name in INSTALLED_FROM)).hexdigest()[:16]
    venv = REPO / ".artifacts" / "local-venv" / digest
    if not (venv / ".installed-local").exists():
        for stale in venv.parent.glob("*"):  # built from files as they were before
            shutil.rmtree(stale)
        subprocess.run(
            ["make", "-s", f"VENV={venv}", f"{venv}/.installed-local"], cwd=REPO, check=True, capture_output=True
        )
    return venv


def test_local_mode_publishes_and_delivers_events_with_its_own_dependencies_only(tmp_path: Path) -> None:
    # Given local mode started from a virtualenv holding only what `make local` installs
    python = local_venv() / "bin" / "python"
    with local_server(tmp_path, python=str(python)) as server:
        stdout, _ = server.output()
        bus = re.search(r"SQS queue \S+ on (http://\S+)", stdout)
        assert bus, stdout
        # When an artifact is published
        with requests.Session() as session:
            arca = ArcaHttp(server.url, session)
            digest = arca.upload("deps/app", b"local only")
            published = arca.post("/artifacts/deps/app/versions", json={"sha256": digest, "size": 10})
            assert published.status_code == 201, published.text
        # Then its events reach the bus
        delivered: list[dict[str, Any]] = []

        def published_on_the_bus() -> bool:
            delivered.extend(m for m in delivered_events(bus.group(1)) if m["detail"]["name"] == "deps/app")
            return any(m["detail-type"] == "version.published" for m in delivered)

        what = f"version.published on the bus (server log: {server.stderr})"
        wait_for(published_on_the_bus, timeout=PATIENCE, what=what)
        _, stderr = server.output()
    # and nothing failed on the way (a PutEvents that fails logs a traceback and is retried)
    assert "Traceback" not in stderr, stderr
