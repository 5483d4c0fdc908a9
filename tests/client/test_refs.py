"""One reference grammar, NAME@REF, in show, resolve and download; sha256:<hex> refs reach the API verbatim."""

from __future__ import annotations

import json

import pytest

from arca_client import Downloaded
from arca_client.cli import split_ref
from arca_client.refs import RefKind, parse_ref, ref_kind
from tests.client.test_cli_unit import FakeClient, alias, resolution, run, version
from tests.client.test_sdk import Harness, make

HEX = "0123456789abcdef" * 4


@pytest.mark.parametrize(
    ("text", "canonical", "kind"),
    [
        ("12", "12", RefKind.VERSION),
        ("007", "7", RefKind.VERSION),
        ("999999", "999999", RefKind.VERSION),
        ("latest", "LATEST", RefKind.LATEST),
        ("LATEST", "LATEST", RefKind.LATEST),
        ("prod", "prod", RefKind.ALIAS),
        ("canary_2-b", "canary_2-b", RefKind.ALIAS),
        (f"sha256:{HEX}", f"sha256:{HEX}", RefKind.SHA256),
        (f"SHA256:{HEX.upper()}", f"sha256:{HEX}", RefKind.SHA256),
    ],
)
def test_each_kind_of_ref_has_one_canonical_spelling(text: str, canonical: str, kind: RefKind) -> None:
    assert parse_ref(text) == canonical
    assert ref_kind(canonical) is kind


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("0", "not a version number"),
        ("1000000", "not a version number"),
        ("sha256:abc", "64 hex digits"),
        (f"sha256:{HEX}0", "64 hex digits"),
        (f"sha256:{HEX[:-1]}g", "64 hex digits"),
        ("a~b", "not a ref"),
        (".a", "not a ref"),
        ("", "not a ref"),
        ("²", "not a ref"),
    ],
)
def test_a_malformed_ref_is_refused_naming_the_grammar(text: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        parse_ref(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("app", ("app", "LATEST")),
        ("team/app@prod", ("team/app", "prod")),
        ("app@12", ("app", "12")),
        ("app@latest", ("app", "LATEST")),
        (f"team/app@sha256:{HEX}", ("team/app", f"sha256:{HEX}")),
    ],
)
def test_name_at_ref(text: str, expected: tuple[str, str]) -> None:
    assert split_ref(text) == expected


@pytest.mark.parametrize("command", ["show", "resolve", "download"])
@pytest.mark.parametrize("target", ["app@", "@prod", "app@prod@2", "app@sha256:xyz"])
def test_every_command_refuses_a_malformed_reference_before_calling(
    command: str, target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # When
    code, fake = run([command, target])
    # Then
    assert code == 1
    err = capsys.readouterr().err
    assert err.startswith("arca: error: UsageError: ")
    assert "NAME@VERSION, NAME@LATEST, NAME@ALIAS or NAME@sha256:<hex>" in err
    assert fake.calls == []


def test_show_resolve_and_download_pass_a_content_ref_through() -> None:
    # Given
    ref = f"sha256:{HEX}"
    fake = FakeClient(get_version=version(4), resolve=resolution(), download=Downloaded(resolution(), "app"))
    # When
    codes = [
        run(["show", f"app@SHA256:{HEX}"], fake)[0],
        run(["resolve", f"app@{ref}"], fake)[0],
        run(["download", f"app@{ref}"], fake)[0],
    ]
    # Then
    assert codes == [0, 0, 0]
    assert fake.called("get_version")[0] == ("app", ref)
    assert fake.called("resolve")[0] == ("app", ref)
    assert fake.called("download")[0][:2] == ("app", ref)


def test_show_of_an_alias_shows_the_version_it_points_at(capsys: pytest.CaptureFixture[str]) -> None:
    # Given
    fake = FakeClient(
        get_alias=alias("prod", 4, 7, secondary_version=5, secondary_version_weight=10),
        get_version=version(4, metadata={"commit": "abc"}),
    )
    # When
    code, _ = run(["show", "app@prod"], fake)
    # Then
    assert code == 0
    assert fake.called("get_alias")[0] == ("app", "prod")
    assert fake.called("get_version")[0] == ("app", "4")
    out = capsys.readouterr().out
    assert out.startswith("prod -> 4, canary 5 at 10% (revision 7)\n")
    assert "commit=abc" in out


def test_show_of_an_alias_as_json_carries_the_alias(capsys: pytest.CaptureFixture[str]) -> None:
    # Given
    fake = FakeClient(get_alias=alias("prod", 4, 7), get_version=version(4))
    # When
    code, _ = run(["show", "app@prod", "--json"], fake)
    # Then
    assert code == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["version"], shown["alias"]["alias"], shown["alias"]["revision"]) == (4, "prod", 7)


def test_resolve_in_the_old_two_word_form_says_how_to_write_it(capsys: pytest.CaptureFixture[str]) -> None:
    # When
    code, fake = run(["resolve", "team/app", "prod"])
    # Then
    assert code == 1
    assert "resolve takes one reference, NAME@REF: arca resolve team/app@prod" in capsys.readouterr().err
    assert fake.calls == []


@pytest.mark.parametrize(
    ("call", "path"),
    [
        (lambda h: h.client.resolve("team/app", f"sha256:{HEX}"), f"/artifacts/team/app/resolve/sha256:{HEX}"),
        (lambda h: h.client.get_version("team/app", f"sha256:{HEX}"), f"/artifacts/team/app/versions/sha256:{HEX}"),
    ],
)
def test_the_sdk_sends_a_content_ref_as_the_path_segment(call: object, path: str) -> None:
    # Given
    h: Harness = make()
    h.answer((200, {**version(3).raw, "download_url": "http://s3/x", "ref": f"sha256:{HEX}"}))
    # When
    call(h)  # type: ignore[operator]
    # Then
    assert h.sent[0].path == path
    assert f"sha256:{HEX}" in h.sent[0].url  # the ":" is not percent-encoded
