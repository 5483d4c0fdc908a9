"""What a person meets using guarded aliases, lists and help from the installed `arca`, each run as a subprocess
against the local server: refusals with their own exit code, a publish whose alias is refused, `alias copy`, one
JSON shape for every list, download's destination, short help with examples, an alias's protection, a rollback
that says what it will route, a watched rollout that did not complete, and events that name who acted."""

from __future__ import annotations

import os
import pty
import re
import subprocess
from pathlib import Path

import pytest

from tests.e2e.test_cli_behaviour import ARCA, Arca, _env, installed_arca

# Every command that lists (its `--json` is an array, whatever it lists), with the arguments it needs, given
# the artifact NAME of the `guarded` fixture: versions 1-3, prod on 1 with a policy, a pending promotion.
LISTS = [
    ["ls", "{root}/"],
    ["ls", "-R", "{root}/"],
    ["versions", "{name}"],
    ["events", "{name}"],
    ["alias", "ls", "{name}"],
    ["alias", "history", "{name}", "prod"],
    ["promotions", "{name}", "prod"],
    ["attestations", "{name}@1"],
    ["search", "--tag", "team={root}"],
    ["search", "--tag", "team={root}", "--artifacts"],
    ["retention", "preview", "{name}"],
    ["config", "list"],
]


@pytest.fixture
def cli(arca_url: str, tmp_path: Path) -> Arca:
    return installed_arca(arca_url, tmp_path)


@pytest.fixture
def guarded(cli: Arca, unique: str, tmp_path: Path) -> str:
    """<unique>/api: versions 1-3 (3 tagged qa=passed), prod -> 1 guarded by {qa=passed, 1 approval}, and alice's
    pending promotion of prod to 3; a retention policy and an attestation on 1, so that every list has rows."""
    name = f"{unique}/api"
    for number in (1, 2, 3):
        (tmp_path / f"app-v{number}.zip").write_bytes(os.urandom(900 * number))
        assert cli("publish", name, f"app-v{number}.zip").code == 0
    assert cli("tag", name, f"team={unique}").code == 0
    assert cli("tag", f"{name}@1", f"team={unique}").code == 0
    assert cli("tag", f"{name}@3", "qa=passed").code == 0
    assert cli("alias", "set", name, "prod", "1").code == 0
    assert cli("alias", "policy", "set", name, "prod", "--require-tag", "qa=passed", "--approvals", "1").code == 0
    assert cli("--local-user", "alice", "promote", name, "prod", "3").code == 0
    assert cli("retention", "set", name, "--keep-last", "2").code == 0
    assert cli("attest", f"{name}@1", "test-report", "--content", '{"passed": 12}').code == 0
    return name


# ---- refusals: their own exit code, and a publish whose alias is refused ---------------------------------------


def test_a_policy_refusal_exits_6_and_names_the_cli_command_that_asks(cli: Arca, guarded: str) -> None:
    # When prod is moved directly
    refused = cli("alias", "set", guarded, "prod", "3")
    # Then it exits with the refusals' own code (not 4, a network error's), and the rule says what to run
    assert refused.code == 6, refused.err
    assert "arca: error: PolicyViolation" in refused.err
    assert f"request one: arca promote {guarded} prod 3" in refused.err
    assert "POST" not in refused.err and "…/" not in refused.err


