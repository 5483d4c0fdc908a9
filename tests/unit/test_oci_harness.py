"""tests/oci/harness.py's `debian_tool`: a tool is installed when missing, skipped only where it cannot be."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from tests.oci import harness


class _Machine:
    """`shutil.which`, `os.geteuid` and `subprocess.run` of a pretend machine."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *, tools: set[str], root: bool, installs: bool) -> None:
        self.tools, self.installs, self.commands = tools, installs, []
        monkeypatch.setattr(harness.shutil, "which", lambda name: f"/usr/bin/{name}" if name in self.tools else None)
        monkeypatch.setattr(harness.os, "geteuid", lambda: 0 if root else 1000)
        monkeypatch.setattr(harness.subprocess, "run", self.run)

    def run(self, command: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        self.commands.append(command)
        if "install" in command and self.installs:
            self.tools.add("skopeo")
            return subprocess.CompletedProcess(command, 0, "", "")
        return subprocess.CompletedProcess(command, 0 if "update" in command else 100, "", "E: no such package")


def test_a_tool_on_the_path_is_used_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    machine = _Machine(monkeypatch, tools={"skopeo", "apt-get"}, root=True, installs=True)
    assert harness.debian_tool("skopeo", "skopeo") == "/usr/bin/skopeo"
    assert machine.commands == []


def test_a_missing_tool_is_installed_with_apt_get(monkeypatch: pytest.MonkeyPatch) -> None:
    machine = _Machine(monkeypatch, tools={"apt-get"}, root=True, installs=True)
    assert harness.debian_tool("skopeo", "skopeo") == "/usr/bin/skopeo"
    assert machine.commands == [["/usr/bin/apt-get", "install", "-y", "-qq", "skopeo"]]


def test_a_machine_without_apt_get_skips_saying_why(monkeypatch: pytest.MonkeyPatch) -> None:
    _Machine(monkeypatch, tools=set(), root=True, installs=True)
    with pytest.raises(pytest.skip.Exception, match="Debian's package 'skopeo' needs apt-get"):
        harness.debian_tool("skopeo", "skopeo")


def test_a_user_without_sudo_skips(monkeypatch: pytest.MonkeyPatch) -> None:
    _Machine(monkeypatch, tools={"apt-get"}, root=False, installs=True)
    with pytest.raises(pytest.skip.Exception):
        harness.debian_tool("skopeo", "skopeo")


def test_an_install_that_fails_after_an_update_fails_the_test(monkeypatch: pytest.MonkeyPatch) -> None:
    machine = _Machine(monkeypatch, tools={"apt-get"}, root=True, installs=False)
    with pytest.raises(pytest.fail.Exception, match="no such package"):
        harness.debian_tool("skopeo", "skopeo")
    assert [c[1] for c in machine.commands] == ["install", "update", "install"]
