"""Large content through the installed `arca` against the local server: parts sent and fetched in parallel, and a
real process killed half-way through an upload and through a download, then run again to resume."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import requests

from arca_client import transfer
from tests.e2e.test_cli_behaviour import ARCA, _env
from tests.helpers import HTTP_TIMEOUT, PATIENCE, wait_for

PART = 5 * 1024**2
PARTS = 8


def _wait_for(condition: Callable[[], bool], process: subprocess.Popen[bytes], what: str) -> None:
    def met() -> bool:
        assert process.poll() is None, f"the process ended before {what}"
        return condition()

    wait_for(met, timeout=PATIENCE, what=what, interval=0.05)


def _run(env: dict[str, str], cwd: Path, *argv: str) -> dict[str, Any]:
    done = subprocess.run([str(ARCA), *argv, "--json"], env=env, cwd=cwd, capture_output=True, timeout=PATIENCE)
    assert done.returncode == 0, done.stderr.decode()
    return dict(json.loads(done.stdout))


def test_a_killed_upload_and_a_killed_download_resume_where_they_stopped(
    arca_url: str, tmp_path: Path, unique: str
) -> None:
    # Given a file of 8 parts of 5 MiB, and a publish process that stops (and is killed) after 4 parts
    name = f"{unique}/model"
    data = os.urandom(PARTS * PART - 1000)
    (tmp_path / "model.bin").write_bytes(data)
    env = _env(tmp_path, ARCA_ENDPOINT=arca_url, ARCA_CACHE_DIR=str(tmp_path / "cache"))
    argv = ["publish", name, "model.bin", "--part-size", "5MiB", "--parallel", "2"]
    layout = [hashlib.sha256(data[i : i + PART]).hexdigest() for i in range(0, len(data), PART)]
    upload_id = f"{hashlib.sha256(data).hexdigest()}.{hashlib.sha256(b''.join(map(bytes.fromhex, layout))).hexdigest()}"
    status_url = f"{arca_url}/artifacts/{name}/uploads/{upload_id}"

    def parts_in_s3() -> int:
        answer = requests.get(status_url, timeout=HTTP_TIMEOUT)
        return len(answer.json()["upload"]["uploaded"]) if answer.status_code == 200 else 0

    stalled = subprocess.Popen([str(ARCA), *argv], env={**env, transfer.STALL_ENV: "4"}, cwd=tmp_path)
    try:
        _wait_for(lambda: parts_in_s3() >= 4, stalled, "4 parts reached S3")
    finally:
        stalled.kill()
        stalled.wait()
    # When it is run again
    published = _run(env, tmp_path, *argv)
    # Then it sends only the parts S3 lacks, and the version carries the parts
    sent, resumed = published["transfer"]["sent"], published["transfer"]["resumed"]
    assert resumed >= 4 * PART and sent + resumed == len(data) and sent < len(data), published["transfer"]
    assert (published["version"], published["part_size"], published["parts"]) == (1, PART, layout)

    # Given a download that stops (and is killed) after 4 parts
    journal = tmp_path / "out" / ".model.bin.arca-partial.json"
    (tmp_path / "out").mkdir()
    argv = ["download", f"{name}@1", "-o", "out/model.bin", "--parallel", "2"]
    stalled = subprocess.Popen([str(ARCA), *argv], env={**env, transfer.STALL_ENV: "4"}, cwd=tmp_path)
    try:
        _wait_for(lambda: journal.exists() and len(journal.read_text().splitlines()) > 4, stalled, "4 parts fetched")
    finally:
        stalled.kill()
        stalled.wait()
    assert not (tmp_path / "out" / "model.bin").exists()
    # When it is run again
    downloaded = _run(env, tmp_path, *argv)
    # Then it fetches only the missing parts, and the file is the content (sha256 checked whole)
    got = downloaded["transfer"]
    assert got["resumed"] >= 4 * PART and got["received"] + got["resumed"] == len(data), got
    assert (tmp_path / "out" / "model.bin").read_bytes() == data
    assert not journal.exists()


def test_parallel_and_serial_transfers_give_the_same_version_and_bytes(
    arca_url: str, tmp_path: Path, unique: str
) -> None:
    # Given content of 3 parts
    name = f"{unique}/data"
    data = os.urandom(3 * PART - 7)
    (tmp_path / "data.bin").write_bytes(data)
    env = _env(tmp_path, ARCA_ENDPOINT=arca_url, ARCA_CACHE_DIR=str(tmp_path / "cache"))
    # When it is published with --parallel 1, then downloaded with --parallel 1 and --parallel 8
    published = _run(env, tmp_path, "publish", name, "data.bin", "--part-size", "5MiB", "--parallel", "1")
    for parallel in ("1", "8"):
        _run(env, tmp_path, "download", f"{name}@1", "-o", f"copy-{parallel}.bin", "--parallel", parallel, "-f")
        # Then every copy is the content
        assert (tmp_path / f"copy-{parallel}.bin").read_bytes() == data
    assert published["transfer"]["parts_sent"] == 3
    # And publishing it again sends nothing (the layout exists), and makes no new version
    again = _run(env, tmp_path, "publish", name, "data.bin", "--part-size", "5MiB")
    assert (again["deduplicated"], again["transfer"]["sent"], again["version"]) == (True, 0, 1)
