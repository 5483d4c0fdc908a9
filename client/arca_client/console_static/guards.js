// An alias's protection: its policy in words, its pending promotions with Approve / Reject, and a form to
// request one. A refusal by the policy shows each violated rule in words (errorText lists them).

import { api, artifactPath, optional } from "./api.js";
import { button, confirmAction, flash, h, muted, section, table, vlabel, when, who } from "./ui.js";

/** The policy's rules, one sentence each. */
export function policyLines(policy) {
  const lines = [];
  if (policy.allowed_principals?.length)
    lines.push(`Only ${policy.allowed_principals.join(", ")} may move it, promote or change this policy.`);
  const tags = Object.entries(policy.require_tags ?? {});
  if (tags.length) lines.push(`Versions must be tagged ${tags.map(([k, v]) => `${k}=${v}`).join(", ")}.`);
  if (policy.require_attestations?.length)
    lines.push(`Versions must have attestations of type ${policy.require_attestations.join(", ")}.`);
  if (policy.require_soak)
    lines.push(
      `Versions must have been the primary of ${policy.require_soak.alias} for ${policy.require_soak.seconds} s.`,
    );
  if (policy.require_rollout) lines.push("A new version arrives only through a rollout.");
  if (policy.approvals)
    lines.push(
      `It moves only through a promotion approved by ${policy.approvals} other ` +
        `${policy.approvals === 1 ? "identity" : "identities"}.`,
    );
  return lines.length ? lines : ["No rules."];
}

async function decide(name, aliasName, promotion, verb) {
  const result = await confirmAction({
    title: `${verb === "approve" ? "Approve" : "Reject"} the promotion of ${aliasName} to ${vlabel(promotion.version)}?`,
    body: h(
      "p",
      {},
      `Requested by ${promotion.requested_by ?? "?"}; approvals ${promotion.approvals.length} of ` +
        `${promotion.required_approvals}.`,
    ),
    confirmLabel: verb === "approve" ? "Approve" : "Reject",
    danger: verb === "reject",
    run: (reason) =>
      api("POST", artifactPath(name, "aliases", aliasName, "promotions", promotion.id, verb), { body: { reason } }),
  });
  if (result === null) return;
  flash(`promotion ${promotion.id}: ${result.state}`);
  window.dispatchEvent(new Event("arca:changed"));
}

/** Ask for a promotion of `aliasName` to `version` (a confirmation first); the promotion's state is flashed. */
export async function requestPromotion(name, aliasName, version, body) {
  const result = await confirmAction({
    title: `Promote ${aliasName} to v${version}?`,
    body,
    confirmLabel: "Request",
    run: (reason) =>
      api("POST", artifactPath(name, "aliases", aliasName, "promotions"), { body: { version: Number(version), reason } }),
  });
  if (result === null) return;
  flash(`promotion ${result.id}: ${result.state}`);
  window.dispatchEvent(new Event("arca:changed"));
}

function requestForm(name, aliasName) {
  const version = h("input", {
    id: "promote-version",
    required: true,
    pattern: "[0-9]{1,6}",
    inputmode: "numeric",
    placeholder: "3",
    autocomplete: "off",
  });
  const form = h(
    "form",
    { class: "set-form" },
    h("label", { for: "promote-version" }, "Request a promotion to version"),
    version,
    h("button", { type: "submit", class: "primary" }, "Request promotion…"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    requestPromotion(
      name,
      aliasName,
      version.value,
      h("p", {}, "Applied at once when the policy asks for no approvals; pending otherwise."),
    );
  });
  return form;
}

/** The alias's policy and its pending promotions, read once for the whole page: {policy, pending}. */
export async function readProtection(name, aliasName) {
  const path = artifactPath(name, "aliases", aliasName);
  const [policy, pending] = await Promise.all([
    optional(`${path}/policy`, (data) => typeof data?.revision === "number"),
    optional(`${path}/promotions`, (data) => Array.isArray(data?.promotions), { state: "pending" }),
  ]);
  return { policy, pending: pending?.promotions ?? [] };
}

/** The "Protection" section of an alias's page, from `readProtection`. */
export function protectionSection(name, aliasName, { policy, pending }) {
  const rules = policy
    ? [
        h("ul", { class: "policy" }, policyLines(policy).map((line) => h("li", {}, line))),
        h("p", { class: "small muted" }, `Policy revision ${policy.revision}, set `, when(policy.updated_at), " by ",
          who(policy.updated_by)),
      ]
    : [h("p", { class: "muted" }, "No policy: anyone allowed by IAM may move this alias.")];
  const promotions = pending;
  const body = h("tbody");
  for (const p of promotions) {
    body.append(
      h(
        "tr",
        {},
        h("td", {}, vlabel(p.version)),
        h("td", {}, who(p.requested_by)),
        h("td", {}, `${p.approvals.length} / ${p.required_approvals}`),
        h("td", {}, when(p.expires_at)),
        h(
          "td",
          { class: "actions" },
          button("Approve…", () => decide(name, aliasName, p, "approve"), "primary"),
          button("Reject…", () => decide(name, aliasName, p, "reject")),
        ),
      ),
    );
  }
  return section(
    "Protection",
    ...rules,
    h("h3", {}, "Pending promotions"),
    promotions.length
      ? table("promotions", ["Version", "Requested by", "Approvals", "Expires (UTC)", ""], body)
      : muted("None."),
    requestForm(name, aliasName),
  );
}
