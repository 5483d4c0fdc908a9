"""The `arca` command over a fake client: argument parsing, output, and exit codes."""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from unittest.mock import create_autospec

import pytest

from arca_client import (
    Alias,
    AliasRevision,
    ArcaError,
    ArtifactSummary,
    ChecksumMismatchError,
    Client,
    ConflictError,
    Downloaded,
    ListEntry,
    NotFoundError,
    PreconditionFailedError,
    Promotion,
    PruneResult,
    Published,
    Purged,
    Resolution,
    ServerError,
    ThrottledError,
    TransportError,
    ValidationError,
    Version,
    VersionConsumers,
)
from arca_client.calls.artifacts import ArtifactCalls
from arca_client.cli import EXIT_CODES, EXIT_TABLE, exit_code, main, parse_args, table
from arca_client.errors import error_class
from arca_client.progress import ProgressBar, human_size


def version(number: int | str = 3, **extra: Any) -> Version:
    data = {
        "name": "app",
        "version": number,
        "sha256": "ab" * 32,
        "size": 2048,
        "created_at": "2024-05-01T12:00:00.000Z",
        "aliases": [],
        **extra,
    }
    return Version.from_dict(data)


def alias(name: str = "prod", number: int | str = 3, revision: int = 2, **extra: Any) -> Alias:
    return Alias.from_dict({"name": "app", "alias": name, "version": number, "revision": revision, **extra})


class FakeClient:
    """Records each call as (method, args, kwargs); answers from `answers` or raises `error`.

    Checked against the SDK (`create_autospec(Client)`): a method `Client` does not have is an AttributeError,
    and arguments its signature does not take a TypeError, so renaming an SDK method breaks the CLI's tests.
    """

    def __init__(self, error: Exception | None = None, **answers: Any) -> None:
        self.spec = create_autospec(Client, instance=True)
        unknown = [method for method in answers if not callable(getattr(Client, method, None))]
        assert not unknown, f"Client has no method {unknown}"
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
        self.error = error
        # What the commands read on the way by default: no consumer on any version, a purge that released none.
        self.answers = {
            "version_consumers": lambda name, version, **_: VersionConsumers(version=version, count=0),
            "purge": lambda name, **_: Purged(name),
            **answers,
        }
        self.closed = False

    def __getattr__(self, method: str) -> Any:
        if method.startswith("__"):
            raise AttributeError(method)
        checked = getattr(self.spec, method)  # AttributeError: Client has no such method

        def call(*args: Any, **kwargs: Any) -> Any:
            checked(*args, **kwargs)  # TypeError: not arguments Client's method takes
            self.calls.append((method, args, kwargs))
            if self.error is not None:
                raise self.error
            answer = self.answers.get(method)
            return answer(*args, **kwargs) if callable(answer) else answer

        return call

    def close(self) -> None:
        self.closed = True

    def called(self, method: str) -> tuple[tuple[Any, ...], dict[str, Any]]:
        found = [(a, k) for m, a, k in self.calls if m == method]
        assert found, f"{method} was not called; calls: {self.calls}"
        return found[-1]


def test_the_fake_client_refuses_a_method_the_sdk_does_not_have() -> None:
    # Given
    fake = FakeClient()
    # When / Then
    with pytest.raises(AttributeError):
        fake.get_artefact("app")
    with pytest.raises(AssertionError, match="no method"):
        FakeClient(get_artefact=None)
    assert fake.calls == []


def test_the_fake_client_refuses_arguments_the_sdk_does_not_take() -> None:
    # Given
    fake = FakeClient(get_alias=alias())
    # When / Then
    with pytest.raises(TypeError):
        fake.get_alias("app")  # the alias is missing
    with pytest.raises(TypeError):
        fake.set_alias("app", "prod", 3, canary=4)  # the SDK calls it secondary_version
    assert fake.get_alias("app", "prod") == alias()
    assert fake.calls == [("get_alias", ("app", "prod"), {})]


def test_a_command_calling_a_method_the_sdk_lacks_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given an SDK without the method `arca show` calls
    monkeypatch.delattr(ArtifactCalls, "get_artifact")
    # When / Then
    with pytest.raises(AttributeError):
        run(["show", "app"])


def run(argv: list[str], client: FakeClient | None = None) -> tuple[int, FakeClient]:
    fake = client or FakeClient()
    return main(argv, client_factory=lambda args: fake), fake


