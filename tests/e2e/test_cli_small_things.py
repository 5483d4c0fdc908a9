"""The small things a new user trips over, each through the installed `arca` against the local server: prefixes
as tables print them, relative times, one time format, retention's reasons, `ls` of a folder, text output
without drawing, what an endpoint that is no API says, and messages in plain words."""

from __future__ import annotations

import os
import re
import subprocess
import uuid
from pathlib import Path

import pytest

from local.services import client
from tests.e2e.test_cli_behaviour import ARCA, Arca, _env, installed_arca

WHEN = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}")


@pytest.fixture
def cli(arca_url: str, tmp_path: Path) -> Arca:
    return installed_arca(arca_url, tmp_path)


@pytest.fixture
def app(cli: Arca, unique: str, tmp_path: Path) -> str:
    """<unique>/misc/app with versions 1 and 2, 2 tagged env= (an empty value) and with an attestation."""
    name = f"{unique}/misc/app"
    for number in (1, 2):
        (tmp_path / f"a{number}.zip").write_bytes(os.urandom(800 * number))
        assert cli("publish", name, f"a{number}.zip").code == 0
    assert cli("tag", f"{name}@2", "env=").code == 0
    assert cli("attest", f"{name}@2", "test-report", "--content", '{"passed": 3}').code == 0
    return name


def test_sha256_and_promotion_id_prefixes_are_taken_as_tables_print_them(cli: Arca, app: str) -> None:
    # Given the short sha256 the versions table prints
    table = cli("versions", app, "--output", "text").out.splitlines()
    number, _, _, short = table[-1].split("\t")[:4]
    assert (number, len(short)) == ("1", 12)
    # When
    by_filter = cli("versions", app, "--sha256", short, "--json")
    by_ref = cli("show", f"{app}@sha256:{short}", "--json")
    unknown = cli("show", f"{app}@sha256:00000000")
    # Then
    assert [v["version"] for v in by_filter.json()] == [1]
    assert by_ref.json()["version"] == 1
    assert unknown.code == 2 and "starts with 00000000" in unknown.err

    # Given a pending promotion, approved by the start of its id
    name = app
    assert cli("alias", "set", name, "prod", "1").code == 0
    assert cli("alias", "policy", "set", name, "prod", "--approvals", "1").code == 0
    promotion = cli("--local-user", "alice", "promote", name, "prod", "2", "--json").json()
    # When
    approved = cli("--local-user", "bob", "approve", name, "prod", promotion["id"][:-4])
    # Then
    assert approved.code == 0, approved.err
    assert "applied" in approved.out


def test_relative_times_and_one_time_format(cli: Arca, app: str) -> None:
    # When
    since = cli("versions", app, "--since", "yesterday", "--json")
    until = cli("versions", app, "--until", "1 hour ago", "--json")
    bad = cli("versions", app, "--since", "the day before")
    assert cli("alias", "set", app, "prod", "1").code == 0
    assert cli("alias", "policy", "set", app, "prod", "--approvals", "1").code == 0
    assert cli("--local-user", "alice", "promote", app, "prod", "2").code == 0
    promotions = cli("promotions", app, "prod").out.splitlines()
    shown = cli("show", f"{app}@1").out
    attestations = cli("attestations", f"{app}@2").out.splitlines()
    policy = cli("alias", "policy", "show", app, "prod").out
    # Then
    assert [v["version"] for v in since.json()] == [2, 1]
    assert until.json() == []
    assert bad.code == 1 and "yesterday" in bad.err
    for header, row in (promotions, attestations):
        assert "(UTC)" in header and WHEN.search(row) and "T" not in WHEN.search(row).group(), row
    assert re.search(r"^created\s+\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$", shown, flags=re.M), shown
    assert "approved by 1 other identity" in policy


def test_retention_preview_says_why_a_version_goes(cli: Arca, app: str) -> None:
    # Given a policy keeping the newest one
    assert cli("retention", "set", app, "--keep-last", "1").code == 0
    # When
    rows = cli("retention", "preview", app, "--output", "text").out.splitlines()
    # Then
    assert rows == ["2\tkeep\tnewest:1, latest", "1\tdelete\tbeyond newest:1"], rows


def test_ls_of_a_folder_lists_it_and_text_output_draws_nothing(cli: Arca, app: str) -> None:
    # Given <unique>/misc/app
    root = app.split("/")[0]
    # When
    folder = cli("ls", f"{root}/misc")
    tree = cli("ls", "-R", f"{root}/", "--output", "text")
    # Then
    assert folder.out == f"{app}\n"
    assert tree.out.splitlines() == [f"{root}/misc/", app]
    assert not re.search("[├└│─]|[`|]--", tree.out)


def test_diff_shows_an_empty_tag_value_and_attestations_in_words(cli: Arca, app: str) -> None:
    # When
    rows = cli("diff", f"{app}@1", "@2").out
    # Then
    assert re.search(r'^tags\.env\s+\(none\)\s+"" \(empty\)$', rows, flags=re.M), rows
    assert re.search(r"^attestations\s+\(none\)\s+test-report$", rows, flags=re.M), rows


def test_an_endpoint_that_is_no_api_host_says_so(tmp_path: Path) -> None:
    # Given no region anywhere (a custom domain needs one; example.invalid is no API at all)
    env = _env(tmp_path)
    Path(env["AWS_CONFIG_FILE"]).write_text("")
    env |= {"AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret"}
    # When
    ran = subprocess.run(
        [str(ARCA), "--endpoint", "http://example.invalid", "ls"], env=env, capture_output=True, text=True, timeout=60
    )
    # Then
    assert ran.returncode == 4
    assert "example.invalid is not an API Gateway host" in ran.stderr
    assert "--region" in ran.stderr and "region=" not in ran.stderr


def test_a_rollout_naming_an_alarm_that_does_not_exist_warns_at_start(cli: Arca, app: str) -> None:
    # Given an alarm that exists in the local CloudWatch, and prod on 1
    cloudwatch = client("cloudwatch", os.environ["AWS_ENDPOINT_URL_CLOUDWATCH"])
    alarm = f"errors-{uuid.uuid4().hex[:8]}"
    cloudwatch.put_metric_alarm(
        AlarmName=alarm,
        MetricName="Errors",
        Namespace="App",
        Statistic="Sum",
        Period=60,
        EvaluationPeriods=1,
        Threshold=1,
        ComparisonOperator="GreaterThanOrEqualToThreshold",
    )
    assert cli("alias", "set", app, "prod", "1").code == 0
    assert cli("alias", "set", app, "qa", "1").code == 0
    # When one rollout names it, another a misspelling of it
    named = cli("rollout", "start", app, "prod", "2", "--steps", "10", "--interval", "3600", "--alarm", alarm)
    misspelt = cli("rollout", "start", app, "qa", "2", "--steps", "10", "--interval", "3600", "--alarm", alarm + "x")
    # Then both start, and the misspelt one is told at once what would happen at its first step
    assert (named.code, misspelt.code) == (0, 0), named.err + misspelt.err
    assert named.err == ""
    assert misspelt.err == (
        f"arca: warning: alarm {alarm}x does not exist: the rollout rolls back at its first step unless it is created\n"
    )
    for alias in ("prod", "qa"):
        assert cli("rollout", "abort", app, alias).code == 0
