"""The web console in a real browser, served by the local server at /console/."""

from __future__ import annotations

import http.client
import json
import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from playwright.sync_api import Page, Route, expect

from tests.console.conftest import Registry, open_console
from tests.e2e.conftest import ArcaHttp
from tests.helpers import HTTP_TIMEOUT

Screenshot = Callable[..., Path]


def test_tree_opens_folders_in_place_and_leads_to_an_artifact(
    page: Page, arca_url: str, registry: Registry, screenshot: Screenshot
) -> None:
    # Given the console's folder tree
    open_console(page, arca_url, "/p/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Folders")

    # When the test's folder is opened by keyboard, then payments/ by mouse
    top = page.get_by_role("button", name=f"{registry.root}/", exact=True)
    top.focus()
    page.keyboard.press("Enter")
    expect(top).to_have_attribute("aria-expanded", "true")
    payments = page.get_by_role("button", name="payments/", exact=True)
    payments.click()

    # Then the folders hold their artifacts, and an artifact's link opens its page
    expect(payments).to_have_attribute("aria-expanded", "true")
    expect(page.get_by_role("link", name="api", exact=True)).to_be_visible()
    expect(page.get_by_role("link", name="worker", exact=True)).to_be_visible()
    expect(page.get_by_role("button", name="web/", exact=True)).to_have_attribute("aria-expanded", "false")
    screenshot(page, "tree")
    page.get_by_role("link", name="api", exact=True).click()
    expect(page).to_have_url(re.compile(f"#/a/{registry.api}$"))
    expect(page.get_by_role("heading", level=1)).to_have_text(registry.api)


def test_artifact_page_lists_versions_and_draws_each_alias_split(
    page: Page, arca_url: str, registry: Registry, screenshot: Screenshot
) -> None:
    # Given an artifact with three versions, a canary on prod and staging on the newest
    # When its page is opened
    open_console(page, arca_url, f"/a/{registry.api}")

    # Then every version is listed, newest first, with the aliases that point at it
    rows = page.locator("table.versions tbody tr")
    expect(rows).to_have_count(3)
    expect(rows.nth(0)).to_contain_text("v3")
    expect(rows.nth(0).get_by_role("link", name="staging")).to_be_visible()
    expect(rows.nth(2)).to_contain_text("v1")
    # and each alias shows its traffic split: prod 90/10 between 2 and 3, staging all on 3
    aliases = page.get_by_role("region", name="Aliases")
    expect(aliases.get_by_role("img", name="90% to v2, 10% to v3")).to_be_visible()
    expect(aliases.get_by_role("img", name="100% to v3")).to_be_visible()
    # and the events section lists the feed, newest first: four alias writes and three publishes (LATEST, then
    # the version each time)
    events = page.get_by_role("region", name="Events").locator("tbody tr")
    expect(events).to_have_count(10)
    expect(events.nth(0)).to_contain_text("alias.updated")
    expect(events.nth(8)).to_contain_text("version.published")
    expect(events.nth(9)).to_contain_text("latest.updated")
    screenshot(page, "artifact")


def test_version_page_shows_content_metadata_and_aliases(
    page: Page, arca_url: str, registry: Registry, screenshot: Screenshot
) -> None:
    # When version 2 of the artifact is opened from its versions table
    open_console(page, arca_url, f"/a/{registry.api}")
    page.get_by_role("link", name="v2", exact=True).first.click()

    # Then its content, metadata and aliases are shown
    expect(page).to_have_url(re.compile(f"#/a/{registry.api}/versions/2$"))
    expect(page.get_by_role("heading", level=1)).to_contain_text("v2")
    metadata = page.get_by_role("region", name="Metadata")
    expect(metadata.get_by_role("row", name="commit 9be0d11")).to_be_visible()
    expect(metadata.get_by_role("row", name="branch main")).to_be_visible()
    content = page.get_by_role("region", name="Content")
    expect(content).to_contain_text("application/zip")
    expect(content).to_contain_text("(42000 bytes)")
    expect(content.get_by_role("link", name="prod")).to_be_visible()
    screenshot(page, "version")


def test_alias_page_shows_its_history_as_a_timeline(
    page: Page, arca_url: str, registry: Registry, screenshot: Screenshot
) -> None:
    # When prod's page is opened
    open_console(page, arca_url, f"/a/{registry.api}/aliases/prod")

    # Then the current split is drawn and the three revisions are listed newest first, with who and why
    expect(page.get_by_role("region", name="Now").get_by_role("img")).to_have_accessible_name("90% to v2, 10% to v3")
    entries = page.get_by_role("region", name="History").get_by_role("listitem")
    expect(entries).to_have_count(3)
    expect(entries.nth(0)).to_contain_text("revision 3")
    expect(entries.nth(0)).to_contain_text("v2 + canary v3 at 10%")
    expect(entries.nth(0)).to_contain_text("current")
    expect(entries.nth(1)).to_contain_text("ship the retry fix")
    expect(entries.nth(2)).to_contain_text("revision 1")
    expect(entries.nth(2)).to_contain_text("first release")
    expect(entries.nth(2)).to_contain_text("user/local")
    # and no rollout section while the API has no rollout route
    expect(page.get_by_role("region", name="Rollout")).to_have_count(0)
    screenshot(page, "alias")