# ---- parsing ------------------------------------------------------------------------------------


def test_global_options_go_before_or_after_the_command() -> None:
    # When
    before = parse_args(["--endpoint", "http://x:1", "--json", "versions", "app"])
    after = parse_args(["versions", "app", "--endpoint", "http://x:1", "--json"])
    neither = parse_args(["versions", "app"])
    # Then
    assert (before.endpoint, before.json) == ("http://x:1", True)
    assert (after.endpoint, after.json) == ("http://x:1", True)
    assert (neither.endpoint, neither.json, neither.sign, neither.progress) == (None, False, None, None)


def test_local_user_is_a_global_option_given_to_the_client() -> None:
    from arca_client.cli import default_client

    # When
    args = parse_args(["ls", "--local-user", "alice", "--endpoint", "http://localhost:9999"])
    # Then
    assert args.local_user == "alice"
    assert parse_args(["ls"]).local_user is None
    assert default_client(args).local_user == "alice"


def test_sign_and_progress_can_be_forced_either_way() -> None:
    assert parse_args(["--no-sign", "ls"]).sign is False
    assert parse_args(["ls", "--sign", "--progress"]).sign is True
    assert parse_args(["ls", "--no-progress"]).progress is False


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["publish", "app"],
        ["nonsense"],
        ["delete", "app", "three"],
        ["delete", "app", "0"],
        ["alias", "set", "app", "prod", "3", "--weight", "100", "--canary", "4"],
        ["alias", "set", "app", "prod", "x"],
        ["alias", "promote", "app", "--from", "staging"],
        ["prune", "app"],
        ["publish", "app", "f", "--metadata", "novalue"],
        ["resolve", "app@prod", "--at", "last tuesday"],
        ["alias"],
    ],
)
def test_usage_errors_exit_1_with_the_error_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    # When
    code, fake = run(argv)
    # Then
    assert code == 1
    err = capsys.readouterr().err
    assert "arca: error: UsageError: " in err
    assert "usage: arca" in err
    assert fake.calls == []


def test_canary_needs_a_weight(capsys: pytest.CaptureFixture[str]) -> None:
    # When
    code, fake = run(["alias", "set", "app", "prod", "3", "--canary", "4"])
    # Then
    assert code == 1
    assert "arca: error: UsageError: --canary and --weight go together" in capsys.readouterr().err
    assert fake.calls == []


def test_help_lists_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    # When
    code, _ = run(["--help"])
    # Then
    assert code == 0
    out = capsys.readouterr().out
    assert "exit codes:" in out
    assert EXIT_CODES.splitlines()[1] in out
    for line in ("  2    not found", "  3    conflict", "  4    any other error"):
        assert line in out


