"""Browser tests of the web console: Debian's headless Chromium driven by Playwright, against a local Arca.

`make browser` (a prerequisite of `make test`) installs /usr/bin/chromium from the Debian packages when it is
missing; Playwright never downloads a browser of its own. Every test here that uses the local server is
marked `e2e` and put in the xdist group "console", so that under `pytest -n 2 --dist loadgroup` they share
one worker and one stack. Screenshots go to .artifacts/screenshots/ (gitignored), one per page looked at.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, expect, sync_playwright

# The local server's fixtures (one stack per test package), shared with the end-to-end suite.
from tests.e2e.conftest import ArcaHttp, arca, arca_url, unique
from tests.helpers import HTTP_TIMEOUT

__all__ = ["arca", "arca_url", "unique"]

_HERE = Path(__file__).parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",  # the tests run as root in CI, where Chromium's sandbox refuses to start
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = _HERE.parents[1] / ".artifacts" / "screenshots"


def pytest_configure(config: pytest.Config) -> None:
    # xdist registers this mark; declared here too so that `-p no:xdist` runs pass --strict-markers.
    config.addinivalue_line("markers", "xdist_group(name): run the group's tests on one xdist worker")


@pytest.hookimpl(tryfirst=True)  # before xdist reads the xdist_group marks, as in tests/e2e/conftest.py
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(_HERE) and "arca_url" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.e2e)
            item.add_marker(pytest.mark.xdist_group("console"))


@pytest.fixture(scope="package")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    """One Chromium with a fresh profile for the package; each test opens its own page in it."""
    if not CHROMIUM.exists():
        pytest.fail(f"no {CHROMIUM}: `make browser` installs it from the Debian packages (`make test` runs it)")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            tmp_path_factory.mktemp("chromium-profile"),
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1200, "height": 800},
            locale="en-US",
            timezone_id="UTC",
        )
        yield context
        context.close()


@pytest.fixture
def page(browser: BrowserContext) -> Iterator[Page]:
    """A new tab; the test fails if the page threw a JavaScript error it did not catch."""
    tab = browser.new_page()
    tab.set_default_timeout(HTTP_TIMEOUT * 1000)  # generous (a loaded machine); a passing step waits no longer
    expect.set_options(timeout=HTTP_TIMEOUT * 1000)
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    yield tab
    tab.close()
    assert not errors, f"uncaught JavaScript errors: {errors}"


@pytest.fixture
def screenshot() -> Callable[..., Path]:
    """`screenshot(page, name)`: the whole page; `full_page=False` for the viewport (a modal's backdrop)."""

    def take(tab: Page, name: str, *, full_page: bool = True) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        tab.screenshot(path=path, full_page=full_page)
        return path

    return take


def open_console(tab: Page, base_url: str, route: str = "/") -> None:
    """Load the console at `#<route>` and wait until that route's page is drawn."""
    tab.goto(f"{base_url}/console/#{route}")
    expect(tab.locator("main")).not_to_have_attribute("aria-busy", re.compile(".*"))


@dataclass(frozen=True)
class Registry:
    """What `registry` published: names under the test's own top-level folder."""

    root: str
    api: str
    worker: str
    site: str


def publish(arca: ArcaHttp, name: str, data: bytes, metadata: dict[str, str] | None = None) -> int:
    return arca.published(name, data, content_type="application/zip", metadata=metadata or {})


def set_alias(arca: ArcaHttp, name: str, alias: str, **body: object) -> None:
    reply = arca.put(f"/artifacts/{name}/aliases/{alias}", json=body)
    assert reply.status_code in (200, 201), reply.text


@pytest.fixture
def registry(arca: ArcaHttp, unique: str) -> Registry:
    """<unique>/payments/api with versions 1-3, prod moved three times (now 2 with 3 as a 10% canary) and
    staging on 3; <unique>/payments/worker and <unique>/web/site with one version each."""
    made = Registry(unique, f"{unique}/payments/api", f"{unique}/payments/worker", f"{unique}/web/site")
    for number, commit in enumerate(["4f2a9c1", "9be0d11", "c01ab7e"], start=1):
        data = f"payments api build {number}\n".encode() * (1000 * number)
        assert publish(arca, made.api, data, {"commit": commit, "branch": "main"}) == number
    publish(arca, made.worker, b"worker build 1\n")
    publish(arca, made.site, b"<h1>site</h1>\n")
    set_alias(arca, made.api, "prod", version=1, reason="first release")
    set_alias(arca, made.api, "prod", version=2, reason="ship the retry fix")
    set_alias(arca, made.api, "prod", version=2, secondary_version=3, secondary_version_weight=10, reason="canary 3")
    set_alias(arca, made.api, "staging", version=3, reason="nightly")
    return made