def test_promote_through_the_ui_moves_the_alias_and_adds_a_revision(
    page: Page, arca_url: str, arca: ArcaHttp, registry: Registry, screenshot: Screenshot
) -> None:
    # Given prod at 2 with 3 as a 10% canary
    open_console(page, arca_url, f"/a/{registry.api}/aliases/prod")

    # When the canary is promoted and the dialog confirmed with a reason
    page.get_by_role("button", name="Promote v3…").click()
    dialog = page.get_by_role("dialog", name="Promote v3 on prod?")
    expect(dialog).to_be_visible()
    dialog.get_by_label("Reason").fill("canary looked healthy")
    screenshot(page, "promote-dialog", full_page=False)
    dialog.get_by_role("button", name="Promote v3").click()

    # Then the page says so and draws prod wholly on 3
    expect(dialog).to_be_hidden()
    expect(page.get_by_role("status")).to_contain_text("prod → v3 (revision 4)")
    expect(page.get_by_role("region", name="Now").get_by_role("img")).to_have_accessible_name("100% to v3")
    screenshot(page, "promoted")
    # and the API agrees: prod points at 3 with no canary, and its history has the new revision
    alias = arca.get(f"/artifacts/{registry.api}/aliases/prod").json()
    assert (alias["version"], alias["secondary_version"], alias["revision"]) == (3, None, 4)
    newest = arca.get(f"/artifacts/{registry.api}/aliases/prod/history").json()["history"][0]
    assert (newest["revision"], newest["version"], newest["reason"]) == (4, 3, "canary looked healthy")


def test_rollback_through_the_ui_restores_the_previous_target(
    page: Page, arca_url: str, arca: ArcaHttp, registry: Registry
) -> None:
    # Given prod at revision 3 (2 + canary 3), after revision 2 (2 alone)
    open_console(page, arca_url, f"/a/{registry.api}/aliases/prod")

    # When it is rolled back and confirmed
    page.get_by_role("button", name="Roll back…").click()
    dialog = page.get_by_role("dialog", name="Roll prod back to revision 2?")
    dialog.get_by_role("button", name="Roll back").click()

    # Then the canary is gone, as a new revision 4
    expect(page.get_by_role("status")).to_contain_text("prod rolled back: v2 (revision 4)")
    alias = arca.get(f"/artifacts/{registry.api}/aliases/prod").json()
    assert (alias["version"], alias["secondary_version"], alias["revision"]) == (2, None, 4)


def test_api_errors_are_shown_to_the_user(
    page: Page, arca_url: str, arca: ArcaHttp, registry: Registry, screenshot: Screenshot
) -> None:
    # Given version 2, which prod points at
    open_console(page, arca_url, f"/a/{registry.api}/versions/2")

    # When it is deleted through the console
    page.get_by_role("button", name="Delete…").click()
    dialog = page.get_by_role("dialog", name="Delete v2")
    dialog.get_by_role("button", name="Delete").click()

    # Then the API's refusal is shown in the dialog, code, message and request id, and nothing changed
    error = dialog.get_by_role("alert")
    expect(error).to_contain_text("VersionPinnedError")
    expect(error).to_contain_text("prod")
    expect(error).to_contain_text("request id")
    screenshot(page, "error", full_page=False)
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    assert arca.get(f"/artifacts/{registry.api}/versions/2").json()["deleted"] is False

    # and a page of an artifact that does not exist says why
    open_console(page, arca_url, f"/a/{registry.root}/nothing-here")
    expect(page.get_by_role("heading", level=1)).to_have_text("Not found")
    expect(page.get_by_role("main")).to_contain_text("NotFoundError")


def test_delete_and_restore_a_version_through_the_ui(
    page: Page, arca_url: str, arca: ArcaHttp, registry: Registry
) -> None:
    # Given version 1, which no alias points at any more
    open_console(page, arca_url, f"/a/{registry.api}/versions/1")

    # When it is deleted, then restored, each confirmed
    page.get_by_role("button", name="Delete…").click()
    page.get_by_role("dialog").get_by_role("button", name="Delete").click()
    expect(page.get_by_role("status")).to_contain_text("v1 deleted")
    assert arca.get(f"/artifacts/{registry.api}/versions/1").json()["deleted"] is True
    page.get_by_role("button", name="Restore…").click()
    page.get_by_role("dialog").get_by_role("button", name="Restore").click()

    # Then the API has it back
    expect(page.get_by_role("status")).to_contain_text("v1 restored")
    assert arca.get(f"/artifacts/{registry.api}/versions/1").json()["deleted"] is False