def test_version_flag(capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = run(["--version"])
    assert code == 0
    assert capsys.readouterr().out.startswith("arca ")


def test_time_without_a_zone_is_utc() -> None:
    # When
    args = parse_args(["resolve", "app@prod", "--at", "2024-05-01T12:00:00"])
    # Then
    assert args.at == datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


# ---- exit codes ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (NotFoundError("artifact 'app' does not exist", code="NotFoundError", status=404), 2),
        (ConflictError("version 3 is the target of alias(es) prod", code="VersionPinnedError", status=409), 3),
        (PreconditionFailedError("alias 'prod' is not at revision 4", code="PreconditionFailedError", status=412), 3),
        (ValidationError("name segment 'A' must match …", code="ValidationError", status=400), 1),
        (ThrottledError("busy", code="ThrottledError", status=503), 4),
        (ServerError("internal error", code="InternalError", status=500), 4),
        (TransportError("connection refused", code="ConnectionError"), 4),
        (ChecksumMismatchError("bytes differ", code="ChecksumMismatch"), 4),
        (ArcaError("forbidden", code="ACCESS_DENIED", status=403), 4),
    ],
)
def test_errors_map_to_exit_codes_and_print_code_and_message(
    error: ArcaError, code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    # When
    exit_code, fake = run(["delete", "app", "3"], FakeClient(error=error))
    # Then
    assert exit_code == code
    captured = capsys.readouterr()
    assert captured.err == f"arca: error: {error.code}: {error.message}\n"
    assert captured.out == ""
    assert fake.closed


def test_missing_local_file_is_not_found(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Given
    fake = FakeClient(publish=lambda name, source, **kw: open(source, "rb"))  # noqa: SIM115 - raises before use
    # When
    code, _ = run(["publish", "app", str(tmp_path / "missing.zip")], fake)
    # Then
    assert code == 2
    assert "arca: error: FileNotFound: " in capsys.readouterr().err


def test_verbose_prints_the_request_id(capsys: pytest.CaptureFixture[str]) -> None:
    # Given
    error = NotFoundError("gone", code="NotFoundError", status=404, request_id="req-42")
    # When
    code, _ = run(["-v", "show", "app"], FakeClient(error=error))
    # Then
    assert code == 2
    assert "request id req-42" in capsys.readouterr().err


# ---- commands -----------------------------------------------------------------------------------


def test_publish_prints_the_version_and_points_the_alias(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Given
    source = tmp_path / "app.zip"
    source.write_bytes(b"zip")
    fake = FakeClient(
        publish=Published(version(7), deduplicated=False, uploaded=True),
        set_alias=alias("staging", 7, 4),
    )
    # When
    code, _ = run(
        ["publish", "app", str(source), "--alias", "staging", "--metadata", "commit=abc", "--metadata", "k=a=b"], fake
    )
    # Then
    assert code == 0
    args, kwargs = fake.called("publish")
    assert args == ("app", str(source))
    assert kwargs["metadata"] == {"commit": "abc", "k": "a=b"}
    # the SDK records FILE's name and guesses the content type from it (tested there)
    assert (kwargs["content_type"], kwargs["filename"]) == (None, None)
    assert kwargs["force"] is False
    assert fake.called("set_alias")[0] == ("app", "staging", 7)
    out = capsys.readouterr().out
    assert "app: published version 7 (2.0 KiB, sha256 abababababab, uploaded)" in out
    assert "app: staging -> 7 (revision 4)" in out


def test_publish_of_unchanged_content_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Given
    source = tmp_path / "blob"
    source.write_bytes(b"x")
    fake = FakeClient(publish=Published(version(7), deduplicated=True, uploaded=False))
    # When
    code, _ = run(["publish", "app", str(source), "--force", "--content-type", "text/plain"], fake)
    # Then
    assert code == 0
    assert fake.called("publish")[1]["force"] is True
    assert fake.called("publish")[1]["content_type"] == "text/plain"
    assert "version 7 already has this content" in capsys.readouterr().out


def test_publish_json_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Given
    source = tmp_path / "blob"
    source.write_bytes(b"x")
    fake = FakeClient(publish=Published(version(7), deduplicated=False, uploaded=True))
    # When
    code, _ = run(["publish", "app", str(source), "--json"], fake)
    # Then
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["version"], data["deduplicated"], data["uploaded"], data["alias"]) == (7, False, True, None)


def resolution(**extra: Any) -> Resolution:
    return Resolution.from_dict(
        {
            "name": "team/app",
            "ref": "prod",
            "version": 7,
            "sha256": "cd" * 32,
            "size": 5 * 1024 * 1024,
            "download_url": "https://s3/x",
            "expires_at": "2024-05-01T12:15:00Z",
            "route": "secondary",
            "alias_revision": 3,
            **extra,
        }
    )


def test_download_parses_name_at_ref_and_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Given
    target = str(tmp_path / "out.bin")
    fake = FakeClient(download=Downloaded(resolution(), target))
    # When
    code, _ = run(["download", "team/app@prod", "-o", target, "--key", "user-7"], fake)
    # Then
    assert code == 0
    args, kwargs = fake.called("download")
    assert args == ("team/app", "prod", target)
    assert kwargs["routing_key"] == "user-7"
    assert kwargs["progress"] is None  # stderr is not a terminal under pytest
    assert f"team/app@prod: version 7 (5.0 MiB, sha256 verified) -> {target}" in capsys.readouterr().out


def test_download_with_progress_draws_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Given
    def download(name: str, ref: str, dest: str, **kwargs: Any) -> Downloaded:
        kwargs["progress"]("download", 0, 10)
        kwargs["progress"]("download", 10, 10)
        return Downloaded(resolution(), dest)

    # When
    code, _ = run(["download", "team/app", "-o", str(tmp_path / "f"), "--progress"], FakeClient(download=download))
    # Then
    assert code == 0
    err = capsys.readouterr().err
    assert "downloading" in err
    assert "100%" in err


def test_resolve_passes_key_and_time_and_prints_fields(capsys: pytest.CaptureFixture[str]) -> None:
    # Given
    fake = FakeClient(resolve=resolution())
    # When
    code, _ = run(["resolve", "team/app@prod", "--key", "k1", "--at", "2024-05-01T12:00:00+02:00"], fake)
    # Then
    assert code == 0
    args, kwargs = fake.called("resolve")
    assert args == ("team/app", "prod")
    assert kwargs["routing_key"] == "k1"
    assert kwargs["at"] == datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
    out = capsys.readouterr().out
    assert "route           secondary" in out
    assert "alias revision  3" in out


def test_ls_recursive_draws_a_tree(capsys: pytest.CaptureFixture[str]) -> None:
    # Given
    tree = {
        "": [ListEntry("app"), ListEntry("team/", is_prefix=True)],
        "team/": [ListEntry("team/api/", is_prefix=True), ListEntry("team/web")],
        "team/api/": [ListEntry("team/api/server")],
    }
    fake = FakeClient(iter_artifacts=lambda prefix, **kw: iter(tree[prefix]))
    # When
    code, _ = run(["ls", "-R"], fake)
    # Then
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "app"
    assert lines[1] == "team/"
    assert [line.replace("|-- ", "├── ").replace("`-- ", "└── ").replace("|   ", "│   ") for line in lines[2:]] == [
        "├── api/",
        "│   └── server",
        "└── web",
    ]
    assert all(kw == {"delimiter": "/"} for m, _, kw in fake.calls)


def test_ls_one_level_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    # Given
    fake = FakeClient(iter_artifacts=lambda prefix, **kw: iter([ListEntry("team/api/", True), ListEntry("team/web")]))
    # When
    code, _ = run(["ls", "team/", "--json"], fake)
    # Then
    assert code == 0
    assert json.loads(capsys.readouterr().out) == [
        {"name": "team/api/", "type": "prefix"},
        {"name": "team/web", "type": "artifact"},
    ]
    assert len(fake.calls) == 1


def test_versions_table_is_aligned(capsys: pytest.CaptureFixture[str]) -> None:
    # Given
    versions = [version(10, aliases=["prod", "staging"]), version(9, deleted=True, deleted_at="2024-05-02T00:00:00Z")]
    fake = FakeClient(iter_versions=lambda name, **kw: iter(versions), iter_aliases=lambda name: iter([]))
    # When
    code, _ = run(["versions", "app", "--all"], fake)
    # Then
    assert code == 0
    assert fake.called("iter_versions")[1] == {"order": "desc", "include_deleted": True}
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["VERSION", "CREATED", "(UTC)", "SIZE", "SHA256", "ALIASES", "DELETED"]
    assert lines[1].startswith("     10  2024-05-01 12:00:00  2.0 KiB  abababababab  prod,staging")
    assert lines[2].startswith("      9  ")
    assert lines[2].endswith("2024-05-02 00:00:00")


def test_versions_limit_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    # Given: an endless listing; --limit stops reading it
    def endless(name: str, **kw: Any) -> Iterator[Version]:
        number = 1000
        while True:
            yield version(number)
            number -= 1

    # When
    code, _ = run(["versions", "app", "--limit", "2", "--json"], FakeClient(iter_versions=endless))
    # Then
    assert code == 0
    assert [v["version"] for v in json.loads(capsys.readouterr().out)] == [1000, 999]


def test_show_summary_with_aliases(capsys: pytest.CaptureFixture[str]) -> None:
    # Given
    summary = ArtifactSummary.from_dict(
        {
            "name": "app",
            "latest": {"name": "app", "version": "LATEST", "sha256": "ef" * 32, "size": 10, "metadata": {"a": "1"}},
            "newest_version": 4,
            "counts": {"versions": 3, "deleted_versions": 1, "aliases": 1},
        }
    )
    fake = FakeClient(
        get_artifact=summary,
        iter_aliases=lambda name: iter([alias("prod", 4, 2, secondary_version=3, secondary_version_weight=10)]),
    )
    # When
    code, _ = run(["show", "app"], fake)
    # Then
    assert code == 0
    out = capsys.readouterr().out
    assert "versions        3 (+1 deleted)" in out
    assert any(line.split() == ["metadata", "a=1"] for line in out.splitlines())
    assert any(line.split() == ["prod", "4", "3", "10%", "2"] for line in out.splitlines())


def test_show_one_version(capsys: pytest.CaptureFixture[str]) -> None:
    # Given
    fake = FakeClient(get_version=version(2, metadata={"commit": "abc"}))
    # When
    code, _ = run(["show", "app@2"], fake)
    # Then
    assert code == 0
    assert fake.called("get_version")[0] == ("app", "2")
    assert "commit=abc" in capsys.readouterr().out


def test_alias_set_with_canary_and_conditions(capsys: pytest.CaptureFixture[str]) -> None:
    # Given
    fake = FakeClient(set_alias=alias("prod", 3, 5, secondary_version=4, secondary_version_weight=10))
    # When
    code, _ = run(
        ["alias", "set", "app", "prod", "3", "--canary", "4", "--weight", "10", "--reason", "r", "--if-revision", "4"],
        fake,
    )
    # Then
    assert code == 0
    args, kwargs = fake.called("set_alias")
    assert args == ("app", "prod", 3)
    assert kwargs["secondary_version"] == 4
    assert kwargs["secondary_version_weight"] == 10
    assert kwargs["reason"] == "r"
    assert kwargs["if_revision"] == 4
    assert capsys.readouterr().out == "app: prod -> 3, canary 4 at 10% (revision 5)\n"


def test_alias_set_to_latest() -> None:
    # When
    code, fake = run(["alias", "set", "app", "dev", "latest"], FakeClient(set_alias=alias("dev", "LATEST", 1)))
    # Then
    assert code == 0
    assert fake.called("set_alias")[0] == ("app", "dev", "LATEST")


def test_alias_copy_and_its_old_spelling(capsys: pytest.CaptureFixture[str]) -> None:
    # Given
    promotion = Promotion(alias("staging", 5, 2), alias("prod", 4, 9), alias("prod", 5, 10), changed=True)
    fake = FakeClient(promote=promotion)
    # When
    code, _ = run(["alias", "copy", "app", "--from", "staging", "--to", "prod"], fake)
    copied = capsys.readouterr()
    old_code, _ = run(["alias", "promote", "app", "--from", "staging", "--to", "prod"], fake)
    old = capsys.readouterr()
    # Then
    assert (code, old_code) == (0, 0)
    assert fake.called("promote") == (("app", "staging", "prod"), {"reason": None})
    assert copied.out == old.out == "app: copied staging to prod: 4 -> 5 (revision 10)\n"
    assert "`arca alias promote` is now `arca alias copy`" in old.err and copied.err == ""


def test_alias_promote_conflict_exits_3(capsys: pytest.CaptureFixture[str]) -> None:
    # Given
    error = PreconditionFailedError("alias 'prod' is not at revision 9", code="PreconditionFailedError", status=412)
    # When
    code, _ = run(["alias", "promote", "app", "--from", "staging", "--to", "prod"], FakeClient(error=error))
    # Then
    assert code == 3
    assert "arca: error: PreconditionFailedError: alias 'prod' is not at revision 9" in capsys.readouterr().err


def test_alias_rollback(capsys: pytest.CaptureFixture[str]) -> None:
    # Given prod at revision 3 (version 4), revision 2 on version 3
    history = [AliasRevision.from_dict({"revision": r, "version": r + 1, "action": "set"}) for r in (3, 2, 1)]
    fake = FakeClient(
        rollback_alias=alias(), get_alias=alias(number=4, revision=3), iter_alias_history=lambda *a: iter(history)
    )
    # When
    code, fake = run(["alias", "rollback", "app", "prod", "--to-revision", "2"], fake)
    # Then
    assert code == 0
    assert fake.called("rollback_alias") == (("app", "prod"), {"to_revision": 2, "reason": None})
    out, err = capsys.readouterr()
    assert out == "app: prod rolled back to 3 (revision 2)\n"
    assert "app: rolling back to revision 2 routes 3 (as revision 4)" in err


def test_alias_history_table(capsys: pytest.CaptureFixture[str]) -> None:
    # Given
    history = [
        AliasRevision.from_dict(
            {"revision": 3, "action": "delete", "deleted": True, "updated_at": "2024-05-03T00:00:00Z"}
        ),
        AliasRevision.from_dict(
            {"revision": 2, "action": "set", "version": 5, "secondary_version": 6, "secondary_version_weight": 25}
        ),
        AliasRevision.from_dict({"revision": 1, "action": "set", "version": 4, "updated_by": "me", "reason": "first"}),
    ]
    fake = FakeClient(iter_alias_history=lambda name, alias: iter(history))
    # When
    code, _ = run(["alias", "history", "app", "prod"], fake)
    # Then
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:5] == ["REVISION", "ACTION", "VERSION", "CANARY", "WEIGHT"]
    assert lines[1].split()[:3] == ["3", "delete", "(deleted)"]
    assert lines[2].split()[:5] == ["2", "set", "5", "6", "25%"]
    assert lines[3].split()[-2:] == ["me", "first"]


def test_alias_ls_json(capsys: pytest.CaptureFixture[str]) -> None:
    # When
    code, _ = run(["alias", "ls", "app", "--json"], FakeClient(iter_aliases=lambda name: iter([alias()])))
    # Then
    assert code == 0
    assert json.loads(capsys.readouterr().out) == [{"name": "app", "alias": "prod", "version": 3, "revision": 2}]


def test_delete_restore_and_prune(capsys: pytest.CaptureFixture[str]) -> None:
    # Given
    pruned = PruneResult.from_dict(
        {"name": "app", "dry_run": True, "deleted": [2, 1], "skipped": [{"version": 3, "aliases": ["prod"]}]}
    )
    fake = FakeClient(delete_version=version(3, deleted=True), restore_version=version(3), prune=pruned)
    # When
    codes = [
        run(["delete", "app", "3"], fake)[0],
        run(["restore", "app", "3"], fake)[0],
        run(["prune", "app", "--keep-last", "2", "--older-than-days", "30", "--dry-run"], fake)[0],
    ]
    # Then
    assert codes == [0, 0, 0]
    assert fake.called("prune") == (("app",), {"keep_last": 2, "older_than_days": 30, "dry_run": True})
    out = capsys.readouterr().out
    assert "app: version 3 deleted" in out
    assert "app: version 3 restored" in out
    assert "app: would delete versions 1, 2" in out
    assert "app: kept version 3: alias prod points at it" in out


def test_purge_without_a_terminal_needs_yes(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given
    monkeypatch.setattr("sys.stdin", io.StringIO("app\n"))
    # When
    code, fake = run(["purge", "app"])
    # Then
    assert code == 1
    assert "--yes" in capsys.readouterr().err
    assert fake.calls == []


def test_purge_asks_on_a_terminal(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # Given
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stdin", Terminal("wrong\n"))
    no_aliases = ArtifactSummary.from_dict({"name": "app", "counts": {"versions": 1, "aliases": 0}})
    # When
    refused, fake = run(["purge", "app"], FakeClient(get_artifact=no_aliases))
    monkeypatch.setattr("sys.stdin", Terminal("app\n"))
    confirmed, _ = run(["purge", "app", "--force"], fake)
    # Then
    assert (refused, confirmed) == (1, 0)
    assert fake.calls == [("get_artifact", ("app",), {}), ("purge", ("app",), {"force": True})]


def test_purge_refuses_an_artifact_with_aliases_before_asking_for_its_name(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a terminal, and an artifact with an alias
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stdin", Terminal("app\n"))
    aliased = ArtifactSummary.from_dict({"name": "app", "counts": {"versions": 1, "aliases": 1}})
    fake = FakeClient(get_artifact=aliased, iter_aliases=lambda name: iter([alias("prod")]))
    # When
    code, _ = run(["purge", "app"], fake)
    # Then it fails at once, as the API would, and never asked for the name
    err = capsys.readouterr().err
    assert code == 3
    assert "Type the name" not in err
    assert "arca: error: ConflictError: artifact 'app' has aliases (prod); delete them or purge with --force" in err
    assert [c[0] for c in fake.calls] == ["get_artifact", "iter_aliases"]


def test_purge_with_yes(capsys: pytest.CaptureFixture[str]) -> None:
    code, fake = run(["purge", "app", "--yes"])
    assert code == 0
    assert fake.called("purge") == (("app",), {"force": False})
    assert capsys.readouterr().out == "app: purged\n"


def test_keyboard_interrupt_exits_130(capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = run(["versions", "app"], FakeClient(error=KeyboardInterrupt()))
    assert code == 130
    assert capsys.readouterr().err == "\narca: interrupted\n"  # not "arca: error: Interrupted: interrupted"


def test_default_client_uses_the_endpoint_option(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given
    from arca_client.cli import default_client

    monkeypatch.delenv("ARCA_SIGN", raising=False)
    # When
    client = default_client(parse_args(["ls", "--endpoint", "http://localhost:9999"]))
    # Then
    assert client.endpoint == "http://localhost:9999"
    assert not client.signed


# ---- output helpers -----------------------------------------------------------------------------


def test_table_right_aligns_numeric_columns() -> None:
    assert table(["N", "NAME"], [[1, "a"], [100, "bb"]]).splitlines() == ["  N  NAME", "  1  a", "100  bb"]


def test_human_size() -> None:
    assert [human_size(n) for n in (0, 1023, 1024, 20 * 1024**2, 5 * 1024**3)] == [
        "0 B",
        "1023 B",
        "1.0 KiB",
        "20.0 MiB",
        "5.0 GiB",
    ]


def test_progress_bar_throttles_redraws_and_ends_each_phase_on_its_own_line() -> None:
    # Given
    now = [0.0]
    out = io.StringIO()
    bar = ProgressBar(out, clock=lambda: now[0], interval=0.5)
    # When
    bar("hash", 1, 4)
    now[0] = 0.1
    bar("hash", 2, 4)  # too soon: not drawn
    bar("hash", 4, 4)  # finished: always drawn
    bar("upload", 4, 4)
    bar.close()
    # Then
    lines = out.getvalue().split("\n")
    assert out.getvalue().count("\r") == 3
    assert "hashing" in lines[0] and "100%" in lines[0]
    assert "uploading" in lines[1]
    assert lines[2] == ""


def test_namespace_has_every_global_default() -> None:
    args = parse_args(["ls"])
    assert isinstance(args, argparse.Namespace)
    assert {"endpoint", "json", "sign", "region", "profile", "progress", "verbose"} <= set(vars(args))


# ---- errors under --json, messages in flags, the exit-code table --------------------------------


def test_json_errors_are_the_api_error_shape_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    # Given
    error = ConflictError(
        "version 3 is the target of alias(es) prod",
        code="VersionPinnedError",
        status=409,
        request_id="req-7",
        details={"aliases": ["prod"]},
    )
    # When
    code, _ = run(["delete", "app", "3", "--json"], FakeClient(error=error))
    # Then
    assert code == 3
    captured = capsys.readouterr()
    assert captured.out == ""
    assert json.loads(captured.err) == {
        "error": {
            "code": "VersionPinnedError",
            "message": "version 3 is the target of alias(es) prod",
            "request_id": "req-7",
            "status": 409,
            "aliases": ["prod"],
        }
    }


@pytest.mark.parametrize(
    ("argv", "code", "error_code"),
    [
        (["delete", "app", "--json"], 1, "UsageError"),
        (["--json", "show", "app@"], 1, "UsageError"),
        (["publish", "app", "/no/such/file", "--json"], 2, "FileNotFound"),
    ],
)
def test_json_errors_of_the_client_itself(
    argv: list[str], code: int, error_code: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given
    fake = FakeClient(publish=lambda name, source, **kw: open(source, "rb"))  # noqa: SIM115 - raises before use
    # When
    exit_code, _ = run(argv, fake)
    # Then
    assert exit_code == code
    error = json.loads(capsys.readouterr().err)["error"]
    assert (error["code"], error["request_id"]) == (error_code, None)
    assert error["message"]


@pytest.mark.parametrize(
    ("argv", "message", "shown"),
    [
        (
            ["purge", "app", "--yes"],
            "artifact 'app' has aliases (prod); delete them or purge with force=true",
            "artifact 'app' has aliases (prod); delete them or purge with --force",
        ),
        (
            ["alias", "set", "app", "prod", "3", "--canary", "4", "--weight", "10"],
            "secondary_version_weight: is only allowed with a secondary_version",
            "--weight: is only allowed with a --canary",
        ),
        (
            ["alias", "set", "app", "prod", "3", "--create-only"],
            "alias 'prod' exists (If-None-Match: *)",
            "alias 'prod' exists (--create-only)",
        ),
        (
            ["alias", "rm", "app", "prod", "--if-revision", "2"],
            "If-Match must be an alias revision number",
            "--if-revision must be an alias revision number",
        ),
        (
            ["alias", "set", "app", "prod", "3", "--expect-version", "2"],
            "alias 'prod' does not point at version 2",
            "alias 'prod' does not point at version 2",
        ),
        (
            ["alias", "rollback", "app", "prod", "--to-revision", "9"],
            "to_revision must be before the current revision 3",
            "--to-revision must be before the current revision 3",
        ),
        (
            ["prune", "app", "--keep-last", "1"],
            "keep_last: Input should be less than 1000000",
            "--keep-last: Input should be less than 1000000",
        ),
        (
            ["resolve", "app@prod", "--at", "2024-01-01"],
            "at: alias 'prod' did not exist at 2024-01-01T00:00:00Z",
            "--at: alias 'prod' did not exist at 2024-01-01T00:00:00Z",
        ),
        (
            ["publish", "app", "-", "--metadata", "A=1"],
            "metadata: key 'A': String should match pattern",
            "--metadata: key 'A': String should match pattern",
        ),
        # a flag the command does not have is not named: promote sets If-Match itself
        (
            ["alias", "copy", "app", "--from", "a", "--to", "b"],
            "alias 'b' changed (If-Match)",
            "alias 'b' changed (If-Match)",
        ),
        (
            ["ls"],
            "cannot tell which region to sign for: pass region=, or set AWS_REGION",
            "cannot tell which region to sign for: pass --region, or set AWS_REGION",
        ),
    ],
)
def test_messages_name_the_flags_not_the_api_fields(
    argv: list[str], message: str, shown: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"")))
    error = ArcaError(message, code="SomeError", status=409)
    # When
    run(argv, FakeClient(error=error))
    # Then
    assert capsys.readouterr().err == f"arca: error: SomeError: {shown}\n"


def test_download_never_overwrites_unless_forced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Given: the SDK refuses when told not to overwrite
    target = tmp_path / "app.zip"

    def download(name: str, ref: str, dest: str | None, **kwargs: Any) -> Downloaded:
        if not kwargs["overwrite"]:
            raise FileExistsError(17, "File exists", str(target))
        return Downloaded(resolution(), str(target))

    fake = FakeClient(download=download)
    # When
    refused, _ = run(["download", "team/app@prod"], fake)
    err = capsys.readouterr().err
    forced, _ = run(["download", "team/app@prod", "--force"], fake)
    overwrite, _ = run(["download", "team/app@prod", "--overwrite"], fake)
    # Then
    assert (refused, forced, overwrite) == (3, 0, 0)
    assert err == f"arca: error: FileExists: {target} exists; --force overwrites it\n"
    assert fake.calls[0][1] == ("team/app", "prod", None)


def test_publish_from_stdin_takes_a_file_name(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"data")))
    fake = FakeClient(publish=Published(version(1), deduplicated=False, uploaded=True))
    # When
    code, _ = run(["publish", "app", "-", "--filename", "build.zip"], fake)
    # Then
    assert code == 0
    args, kwargs = fake.called("publish")
    assert args[1] is sys.stdin.buffer
    assert kwargs["filename"] == "build.zip"


REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs" / "cli.md"


def documented_exit_codes(document: Path = DOCS) -> list[tuple[int, str]]:
    """The rows of the exit-code table in `document`."""
    text = document.read_text()
    start = text.index("| exit code | meaning |")
    rows = []
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        code, meaning = (cell.strip() for cell in line.strip("|").split("|"))
        rows.append((int(code), meaning))
    return rows


@pytest.mark.parametrize("document", ["docs/cli.md", "README.md"])
def test_the_documented_exit_codes_are_the_code_table(document: str) -> None:
    # The same table in every place it is documented (arca --help prints EXIT_TABLE itself)
    assert documented_exit_codes(REPO / document) == list(EXIT_TABLE)


@pytest.mark.parametrize(("code", "meaning"), [row for row in EXIT_TABLE if "HTTP" in row[1]])
def test_each_documented_http_status_exits_with_its_documented_code(code: int, meaning: str) -> None:
    # Given the statuses a row names, e.g. "(HTTP 409, 412)"
    statuses = [int(s) for s in re.findall(r"\d{3}", meaning[meaning.index("(HTTP") :])]
    # When / Then
    assert statuses
    for status in statuses:
        assert exit_code(error_class(status)("x", status=status)) == code, status


def test_help_prints_the_exit_code_table(capsys: pytest.CaptureFixture[str]) -> None:
    # When
    run(["--help"])
    # Then
    out = " ".join(capsys.readouterr().out.split())
    for code, meaning in EXIT_TABLE:
        assert f"{code} {meaning}" in out
