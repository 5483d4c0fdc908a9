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
from tests.helpers import sha256

_HERE = Path(__file__).parent
# What curl adds to `-X PUT --data-binary @file` unless a -H overrides it; moto stores an empty
# object for a form-urlencoded PUT, so an upload that forgot its Content-Type must fail here too.
CURL_DEFAULT_HEADERS = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "*/*"}


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


class ArcaHttp:
    """The HTTP API at `url` through one requests.Session, plus the upload dance clients perform."""

    def __init__(self, url: str, session: requests.Session) -> None:
        self.url = url
        self.session = session

    def request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        kwargs.setdefault("timeout", 30)
        return self.session.request(method, self.url + path, **kwargs)

    def get(self, path: str, **kwargs: Any) -> requests.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> requests.Response:
        return self.request("POST", path, **kwargs)

    def put(self, path: str, **kwargs: Any) -> requests.Response:
        return self.request("PUT", path, **kwargs)

    def upload(self, name: str, data: bytes) -> str:
        """Ask where to upload `data`, then PUT it as `curl -X PUT --data-binary @file -H …` would.

        Returns the sha256. Skips the PUT when the registry already has the blob (200, exists).
        """
        digest = sha256(data)
        reply = self.post(f"/artifacts/{name}/uploads", json={"sha256": digest, "size": len(data)})
        if reply.status_code == 200 and reply.json()["exists"]:
            return digest
        assert reply.status_code == 201, reply.text
        upload = reply.json()["upload"]
        assert upload["method"] == "PUT"
        put = requests.put(upload["url"], data=data, headers={**CURL_DEFAULT_HEADERS, **upload["headers"]}, timeout=60)
        assert put.status_code == 200, put.text
        return digest

    def set_latest(self, name: str, data: bytes, **fields: Any) -> requests.Response:
        digest = self.upload(name, data)
        return self.put(f"/artifacts/{name}/latest", json={"sha256": digest, "size": len(data), **fields})


@pytest.fixture
def arca(arca_url: str) -> Iterator[ArcaHttp]:
    with requests.Session() as session:
        yield ArcaHttp(arca_url, session)


@pytest.fixture
def unique() -> str:
    """A top-level name segment of this test's own: tests share one registry and must not meet."""
    return f"e2e-{uuid.uuid4().hex[:10]}"
