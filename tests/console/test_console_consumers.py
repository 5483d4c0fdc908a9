"""Consumer leases in the console: the Consumers card of an artifact's and a version's page (paged, labels shown as
text), the "N consumers still on vX" lines of an alias page and of its preview, and the consumers on each version of
the retention preview; leases taken over HTTP against the local server."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Page, Route, expect

from tests.console.conftest import Registry, open_console
from tests.e2e.conftest import ArcaHttp

Screenshot = Callable[..., Path]
WIDE, NARROW = {"width": 1280, "height": 900}, {"width": 700, "height": 900}


def lease(arca: ArcaHttp, name: str, consumer: str, version: int, labels: dict[str, str] | None = None) -> None:
    body: dict[str, object] = {"version": version}
    if labels is not None:
        body["labels"] = labels
    reply = arca.put(f"/artifacts/{name}/consumers/{consumer}", json=body)
    assert reply.status_code == 200, reply.text


def fits_narrow(page: Page, screenshot: Screenshot, name: str) -> None:
    page.set_viewport_size(WIDE)
    screenshot(page, f"{name}-1280")
    page.set_viewport_size(NARROW)
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    screenshot(page, f"{name}-700")
    page.set_viewport_size(WIDE)
    assert overflow <= 0, f"{name}: {overflow} px wider than a 700 px window"


def test_artifact_page_lists_the_live_leases_page_by_page_with_labels_as_text(
    page: Page, arca_url: str, arca: ArcaHttp, registry: Registry, screenshot: Screenshot
) -> None:
    # Given an artifact nobody runs, its page says so
    open_console(page, arca_url, f"/a/{registry.worker}")
    card = page.get_by_role("region", name="Consumers")
    expect(card).to_contain_text("No consumer holds a live lease on this artifact.")
    expect(card.locator("table")).to_have_count(0)

    # When 52 consumers take leases on the api (one with a label that is markup) and its page is opened
    markup = '<img src=x onerror="window.__leaked=1">'
    lease(arca, registry.api, "ecs:prod.api-00", 2, {"team": markup, "region": "eu-west-1"})
    for number in range(1, 52):
        lease(arca, registry.api, f"ecs:prod.api-{number:02d}", 3 if number % 2 else 2)
    open_console(page, arca_url, f"/a/{registry.api}")

    # Then the first 50 leases are listed in consumer order: consumer, version, labels, when it expires
    card = page.get_by_role("region", name="Consumers")
    rows = card.locator("table.consumers tbody tr")
    expect(rows).to_have_count(50)
    expect(card.locator("thead th")).to_have_text(["Consumer", "Version", "Labels", "Expires"])
    first = rows.nth(0)
    expect(first.locator("td").nth(0)).to_have_text("ecs:prod.api-00")
    expect(first.get_by_role("link", name="v2", exact=True)).to_have_attribute("href", f"#/a/{registry.api}/versions/2")
    expect(first).to_contain_text(f"team={markup}")  # the label is text, never markup
    expect(first).to_contain_text("region=eu-west-1")
    expect(first.locator("td").nth(3)).to_have_text(re.compile(r"^in (23 hours|24 hours|1 day)$"))
    expect(first.locator("td time")).to_have_attribute("datetime", re.compile(r"^\d{4}-\d\d-\d\dT"))
    assert page.evaluate("window.__leaked === undefined")
    assert card.locator("img").count() == 0
    expect(rows.nth(1).get_by_role("link", name="v3", exact=True)).to_be_visible()
    fits_narrow(page, screenshot, "consumers-artifact")

    # And "More consumers" adds the last two, then goes away
    card.get_by_role("button", name="More consumers").click()
    expect(rows).to_have_count(52)
    expect(rows.nth(51).locator("td").nth(0)).to_have_text("ecs:prod.api-51")
    expect(card.get_by_role("button", name="More consumers")).to_have_count(0)


def test_version_page_lists_the_consumers_on_that_version_only(
    page: Page, arca_url: str, arca: ArcaHttp, registry: Registry, screenshot: Screenshot
) -> None:
    # Given two consumers on version 3 and one on version 2
    lease(arca, registry.api, "lambda:us-east-1:checkout", 3, {"stage": "prod"})
    lease(arca, registry.api, "ecs:prod.payments", 3)
    lease(arca, registry.api, "ecs:staging.payments", 2)
    # When version 3's page is opened
    open_console(page, arca_url, f"/a/{registry.api}/versions/3")
    # Then its Consumers card lists those two (no version column: they are all on v3)
    card = page.get_by_role("region", name="Consumers")
    rows = card.locator("table.consumers tbody tr")
    expect(rows).to_have_count(2)
    expect(card.locator("thead th")).to_have_text(["Consumer", "Labels", "Expires"])
    expect(rows.nth(0)).to_contain_text("ecs:prod.payments")
    expect(rows.nth(1)).to_contain_text("lambda:us-east-1:checkout")
    expect(rows.nth(1)).to_contain_text("stage=prod")
    expect(card).not_to_contain_text("ecs:staging.payments")
    screenshot(page, "consumers-version")
    # And a version nobody runs says so
    open_console(page, arca_url, f"/a/{registry.api}/versions/1")
    expect(page.get_by_role("region", name="Consumers")).to_contain_text("No consumer holds a live lease on v1.")


def test_alias_page_names_the_consumers_still_on_each_version_and_those_a_change_would_leave(
    page: Page, arca_url: str, arca: ArcaHttp, registry: Registry, screenshot: Screenshot
) -> None:
    # Given prod on version 2 with version 3 as a 10% canary; 12 consumers on v2 and one on v3
    for number in range(12):
        lease(arca, registry.api, f"ecs:prod.web-{number:02d}", 2)
    lease(arca, registry.api, "ecs:canary.web", 3)
    # When prod's page is opened
    open_console(page, arca_url, f"/a/{registry.api}/aliases/prod")
    # Then Now names the consumers on each version it serves, the first ten by id
    now = page.get_by_role("region", name="Now")
    lines = now.locator(".still-on")
    expect(lines).to_have_count(2)
    expect(lines.nth(0)).to_have_text(
        "12 consumers still on v2: " + ", ".join(f"ecs:prod.web-{n:02d}" for n in range(10)) + " and 2 more"
    )
    expect(lines.nth(1)).to_have_text("1 consumer still on v3: ecs:canary.web")
    # And the preview names those the promotion (leaving v2) and the rollback (leaving the canary v3) would leave
    preview = page.get_by_role("region", name="What would change")
    expect(preview.locator(".still-on")).to_have_count(2)
    expect(preview.locator(".still-on").nth(0)).to_contain_text("12 consumers still on v2 (it would leave): ")
    expect(preview.locator(".still-on").nth(1)).to_have_text("1 consumer still on v3 (it would leave): ecs:canary.web")
    fits_narrow(page, screenshot, "consumers-alias")

    # And staging (on v3 alone) names the one on v3, with no preview of a change
    open_console(page, arca_url, f"/a/{registry.api}/aliases/staging")
    expect(page.get_by_role("region", name="Now").locator(".still-on")).to_have_text(
        "1 consumer still on v3: ecs:canary.web"
    )


def test_alias_page_after_the_leases_are_released_names_none(
    page: Page, arca_url: str, arca: ArcaHttp, registry: Registry
) -> None:
    # Given a consumer on staging's version 3 that then releases its lease
    lease(arca, registry.api, "ecs:staging.web", 3)
    assert arca.request("DELETE", f"/artifacts/{registry.api}/consumers/ecs:staging.web").status_code == 204
    # When staging's page is opened, then nobody is on v3 any more
    open_console(page, arca_url, f"/a/{registry.api}/aliases/staging")
    expect(page.get_by_role("region", name="Now").locator(".still-on")).to_have_text("No consumers on v3.")


def test_retention_preview_shows_the_consumers_on_each_version(
    page: Page, arca_url: str, arca: ArcaHttp, registry: Registry, screenshot: Screenshot
) -> None:
    # Given a policy keeping only the newest version, and a consumer on version 1 (which the lease keeps)
    assert arca.put(f"/artifacts/{registry.api}/retention", json={"keep_last": 1, "rollback_window": 0}).ok
    lease(arca, registry.api, "ecs:batch.report", 1)
    # When the artifact's page is opened
    open_console(page, arca_url, f"/a/{registry.api}")
    # Then the retention card names the consumer on version 1, which it keeps for that reason
    card = page.get_by_role("region", name="Retention")
    expect(card.locator("thead th")).to_have_text(["Version", "Action", "Why it stays", "Consumers"])
    rows = card.locator("table.retention tbody tr")
    expect(rows).to_have_count(3)
    expect(rows.nth(2)).to_contain_text("keep")
    expect(rows.nth(2).locator("td").nth(2)).to_contain_text("consumer:ecs:batch.report")
    expect(rows.nth(2).locator("td").nth(3)).to_have_text("ecs:batch.report")
    expect(rows.nth(0).locator("td").nth(3)).to_have_text("\N{EN DASH}")
    expect(card.locator(".still-on")).to_have_count(0)
    screenshot(page, "consumers-retention")


def test_retention_preview_warns_of_consumers_on_a_version_it_would_delete(
    page: Page, arca_url: str, arca: ArcaHttp, registry: Registry
) -> None:
    # Given a consumer on version 1 and a preview (read before the lease was taken) that deletes version 1
    assert arca.put(f"/artifacts/{registry.api}/retention", json={"keep_last": 1, "rollback_window": 0}).ok
    lease(arca, registry.api, "ecs:batch.report", 1)

    def stale(route: Route) -> None:
        answer = route.fetch()
        preview = answer.json()
        for row in preview["versions"]:
            if row["version"] == 1:
                row.update(action="delete", reasons=[])
        route.fulfill(response=answer, body=json.dumps(preview))

    page.route(re.compile(r"/retention/preview(\?|$)"), stale)
    # When the artifact's page is opened, then the card warns that the deletion would leave that consumer
    open_console(page, arca_url, f"/a/{registry.api}")
    card = page.get_by_role("region", name="Retention")
    expect(card.locator(".still-on")).to_have_text("1 consumer still on v1 (it would delete): ecs:batch.report")