def test_events_and_rollout_sections_appear_once_the_api_answers_them(
    page: Page, arca_url: str, registry: Registry, screenshot: Screenshot
) -> None:
    # Given an API that knows the events and rollout routes (answered here by the browser itself)
    events = {
        "events": [
            {"id": "1", "type": "version.published", "at": "2026-05-01T12:00:00Z", "by": "arn:aws:iam::1:user/ci",
             "name": registry.api, "version": 3, "detail": {}},
            {"id": "2", "type": "alias.updated", "at": "2026-05-01T12:05:00Z", "by": "arn:aws:iam::1:user/ci",
             "name": registry.api, "alias": "prod", "detail": {}},
        ],
        "next_token": None,
    }  # fmt: skip
    rollout = {
        "state": "running", "version": 3, "steps": [10, 25, 50], "step": 1, "weight": 10,
        "next_at": "2026-05-01T12:10:00Z", "started_at": "2026-05-01T12:05:00Z", "reason": "gradual",
    }  # fmt: skip

    def answer(body: object) -> Callable[[Route], None]:
        return lambda route: route.fulfill(status=200, content_type="application/json", body=json.dumps(body))

    page.route(f"**/artifacts/{registry.api}/events", answer(events))
    page.route(f"**/artifacts/{registry.api}/aliases/prod/rollout", answer(rollout))

    # When the artifact and the alias pages are opened
    open_console(page, arca_url, f"/a/{registry.api}")
    section = page.get_by_role("region", name="Events")
    expect(section.get_by_role("row")).to_have_count(3)
    expect(section).to_contain_text("alias.updated")
    open_console(page, arca_url, f"/a/{registry.api}/aliases/prod")

    # Then each shows its section
    rollout_section = page.get_by_role("region", name="Rollout")
    expect(rollout_section).to_contain_text("running")
    expect(rollout_section.locator(".steps li.at")).to_have_text("10%")
    screenshot(page, "rollout")


def test_local_server_serves_the_console_files(arca_url: str) -> None:
    host = urlsplit(arca_url).netloc

    def request(method: str, path: str) -> http.client.HTTPResponse:
        connection = http.client.HTTPConnection(host, timeout=HTTP_TIMEOUT)
        connection.request(method, path)  # sent as written: no client-side normalisation of `..`
        response = connection.getresponse()
        response.read()
        connection.close()
        return response

    redirect = request("GET", "/console")
    assert (redirect.status, redirect.getheader("Location")) == (301, "/console/")
    assert request("GET", "/console/").getheader("Content-Type") == "text/html; charset=utf-8"
    assert request("GET", "/console/app.js").getheader("Content-Type") == "text/javascript; charset=utf-8"
    assert request("GET", "/console/style.css").status == 200
    assert request("GET", "/console/../server.py").status == 404
    assert request("GET", "/console/%2e%2e/server.py").status == 404
    assert request("GET", "/console/missing.js").status == 404
    assert request("POST", "/console/").status == 405


def test_the_retention_card_shows_the_policy_and_why_each_version_stays(
    page: Page, arca: ArcaHttp, arca_url: str, registry: Registry, screenshot: Screenshot
) -> None:
    # Given an artifact without a policy, its page says so
    open_console(page, arca_url, f"/a/{registry.api}")
    card = page.get_by_role("region", name="Retention")
    expect(card).to_contain_text("No retention policy")
    # When a policy keeping only the newest version (and no rollback window) is set and the page opened again
    body = {"keep_last": 1, "rollback_window": 0}
    assert arca.put(f"/artifacts/{registry.api}/retention", json=body).status_code == 200
    page.reload()
    # Then the card lists each version with what applying the policy would do, and why the others stay
    card = page.get_by_role("region", name="Retention")
    expect(card).to_contain_text("Applying it now: 1 to delete, 0 to expire, 2 kept")
    rows = card.locator("table.retention tbody tr")
    expect(rows).to_have_count(3)
    expect(rows.nth(0)).to_contain_text("alias:prod:secondary")
    expect(rows.nth(0)).to_contain_text("alias:staging")
    expect(rows.nth(0)).to_contain_text("newest:1")
    expect(rows.nth(1)).to_contain_text("alias:prod")
    expect(rows.nth(2)).to_contain_text("delete")
    screenshot(page, "retention")
