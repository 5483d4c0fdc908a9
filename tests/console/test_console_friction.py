"""The console where a policy guards an alias: the canary's button asks for a promotion instead of a move the
policy would refuse, Protection comes first, the landing page marks protected aliases and waiting promotions,
no field is red before anyone typed, compare shows empty tag values and attestations in words, and events name
who acted. Screenshots at 1280 and 700 px."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.console.conftest import Registry, open_console
from tests.console.test_console_registry import Screenshot, both_widths
from tests.e2e.conftest import ArcaHttp

ALICE, BOB = {"X-Arca-Local-User": "alice"}, {"X-Arca-Local-User": "bob"}


def _guard(arca: ArcaHttp, registry: Registry) -> str:
    """prod (v2 with canary v3 at 10%) guarded by one approval; returns prod's path."""
    prod = f"/artifacts/{registry.api}/aliases/prod"
    assert arca.put(f"{prod}/policy", json={"approvals": 1}).ok
    return prod


def test_a_guarded_alias_asks_for_a_promotion_and_shows_its_protection_first(
    page: Page, arca_url: str, arca: ArcaHttp, registry: Registry, screenshot: Screenshot
) -> None:
    # Given prod guarded by one approval, with v3 as its canary
    prod = _guard(arca, registry)
    open_console(page, arca_url, f"/a/{registry.api}/aliases/prod")
    # Then the canary's button asks for a promotion (a direct move would be refused), and Protection comes before
    # what the buttons would change
    expect(page.get_by_role("button", name="Promote v3…")).to_have_count(0)
    request = page.get_by_role("button", name="Request promotion of v3…")
    expect(request).to_be_visible()
    headings = page.locator("main h2").all_inner_texts()
    assert headings.index("Protection") < headings.index("What would change"), headings
    expect(page.get_by_role("heading", level=1)).to_contain_text("protected")
    expect(page.get_by_role("region", name="Set")).to_contain_text("Its policy refuses a direct move")
    # and the empty version field of the request form is not drawn as an error before anyone typed in it
    field = page.get_by_label("Request a promotion to version")
    assert field.evaluate("e => getComputedStyle(e).borderTopColor") != _danger(page)
    both_widths(page, screenshot, "alias-guarded")
    # and a direct move, tried anyway, is refused in the console's words (no API route)
    setting = page.get_by_role("region", name="Set")
    setting.get_by_label("Version", exact=True).fill("1")
    setting.get_by_label("Canary version").fill("")
    setting.get_by_role("button", name="Set…").click()
    dialog = page.get_by_role("dialog", name="Set prod?")
    dialog.get_by_role("button", name="Set alias").click()
    expect(dialog.get_by_role("alert")).to_contain_text("ask with Request promotion (under Protection)")
    expect(dialog.get_by_role("alert")).not_to_contain_text("POST")
    dialog.get_by_role("button", name="Cancel").click()
    field.fill("x")
    field.blur()
    assert field.evaluate("e => getComputedStyle(e).borderTopColor") == _danger(page)

    # When the canary's promotion is requested
    request.click()
    dialog = page.get_by_role("dialog", name="Promote prod to v3?")
    expect(dialog).to_contain_text("approved by 1 other identity")
    dialog.get_by_role("button", name="Request").click()
    # Then it is pending, and listed for approval
    expect(page.get_by_role("status")).to_contain_text(re.compile(r"promotion \w+: pending"))
    (pending,) = arca.get(f"{prod}/promotions", params={"state": "pending"}).json()["promotions"]
    assert pending["version"] == 3
    expect(page.get_by_role("region", name="Protection").locator("table.promotions tbody tr")).to_have_count(1)


def _danger(page: Page) -> str:
    """The computed colour of the console's danger colour (the border of a field in error)."""
    return str(
        page.evaluate(
            "() => { const probe = document.createElement('span'); probe.style.color = 'var(--danger)';"
            " document.body.append(probe); const colour = getComputedStyle(probe).color; probe.remove();"
            " return colour; }"
        )
    )


def test_the_landing_page_marks_protected_aliases_and_waiting_promotions(
    page: Page, arca_url: str, arca: ArcaHttp, registry: Registry, screenshot: Screenshot
) -> None:
    # Given prod guarded, with alice's promotion waiting
    prod = _guard(arca, registry)
    assert arca.post(f"{prod}/promotions", json={"version": 3}, headers=ALICE).status_code == 201
    # When the registry is shown for the test's folder
    open_console(page, arca_url, f"/?q={registry.root}/")
    # Then prod says it is protected and one promotion waits; staging says nothing of the kind
    api = page.locator("table.registry tbody tr").nth(0)
    prod_entry = api.locator(".alias-entry").filter(has=page.get_by_role("link", name="prod v2 90% · v3 10%"))
    expect(prod_entry.locator(".chip.guard")).to_have_text("protected")
    expect(prod_entry.locator(".chip.pending")).to_have_text("1 pending")
    staging_entry = api.locator(".alias-entry").filter(has=page.get_by_role("link", name="staging v3"))
    expect(staging_entry.locator(".chip.guard")).to_have_count(0)
    both_widths(page, screenshot, "registry-guarded")


def test_compare_shows_an_empty_tag_value_and_attestations_in_words(
    page: Page, arca_url: str, arca: ArcaHttp, registry: Registry, screenshot: Screenshot
) -> None:
    # Given v3 with an empty tag value and an attestation, v2 with neither
    versions = f"/artifacts/{registry.api}/versions"
    assert arca.request("PATCH", f"{versions}/3", json={"tags": {"reviewed": ""}}).ok
    assert arca.post(f"{versions}/3/attestations", json={"type": "test-report", "content": {"passed": 3}}).ok
    # When
    open_console(page, arca_url, f"/a/{registry.api}/versions/2/compare/3")
    # Then
    changes = page.locator("table.diff")
    tag_row = changes.locator("tr").filter(has=page.get_by_role("rowheader", name="tags.reviewed"))
    expect(tag_row.locator("td.to")).to_have_text('"" (empty)')
    attestations = changes.locator("tr").filter(has=page.get_by_role("rowheader", name="attestations"))
    expect(attestations.locator("td.to .chip")).to_have_text("test-report")
    expect(attestations).not_to_contain_text("[")
    both_widths(page, screenshot, "compare-tags-attestations")


def test_events_name_the_approver_and_an_aborted_rollout(
    page: Page, arca_url: str, arca: ArcaHttp, registry: Registry, screenshot: Screenshot
) -> None:
    # Given alice's promotion of prod approved by bob, and a rollout on staging aborted
    prod = _guard(arca, registry)
    promotion = arca.post(f"{prod}/promotions", json={"version": 3}, headers=ALICE).json()
    assert arca.post(f"{prod}/promotions/{promotion['id']}/approve", json={}, headers=BOB).ok
    staging = f"/artifacts/{registry.api}/aliases/staging"
    assert arca.put(f"{staging}/rollout", json={"version": 2, "steps": [10], "interval_seconds": 3600}).ok
    assert arca.request("DELETE", f"{staging}/rollout").ok
    # When the artifact's page is opened
    open_console(page, arca_url, f"/a/{registry.api}")
    # Then the approval names bob, and the abort is called so
    events = page.get_by_role("region", name="Events").locator("tbody tr")
    approved = events.filter(has_text="promotion.approved")
    expect(approved).to_contain_text("user/bob")
    expect(events.filter(has_text="rollout.aborted")).to_have_count(1)
    expect(events.filter(has_text="rollout.rolled_back")).to_have_count(0)
    both_widths(page, screenshot, "artifact-events")
