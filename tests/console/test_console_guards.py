"""The console's protection of an alias: its policy in words, pending promotions with Approve / Reject, and a
refused promotion's violations in words."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.console.conftest import Registry, open_console
from tests.e2e.conftest import ArcaHttp


def test_an_alias_page_shows_its_policy_and_approves_a_pending_promotion(
    page: Page, arca_url: str, arca: ArcaHttp, registry: Registry
) -> None:
    # Given a policy of one approval and a required tag on staging, and alice's pending promotion to 3
    staging = f"/artifacts/{registry.api}/aliases/staging"
    policy = {"approvals": 1, "require_tags": {"qa": "passed"}}
    assert arca.put(f"{staging}/policy", json=policy).ok
    assert arca.request("PATCH", f"/artifacts/{registry.api}/versions/2", json={"tags": {"qa": "passed"}}).ok
    alice = {"X-Arca-Local-User": "alice"}
    promotion = arca.post(f"{staging}/promotions", json={"version": 2}, headers=alice).json()
    open_console(page, arca_url, f"/a/{registry.api}/aliases/staging")
    protection = page.get_by_role("region", name="Protection")
    expect(protection).to_contain_text("Versions must be tagged qa=passed.")
    expect(protection).to_contain_text("approved by 1 other identity.")

    # When an untagged version is requested, the refusal names each violated rule in words
    protection.get_by_label("Request a promotion to version").fill("1")
    protection.get_by_role("button", name="Request promotion…").click()
    dialog = page.get_by_role("dialog", name="Promote staging to v1?")
    dialog.get_by_role("button", name="Request").click()
    expect(dialog.get_by_role("alert")).to_contain_text("PolicyViolation")
    expect(dialog.get_by_role("alert")).to_contain_text("require_tags: version 1 lacks qa=passed")
    dialog.get_by_role("button", name="Cancel").click()

    # When alice's promotion is approved (the console's user is not alice)
    protection.get_by_role("button", name="Approve…").click()
    page.get_by_role("dialog", name="Approve the promotion of staging to v2?").get_by_role(
        "button", name="Approve"
    ).click()

    # Then it is applied: staging is on 2, moved as alice
    expect(page.get_by_role("status")).to_contain_text(f"promotion {promotion['id']}: applied")
    alias = arca.get(staging).json()
    assert alias["version"] == 2 and alias["updated_by"].endswith("user/alice")