def test_publish_with_a_refused_alias_says_the_version_was_published(cli: Arca, guarded: str, tmp_path: Path) -> None:
    # Given a fourth build
    (tmp_path / "app-v4.zip").write_bytes(os.urandom(4000))
    # When it is published with --alias prod, which the policy refuses
    human = cli("publish", guarded, "app-v4.zip", "--alias", "prod")
    (tmp_path / "app-v5.zip").write_bytes(os.urandom(5000))
    machine = cli("publish", guarded, "app-v5.zip", "--alias", "prod", "--json")
    # Then both say the version is published and prod did not move, with the refusal's exit code
    assert human.code == 6
    assert f"{guarded}: published version 4 (" in human.out
    assert "arca: error: PolicyViolation: published version 4; prod not moved: " in human.err
    assert machine.code == 6
    published = machine.json()
    assert (published["version"], published["alias"], published["alias_error"]["code"]) == (
        5,
        None,
        "PolicyViolation",
    )
    assert published["alias_error"]["violations"]
    assert machine.error()["message"].startswith("published version 5; prod not moved: ")
    assert cli("alias", "show", guarded, "prod", "--json").json()["version"] == 1


# ---- one promote: alias copy ------------------------------------------------------------------------------------


def test_alias_copy_copies_and_the_old_spelling_still_works_with_a_note(cli: Arca, unique: str, tmp_path: Path) -> None:
    # Given staging on 2 and prod on 1, unguarded
    name = f"{unique}/web"
    for number in (1, 2):
        (tmp_path / f"w{number}.zip").write_bytes(os.urandom(500 * number))
        assert cli("publish", name, f"w{number}.zip").code == 0
    assert cli("alias", "set", name, "staging", "2").code == 0
    assert cli("alias", "set", name, "prod", "1").code == 0
    # When
    copied = cli("alias", "copy", name, "--from", "staging", "--to", "prod")
    again = cli("alias", "promote", name, "--from", "staging", "--to", "prod")
    listed = cli("alias", "--help")
    # Then
    assert (copied.code, copied.out) == (0, f"{name}: copied staging to prod: 1 -> 2 (revision 2)\n")
    assert again.code == 0 and "already points at version 2" in again.out
    assert "`arca alias promote` is now `arca alias copy`" in again.err
    assert re.search(r"^\s+copy\s", listed.out, flags=re.M) and not re.search(r"^\s+promote\s", listed.out, flags=re.M)


# ---- one JSON shape for every list -------------------------------------------------------------------------------


def test_every_list_is_a_json_array(cli: Arca, guarded: str) -> None:
    root = guarded.split("/")[0]
    for argv in LISTS:
        # When
        listed = cli(*[a.format(name=guarded, root=root) for a in argv], "--json")
        # Then: an array of objects, and never empty here (each list has rows)
        assert listed.code == 0, (argv, listed.err)
        rows = listed.json()
        assert isinstance(rows, list) and rows, (argv, rows)
        assert all(isinstance(row, dict) for row in rows), (argv, rows)


def test_a_listing_cut_by_limit_says_there_is_more_on_stderr(cli: Arca, guarded: str) -> None:
    # When
    cut = cli("versions", guarded, "--limit", "2", "--json")
    whole = cli("versions", guarded, "--limit", "3")
    # Then
    assert len(cut.json()) == 2
    assert "more versions than --limit 2 shows" in cut.err
    assert "more" not in whole.err


# ---- download: --output is the format, -o the destination --------------------------------------------------------


def test_download_output_json_is_the_format_and_o_json_is_refused(cli: Arca, guarded: str, tmp_path: Path) -> None:
    # When
    as_json = cli("download", f"{guarded}@1", "--output", "json", "-o", "copy.zip")
    refused = cli("download", f"{guarded}@1", "-o", "json")
    # Then
    assert as_json.code == 0, as_json.err
    assert as_json.json()["path"] == "copy.zip"
    assert (tmp_path / "copy.zip").read_bytes() == (tmp_path / "app-v1.zip").read_bytes()
    assert refused.code == 1 and "--output json" in refused.err
    assert not (tmp_path / "json").exists()


# ---- help: a command's own flags, described positionals, an example ------------------------------------------------


