"""Every infra test runs on one xdist worker (the group "infra"), so that each configuration of a stage is
synthesized once per run (tests/infra/stages.py caches them per process)."""

from __future__ import annotations

from pathlib import Path

import pytest

_HERE = Path(__file__).parent


# tryfirst: before xdist reads the xdist_group marks, as in tests/e2e/conftest.py; a hook rather than a pytestmark
# per module, so that a new infra module cannot land on another worker and synthesize every stage again.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(_HERE):
            item.add_marker(pytest.mark.xdist_group("infra"))
