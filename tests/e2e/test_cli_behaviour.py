"""What a new user meets in a first afternoon with `arca`, each run as the installed command in a subprocess
against the local server: errors without tracebacks, closed pipes, local paths, what `show` prints, aligned
events, Ctrl-C on watches, did-you-mean, endpoints without a scheme, --output, --quiet and `diff`."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import PATIENCE, wait_for

ARCA = Path(sys.executable).with_name("arca")  # the console script `pip install -e ./client` put beside python


class Ran:
    def __init__(self, done: subprocess.CompletedProcess[str]) -> None:
        self.code, self.out, self.err = done.returncode, done.stdout, done.stderr

    def json(self) -> Any:
        return json.loads(self.out)

    def error(self) -> dict[str, Any]:
        return dict(json.loads(self.err)["error"])


Arca = Callable[..., Ran]


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARCA_", "AWS_"))}
    aws = tmp_path / "aws"
    aws.mkdir(exist_ok=True)
    (aws / "config").write_text("[default]\nregion = eu-west-1\n")
    (aws / "credentials").write_text("")
    return env | {
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "AWS_CONFIG_FILE": str(aws / "config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(aws / "credentials"),
        **extra,
    }


@pytest.fixture
def arca(arca_url: str, tmp_path: Path) -> Arca:
    """The installed `arca`, talking to the local server through ARCA_ENDPOINT, in tmp_path."""
    return installed_arca(arca_url, tmp_path)


def installed_arca(arca_url: str, tmp_path: Path) -> Arca:
    """`arca(*argv)`: the installed command run in tmp_path against `arca_url`, its config of its own."""
    env = _env(tmp_path, ARCA_ENDPOINT=arca_url)

    def run(*argv: str, stdin: str | None = None) -> Ran:
        done = subprocess.run(
            [str(ARCA), *argv], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=PATIENCE, input=stdin
        )
        assert "Traceback" not in done.stderr, done.stderr
        return Ran(done)

    return run


@pytest.fixture
def app(arca: Arca, unique: str, tmp_path: Path) -> str:
    """An artifact with versions 1 and 2 (from app-v1.zip and app-v2.zip), prod -> 1 with canary 2 at 10%."""
    name = f"{unique}/app"
    for number in (1, 2):
        (tmp_path / f"app-v{number}.zip").write_bytes(os.urandom(1000 * number))
        assert arca("publish", name, f"app-v{number}.zip", "--metadata", f"commit=c{number}").code == 0
    assert arca("alias", "set", name, "prod", "1", "--canary", "2", "--weight", "10").code == 0
    return name


# ---- 1. a missing AWS profile -------------------------------------------------------------------


@pytest.mark.parametrize("region", [[], ["--region", "eu-west-1"]], ids=["region-from-config", "region-given"])
def test_a_missing_aws_profile_is_an_error_line_not_a_traceback(tmp_path: Path, region: list[str]) -> None:
    # Given no AWS profile named nosuch
    env = _env(tmp_path)
    url = "https://abc123defg.execute-api.eu-west-1.amazonaws.com/prod"

    def arca(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(ARCA), *argv], env=env, capture_output=True, text=True, timeout=PATIENCE)

    # When it is named with --profile, with and without --json, and by a configured endpoint
    plain = arca("--sign", "--profile", "nosuch", "--endpoint", url, *region, "ls")
    as_json = arca("--sign", "--profile", "nosuch", "--endpoint", url, *region, "ls", "--json")
    assert arca("config", "set-endpoint", "dev", url, "--profile", "nosuch").returncode == 0
    configured = arca("--endpoint", "dev", *region, "ls")
    # Then each is one line naming the profile, exit 1 (a bad option or config), never a traceback
    for done in (plain, as_json, configured):
        assert "Traceback" not in done.stderr
        assert done.returncode == 1, done.stderr
    assert plain.stderr.startswith("arca: error: ProfileNotFound: the AWS profile 'nosuch' is not defined")
    assert json.loads(as_json.stderr)["error"]["code"] == "ProfileNotFound"
    assert "arca: error: ProfileNotFound: " in configured.stderr


# ---- 2. a reader that goes away -----------------------------------------------------------------


@pytest.mark.parametrize("command", [["events"], ["show"], ["versions"], ["resolve"]])
def test_a_closed_pipe_ends_the_command_quietly(app: str, arca_url: str, tmp_path: Path, command: list[str]) -> None:
    # Given a reader that has gone away before arca writes (as `| head -1` does, at its own pace)
    read, write = os.pipe()
    os.close(read)
    # When
    try:
        done = subprocess.run(
            [str(ARCA), *command, app if command[0] != "resolve" else f"{app}@prod"],
            env=_env(tmp_path, ARCA_ENDPOINT=arca_url),
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=PATIENCE,
        )
    finally:
        os.close(write)
    # Then nothing is said and nothing failed
    assert (done.returncode, done.stderr) == (0, "")


def test_head_of_events_prints_one_line_and_exit_0(app: str, arca_url: str, tmp_path: Path) -> None:
    # When, ten times (the race between head's exit and arca's writes went wrong one run in three)
    runs = [
        subprocess.run(
            ["bash", "-o", "pipefail", "-c", f"'{ARCA}' events {app} | head -1"],
            env=_env(tmp_path, ARCA_ENDPOINT=arca_url),
            capture_output=True,
            text=True,
            timeout=PATIENCE,
        )
        for _ in range(10)
    ]
    # Then
    assert {(r.returncode, r.stderr, r.stdout.startswith("WHEN (UTC)")) for r in runs} == {(0, "", True)}


# ---- 3. show prints what --json has -------------------------------------------------------------


def test_show_prints_the_artifacts_description_and_tags_and_a_versions_tags(arca: Arca, app: str) -> None:
    # Given
    assert arca("tag", app, "team=payments", "--description", "the payments API").code == 0
    assert arca("tag", f"{app}@2", "env=staging", "approved-by=ana").code == 0
    # When
    artifact = arca("show", app)
    version = arca("show", f"{app}@2")
    # Then
    assert "description     the payments API" in artifact.out
    assert "tags            team=payments" in artifact.out
    assert "tags          approved-by=ana, env=staging" in version.out


# ---- 4. local files -----------------------------------------------------------------------------


def test_publish_of_an_empty_directory_is_refused_and_publishes_nothing(
    arca: Arca, unique: str, tmp_path: Path
) -> None:
    # Given an empty directory (a directory with files is published as a tree of files)
    empty = tmp_path / "empty"
    empty.mkdir()
    # When
    done = arca("publish", f"{unique}/x", str(empty))
    # Then
    assert done.code != 0
    assert "EmptyTree" in done.err
    assert arca("show", f"{unique}/x").code == 2  # nothing was published


def test_download_into_a_directory_that_is_not_there_names_it(arca: Arca, app: str, tmp_path: Path) -> None:
    # When
    trailing = arca("download", f"{app}@1", "-o", "nodir/")
    nested = arca("download", f"{app}@1", "-o", "nodir2/x.zip")
    # Then neither writes a file, and each names the directory it lacks
    assert (trailing.code, trailing.err) == (2, "arca: error: FileNotFound: nodir/: no such directory\n")
    assert (nested.code, nested.err) == (2, "arca: error: FileNotFound: nodir2/: no such directory\n")
    assert not (tmp_path / "nodir").exists()
    assert not (tmp_path / "nodir2").exists()
    # And an existing directory with a trailing slash keeps the published name
    (tmp_path / "out").mkdir()
    assert arca("download", f"{app}@1", "-o", "out/").code == 0
    assert (tmp_path / "out" / "app-v1.zip").exists()


# ---- 7. events, Ctrl-C, errors, suggestions, endpoints, limits, canaries -------------------------


def test_events_print_a_header_and_aligned_columns(arca: Arca, app: str) -> None:
    # When
    done = arca("events", app)
    # Then every row has every column, where the header puts it
    lines = done.out.splitlines()
    assert lines[0].split("  ")[0] == "WHEN (UTC)"
    columns = [lines[0].index(title) for title in ("EVENT", "VERSION", "ALIAS", "ID", "BY")]
    for line in lines[1:]:
        assert line[columns[0] - 2 : columns[0]] == "  "
        assert line[columns[3] : columns[3] + 16].isdigit(), line  # the event id, in its column
        assert line[columns[4] :].startswith("arn:aws:"), line
    alias_row = next(line for line in lines if "alias.updated" in line)
    assert alias_row[columns[2] :].startswith("prod ")


def _sleeping(pid: int) -> bool:
    """The process waits (between polls, or on the server) rather than runs: the state letter of /proc/PID/stat."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "S"