def _commands() -> list[list[str]]:
    """Every command path `arca --help` and each group's --help list, by running them."""
    found: list[list[str]] = []

    def walk(path: list[str]) -> None:
        text = subprocess.run([str(ARCA), *path, "--help"], capture_output=True, text=True, check=True).stdout
        listing = re.search(r"^positional arguments:\n  \{?[A-Z_]*COMMAND\}?\n((?:    .*\n)+)", text, flags=re.M)
        if not listing:
            found.append(path)
            return
        for name in re.findall(r"^    (\S+)", listing.group(1), flags=re.M):
            walk([*path, name])

    walk([])
    return found


def test_every_command_help_is_short_describes_its_positionals_and_shows_an_example() -> None:
    # Given every command
    commands = _commands()
    assert ["publish"] in commands and ["alias", "policy", "set"] in commands and ["config", "trust-key"] in commands
    root = subprocess.run([str(ARCA), "--help"], capture_output=True, text=True, check=True).stdout
    assert "--endpoint" in root and "exit codes:" in root
    for path in commands:
        # When
        text = subprocess.run([str(ARCA), *path, "--help"], capture_output=True, text=True, check=True).stdout
        # Then: no global option (they are listed once, in arca --help), every positional described, an example
        where = " ".join(path)
        assert "--endpoint ENDPOINT" not in text and "--local-user" not in text and "exit codes:" not in text, where
        assert len(text.splitlines()) <= 40, where
        assert re.search(r"^example:\n  arca ", text, flags=re.M) or "example:\n  eval" in text, where
        positionals = re.search(r"^positional arguments:\n((?:  .*\n)+)", text, flags=re.M)
        for line in positionals.group(1).splitlines() if positionals else []:
            if re.match(r"  \S+$", line):  # a positional alone on its line: its description follows on the next
                continue
            assert re.match(r"  \S+\s{2,}\S|\s{10,}\S", line), f"{where}: {line!r} has no description"


# ---- an alias's protection ---------------------------------------------------------------------------------------


def test_alias_show_says_the_alias_is_protected_and_names_the_pending_promotion(cli: Arca, guarded: str) -> None:
    # Given alice's pending promotion
    (pending,) = cli("promotions", guarded, "prod", "--json").json()
    # When
    shown = cli("alias", "show", guarded, "prod")
    as_json = cli("alias", "show", guarded, "prod", "--json").json()
    assert cli("alias", "set", guarded, "staging", "2").code == 0
    unguarded = cli("alias", "show", guarded, "staging")
    # Then
    assert f"protected: 2 rules, 1 pending promotion (id {pending['id']})" in shown.out
    assert as_json["policy"]["approvals"] == 1
    assert [p["id"] for p in as_json["pending_promotions"]] == [pending["id"]]
    assert re.search(r"^protection\s+no policy$", unguarded.out, flags=re.M), unguarded.out


# ---- rollback: what it will route, asked on a terminal, --dry-run ----------------------------------------------


def _canaried(cli: Arca, unique: str, tmp_path: Path) -> str:
    """prod: 1, then 1 + canary 2 at 10%, then 2 (the canary promoted): a rollback brings the canary back."""
    name = f"{unique}/svc"
    for number in (1, 2):
        (tmp_path / f"s{number}.zip").write_bytes(os.urandom(700 * number))
        assert cli("publish", name, f"s{number}.zip").code == 0
    assert cli("alias", "set", name, "prod", "1").code == 0
    assert cli("alias", "set", name, "prod", "1", "--canary", "2", "--weight", "10").code == 0
    assert cli("alias", "set", name, "prod", "2").code == 0
    return name


def test_rollback_dry_run_prints_what_it_would_route_and_warns_of_the_canary(
    cli: Arca, unique: str, tmp_path: Path
) -> None:
    # Given prod promoted from a canary of 2
    name = _canaried(cli, unique, tmp_path)
    # When
    dry = cli("alias", "rollback", name, "prod", "--dry-run")
    # Then nothing moved, and the plan says 2 keeps 10% and how to go back without it
    assert dry.code == 0, dry.err
    assert f"{name}: prod now routes 2 (revision 3)" in dry.out
    assert f"{name}: rolling back to revision 2 routes 1, canary 2 at 10% (as revision 4)" in dry.out
    assert "version 2, which this rolls back from, keeps 10% of prod's traffic as its canary" in dry.out
    assert f"{name}: --to-revision 1 routes 1" in dry.out
    assert cli("alias", "show", name, "prod", "--json").json()["revision"] == 3


