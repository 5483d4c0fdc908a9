// Consumer leases (who runs which version, until when), all from GET …/consumers[?version=N]: the Consumers card
// of an artifact's and a version's page, and the "N consumers still on vX" lines of the alias page and the
// previews. A lapsed lease is never listed by the API; an API without the route (404/405) shows none of this.
import { artifactPath, get, optional } from "./api.js";
import { chip, h, moreButton, muted, section, table, versionLink, vlabel } from "./ui.js";

const isList = (data) => Array.isArray(data?.consumers);
const PAGE = 50; // leases a page of the Consumers card shows
const READ = 100; // leases a read for a count asks for (the API's largest page)
const PAGES_PER_VERSION = 3; // a version holds at most 250 live leases: 3 reads of 100 count them all
const PAGES_PER_ARTIFACT = 10; // an artifact at most 1000
export const IDS_SHOWN = 10; // ids a "still on" line names before "and N more"

/** "in 23 hours" (or "lapsing now") for a time to come; the API's UTC time on hover. */
export function expiresIn(iso) {
  let value = Math.round((Date.parse(iso) - Date.now()) / 1000);
  if (!Number.isFinite(value)) return muted("–");
  let text = "lapsing now";
  if (value > 0) {
    for (const [size, unit] of [
      [60, "second"],
      [60, "minute"],
      [24, "hour"],
      [Infinity, "day"],
    ]) {
      if (value < size) {
        text = `in ${value} ${unit}${value === 1 ? "" : "s"}`;
        break;
      }
      value = Math.floor(value / size);
    }
  }
  return h("time", { datetime: iso, title: `${iso.slice(0, 19).replace("T", " ")} UTC` }, text);
}

const labelChips = (labels) => {
  const entries = Object.entries(labels ?? {});
  return entries.length ? entries.map(([k, v]) => chip(v === "" ? k : `${k}=${v}`, "label")) : muted("–");
};

/**
 * The Consumers card: the live leases (of one version when `version` is given), PAGE at a time with a
 * "More consumers" button; null when the API has no consumers route.
 */
export async function consumersSection(name, version) {
  const query = (token) => ({ version, limit: PAGE, next_token: token });
  const first = await optional(artifactPath(name, "consumers"), isList, query());
  if (!first) return null;
  const body = h("tbody");
  const footer = h("div", { class: "table-footer" });
  const headers = ["Consumer", ...(version === undefined ? ["Version"] : []), "Labels", "Expires"];
  function add(page) {
    for (const lease of page.consumers) {
      body.append(
        h(
          "tr",
          {},
          h("td", {}, h("code", { class: "consumer" }, lease.consumer)),
          version === undefined ? h("td", {}, versionLink(name, lease.version)) : null,
          h("td", {}, labelChips(lease.labels)),
          h("td", {}, expiresIn(lease.expires_at)),
        ),
      );
    }
    const next = async () => add(await get(artifactPath(name, "consumers"), query(page.next_token)));
    footer.replaceChildren(page.next_token ? moreButton("More consumers", next) : "");
  }
  add(first);
  const none =
    version === undefined
      ? "No consumer holds a live lease on this artifact."
      : `No consumer holds a live lease on ${vlabel(version)}.`;
  return section(
    "Consumers",
    h("p", { class: "muted small" }, "Live leases: who runs which version, until the lease lapses unless renewed."),
    first.consumers.length ? table("consumers", headers, body) : h("p", { class: "muted empty-consumers" }, none),
    footer,
  );
}

/** Every live lease on `version` (up to what the API allows a version), or null without the route. */
export async function leasesOn(name, version) {
  const path = artifactPath(name, "consumers");
  const first = await optional(path, isList, { version, limit: READ });
  if (!first) return null;
  const leases = [...first.consumers];
  let token = first.next_token;
  for (let read = 1; token && read < PAGES_PER_VERSION; read += 1) {
    const page = await get(path, { version, limit: READ, next_token: token });
    leases.push(...page.consumers);
    token = page.next_token;
  }
  return { leases, more: Boolean(token) };
}

/** The live leases of the artifact grouped by version (Map version → consumer ids), or null without the route. */
export async function leasesByVersion(name) {
  const path = artifactPath(name, "consumers");
  const first = await optional(path, isList, { limit: READ });
  if (!first) return null;
  const leases = [...first.consumers];
  let token = first.next_token;
  for (let read = 1; token && read < PAGES_PER_ARTIFACT; read += 1) {
    const page = await get(path, { limit: READ, next_token: token });
    leases.push(...page.consumers);
    token = page.next_token;
  }
  const byVersion = new Map();
  for (const lease of leases) byVersion.set(lease.version, [...(byVersion.get(lease.version) ?? []), lease.consumer]);
  return byVersion;
}

/** The first IDS_SHOWN ids as code, then "and N more". */
export function idList(ids, more = false) {
  const shown = ids.slice(0, IDS_SHOWN);
  const rest = ids.length - shown.length;
  const parts = [];
  shown.forEach((id, i) => parts.push(i ? ", " : "", h("code", { class: "consumer" }, id)));
  if (rest > 0 || more) parts.push(more ? ` and more` : ` and ${rest} more`);
  return parts;
}

/** "3 consumers still on v7: a, b, c" (`more`: the count is a lower bound), or "no consumers on v7". */
export function stillOn(version, ids, more = false, context = "") {
  const count = `${ids.length}${more ? "+" : ""}`;
  if (!ids.length) return h("p", { class: "still-on muted" }, `No consumers on ${vlabel(version)}${context}.`);
  return h(
    "p",
    { class: "still-on" },
    h("strong", {}, `${count} consumer${ids.length === 1 && !more ? "" : "s"} still on ${vlabel(version)}`),
    context,
    ": ",
    idList(ids, more),
  );
}

/** The live leases on each of `versions` (numbers; others skipped): Map version → {ids, more}, read in
 * parallel; null when the API has no consumers route. */
export async function leasesOnEach(name, versions) {
  const numbers = [...new Set(versions.filter((v) => typeof v === "number"))];
  const found = await Promise.all(numbers.map((v) => leasesOn(name, v)));
  if (found.some((f) => f === null)) return null;
  const ids = (i) => found[i].leases.map((lease) => lease.consumer);
  return new Map(numbers.map((v, i) => [v, { ids: ids(i), more: found[i].more }]));
}