def _interrupted(argv: list[str], env: dict[str, str], ready: str) -> subprocess.CompletedProcess[str]:
    """Start `arca ARGV`, wait until its stdout shows `ready` (line by line, as it prints; PATIENCE at most),
    press Ctrl-C, and collect what it did."""
    process = subprocess.Popen([str(ARCA), *argv], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout, stderr = process.stdout, process.stderr
    assert stdout is not None and stderr is not None
    lines: queue.Queue[str] = queue.Queue()
    errors: list[str] = []
    readers = [
        threading.Thread(target=lambda: [lines.put(line) for line in iter(stdout.readline, "")]),
        threading.Thread(target=lambda: errors.append(stderr.read())),
    ]
    for reader in readers:
        reader.start()
    seen = ""
    deadline = time.monotonic() + PATIENCE
    try:
        while ready not in seen:
            seen += lines.get(timeout=max(0.0, deadline - time.monotonic()))
        what = f"`arca {' '.join(argv)}` waiting for its next poll"
        wait_for(lambda: _sleeping(process.pid), timeout=PATIENCE, what=what)
        process.send_signal(signal.SIGINT)
        process.wait(timeout=PATIENCE)
    except queue.Empty:
        raise AssertionError(f"`arca {' '.join(argv)}` did not print {ready!r} within {PATIENCE} s: {seen!r}") from None
    finally:
        if process.poll() is None:
            process.kill()
        for reader in readers:
            reader.join()
    while not lines.empty():
        seen += lines.get()
    return subprocess.CompletedProcess(argv, process.returncode, seen, "".join(errors))


def test_ctrl_c_ends_both_watches_with_exit_0_and_no_error(arca: Arca, app: str, arca_url: str, tmp_path: Path) -> None:
    # Given a rollout that will not finish by itself soon
    assert arca("alias", "set", app, "prod", "1").code == 0
    assert arca("rollout", "start", app, "prod", "2", "--steps", "10,50", "--interval", "3600").code == 0
    env = _env(tmp_path, ARCA_ENDPOINT=arca_url)
    # When each watch is interrupted
    follow = _interrupted(["events", app, "--follow"], env, "rollout.started")
    watch = _interrupted(["rollout", "status", app, "prod", "--watch", "--poll", "0.2"], env, "running")
    # Then
    assert (follow.returncode, follow.stderr) == (0, "")
    assert (watch.returncode, watch.stderr) == (0, "")
    assert arca("rollout", "abort", app, "prod").code == 0


def test_client_side_json_errors_carry_a_status_too(arca: Arca, unique: str, tmp_path: Path) -> None:
    # When
    usage = arca("versions", "--json")
    missing_file = arca("publish", f"{unique}/x", "nothing-here.zip", "--json")
    api = arca("show", f"{unique}/nothing", "--json")
    # Then every error object has the same keys; status is the API's, null when no answer is involved
    assert (usage.code, usage.error()["status"], usage.error()["code"]) == (1, None, "UsageError")
    assert (missing_file.code, missing_file.error()["status"]) == (2, None)
    assert (api.code, api.error()["status"]) == (2, 404)
    assert set(usage.error()) >= {"code", "message", "request_id", "status"}


def test_did_you_mean_for_a_command_and_an_alias(arca: Arca, app: str) -> None:
    # When
    command = arca("lss")
    subcommand = arca("alias", "shwo", app, "prod")
    alias = arca("show", f"{app}@prdo")
    alias_command = arca("alias", "history", app, "prdo")
    # Then
    assert command.code == 1
    assert "invalid choice: 'lss'; did you mean ls?" in command.err
    assert "did you mean show?" in subcommand.err
    assert alias.code == 2
    assert alias.err.rstrip().endswith(f"did you mean {app}@prod?")
    assert alias_command.err.rstrip().endswith("did you mean prod?")


def test_an_endpoint_without_a_scheme_is_a_url(arca_url: str, app: str, tmp_path: Path) -> None:
    # Given the local server's address as people type it
    address = arca_url.removeprefix("http://")
    # When
    done = subprocess.run(
        [str(ARCA), "--endpoint", address, "versions", app, "--json"],
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=PATIENCE,
    )
    # Then
    assert done.returncode == 0, done.stderr
    assert [v["version"] for v in json.loads(done.stdout)] == [2, 1]


def test_limit_0_is_refused_and_limit_1_shows_one(arca: Arca, app: str) -> None:
    # When
    zero = arca("versions", app, "--limit", "0")
    one = arca("versions", app, "--limit", "1", "--json")
    history = arca("alias", "history", app, "prod", "--limit", "0")
    # Then
    assert zero.code == 1
    assert "'0' is not a limit (a whole number, 1 or more)" in zero.err
    assert history.code == 1
    assert [v["version"] for v in one.json()] == [2]


def test_versions_and_show_tell_the_canary_from_the_primary(arca: Arca, app: str) -> None:
    # When
    versions = arca("versions", app)
    canary = arca("show", f"{app}@2")
    primary = arca("show", f"{app}@1")
    as_json = arca("versions", app, "--json")
    # Then
    rows = {line.split()[0]: line for line in versions.out.splitlines()[1:]}
    assert rows["2"].rstrip().endswith("prod(canary 10%)")
    assert rows["1"].rstrip().endswith("prod")
    assert "aliases       prod(canary 10%)" in canary.out
    assert "aliases       prod\n" in primary.out
    assert [v["aliases"] for v in as_json.json()] == [["prod"], ["prod"]]  # --json unchanged


# ---- 8. --output, --quiet ---------------------------------------------------------------------------


def test_output_json_table_and_text(arca: Arca, app: str) -> None:
    # When
    as_json = arca("versions", app, "--output", "json")
    table = arca("--output", "table", "versions", app)
    text = arca("versions", app, "--output", "text")
    fields = arca("show", f"{app}@1", "--output=text")
    both = arca("versions", app, "--json", "--output", "text")
    # Then
    assert as_json.out == arca("versions", app, "--json").out
    assert table.out.startswith("VERSION  CREATED (UTC)")
    rows = [line.split("\t") for line in text.out.splitlines()]
    assert [(r[0], r[4]) for r in rows] == [("2", "prod(canary 10%)"), ("1", "prod")]
    assert "metadata\tcommit=c1, filename=app-v1.zip" in fields.out.splitlines()
    assert both.code == 1


def test_quiet_prints_nothing_on_success_and_the_error_on_failure(arca: Arca, app: str, tmp_path: Path) -> None:
    # When
    moved = arca("-q", "alias", "set", app, "staging", "2")
    published = arca("publish", app, "app-v1.zip", "--force", "--quiet")
    failed = arca("-q", "alias", "rm", app, "nosuch")
    # Then
    assert (moved.code, moved.out, moved.err) == (0, "", "")
    assert (published.code, published.out) == (0, "")
    assert failed.code == 2
    assert failed.err.startswith("arca: error: NotFoundError: ")


# ---- diff -------------------------------------------------------------------------------------------


def test_diff_shows_what_changed_between_two_versions(arca: Arca, app: str) -> None:
    # Given
    assert arca("tag", f"{app}@2", "env=staging").code == 0
    # When
    text = arca("diff", f"{app}@1", "@2")
    as_json = arca("diff", f"{app}@prod", f"{app}@2", "--json")
    same = arca("diff", f"{app}@1", f"{app}@prod")
    # Then
    assert text.code == 0, text.err
    lines = text.out.splitlines()
    assert lines[0] == f"{app}@1 (version 1) -> {app}@2 (version 2)"
    assert lines[1].split() == ["FIELD", f"{app}@1", f"{app}@2"]
    assert [line.split()[0] for line in lines[2:]] == [
        "size",
        "sha256",
        "metadata.commit",
        "metadata.filename",
        "tags.env",
    ]
    assert lines[-1].split() == ["tags.env", "(none)", "staging"]
    changes = {c["field"]: (c["from"], c["to"]) for c in as_json.json()["changes"]}
    assert changes["size"] == (1000, 2000)
    assert changes["metadata.filename"] == ("app-v1.zip", "app-v2.zip")
    assert as_json.json()["from"]["version"] == 1
    assert same.out.splitlines()[1] == "no differences in size, sha256, content type, metadata, tags or attestations"


# ---- 5. the content redirect names the published file -------------------------------------------


def test_curl_OJ_of_the_content_redirect_saves_the_published_file_name(app: str, arca_url: str, tmp_path: Path) -> None:
    # Given an empty directory
    saved = tmp_path / "curl"
    saved.mkdir()
    # When the alias's content is fetched as a browser or `curl -OJ` does
    done = subprocess.run(
        ["curl", "-s", "-f", "-L", "-O", "-J", f"{arca_url}/artifacts/{app}/resolve/1/content"],
        cwd=saved,
        capture_output=True,
        timeout=PATIENCE,
    )
    # Then the file has the name it was published from
    assert done.returncode == 0, done.stderr
    assert [p.name for p in saved.iterdir()] == ["app-v1.zip"]
    assert (saved / "app-v1.zip").read_bytes() == (tmp_path / "app-v1.zip").read_bytes()
