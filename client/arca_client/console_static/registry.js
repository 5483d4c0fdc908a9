// The landing page: the registry as a list, one row per artifact (newest version, aliases with their split,
// last change and who made it, tags, which aliases are protected and how many promotions wait), a search box and
// tag filters, paged. Built from existing reads only: one listing page, then per artifact shown its summary, its
// aliases, the events since its last change, and each alias's policy (its pending promotions when it asks for
// approvals).

import { artifactPath, get, optional } from "./api.js";
import {
  eventAction,
  eventActor,
  h,
  href,
  humanSize,
  moreButton,
  muted,
  section,
  shortSha,
  table,
  vlabel,
  when,
  who,
} from "./ui.js";

export const PAGE_SIZE = 20;
const DESCRIBE = {
  prefix: (q) => `Names starting with ${q}`,
  tag: (q) => `Tagged ${q}`,
  sha256: (q) => `Holding the content ${q.slice(0, 19)}…`,
  all: () => "",
};
const SHA256 = /^(sha256:)?[0-9a-f]{64}$/i;
const TAG = /^([a-z0-9][a-z0-9_.:/-]*?)[=:](.*)$/;

/** What the search box holds: a sha256, a tag (KEY=VALUE or KEY:VALUE), or the start of a name. */
export function searchKind(text) {
  const query = (text ?? "").trim();
  if (!query) return { kind: "all" };
  if (SHA256.test(query)) return { kind: "sha256", sha256: query.toLowerCase().replace(/^sha256:/, "") };
  const tag = TAG.exec(query);
  if (tag && !query.includes(" ")) return { kind: "tag", tag: `${tag[1]}=${tag[2]}` };
  return { kind: "prefix", prefix: query };
}

/** An event id that sorts just before the moment `iso` (ids are microseconds since the epoch, then a suffix). */
function idBefore(iso) {
  const millis = Date.parse(iso);
  if (!Number.isFinite(millis)) return undefined;
  return `${String(Math.max(millis - 1, 0) * 1000).padStart(16, "0")}-00000000`;
}

/** The row of one artifact: its summary, its aliases, and the newest event (who made the last change). */
async function artifactRow(name) {
  const [summary, aliasPage] = await Promise.all([
    get(artifactPath(name)),
    optional(artifactPath(name, "aliases"), (data) => Array.isArray(data?.aliases)),
  ]);
  const aliases = aliasPage?.aliases ?? [];
  const changes = [summary.updated_at, ...aliases.map((a) => a.updated_at)].filter(Boolean).sort();
  const last = changes.at(-1);
  // The feed from just before the last change: usually one or two events, the newest naming its author.
  const events = last
    ? await optional(artifactPath(name, "events"), (data) => Array.isArray(data?.events), {
        after: idBefore(last),
        limit: 10,
      }).catch(() => null)
    : null;
  const newest = events?.events?.at(-1) ?? null;
  return {
    name,
    summary,
    aliases,
    guards: await guardsOf(name, aliases),
    last: newest?.at ?? last,
    by: newest ? eventActor(newest) : null,
    change: newest ? eventAction(newest) : null,
  };
}

/** Each alias's protection, by alias name: {policy, pending} where it has a policy (its pending promotions are
 * read only when the policy asks for approvals). An alias without a policy is left out. */
async function guardsOf(name, aliases) {
  const found = await Promise.all(
    aliases.map(async (alias) => {
      const path = artifactPath(name, "aliases", alias.alias);
      const policy = await optional(`${path}/policy`, (data) => typeof data?.revision === "number").catch(() => null);
      if (!policy) return null;
      const pending = policy.approvals
        ? await optional(`${path}/promotions`, (data) => Array.isArray(data?.promotions), { state: "pending" }).catch(
            () => null,
          )
        : null;
      return [alias.alias, { policy, pending: pending?.promotions?.length ?? 0 }];
    }),
  );
  return Object.fromEntries(found.filter(Boolean));
}

function splitText(alias) {
  if (alias.secondary_version === null || alias.secondary_version === undefined) return vlabel(alias.version);
  const weight = alias.secondary_version_weight ?? 0;
  return `${vlabel(alias.version)} ${100 - weight}% · ${vlabel(alias.secondary_version)} ${weight}%`;
}

