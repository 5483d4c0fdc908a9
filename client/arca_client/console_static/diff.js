// What changed between two versions, from the two version answers alone (the same comparison as `arca diff`):
// size, sha256, content type, each metadata key, each tag, and the attestations when an answer carries them.

import { h, humanSize, muted } from "./ui.js";

const FIELDS = ["size", "sha256", "content_type"];
const MAPPINGS = ["metadata", "tags"];
const canonical = (value) => JSON.stringify(value ?? [], (key, v) => (v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort()) : v));

/** [{field, from, to}] from `before` to `after`; a key on one side only has null on the other. */
export function versionDiff(before, after) {
  const changes = [];
  for (const field of FIELDS) {
    if ((before[field] ?? null) !== (after[field] ?? null)) {
      changes.push({ field, from: before[field] ?? null, to: after[field] ?? null });
    }
  }
  for (const group of MAPPINGS) {
    const old = before[group] ?? {};
    const now = after[group] ?? {};
    for (const key of [...new Set([...Object.keys(old), ...Object.keys(now)])].sort()) {
      if ((old[key] ?? null) !== (now[key] ?? null)) {
        changes.push({ field: `${group}.${key}`, from: old[key] ?? null, to: now[key] ?? null });
      }
    }
  }
  const [oldAtt, newAtt] = [before.attestations, after.attestations];
  if ((oldAtt?.length || newAtt?.length || oldAtt || newAtt) && canonical(oldAtt) !== canonical(newAtt)) {
    changes.push({ field: "attestations", from: oldAtt ?? null, to: newAtt ?? null });
  }
  return changes;
}

function shown(field, value) {
  if (value === null || value === undefined) return muted("(none)");
  if (value === "") return [h("code", {}, '""'), muted(" (empty)")]; // a tag set to an empty value is a value
  if (field === "size") return `${humanSize(value)} (${value} bytes)`;
  if (field === "sha256") return h("code", { class: "wrap", title: value }, value);
  if (field === "attestations") return attestationChips(value);
  return typeof value === "string" ? value : h("code", { class: "wrap" }, JSON.stringify(value));
}

/** A version's attestations as the version answer lists them (their types, or objects naming one), as chips. */
function attestationChips(value) {
  const types = (Array.isArray(value) ? value : [value]).map((a) =>
    typeof a === "string" ? a : (a?.type ?? a?.name ?? JSON.stringify(a)),
  );
  return types.length ? types.map((type) => h("span", { class: "chip" }, type)) : muted("(none)");
}

/** A table of the changes, or a sentence when there are none. */
export function diffTable(changes, beforeLabel, afterLabel) {
  if (!changes.length) {
    return h("p", { class: "muted same" }, "No differences in size, sha256, content type, metadata, tags or attestations.");
  }
  return h(
    "div",
    { class: "scroll" },
    h(
      "table",
      { class: "diff" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Field"), h("th", { scope: "col" }, beforeLabel), h("th", { scope: "col" }, afterLabel))),
      h(
        "tbody",
        {},
        changes.map((c) =>
          h(
            "tr",
            {},
            h("th", { scope: "row" }, h("code", {}, c.field)),
            h("td", { class: "from" }, shown(c.field, c.from)),
            h("td", { class: "to" }, shown(c.field, c.to)),
          ),
        ),
      ),
    ),
  );
}
