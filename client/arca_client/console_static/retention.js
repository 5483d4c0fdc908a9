// The retention card of an artifact's page: its policy and the preview of what applying it now would do,
// with every reason a version stays and the consumers on each version (a live lease keeps its version, so one on a
// version it would delete or expire was taken after the preview was read).
import { artifactPath, optional } from "./api.js";
import { idList, leasesByVersion, stillOn } from "./consumers.js";
import { chip, fields, h, muted, section, table, versionLink } from "./ui.js";

const ACTION_CLASS = { keep: "ok", delete: "warn", expire: "danger" };

/** The card, or a short note when the artifact has no policy (or the API has no retention routes). */
export async function retentionSection(name) {
  let policy;
  try {
    policy = await optional(artifactPath(name, "retention"), (data) => typeof data?.keep_last === "number");
  } catch (error) {
    if (error.status === 409) return null; // a link: the policy is its target's, shown on the target's page
    throw error;
  }
  if (!policy) {
    return section(
      "Retention",
      h(
        "p",
        { class: "muted" },
        "No retention policy: every version is kept. Set one with ",
        h("code", {}, "arca retention set"),
        ".",
      ),
    );
  }
  const isPreview = (data) => Array.isArray(data?.versions);
  const [preview, leases] = await Promise.all([
    optional(artifactPath(name, "retention", "preview"), isPreview, { limit: 100 }),
    leasesByVersion(name),
  ]);
  const rows = preview?.versions ?? [];
  const on = (version) => leases?.get(version) ?? [];
  const leaving = rows.filter((row) => row.action !== "keep" && on(row.version).length);
  const count = (action) => rows.filter((row) => row.action === action).length;
  const rules = fields([
    ["keep newest", String(policy.keep_last)],
    ["keep younger than", policy.keep_days === null || policy.keep_days === undefined ? null : `${policy.keep_days} d`],
    ["keep tagged", (policy.keep_tags ?? []).length ? policy.keep_tags.join(", ") : null],
    ["rollback window", `${policy.rollback_window} revisions`],
    ["expire deleted after", `${policy.expire_after_days} days`],
  ]);
  const summary = h(
    "p",
    { class: "retention-summary" },
    `Applying it now: ${count("delete")} to delete, ${count("expire")} to expire, ${count("keep")} kept`,
    preview?.next_token ? muted(" (the newest 100 versions shown)") : null,
  );
  const warnings = leaving.map((row) => stillOn(row.version, on(row.version), false, ` (it would ${row.action})`));
  const body = h(
    "tbody",
    {},
    rows.map((row) =>
      h(
        "tr",
        {},
        h("td", {}, versionLink(name, row.version), row.deleted ? chip("deleted", "warn") : null),
        h("td", {}, chip(row.action, ACTION_CLASS[row.action] ?? "")),
        h("td", {}, row.reasons.length ? row.reasons.map((reason) => chip(reason)) : muted("–")),
        leases ? h("td", {}, on(row.version).length ? idList(on(row.version)) : muted("–")) : null,
      ),
    ),
  );
  const headers = ["Version", "Action", "Why it stays", ...(leases ? ["Consumers"] : [])];
  return section("Retention", rules, summary, warnings, table("retention", headers, body));
}
