"""End-to-end fixtures: one local Arca (DynamoDB Local, moto's S3 server, the real handlers) over HTTP.

Every test in this folder is marked `e2e` and put in the xdist group "e2e", so that under
`pytest -n 2 --dist loadgroup` they all run on one worker, one after the other, against one server.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from local.server import running_arca
from tests.door import CURL_DEFAULT_HEADERS, Door
from tests.helpers import HTTP_TIMEOUT

__all__ = ["CURL_DEFAULT_HEADERS", "ArcaHttp", "arca", "arca_url", "unique"]

_HERE = Path(__file__).parent


# tryfirst: when pytest is given paths under tests/e2e, it loads this conftest before xdist's worker
# plugin, whose own collection_modifyitems (reading the xdist_group marks) would then run first.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # A hook rather than a pytestmark per module, so that a new e2e file cannot land on another
    # worker and start a second stack.
    for item in items:
        if item.path.is_relative_to(_HERE):
            item.add_marker(pytest.mark.e2e)
            item.add_marker(pytest.mark.xdist_group("e2e"))


# Package scope rather than session: the stack sets process-wide environment variables (endpoints,
# table, fake credentials) that other suites on the same worker must not see. The "e2e" group runs
# contiguously, so this is still one start for all e2e tests.
@pytest.fixture(scope="package")
def arca_url() -> Iterator[str]:
    with running_arca(port=0) as url:
        yield url


class ArcaHttp(Door[requests.Response]):
    """The door (tests/door.py) over HTTP: the API at `url` through one requests.Session.

    `request`, `get`, `post` and `put` answer the raw response, for tests of what travels over HTTP.
    """

    def __init__(self, url: str, session: requests.Session) -> None:
        self.url = url
        self.session = session

    def request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        kwargs.setdefault("timeout", HTTP_TIMEOUT)
        return self.session.request(method, self.url + path, **kwargs)

    def get(self, path: str, **kwargs: Any) -> requests.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> requests.Response:
        return self.request("POST", path, **kwargs)

    def put(self, path: str, **kwargs: Any) -> requests.Response:
        return self.request("PUT", path, **kwargs)

    def send(self, method: str, path: str, body: Any = None) -> requests.Response:
        return self.request(method, path, json=body)

    def status_of(self, answer: requests.Response) -> int:
        return answer.status_code

    def json_of(self, answer: requests.Response) -> Any:
        return answer.json() if answer.content else None


@pytest.fixture
def arca(arca_url: str) -> Iterator[ArcaHttp]:
    with requests.Session() as session:
        yield ArcaHttp(arca_url, session)


@pytest.fixture
def unique() -> str:
    """A top-level name segment of this test's own: tests share one registry and must not meet."""
    return f"e2e-{uuid.uuid4().hex[:10]}"