def test_rollback_asks_on_a_terminal_and_does_nothing_when_told_no(
    cli: Arca, arca_url: str, unique: str, tmp_path: Path
) -> None:
    # Given
    name = _canaried(cli, unique, tmp_path)
    env = _env(tmp_path, ARCA_ENDPOINT=arca_url)
    # When it is run on a terminal and answered "n"
    controller, terminal = pty.openpty()
    os.write(controller, b"n\n")
    asked = subprocess.run(
        [str(ARCA), "alias", "rollback", name, "prod"],
        env=env,
        stdin=terminal,
        capture_output=True,
        text=True,
        timeout=60,
    )
    os.close(terminal)
    os.close(controller)
    unchanged = cli("alias", "show", name, "prod", "--json").json()["revision"]
    # And then without a terminal (a script), naming the revision without the canary
    scripted = cli("alias", "rollback", name, "prod", "--to-revision", "1")
    # Then
    assert asked.returncode == 1 and "Roll back? [y/N]" in asked.stderr and "not confirmed" in asked.stderr
    assert "keeps 10% of prod's traffic" in asked.stderr
    assert unchanged == 3
    assert (scripted.code, scripted.out) == (0, f"{name}: prod rolled back to 1 (revision 4)\n")


# ---- a watched rollout that did not complete ---------------------------------------------------------------------


def test_rollout_status_watch_exits_7_when_the_rollout_is_aborted(
    cli: Arca, arca_url: str, unique: str, tmp_path: Path
) -> None:
    # Given a rollout that will not advance by itself soon, watched
    name = _canaried(cli, unique, tmp_path)
    assert cli("alias", "set", name, "prod", "1").code == 0
    assert cli("rollout", "start", name, "prod", "2", "--steps", "10,50", "--interval", "3600").code == 0
    env = _env(tmp_path, ARCA_ENDPOINT=arca_url)
    watch = subprocess.Popen(
        [str(ARCA), "rollout", "status", name, "prod", "--watch", "--poll", "0.2"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert watch.stdout is not None and "running" in watch.stdout.readline()
        # When it is aborted
        assert cli("rollout", "abort", name, "prod").code == 0
        out, err = watch.communicate(timeout=120)
    finally:
        watch.kill()
    # Then the watch ends non-zero, as kubectl rollout status does
    assert watch.returncode == 7, err
    assert "aborted" in out


# ---- events: who acted, and an abort named so ----------------------------------------------------------------------


def test_events_show_the_approver_as_by_and_an_abort_as_aborted(cli: Arca, guarded: str) -> None:
    # Given alice's promotion approved by bob, and a rollout of 2 aborted
    (pending,) = cli("promotions", guarded, "prod", "--json").json()
    assert cli("--local-user", "bob", "approve", guarded, "prod", pending["id"]).code == 0
    assert cli("alias", "policy", "rm", guarded, "prod").code == 0
    assert cli("rollout", "start", guarded, "prod", "2", "--steps", "10", "--interval", "3600").code == 0
    assert cli("rollout", "abort", guarded, "prod").code == 0
    # When
    rows = cli("events", guarded, "--output", "text").out.splitlines()
    # Then
    approved = next(row.split("\t") for row in rows if "\tpromotion.approved\t" in row)
    assert approved[-1].endswith("user/bob"), approved
    assert any("\trollout.aborted\t" in row for row in rows), rows
    assert not any("\trollout.rolled_back\t" in row for row in rows), rows
