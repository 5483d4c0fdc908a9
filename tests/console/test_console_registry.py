"""The console's landing page (the registry as a list, search, tag filters, pages), comparisons of two versions,
what an alias's buttons would change, downloads, links and newest-first events; at 1280 and at 700 px."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.console.conftest import Registry, open_console, publish, set_alias
from tests.e2e.conftest import ArcaHttp

Screenshot = Callable[..., Path]
WIDE, NARROW = {"width": 1280, "height": 900}, {"width": 700, "height": 900}


def both_widths(page: Page, screenshot: Screenshot, name: str) -> None:
    """A screenshot at 1280 px and one at 700 px, where nothing may be wider than the window."""
    page.set_viewport_size(WIDE)
    screenshot(page, f"{name}-1280")
    page.set_viewport_size(NARROW)
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    screenshot(page, f"{name}-700")
    page.set_viewport_size(WIDE)
    assert overflow <= 0, f"{name}: {overflow} px wider than a 700 px window"


def test_landing_page_lists_each_artifact_with_its_newest_version_aliases_and_last_change(
    page: Page, arca_url: str, registry: Registry, screenshot: Screenshot
) -> None:
    # When the landing page is opened, then searched by the test's own folder
    open_console(page, arca_url)
    expect(page.get_by_role("heading", level=1)).to_have_text("Artifacts")
    page.get_by_role("searchbox", name="Search the registry").fill(f"{registry.root}/")
    page.get_by_role("button", name="Search").click()
    expect(page).to_have_url(re.compile(r"#/\?q="))
    expect(page.locator("main")).not_to_have_attribute("aria-busy", re.compile(".*"))

    # Then one row per artifact, in name order, each with its newest version, aliases with their split, and the
    # last change with its author
    rows = page.locator("table.registry tbody tr")
    expect(rows).to_have_count(3)
    api = rows.nth(0)
    expect(api.get_by_role("link", name=registry.api)).to_be_visible()
    expect(api.get_by_role("link", name="v3", exact=True)).to_be_visible()
    expect(api.get_by_role("link", name="prod v2 90% · v3 10%")).to_be_visible()
    expect(api.get_by_role("link", name="staging v3")).to_be_visible()
    expect(api).to_contain_text("alias.updated")
    expect(api).to_contain_text("user/local")
    expect(rows.nth(1)).to_contain_text(registry.worker)
    expect(rows.nth(1)).to_contain_text("no aliases")
    expect(rows.nth(2)).to_contain_text(registry.site)
    both_widths(page, screenshot, "registry")


def test_landing_page_pages_through_the_artifacts(page: Page, arca_url: str, registry: Registry) -> None:
    # When the list is shown two at a time
    open_console(page, arca_url, f"/?q={registry.root}/&limit=2")
    rows = page.locator("table.registry tbody tr")
    expect(rows).to_have_count(2)
    page.get_by_role("button", name="More artifacts").click()
    # Then the next page is added below
    expect(rows).to_have_count(3)
    expect(rows.nth(2)).to_contain_text(registry.site)
    expect(page.get_by_role("button", name="More artifacts")).to_have_count(0)


def test_tag_filter_and_content_search(
    page: Page, arca_url: str, arca: ArcaHttp, registry: Registry, unique: str, screenshot: Screenshot
) -> None:
    # Given the api artifact and its version 2 tagged team=<unique>
    assert arca.request("PATCH", f"/artifacts/{registry.api}", json={"tags": {"team": unique}}).status_code == 200
    assert arca.request("PATCH", f"/artifacts/{registry.api}/versions/2", json={"tags": {"team": unique}}).ok
    # When the registry is filtered by that tag (a click on the tag's chip)
    open_console(page, arca_url, f"/?q={registry.root}/")
    page.get_by_role("link", name=f"team={unique}").click()
    expect(page.locator("main")).not_to_have_attribute("aria-busy", re.compile(".*"))
    # Then only the tagged artifact, and the versions with the tag, are listed
    expect(page.locator("table.registry tbody tr")).to_have_count(1)
    expect(page.get_by_role("region", name=f"Artifacts tagged team={unique}")).to_contain_text(registry.api)
    hits = page.get_by_role("region", name=f"Versions tagged team={unique}").locator("tbody tr")
    expect(hits).to_have_count(1)
    expect(hits.first).to_contain_text("v2")
    screenshot(page, "registry-tag")

    # When the box is given the worker's sha256
    digest = hashlib.sha256(b"worker build 1\n").hexdigest()
    page.get_by_role("searchbox", name="Search the registry").fill(digest)
    page.get_by_role("button", name="Search").click()
    # Then every holder of that content is listed
    found = page.get_by_role("region", name="Versions with this content")
    expect(found.get_by_role("link", name=registry.worker)).to_be_visible()


def test_compare_view_shows_what_changed_between_two_versions(
    page: Page, arca_url: str, registry: Registry, screenshot: Screenshot
) -> None:
    # When version 3 is compared with version 2 from its page
    open_console(page, arca_url, f"/a/{registry.api}/versions/3")
    page.get_by_label("Compare v3 with").fill("2")
    page.get_by_role("button", name="Compare", exact=True).click()
    # Then the differences are listed field by field
    expect(page).to_have_url(re.compile(r"/versions/3/compare/2$"))
    diff = page.locator("table.diff tbody tr")
    expect(diff).to_have_count(3)
    expect(diff.nth(0)).to_contain_text("size")
    expect(diff.nth(0)).to_contain_text("(63000 bytes)")
    expect(diff.nth(1)).to_contain_text("sha256")
    expect(diff.nth(2)).to_contain_text("metadata.commit")
    expect(diff.nth(2)).to_contain_text("c01ab7e")
    expect(diff.nth(2)).to_contain_text("9be0d11")
    both_widths(page, screenshot, "compare")
    # And a version against itself has nothing to show
    open_console(page, arca_url, f"/a/{registry.api}/versions/2/compare/2")
    expect(page.locator(".same")).to_contain_text("No differences")


def test_alias_page_shows_what_a_promotion_and_a_rollback_would_change(
    page: Page, arca_url: str, arca: ArcaHttp, registry: Registry, screenshot: Screenshot
) -> None:
    # Given beta moved from version 1 to version 3
    set_alias(arca, registry.api, "beta", version=1)
    set_alias(arca, registry.api, "beta", version=3)
    # When prod's page is opened (2 with the canary 3 at 10%)
    open_console(page, arca_url, f"/a/{registry.api}/aliases/prod")
    preview = page.get_by_role("region", name="What would change")
    # Then the promotion's changes are shown before the button is pressed
    expect(preview).to_contain_text("Promoting the canary: v2 → v3")
    expect(preview.locator("table.diff tbody tr")).to_have_count(3)
    expect(preview).to_contain_text("Rolling back to revision 2: v2 + canary v3 at 10% → v2")
    expect(preview).to_contain_text("The primary stays v2: only the split changes.")
    both_widths(page, screenshot, "alias-preview")
    # And on beta's page, the rollback's
    open_console(page, arca_url, f"/a/{registry.api}/aliases/beta")
    preview = page.get_by_role("region", name="What would change")
    expect(preview).to_contain_text("Rolling back to revision 1: v3 → v1")
    expect(preview.locator("table.diff tbody tr").first).to_contain_text("size")


def test_download_button_and_snippets_on_version_and_alias_pages(
    page: Page, arca_url: str, arca: ArcaHttp, registry: Registry, screenshot: Screenshot
) -> None:
    # Given a version published from app-v9.zip
    number = publish(arca, registry.site, b"<h1>site 9</h1>\n", {"filename": "app-v9.zip"})
    set_alias(arca, registry.site, "prod", version=number)
    # When its page is opened
    open_console(page, arca_url, f"/a/{registry.site}/versions/{number}")
    box = page.get_by_role("region", name="Download")
    # Then the CLI and curl commands are there to copy
    expect(box.get_by_role("textbox", name="with the arca CLI (verifies the sha256)")).to_have_value(
        f"arca download {registry.site}@{number}"
    )
    curl = box.get_by_role("textbox", name="with curl (keeps the published file name)")
    expect(curl).to_have_value(f"curl -fLOJ {arca_url}/artifacts/{registry.site}/resolve/{number}/content")
    box.get_by_role("button", name="Copy: with the arca CLI (verifies the sha256)").click()
    expect(box.get_by_role("button", name="Copied")).to_have_count(0)  # the label stays for assistive technology
    both_widths(page, screenshot, "version-download")
    # And the button saves the file under its published name
    with page.expect_download() as started:
        box.get_by_role("link", name=f"Download {registry.site}@{number}").click()
    assert started.value.suggested_filename == "app-v9.zip"
    # And the alias page offers the same, by the alias
    open_console(page, arca_url, f"/a/{registry.site}/aliases/prod")
    expect(page.get_by_role("region", name="Download").get_by_role("textbox").first).to_have_value(
        f"arca download {registry.site}@prod"
    )


def test_a_link_page_names_its_target(page: Page, arca_url: str, arca: ArcaHttp, registry: Registry) -> None:
    # Given a link to the api artifact
    link = f"{registry.root}/team/api"
    assert arca.put(f"/artifacts/{link}/link", json={"target": registry.api}).status_code in (200, 201)
    # When the link's page is opened
    open_console(page, arca_url, f"/a/{link}")
    # Then it says what it leads to, with a link there
    note = page.locator(".link-note")
    expect(note).to_contain_text(f"{link} is a link to {registry.api}")
    note.get_by_role("link", name=registry.api).click()
    expect(page).to_have_url(re.compile(f"#/a/{registry.api}$"))


def test_events_are_newest_first_and_paged(
    page: Page, arca_url: str, arca: ArcaHttp, unique: str, screenshot: Screenshot
) -> None:
    # Given an artifact with 2 + 22 events
    name = f"{unique}/busy"
    publish(arca, name, b"busy\n")
    for i in range(22):
        set_alias(arca, name, f"a{i:02d}", version=1)
    # When its page is opened
    open_console(page, arca_url, f"/a/{name}")
    events = page.get_by_role("region", name="Events")
    rows = events.locator("tbody tr")
    # Then the newest 20 come first, the older ones on request
    expect(rows).to_have_count(20)
    expect(rows.first).to_contain_text("a21")
    events.get_by_role("button", name="Older events").click()
    expect(rows).to_have_count(24)
    expect(rows.last).to_contain_text("latest.updated")
    both_widths(page, screenshot, "artifact-events")


def test_versions_tell_an_aliass_canary_from_its_primary(page: Page, arca_url: str, registry: Registry) -> None:
    # Given prod on 2 with 3 as its 10% canary
    # When the artifact's page and version 3's page are opened
    open_console(page, arca_url, f"/a/{registry.api}")
    rows = page.locator("table.versions tbody tr")
    # Then the canary's row says so, and the primary's does not
    expect(rows.nth(0).get_by_role("link", name="prod canary 10%")).to_be_visible()
    expect(rows.nth(1).get_by_role("link", name="prod", exact=True)).to_be_visible()
    open_console(page, arca_url, f"/a/{registry.api}/versions/3")
    expect(page.get_by_role("region", name="Content").get_by_role("link", name="prod canary 10%")).to_be_visible()


def test_an_artifact_with_no_version_yet_is_listed_and_shown_saying_so(
    page: Page, arca_url: str, arca: ArcaHttp, unique: str
) -> None:
    # Given an artifact created with no version (PUT /artifacts/{name}), with a description and a tag
    name = f"{unique}/draft/model"
    created = arca.put(f"/artifacts/{name}", json={"description": "not trained yet", "tags": {"team": "risk"}})
    assert created.status_code == 201, created.text
    # When the landing page is searched by its folder
    open_console(page, arca_url)
    page.get_by_role("searchbox", name="Search the registry").fill(f"{unique}/draft/")
    page.get_by_role("button", name="Search").click()
    expect(page.locator("main")).not_to_have_attribute("aria-busy", re.compile(".*"))
    # Then its row says it has no versions yet, with its description and tag
    rows = page.locator("table.registry tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.nth(0)).to_contain_text("no versions yet")
    expect(rows.nth(0)).to_contain_text("not trained yet")
    expect(rows.nth(0)).to_contain_text("team=risk")
    # And its page says so too, lists no version, and shows its creation among the events
    rows.nth(0).get_by_role("link", name=name).click()
    expect(page.get_by_role("heading", level=1)).to_have_text(name)
    expect(page.get_by_role("region", name="Summary")).to_contain_text("no versions yet")
    expect(page.locator("table.versions tbody tr")).to_have_text(["No versions."])
    expect(page.get_by_role("region", name="Events").locator("tbody tr").nth(0)).to_contain_text("artifact.created")
    expect(page.locator("#alert")).to_be_hidden()
