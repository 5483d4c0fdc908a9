"""The infra tests also run with `-p no:xdist`, which would otherwise reject their xdist_group mark."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "xdist_group(name): run the marked tests on one xdist worker")
