"""Real OCI clients (oras-py, skopeo) against the /v2/ dispatcher, Arca's local server and Debian's docker-registry.

The clients and the reference registry install in the test setup itself: skopeo and docker-registry from Debian
(tests/oci/harness.py `debian_tool`; `make test` installs them first, as it does Chromium), oras from
requirements-dev.txt. Every test here is marked `e2e` (real processes and sockets) and put in the xdist group "oci",
so one worker starts the registries once for all of them.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.oci.harness import Registry, debian_tool, docker_registry
from tests.oci.servers import FakeRegistryServer, Recorder, serving_fake_registry

_HERE = Path(__file__).parent


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "xdist_group(name): run the group's tests on one xdist worker")


@pytest.hookimpl(tryfirst=True)  # before xdist reads the xdist_group marks, as in tests/e2e/conftest.py
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(_HERE):
            item.add_marker(pytest.mark.e2e)
            item.add_marker(pytest.mark.xdist_group("oci"))


@pytest.fixture(scope="session")
def skopeo_bin() -> str:
    return debian_tool("skopeo", "skopeo")


@pytest.fixture(scope="session")
def registry_bin() -> str:
    return debian_tool("docker-registry", "docker-registry")


@pytest.fixture(scope="package")
def reference(registry_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    """Debian's docker-registry (distribution 2.8), the reference the dispatcher is compared with."""
    with docker_registry(registry_bin, tmp_path_factory.mktemp("docker-registry")) as registry:
        yield registry


@pytest.fixture(scope="package")
def fake_server() -> Iterator[FakeRegistryServer]:
    """The /v2/ dispatcher over the dict registry, unbounded bodies."""
    with serving_fake_registry() as server:
        yield server


@pytest.fixture
def fake(fake_server: FakeRegistryServer) -> Registry:
    fake_server.recorder.take()
    return Registry(fake_server.host, fake_server.recorder, "arca-dispatcher")


@pytest.fixture(scope="package")
def arca_server() -> Iterator[Registry]:
    """Arca itself: `make local`'s server (the real handlers over DynamoDB Local and local S3), with the request
    bounds of AWS. Addressed directly: the local server refuses a Host other than its own (a recording proxy's), so
    its exchanges are not recorded (the local server's log has them)."""
    from urllib.parse import urlsplit

    from local.server import running_arca

    with running_arca(port=0) as url:
        yield Registry(urlsplit(url).netloc, Recorder(), "arca")


@pytest.fixture
def arca(arca_server: Registry) -> Registry:
    arca_server.exchanges()
    return arca_server


@pytest.fixture
def name() -> str:
    """A repository of its own for each test (the registries live for the whole package)."""
    return f"tests/{uuid.uuid4().hex[:12]}"