function rowNode(row) {
  const { name, summary } = row;
  const newest = summary.newest_version;
  return h(
    "tr",
    {},
    h(
      "td",
      { class: "name-cell" },
      h("a", { href: href.artifact(name), class: "artifact-name" }, name),
      summary.link ? muted(` → ${summary.link}`) : null,
      summary.description ? h("div", { class: "muted small" }, summary.description) : null,
      h(
        "div",
        { class: "chips" },
        Object.entries(summary.tags ?? {}).map(([key, value]) =>
          h("a", { href: href.registry(`${key}=${value}`), class: "chip tag", title: "only artifacts with this tag" }, value === "" ? key : `${key}=${value}`),
        ),
      ),
    ),
    h(
      "td",
      { "data-label": "newest" },
      newest ? h("a", { href: href.version(summary.name || name, newest) }, vlabel(newest)) : muted("no versions yet"),
      summary.latest?.size != null ? h("div", { class: "muted small" }, humanSize(summary.latest.size)) : null,
    ),
    h(
      "td",
      { "data-label": "aliases" },
      h("div", { class: "alias-cell" }, row.aliases.length
        ? row.aliases.map((alias) =>
            h(
              "span",
              { class: "alias-entry" },
              h(
                "a",
                { href: href.alias(name, alias.alias), class: "alias-split", title: `revision ${alias.revision}` },
                h("span", { class: "chip alias" }, alias.alias),
                " ",
                splitText(alias),
              ),
              guardBadges(row.guards?.[alias.alias]),
            ),
          )
        : muted("no aliases")),
    ),
    h(
      "td",
      { "data-label": "last change" },
      when(row.last),
      h("div", { class: "muted small" }, row.change ? `${row.change} · ` : "", who(row.by)),
    ),
  );
}

/** "protected" on an alias with a policy, and "N pending" when promotions wait for approval. */
function guardBadges(guard) {
  if (!guard) return null;
  return [
    h("span", { class: "chip guard", title: "an alias policy guards every move" }, "protected"),
    guard.pending
      ? h(
          "span",
          { class: "chip pending", title: "promotions waiting for approval" },
          `${guard.pending} pending`,
        )
      : null,
  ];
}

function hitsSection(title, hits) {
  const body = h(
    "tbody",
    {},
    hits.map((hit) =>
      h(
        "tr",
        {},
        h("td", {}, h("a", { href: href.artifact(hit.name) }, hit.name)),
        h("td", {}, h("a", { href: href.version(hit.name, hit.version) }, vlabel(hit.version))),
        h("td", {}, when(hit.created_at)),
        h("td", { class: "num" }, humanSize(hit.size)),
        h("td", {}, shortSha(hit.sha256)),
      ),
    ),
  );
  if (!hits.length) body.append(h("tr", {}, h("td", { colspan: 5, class: "muted" }, "No version matches.")));
  return section(title, table("hits", ["Artifact", "Version", "Created (UTC)", "Size", "SHA-256"], body));
}

/** `#/` and `#/?q=…`: the registry, filtered by the search box. */
export async function registryView({ query = "", limit }) {
  const pageSize = Number(limit) > 0 ? Math.min(Number(limit), 100) : PAGE_SIZE;
  const search = searchKind(query);
  const body = h("tbody");
  const footer = h("div", { class: "table-footer" });
  const listing =
    search.kind === "tag"
      ? { tag: search.tag }
      : search.kind === "prefix"
        ? { prefix: search.prefix }
        : search.kind === "all"
          ? {}
          : null;

  async function load(token) {
    const page = await get("artifacts", { ...listing, limit: pageSize, next_token: token });
    const names = (page.artifacts ?? []).map((a) => (typeof a === "string" ? a : a.name));
    const rows = await Promise.all(names.map(artifactRow));
    for (const row of rows) body.append(rowNode(row));
    if (!body.children.length) body.append(h("tr", {}, h("td", { colspan: 4, class: "muted" }, "No artifacts.")));
    footer.replaceChildren(page.next_token ? moreButton("More artifacts", () => load(page.next_token)) : "");
  }

  const parts = [];
  if (listing) {
    await load();
    const title = search.kind === "tag" ? `Artifacts tagged ${search.tag}` : "Artifacts";
    parts.push(
      section(
        title,
        table("registry", ["Artifact", "Newest", "Aliases (split)", "Last change (UTC)"], body),
        footer,
      ),
    );
  }
  if (search.kind === "tag" || search.kind === "sha256") {
    const hits = await get("versions", search.kind === "tag" ? { tag: search.tag } : { sha256: search.sha256 });
    const title = search.kind === "tag" ? `Versions tagged ${search.tag}` : "Versions with this content";
    parts.push(hitsSection(title, hits.versions ?? []));
  }
  return {
    title: query ? `Search ${query}` : "Artifacts",
    crumbs: [["Artifacts", href.registry()]],
    node: [
      h("h1", {}, "Artifacts"),
      searchForm(query),
      query ? h("p", { class: "muted" }, DESCRIBE[search.kind](query), " · ", h("a", { href: href.registry() }, "show all")) : null,
      ...parts,
    ],
  };
}

function searchForm(query) {
  const input = h("input", {
    id: "registry-search",
    type: "search",
    name: "q",
    value: query,
    autocomplete: "off",
    placeholder: "name prefix, tag (team=payments) or sha256",
  });
  const form = h(
    "form",
    { class: "search-form", role: "search" },
    h("label", { for: "registry-search", class: "visually-hidden" }, "Search the registry"),
    input,
    h("button", { type: "submit", class: "primary" }, "Search"),
    h("a", { href: href.tree(), class: "browse" }, "Browse folders"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    location.hash = href.registry(input.value.trim());
  });
  return form;
}
