"""Large content through the installed `arca` against the local server: parts sent and fetched in parallel, a real
process killed half-way through an upload and through a download, then run again to resume, and Ctrl-C pressed
while parts are queued and in flight."""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
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


def _wait_for(condition: Callable[[], bool], process: subprocess.Popen[Any], what: str) -> None:
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


def _interrupt_when(process: subprocess.Popen[str], condition: Callable[[], bool], what: str) -> tuple[str, str]:
    """Press Ctrl-C (SIGINT) once `condition` holds, and collect what the process printed."""
    try:
        _wait_for(condition, process, what)
        process.send_signal(signal.SIGINT)
        return process.communicate(timeout=120)
    finally:
        process.kill()


def test_ctrl_c_cancels_the_queue_drops_what_is_in_flight_and_says_how_to_resume(
    arca_url: str, tmp_path: Path, unique: str
) -> None:
    # Given a file of 12 parts, published and then downloaded 2 parts at a time, each part paced to take 0.5 s
    name = f"{unique}/weights"
    parts = 12
    data = os.urandom(parts * PART)
    (tmp_path / "weights.bin").write_bytes(data)
    env = _env(tmp_path, ARCA_ENDPOINT=arca_url, ARCA_CACHE_DIR=str(tmp_path / "cache"))
    paced = {**env, transfer.PACE_ENV: "0.5"}
    argv = ["publish", name, "weights.bin", "--part-size", "5MiB", "--parallel", "2"]
    layout = b"".join(hashlib.sha256(data[i : i + PART]).digest() for i in range(0, len(data), PART))
    upload_id = f"{hashlib.sha256(data).hexdigest()}.{hashlib.sha256(layout).hexdigest()}"
    status_url = f"{arca_url}/artifacts/{name}/uploads/{upload_id}"

    def parts_in_s3() -> int:
        answer = requests.get(status_url, timeout=30)
        return len(answer.json()["upload"]["uploaded"]) if answer.status_code == 200 else 0

    # When Ctrl-C is pressed once 2 parts are in S3
    publishing = subprocess.Popen([str(ARCA), *argv], env=paced, cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    _, said = _interrupt_when(publishing, lambda: parts_in_s3() >= 2, "2 parts reached S3")
    # Then it ends at once with 130, the queued parts never sent, and says how far it got and how to go on
    assert publishing.returncode == 130, said
    sent = parts_in_s3()
    assert sent < parts, "every queued part was still sent"
    found = re.search(r"arca: interrupted at (\d+) %; run the same command again to resume", said)
    assert found and 0 < int(found.group(1)) < 100, said
    assert "Traceback" not in said
    # And the same command resumes: only the missing parts go up
    published = _run(env, tmp_path, *argv)
    assert published["transfer"]["resumed"] >= sent * PART and published["transfer"]["sent"] < len(data)

    # Given the same for a download
    journal = tmp_path / ".copy.bin.arca-partial.json"
    argv = ["download", f"{name}@1", "-o", "copy.bin", "--parallel", "2"]
    downloading = subprocess.Popen([str(ARCA), *argv], env=paced, cwd=tmp_path, stderr=subprocess.PIPE, text=True)

    def journaled() -> int:
        return len(journal.read_text().splitlines()) - 1 if journal.exists() else 0

    _, said = _interrupt_when(downloading, lambda: journaled() >= 2, "2 parts fetched")
    # Then
    assert downloading.returncode == 130, said
    assert journaled() < parts, "every queued part was still fetched"
    assert re.search(r"arca: interrupted at \d+ %; run the same command again to resume", said), said
    assert not (tmp_path / "copy.bin").exists()
    downloaded = _run(env, tmp_path, *argv)
    assert downloaded["transfer"]["resumed"] >= 2 * PART
    assert (tmp_path / "copy.bin").read_bytes() == data
