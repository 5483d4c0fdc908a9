"""Every client test runs with a config directory of its own and no endpoint from the environment."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """$XDG_CONFIG_HOME in the test's tmp_path, so no developer's ~/.config/arca/config.toml is read or written."""
    home = tmp_path / "xdg-config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    monkeypatch.delenv("ARCA_ENDPOINT", raising=False)
    return home / "arca" / "config.toml"
