"""`arca completion bash|zsh|fish`: scripts generated from the parser, checked by running the shells."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from arca_client.cli import build_parser, main
from arca_client.completion import command_tree


def script(shell: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["completion", shell], client_factory=lambda args: pytest.fail("completion made a client")) == 0
    return capsys.readouterr().out


def needs(shell: str) -> str:
    path = shutil.which(shell)
    if path is None:
        pytest.skip(f"{shell} is not installed")
    return path


def test_the_tree_has_every_command_flag_and_choice_of_the_parser() -> None:
    # When
    tree = command_tree(build_parser())
    # Then
    assert set(tree[""].commands) >= {"publish", "download", "resolve", "show", "alias", "config", "completion"}
    assert set(tree["alias"].commands) == {"set", "copy", "rollback", "history", "ls", "show", "rm", "policy"}
    assert set(tree["alias policy"].commands) == {"set", "show", "rm"}
    assert set(tree["config"].commands) == {"set-endpoint", "use", "remove", "list", "trust-key"}
    assert {"--canary", "--weight", "--if-revision", "--json", "--endpoint"} <= set(tree["alias set"].flags)
    assert "--canary" in tree["alias set"].valued
    assert "--json" not in tree["alias set"].valued
    assert {"-f", "--force", "--overwrite", "-o"} <= set(tree["download"].flags)
    assert tree["completion"].choices == ["bash", "zsh", "fish"]
    assert {"--watch", "--interval", "--cache", "--key", "--at"} <= set(tree["resolve"].flags)
    assert {"--consumer", "--ttl", "--label", "--cache", "--interval", "--once"} <= set(tree["consume"].flags)
    assert {"--consumer", "--ttl", "--cache", "--interval"} <= set(tree["consume"].valued)
    assert "--once" not in tree["consume"].valued
    assert {"--port", "--bind"} <= set(tree["proxy"].valued)
    assert all("legacy_ref" not in flag for node in tree.values() for flag in node.flags)


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_every_script_names_every_command_and_flag(shell: str, capsys: pytest.CaptureFixture[str]) -> None:
    # When
    text = script(shell, capsys)
    # Then
    for path, node in command_tree(build_parser()).items():
        for word in [*node.commands, *node.flags]:
            bare = word.lstrip("-") if shell == "fish" else word  # fish names flags as `-l canary`
            assert bare in text, (shell, path, word)


def test_an_unknown_shell_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["completion", "tcsh"]) == 1
    assert "invalid choice: 'tcsh'" in capsys.readouterr().err


def bash_complete(script_path: Path, *words: str) -> list[str]:
    """What bash offers at the end of `words` (the last one being the word under the cursor)."""
    program = f"""
        source {script_path}
        COMP_WORDS=({" ".join(repr(w) for w in words)})
        COMP_CWORD={len(words) - 1}
        _arca
        printf '%s\\n' "${{COMPREPLY[@]}}"
    """
    ran = subprocess.run([needs("bash"), "--norc", "-c", program], capture_output=True, text=True, check=True)
    return [line for line in ran.stdout.splitlines() if line]


@pytest.mark.parametrize(
    ("words", "offered"),
    [
        (
            ("arca", ""),
            [
                "publish",
                "download",
                "files",
                "resolve",
                "ls",
                "versions",
                "show",
                "diff",
                "delete",
                "restore",
                "prune",
                "purge",
                "link",
                "unlink",
                "create",
                "tag",
                "search",
                "consumers",
                "lease",
                "release",
                "consume",
                "events",
                "attest",
                "attestations",
                "alias",
                "promote",
                "approve",
                "reject",
                "promotions",
                "retention",
                "rollout",
                "console",
                "proxy",
                "oci",
                "config",
                "completion",
            ],
        ),
        (("arca", "al"), ["alias"]),
        (("arca", "alias", "set", "--can"), ["--canary"]),
        (("arca", "--endpoint", "alias", "alias", "s"), ["set", "show"]),  # "alias" here is --endpoint's value
        (("arca", "-v", "alias", "s"), ["set", "show"]),
        (("arca", "download", "x", "-o", ""), []),  # a flag's value: bash falls back to file names
        (("arca", "completion", ""), ["bash", "zsh", "fish"]),
        (("arca", "config", "u"), ["use"]),
        (("arca", "rollout", ""), ["start", "status", "abort"]),
        (("arca", "retention", ""), ["set", "show", "preview", "apply", "delete"]),
        (("arca", "rollout", "status", "--w"), ["--watch"]),
        (("arca", "resolve", "x@prod", "--w"), ["--watch"]),
        (("arca", "consume", "x@prod", "--on"), ["--once"]),
        (("arca", "download", "--ove"), ["--overwrite"]),
        (("arca", "proxy", "--b"), ["--bind"]),
        (("arca", "oci", ""), ["proxy"]),
        (("arca", "oci", "proxy", "--b"), ["--bind"]),
        (("arca", "pro"), ["promote", "promotions", "proxy"]),
    ],
)
def test_bash_completes_commands_flags_and_choices(
    words: tuple[str, ...], offered: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given
    path = tmp_path / "arca.bash"
    path.write_text(script("bash", capsys))
    # When / Then
    assert bash_complete(path, *words) == offered


def test_fish_completes_with_descriptions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Given
    fish = needs("fish")
    path = tmp_path / "arca.fish"
    path.write_text(script("fish", capsys))

    def complete(line: str) -> list[str]:
        ran = subprocess.run(
            [fish, "--no-config", "-c", f"source {path}; complete -C {line!r}"], capture_output=True, text=True
        )
        assert ran.returncode == 0, ran.stderr
        return ran.stdout.splitlines()

    # When / Then
    assert complete("arca al") == ["alias\tmanage aliases"]
    assert complete("arca alias set --ca") == ["--canary\tsecondary version"]
    assert [line.split("\t")[0] for line in complete("arca --endpoint prod alias r")] == ["rm", "rollback"]
    assert complete("arca completion ") == ["bash", "fish", "zsh"]


def test_zsh_script_loads_and_knows_the_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Given
    zsh = needs("zsh")
    path = tmp_path / "_arca"
    path.write_text(script("zsh", capsys))
    # When
    ran = subprocess.run(
        [
            zsh,
            "-f",
            "-c",
            f"autoload -U compinit; compinit -u -D; source {path}; _arca_commands alias; print ${{_comps[arca]}}",
        ],
        capture_output=True,
        text=True,
    )
    # Then
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == ["set copy rollback history ls show rm", "_arca"]
