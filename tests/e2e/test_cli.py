"""The `arca` command end to end against the local server: in-process through `main(argv)`, and as a real
subprocess of the installed console script."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from arca_client import Client, RetryPolicy
from arca_client.cli import main
from local.services import free_port
from tests.helpers import PATIENCE

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

MIB = 1024 * 1024
ARCA = Path(sys.executable).with_name("arca")  # the console script `pip install -e ./client` put beside python


@dataclass
class Ran:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


Cli = Callable[..., Ran]


@pytest.fixture
def cli(arca_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    """`arca --endpoint <local server> ARGS…` in this process; returns the exit code and what it printed."""
    monkeypatch.delenv("ARCA_SIGN", raising=False)

    def run(*argv: str) -> Ran:
        capsys.readouterr()
        code = main(["--endpoint", arca_url, *argv])
        captured = capsys.readouterr()
        return Ran(code, _without_metrics(captured.out), captured.err)

    return run


def _without_metrics(out: str) -> str:
    """The local server runs in this process, and its handlers print their metrics (EMF) to stdout as they do
    in Lambda: those lines are the server's, not the command's."""
    return "".join(line for line in out.splitlines(keepends=True) if not line.startswith('{"_aws":'))


def write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(MIB), b""):
            digest.update(chunk)
    return digest.hexdigest()


def publish(cli: Cli, tmp_path: Path, name: str, data: bytes, *options: str) -> int:
    """Publish `data` and return the version number."""
    ran = cli(
        "publish", name, write(tmp_path / f"blob-{hashlib.sha256(data).hexdigest()[:8]}", data), "--json", *options
    )
    assert ran.code == 0, ran.err
    return int(ran.json()["version"])


# ---- publish and download -----------------------------------------------------------------------


def test_publish_20_mib_and_download_it_back_byte_identical(cli: Cli, unique: str, tmp_path: Path) -> None:
    # Given a 20 MiB file, written in chunks
    source = tmp_path / "model.bin"
    with source.open("wb") as out:
        for _ in range(20):
            out.write(os.urandom(MIB))
    name = f"{unique}/models/big"
    # When
    published = cli("publish", name, str(source), "--metadata", "commit=abc123", "--progress")
    downloaded = cli("download", f"{name}@1", "-o", str(tmp_path / "back.bin"))
    # Then
    assert published.code == 0, published.err
    assert published.out.startswith(f"{name}: published version 1 (20.0 MiB, sha256 ")
    assert "uploading" in published.err
    assert "100%" in published.err
    assert downloaded.code == 0, downloaded.err
    assert "sha256 verified" in downloaded.out
    assert (tmp_path / "back.bin").stat().st_size == 20 * MIB
    assert file_sha256(tmp_path / "back.bin") == file_sha256(source)


def test_publishing_the_same_content_again_skips_upload_and_version(cli: Cli, unique: str, tmp_path: Path) -> None:
    # Given
    name = f"{unique}/app"
    source = write(tmp_path / "app.zip", os.urandom(4096))
    assert cli("publish", name, source).code == 0
    # When
    again = cli("publish", name, source, "--json")
    forced = cli("publish", name, source, "--force", "--json")
    # Then
    assert again.code == 0
    assert (again.json()["version"], again.json()["deduplicated"], again.json()["uploaded"]) == (1, True, False)
    assert forced.code == 0
    assert forced.json()["version"] == 2
    assert forced.json()["content_type"] == "application/zip"


def test_download_keeps_the_published_file_name_and_never_overwrites_silently(
    cli: Cli, unique: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a version published from app-v1.zip, and a working directory of our own
    name = f"{unique}/svc"
    builds = tmp_path / "builds"
    builds.mkdir()
    publish(cli, builds, name, b"release one")  # from a file named blob-<hash>
    cli("publish", name, write(builds / "app-v1.zip", b"release two"), "--alias", "prod")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    # When
    first = cli("download", f"{name}@prod")
    again = cli("download", f"{name}@prod")
    (work / "app-v1.zip").write_bytes(b"edited by hand")
    refused = cli("download", f"{name}@LATEST")
    forced = cli("download", f"{name}@prod", "--force")
    into_dir = cli("download", f"{name}@1", "-o", str(tmp_path))
    shown = cli("show", f"{name}@prod", "--json")
    # Then
    assert first.code == 0, first.err
    assert first.out == f"{name}@prod: version 2 (11 B, sha256 verified) -> app-v1.zip\n"
    assert (again.code, refused.code) == (3, 3)
    assert again.err == "arca: error: FileExists: app-v1.zip exists; --force overwrites it\n"
    assert forced.code == 0, forced.err
    assert (work / "app-v1.zip").read_bytes() == b"release two"
    assert into_dir.code == 0, into_dir.err
    blob_names = [p.name for p in tmp_path.iterdir() if p.name.startswith("blob-")]
    assert len(blob_names) == 1  # version 1 kept the name of the file it was published from
    assert (tmp_path / blob_names[0]).read_bytes() == b"release one"
    assert shown.json()["metadata"] == {"filename": "app-v1.zip"}
    assert shown.json()["alias"]["alias"] == "prod"


def test_json_errors_carry_the_servers_request_id(cli: Cli, unique: str) -> None:
    # When
    missing = cli("show", f"{unique}/nothing", "--json")
    # Then
    assert missing.code == 2
    assert missing.out == ""
    error = json.loads(missing.err)["error"]
    assert (error["code"], error["status"]) == ("NotFoundError", 404)
    assert len(error["request_id"]) == 36


def test_the_installed_console_script_publishes_and_downloads(arca_url: str, unique: str, tmp_path: Path) -> None:
    # Given the real `arca` executable, configured through the environment
    assert ARCA.exists(), f"{ARCA} is missing: run `make install` (pip install -e ./client)"
    env = {k: v for k, v in os.environ.items() if k != "ARCA_SIGN"} | {"ARCA_ENDPOINT": arca_url}
    data = os.urandom(3 * MIB + 17)
    source = write(tmp_path / "site.tar", data)
    name = f"{unique}/site"

    def arca(*argv: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([str(ARCA), *argv], env=env, capture_output=True, timeout=PATIENCE, check=False)

    # When
    published = arca("publish", name, source, "--alias", "prod", "--json")
    downloaded = arca("download", f"{name}@prod", "-o", "-")
    missing = arca("versions", f"{unique}/missing")
    usage = arca("alias", "set", name)
    # Then
    assert published.returncode == 0, published.stderr
    assert json.loads(published.stdout)["alias"]["version"] == 1
    assert downloaded.returncode == 0, downloaded.stderr
    assert downloaded.stdout == data
    assert b"sha256 verified" in downloaded.stderr
    assert missing.returncode == 2
    assert missing.stderr.decode().startswith("arca: error: NotFoundError: ")
    assert usage.returncode == 1
    assert b"arca: error: UsageError: " in usage.stderr


# ---- error paths and exit codes -----------------------------------------------------------------


def test_every_error_path_has_its_exit_code(cli: Cli, unique: str, tmp_path: Path) -> None:
    # Given an artifact with one version that the alias prod points at
    name = f"{unique}/app"
    publish(cli, tmp_path, name, b"version one", "--alias", "prod")
    source = write(tmp_path / "f", b"x")
    cases = [
        # not found: 2
        (["versions", f"{unique}/missing"], 2, "NotFoundError"),
        (["show", f"{name}@99"], 2, "NotFoundError"),
        (["resolve", f"{name}@99"], 2, "NotFoundError"),
        (["download", f"{name}@nosuch", "-o", str(tmp_path / "x")], 2, "NotFoundError"),
        (["alias", "history", name, "nosuch"], 2, "NotFoundError"),
        (["delete", name, "5"], 2, "NotFoundError"),
        (["publish", name, str(tmp_path / "no-such-file")], 2, "FileNotFound"),
        # conflict or precondition: 3
        (["delete", name, "1"], 3, "VersionPinnedError"),
        (["alias", "set", name, "prod", "1", "--if-revision", "99"], 3, "PreconditionFailedError"),
        (["alias", "set", name, "prod", "1", "--create-only"], 3, "PreconditionFailedError"),
        (["alias", "set", name, "prod", "1", "--expect-version", "7"], 3, "PreconditionFailedError"),
        (["alias", "set", name, "prod", "42"], 3, "ConflictError"),
        (["alias", "rollback", name, "prod"], 3, "ConflictError"),
        (["purge", name, "--yes"], 3, "ConflictError"),
        # usage, including input the API refuses: 1
        (["publish", "Not_A_Name", source], 1, "ValidationError"),
        (["publish", f"{unique}/latest/app", source], 1, "ValidationError"),
        (["versions", f"{unique}/latest/app"], 1, "ValidationError"),
        (["show", f"{unique}/aliases/app@1"], 1, "ValidationError"),
        (["publish", f"{unique}//app", source], 1, "ValidationError"),
        (["versions", f"{unique}//app"], 1, "ValidationError"),
        (["alias", "set", name, "a~b", "1"], 1, "ValidationError"),
        (["alias", "set", name, "prod", "1", "--canary", "1", "--weight", "10"], 1, "ValidationError"),
        (["delete", name], 1, "UsageError"),
        (["prune", name], 1, "UsageError"),
    ]
    for argv, code, error_code in cases:
        # When
        ran = cli(*argv)
        # Then
        assert (ran.code, ran.err.splitlines()[-1].split(":")[:3]) == (code, ["arca", " error", f" {error_code}"]), (
            argv,
            ran,
        )
        assert ran.out == "", argv
    # And nothing was changed by any of them
    assert [v["version"] for v in cli("versions", name, "--all", "--json").json()] == [1]
    assert cli("alias", "show", name, "prod", "--json").json()["revision"] == 1


def test_an_unreachable_endpoint_exits_4(capsys: pytest.CaptureFixture[str]) -> None:
    # Given a port nobody listens on, and no retries to wait for
    endpoint = f"http://127.0.0.1:{free_port()}"

    def factory(args: object) -> Client:
        return Client(endpoint, retry=RetryPolicy(max_attempts=1))

    # When
    code = main(["versions", "app"], client_factory=factory)
    # Then
    assert code == 4
    assert capsys.readouterr().err.startswith("arca: error: ConnectionError: ")


# ---- aliases: set, promote, history, rollback, canary -------------------------------------------


def test_alias_set_promote_history_and_rollback(cli: Cli, unique: str, tmp_path: Path) -> None:
    # Given version 1 in prod and version 2 in staging
    name = f"{unique}/svc"
    v1, v2 = b"release one", b"release two"
    assert publish(cli, tmp_path, name, v1, "--alias", "prod") == 1
    assert publish(cli, tmp_path, name, v2, "--alias", "staging") == 2
    # When staging is copied onto prod
    promoted = cli("alias", "copy", name, "--from", "staging", "--to", "prod")
    # the moment of the promotion, as the history records it: `--at` it sees that revision and none later
    after_promotion = cli("alias", "history", name, "prod", "--json").json()[0]["updated_at"]
    # Then prod serves version 2, and the history says how it got there
    assert promoted.code == 0, promoted.err
    assert promoted.out == f"{name}: copied staging to prod: 1 -> 2 (revision 2)\n"
    assert cli("alias", "copy", name, "--from", "staging", "--to", "prod").out.endswith("nothing to do\n")
    history = cli("alias", "history", name, "prod")
    assert history.code == 0
    rows = [line.split() for line in history.out.splitlines()]
    assert rows[0][:3] == ["REVISION", "ACTION", "VERSION"]
    assert [r[:3] for r in rows[1:]] == [["2", "set", "2"], ["1", "set", "1"]]
    assert "promoted from staging (version 2)" in history.out
    # When prod is rolled back
    rolled = cli("alias", "rollback", name, "prod")
    # Then it serves version 1 again, as a new revision, while `--at` still sees the promotion
    assert rolled.code == 0, rolled.err
    assert rolled.out == f"{name}: prod rolled back to 1 (revision 3)\n"
    assert cli("download", f"{name}@prod", "-o", str(tmp_path / "prod.bin")).code == 0
    assert (tmp_path / "prod.bin").read_bytes() == v1
    as_of = cli("resolve", f"{name}@prod", "--at", after_promotion, "--json")
    assert as_of.code == 0, as_of.err
    assert as_of.json()["version"] == 2
    revisions = cli("alias", "history", name, "prod", "--json").json()
    assert [(r["revision"], r["action"], r["version"]) for r in revisions] == [
        (3, "rollback", 1),
        (2, "set", 2),
        (1, "set", 1),
    ]
    back_to_two = cli("alias", "rollback", name, "prod", "--to-revision", "2", "--json")
    assert back_to_two.json()["version"] == 2
    listed = cli("alias", "ls", name)
    assert [line.split()[:3] for line in listed.out.splitlines()[1:]] == [["prod", "2", "4"], ["staging", "2", "1"]]


def test_canary_routes_each_key_to_one_side(cli: Cli, unique: str, tmp_path: Path) -> None:
    # Given prod on version 1 with version 2 as a 50% canary
    name = f"{unique}/web"
    publish(cli, tmp_path, name, b"stable")
    publish(cli, tmp_path, name, b"canary")
    canary = cli("alias", "set", name, "prod", "1", "--canary", "2", "--weight", "50", "--reason", "try 2")
    assert canary.code == 0, canary.err
    assert canary.out == f"{name}: prod -> 1, canary 2 at 50% (revision 1)\n"

    def resolve(key: str) -> tuple[int, str]:
        ran = cli("resolve", f"{name}@prod", "--key", key, "--json")
        assert ran.code == 0, ran.err
        data = ran.json()
        return data["version"], data["route"]

    # When
    sides = {key: resolve(key) for key in (f"user-{i}" for i in range(40))}
    # Then each key always lands on the same side, both sides get keys, and the route names the side
    assert all(resolve(key) == side for key, side in list(sides.items())[:5])
    assert set(sides.values()) == {(1, "primary"), (2, "secondary")}
    key, (number, _) = next(iter(sides.items()))
    downloaded = cli("download", f"{name}@prod", "--key", key, "-o", str(tmp_path / "got"), "--json")
    assert downloaded.json()["version"] == number
    assert (tmp_path / "got").read_bytes() == (b"stable" if number == 1 else b"canary")
    # And promoting the canary to everyone clears it
    full = cli("alias", "set", name, "prod", "2", "--json")
    assert full.json()["secondary_version"] is None
    assert {resolve(k)[0] for k in list(sides)[:10]} == {2}


# ---- listing and housekeeping -------------------------------------------------------------------


def test_ls_draws_the_tree_of_prefixes(cli: Cli, unique: str, tmp_path: Path) -> None:
    # Given
    for leaf in ("team/api/server", "team/web", "tool"):
        publish(cli, tmp_path, f"{unique}/{leaf}", leaf.encode())
    # When
    one_level = cli("ls", f"{unique}/")
    tree = cli("ls", f"{unique}/", "-R")
    as_json = cli("ls", f"{unique}/", "-R", "--json")
    # Then
    assert one_level.out.splitlines() == [f"{unique}/team/", f"{unique}/tool"]
    ascii_tree = tree.out.replace("├── ", "|-- ").replace("└── ", "`-- ").replace("│   ", "|   ")
    assert ascii_tree.splitlines() == [
        f"{unique}/team/",
        "|-- api/",
        "|   `-- server",
        "`-- web",
        f"{unique}/tool",
    ]
    # one row per entry, in the order they are read (a folder's contents after the level it is in)
    assert as_json.json() == [
        {"name": f"{unique}/team/", "type": "prefix"},
        {"name": f"{unique}/tool", "type": "artifact"},
        {"name": f"{unique}/team/api/", "type": "prefix"},
        {"name": f"{unique}/team/web", "type": "artifact"},
        {"name": f"{unique}/team/api/server", "type": "artifact"},
    ]


def test_versions_show_delete_restore_prune_and_purge(cli: Cli, unique: str, tmp_path: Path) -> None:
    # Given four versions
    name = f"{unique}/lib"
    for i in range(1, 5):
        assert publish(cli, tmp_path, name, f"build {i}".encode()) == i
    # When / Then: the table lists them newest first
    table = cli("versions", name)
    assert [line.split()[0] for line in table.out.splitlines()] == ["VERSION", "4", "3", "2", "1"]
    shown = cli("show", name)
    assert "newest version  4" in shown.out
    # prune: a dry run deletes nothing, the real one the same versions
    dry = cli("prune", name, "--keep-last", "2", "--dry-run")
    assert dry.out == f"{name}: would delete versions 1, 2\n"
    assert cli("prune", name, "--keep-last", "2").out == f"{name}: deleted versions 1, 2\n"
    assert [v["version"] for v in cli("versions", name, "--json").json()] == [4, 3]
    # restore and delete
    assert cli("restore", name, "1").out == f"{name}: version 1 restored\n"
    assert cli("delete", name, "3").code == 0
    listed = cli("versions", name, "--all", "--asc", "--json").json()
    assert [(v["version"], v["deleted"]) for v in listed] == [
        (1, False),
        (2, True),
        (3, True),
        (4, False),
    ]
    assert cli("resolve", f"{name}@3").code == 2
    # purge: refused while an alias exists, then forced
    assert cli("alias", "set", name, "prod", "4").code == 0
    assert cli("purge", name, "--yes").code == 3
    assert cli("purge", name, "--yes", "--force").out == f"{name}: purged\n"
    gone = cli("show", name)
    assert gone.code == 2
    assert gone.err.startswith("arca: error: NotFoundError: ")


# ---- rollouts -----------------------------------------------------------------------------------


def test_rollout_start_watch_to_completion_then_abort_of_another(cli: Cli, unique: str, tmp_path: Path) -> None:
    # Given version 1 in prod and a version 2 to roll out
    name = f"{unique}/svc"
    assert publish(cli, tmp_path, name, b"one", "--alias", "prod") == 1
    assert publish(cli, tmp_path, name, b"two") == 2
    # When a rollout is started and watched to its end
    started = cli("rollout", "start", name, "prod", "2", "--steps", "20,60", "--interval", "1", "--reason", "r2")
    watched = cli("rollout", "status", name, "prod", "--watch", "--poll", "0.2")
    # Then each step was printed, and prod serves version 2
    assert started.code == 0, started.err
    assert started.out.startswith(f"{name}: prod rollout of version 2 (from 1): running: step 1/2 at 20%")
    assert watched.code == 0, watched.err
    lines = watched.out.splitlines()
    assert "step 2/2 at 60%" in lines[-2] and "completed at" in lines[-1]
    assert cli("alias", "show", name, "prod", "--json").json()["version"] == 2
    # When a rollout back to version 1 is started, then aborted
    assert cli("rollout", "start", name, "prod", "1", "--steps", "10", "--interval", "60").code == 0
    again = cli("rollout", "start", name, "prod", "1", "--steps", "10", "--interval", "60")
    aborted = cli("rollout", "abort", name, "prod", "--json")
    # Then a second rollout was refused (exit 3), the abort rolled back, and a second abort is refused too
    assert again.code == 3 and "RolloutRunningError" in again.err
    assert aborted.code == 0 and aborted.json()["state"] == "aborted"
    assert cli("alias", "show", name, "prod", "--json").json()["secondary_version"] is None
    assert cli("rollout", "abort", name, "prod").code == 3
