// The pages. Each view takes its route's parameters and resolves to {title, crumbs, node} once every
// first request has answered, so a page appears whole; it rejects with the API's error otherwise.

import { api, ApiError, apiUrl, artifactPath, get, optional } from "./api.js";
import { diffTable, versionDiff } from "./diff.js";
import { protectionSection, readProtection, requestPromotion } from "./guards.js";
import { provenanceSections } from "./signing.js";
import { retentionSection } from "./retention.js";
import { consumersSection, leasesOnEach, stillOn } from "./consumers.js";
import { filesSection, isTree } from "./files.js";
import {
  ago,
  aliasChip,
  button,
  chip,
  confirmAction,
  eventAction,
  eventActor,
  fields,
  flash,
  h,
  href,
  humanSize,
  moreButton,
  muted,
  section,
  shortSha,
  showAlert,
  sizeOf,
  splitBar,
  table,
  tagChips,
  targetText,
  versionLink,
  vlabel,
  when,
  who,
} from "./ui.js";

/** Confirm, then write; on success say what changed and redraw the page (app.js listens). */
async function act(options, done) {
  const result = await confirmAction(options);
  if (result === null) return;
  flash(done(result));
  window.dispatchEvent(new Event("arca:changed"));
}

const moved = (alias) => `${alias.alias} → ${targetText(alias)} (revision ${alias.revision})`;
// Alias writes are conditional on the revision shown: a move by someone else in between is a 412, not lost.
const ifRevision = (alias) => ({ "If-Match": `"${alias.revision}"` });

// ---- the tree -------------------------------------------------------------------------------------

const expanded = new Set(); // folders left open, kept while the page lives

async function fillTree(list, prefix, token) {
  const page = await get("artifacts", { prefix, delimiter: "/", next_token: token });
  const opening = [];
  for (const folder of page.prefixes ?? []) {
    const [item, open] = folderItem(folder, prefix);
    list.append(item);
    opening.push(open);
  }
  for (const entry of page.artifacts ?? []) {
    const name = typeof entry === "string" ? entry : entry.name;
    const link = entry.link ? muted(` → ${entry.link}`) : null;
    list.append(
      h("li", { class: "artifact-item" }, h("a", { href: href.artifact(name) }, name.slice(prefix.length)), link),
    );
  }
  if (page.next_token) {
    const more = h(
      "li",
      {},
      moreButton("More…", () => fillTree(list, prefix, page.next_token).then(() => more.remove())),
    );
    list.append(more);
  }
  if (!token && !list.children.length) list.append(h("li", { class: "muted" }, "Nothing here yet."));
  await Promise.all(opening);
}

// A folder is a disclosure button (Enter or Space opens it) over the list of what it holds, loaded once.
function folderItem(folder, parent) {
  const children = h("ul", { class: "tree", id: `tree-${folder.replace(/[^a-z0-9]/g, "_")}`, hidden: true });
  const toggle = h(
    "button",
    { type: "button", class: "folder", "aria-expanded": "false", "aria-controls": children.id },
    folder.slice(parent.length),
  );
  let loaded = false;
  async function show(open) {
    if (open && !loaded) {
      toggle.setAttribute("aria-busy", "true");
      try {
        await fillTree(children, folder);
        loaded = true;
      } catch (error) {
        showAlert(error);
        return;
      } finally {
        toggle.removeAttribute("aria-busy");
      }
    }
    children.hidden = !open;
    toggle.setAttribute("aria-expanded", String(open));
    if (open) expanded.add(folder);
    else expanded.delete(folder);
  }
  toggle.addEventListener("click", () => show(toggle.getAttribute("aria-expanded") !== "true"));
  return [h("li", { class: "folder-item" }, toggle, children), expanded.has(folder) ? show(true) : null];
}

function prefixCrumbs(prefix, ...last) {
  const segments = prefix.split("/").filter(Boolean);
  const folders = segments.map((segment, i) => [segment, href.tree(`${segments.slice(0, i + 1).join("/")}/`)]);
  return [["Artifacts", href.registry()], ...folders, ...last];
}

function nameCrumbs(name, ...last) {
  const slash = name.lastIndexOf("/");
  return prefixCrumbs(name.slice(0, slash + 1), [name.slice(slash + 1), href.artifact(name)], ...last);
}

export async function treeView({ prefix }) {
  const list = h("ul", { class: "tree root" });
  await fillTree(list, prefix);
  return {
    title: prefix || "Folders",
    crumbs: prefix ? prefixCrumbs(prefix) : [["Artifacts", href.registry()], ["Folders", href.tree()]],
    node: [
      h("h1", {}, prefix ? h("code", {}, prefix) : "Folders"),
      h("p", { class: "lede muted" }, "Folders open in place; an artifact opens its versions and aliases."),
      h("nav", { class: "card tree-card", "aria-label": "Artifacts" }, list),
    ],
  };
}

// ---- an artifact ----------------------------------------------------------------------------------

export async function artifactView({ name }) {
  const aliasRead = get(artifactPath(name, "aliases"));
  const [summary, aliasList, versions, events, retention, consumers] = await Promise.all([
    get(artifactPath(name)),
    aliasRead,
    aliasRead.then((list) => versionsSection(name, list.aliases ?? [])),
    optional(artifactPath(name, "events"), (data) => Array.isArray(data?.events)).then((first) =>
      first ? newestEvents(name, first) : null,
    ),
    retentionSection(name),
    consumersSection(name),
  ]);
  const { latest = {}, counts = {} } = summary;
  const aliases = aliasList.aliases ?? [];
  const deleted = counts.deleted_versions ? ` (+${counts.deleted_versions} deleted)` : "";
  const facts = fields([
    ["newest version", summary.newest_version ? versionLink(name, summary.newest_version) : "no versions yet"],
    ["versions", `${counts.versions ?? 0}${deleted}`],
    ["aliases", String(aliases.length)],
    ["tags", tagChips(summary.tags)],
    ["created", when(summary.created_at)],
    ["updated", when(summary.updated_at)],
    [
      "LATEST",
      latest.sha256
        ? [shortSha(latest.sha256), ` · ${humanSize(latest.size)}`]
        : null,
    ],
  ]);
  const cards = aliases.length
    ? h(
        "ul",
        { class: "aliases" },
        aliases.map((alias) => aliasCard(name, alias)),
      )
    : h("p", { class: "muted" }, "No aliases. Point one at a version from the version's page.");
  return {
    title: name,
    crumbs: nameCrumbs(name),
    node: [
      h("h1", {}, h("code", {}, name), summary.link ? chip("link", "event") : null),
      summary.link
        ? h(
            "p",
            { class: "lede link-note" },
            h("code", {}, name),
            " is a link to ",
            h("a", { href: href.artifact(summary.link) }, h("code", {}, summary.link)),
            ": every read below follows it; writes go to ",
            h("code", {}, summary.link),
            ".",
          )
        : null,
      summary.description ? h("p", { class: "lede" }, summary.description) : null,
      h("div", { class: "grid" }, section("Summary", facts), section("Aliases", cards)),
      versions,
      consumers,
      retention,
      events ? eventsSection(name, events) : null,
    ],
  };
}

function aliasCard(name, alias) {
  return h(
    "li",
    { class: "alias-card" },
    h(
      "div",
      {},
      h("a", { href: href.alias(name, alias.alias), class: "alias-name" }, alias.alias),
      muted(` revision ${alias.revision}`),
    ),
    splitBar(alias),
    h(
      "p",
      { class: "muted small" },
      "moved ",
      when(alias.updated_at),
      " by ",
      who(alias.updated_by),
      alias.reason ? ` — ${alias.reason}` : "",
    ),
  );
}

/** An alias's chip on a version: `prod`, or `prod canary 10%` on the version that is prod's canary. */
function aliasOn(name, aliasName, version, aliases) {
  const split = aliases.find((a) => a.alias === aliasName);
  const canary =
    split && split.secondary_version === version && split.version !== version
      ? ` canary ${split.secondary_version_weight ?? 0}%`
      : "";
  const chipNode = aliasChip(name, aliasName);
  if (canary) {
    chipNode.classList.add("canary");
    chipNode.append(h("span", { class: "canary-mark" }, canary));
  }
  return chipNode;
}

async function versionsSection(name, aliases = []) {
  const body = h("tbody");
  const footer = h("div", { class: "table-footer" });
  const showDeleted = h("input", { type: "checkbox", id: "show-deleted" });
  const versions = table("versions", ["Version", "Created (UTC)", "Size", "SHA-256", "Aliases", "Tags"], body);
  async function load(token) {
    const query = { include_deleted: showDeleted.checked ? "true" : undefined, next_token: token };
    const page = await get(artifactPath(name, "versions"), query);
    if (!token) body.replaceChildren();
    // Tags are newer than versions: their column shows once the API answers with them.
    if ((page.versions ?? []).some((v) => v.tags !== undefined)) versions.firstChild.classList.add("with-tags");
    for (const version of page.versions ?? []) body.append(versionRow(name, version, aliases));
    if (!body.children.length) body.append(h("tr", {}, h("td", { colspan: 6, class: "muted" }, "No versions.")));
    footer.replaceChildren(page.next_token ? moreButton("More versions", () => load(page.next_token)) : "");
  }
  showDeleted.addEventListener("change", () => load().catch(showAlert));
  await load();
  return section("Versions", h("label", { class: "inline" }, showDeleted, " show deleted versions"), versions, footer);
}

function versionRow(name, v, aliases) {
  return h(
    "tr",
    { class: v.deleted ? "deleted" : null },
    h("td", {}, versionLink(name, v.version), v.deleted ? chip("deleted", "warn") : null),
    h("td", {}, when(v.created_at)),
    h("td", { class: "num" }, sizeOf(v.size)),
    h("td", {}, shortSha(v.sha256)),
    h(
      "td",
      {},
      (v.aliases ?? []).map((alias) => aliasOn(name, alias, v.version, aliases)),
    ),
    h("td", {}, tagChips(v.tags)),
  );
}

// The feed is served oldest first; the console shows it newest first, EVENTS_SHOWN at a time. It reads the
// feed's pages (100 events each) up to EVENTS_READ events, then pages through them here.
const EVENTS_SHOWN = 20;
const EVENTS_READ = 1000;

async function newestEvents(name, first) {
  const events = [...first.events];
  let token = first.next_token;
  while (token && events.length < EVENTS_READ) {
    const page = await get(artifactPath(name, "events"), { next_token: token });
    events.push(...page.events);
    token = page.next_token;
  }
  // More than EVENTS_READ: keep reading with `after`, holding only the newest ones.
  while (token) {
    const page = await get(artifactPath(name, "events"), { next_token: token });
    events.push(...page.events);
    events.splice(0, Math.max(events.length - EVENTS_READ, 0));
    token = page.next_token;
  }
  return events.reverse();
}

function eventsSection(name, newest) {
  const body = h("tbody");
  const footer = h("div", { class: "table-footer" });
  let shown = 0;
  function add() {
    const page = { events: newest.slice(shown, shown + EVENTS_SHOWN) };
    shown += page.events.length;
    for (const event of page.events) {
      body.append(
        h(
          "tr",
          {},
          h("td", {}, when(event.at)),
          h("td", {}, chip(eventAction(event), "event")),
          h("td", {}, who(eventActor(event))),
          h("td", {}, event.version === undefined || event.version === null ? "" : versionLink(name, event.version)),
          h("td", {}, event.alias ? aliasChip(name, event.alias) : ""),
        ),
      );
    }
    footer.replaceChildren(shown < newest.length ? moreButton("Older events", async () => add()) : "");
  }
  add();
  if (!newest.length) body.append(h("tr", {}, h("td", { colspan: 5, class: "muted" }, "No events yet.")));
  return section(
    "Events",
    h("p", { class: "muted small" }, "Newest first."),
    table("events", ["When (UTC)", "Event", "By", "Version", "Alias"], body),
    footer,
  );
}

// ---- download and compare ------------------------------------------------------------------------

const shellQuote = (text) => (/^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`);

/** A command on one line with a Copy button (the clipboard API, else the selected text is copied). */
function snippet(label, command) {
  const text = h("input", { class: "snippet-text", readonly: true, value: command, "aria-label": label });
  const copy = button("Copy", async () => {
    try {
      await navigator.clipboard.writeText(command);
    } catch {
      text.select();
      document.execCommand("copy");
    }
    copy.textContent = "Copied";
    setTimeout(() => (copy.textContent = "Copy"), 2000);
  });
  copy.setAttribute("aria-label", `Copy: ${label}`);
  return h("div", { class: "snippet" }, h("span", { class: "snippet-label muted small" }, label), text, copy);
}

/** A download button (the content redirect: the browser saves the published file name) and the same with the
 * CLI and with curl; for content in parts (a large model, a dataset), the parallel, resumable CLI commands. A tree
 * version's content is its manifest (its files as JSON): the CLI writes its files, and the Files card links each. */
function downloadSection(name, ref, { inParts = false, tree = false } = {}) {
  const url = apiUrl(artifactPath(name, "resolve", String(ref), "content"));
  const target = shellQuote(`${name}@${ref}`);
  const label = tree ? `Download the file list of ${name}@${ref}` : `Download ${name}@${ref}`;
  const how = tree ? "writes its files into a directory, each checked" : "verifies the sha256";
  let cli = snippet(`with the arca CLI (${how})`, `arca download ${target}`);
  if (inParts) {
    cli = [
      h(
        "p",
        { class: "muted small" },
        "Large content moves best with the CLI: parts in parallel, each checked as it arrives, and an " +
          "interrupted transfer resumes when the same command runs again.",
      ),
      snippet("with the arca CLI, 16 parts at a time (resumable)", `arca download ${target} --parallel 16`),
      snippet(
        "publish the next version the same way (a 100 GB file: 8 MiB parts or larger, resumable)",
        `arca publish ${shellQuote(name)} FILE --parallel 16`,
      ),
    ];
  }
  return section(
    "Download",
    h("p", {}, h("a", { href: url, class: "button primary download", download: "" }, label)),
    tree ? h("p", { class: "muted small" }, "The file list is JSON; each file downloads from Files above.") : null,
    cli,
    snippet(`with curl (${tree ? "the file list" : "keeps the published file name"})`, `curl -fLOJ ${shellQuote(url)}`),
  );
}

/** "12,800 parts of 8.0 MiB (last 3.2 MiB), each checked by its sha256" for content uploaded in parts. */
function partsSummary(v) {
  if (!v.part_count) return null;
  const last = v.size - (v.part_count - 1) * v.part_size;
  const tail = last === v.part_size ? "" : ` (last ${humanSize(last)})`;
  return `${v.part_count.toLocaleString("en")} parts of ${humanSize(v.part_size)}${tail}, each checked by its sha256`;
}

function compareForm(name, before, suggestion) {
  const input = h("input", {
    id: "compare-with",
    required: true,
    autocomplete: "off",
    pattern: "[0-9]{1,6}|LATEST",
    inputmode: "numeric",
    value: suggestion === undefined || suggestion === null ? "" : String(suggestion),
  });
  const form = h(
    "form",
    { class: "inline-form" },
    h("label", { for: "compare-with" }, `Compare ${vlabel(before)} with`),
    input,
    h("button", { type: "submit" }, "Compare"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    location.hash = href.compare(name, before, input.value.trim());
  });
  return form;
}

export async function compareView({ name, before, after }) {
  const [a, b] = await Promise.all([
    get(artifactPath(name, "versions", before)),
    get(artifactPath(name, "versions", after)),
  ]);
  const changes = versionDiff(a, b);
  return {
    title: `${name} ${vlabel(a.version)} → ${vlabel(b.version)}`,
    crumbs: nameCrumbs(name, [`${vlabel(a.version)} → ${vlabel(b.version)}`, href.compare(name, before, after)]),
    node: [
      h(
        "h1",
        {},
        h("code", {}, name),
        h("span", { class: "version-badge" }, vlabel(a.version)),
        "→",
        h("span", { class: "version-badge" }, vlabel(b.version)),
      ),
      section(
        "What changed",
        h(
          "p",
          { class: "muted" },
          `${changes.length} difference${changes.length === 1 ? "" : "s"} from `,
          versionLink(name, a.version),
          " to ",
          versionLink(name, b.version),
          " · ",
          h("a", { href: href.compare(name, after, before) }, "swap"),
        ),
        diffTable(changes, vlabel(a.version), vlabel(b.version)),
      ),
      section("Compare others", compareForm(name, a.version, b.version)),
    ],
  };
}

// ---- a version ------------------------------------------------------------------------------------

export async function versionView({ name, version, limit }) {
  const [v, aliasList] = await Promise.all([
    get(artifactPath(name, "versions", version)),
    get(artifactPath(name, "aliases")),
  ]);
  const metadata = Object.entries(v.metadata ?? {});
  const content = fields([
    ["sha256", h("code", { class: "wrap" }, v.sha256)],
    ["size", v.size === undefined ? null : `${humanSize(v.size)} (${v.size} bytes)`],
    ["content type", v.content_type],
    ["parts", partsSummary(v)],
    ["created", when(v.created_at)],
    ["deleted", v.deleted ? when(v.deleted_at) : null],
    [
      "aliases",
      v.aliases?.length
        ? v.aliases.map((alias) => aliasOn(name, alias, v.version, aliasList.aliases ?? []))
        : muted("none"),
    ],
  ]);
  const rows = metadata.map(([key, value]) => h("tr", {}, h("th", { scope: "row" }, key), h("td", {}, value)));
  const leased = typeof v.version === "number" && !v.deleted;
  const [provenance, consumers, files] = await Promise.all([
    provenanceSections(name, v),
    leased ? consumersSection(name, v.version) : null,
    isTree(v) && !v.deleted ? filesSection(name, v, limit) : null,
  ]);
  return {
    title: `${name} ${vlabel(v.version)}`,
    crumbs: nameCrumbs(name, [vlabel(v.version), href.version(name, v.version)]),
    node: [
      h(
        "h1",
        {},
        h("code", {}, name),
        h("span", { class: "version-badge" }, vlabel(v.version)),
        v.deleted ? chip("deleted", "warn") : null,
      ),
      h(
        "div",
        { class: "grid" },
        section("Content", content),
        section(
          "Metadata",
          rows.length ? h("table", { class: "kv" }, h("tbody", {}, rows)) : h("p", { class: "muted" }, "No metadata."),
          v.tags === undefined
            ? null
            : [h("h3", {}, "Tags"), tagChips(v.tags) ?? h("p", { class: "muted" }, "No tags.")],
        ),
      ),
      files,
      ...provenance,
      consumers,
      v.deleted ? null : downloadSection(name, v.version, { inParts: Boolean(v.part_count), tree: isTree(v) }),
      section(
        "Compare",
        compareForm(name, v.version, typeof v.version === "number" && v.version > 1 ? v.version - 1 : null),
      ),
      v.version === "LATEST"
        ? null
        : section("Actions", v.deleted ? null : pointAliasForm(name, v, aliasList.aliases ?? []), lifecycle(name, v)),
    ],
  };
}

function lifecycle(name, v) {
  const path = artifactPath(name, "versions", v.version);
  const label = vlabel(v.version);
  const restore = () =>
    act(
      {
        title: `Restore ${label} of ${name}?`,
        body: h("p", {}, "The version becomes resolvable again and aliases may point at it."),
        confirmLabel: "Restore",
        reason: false,
        run: () => api("POST", `${path}/restore`),
      },
      () => `${label} restored`,
    );
  const remove = () =>
    act(
      {
        title: `Delete ${label} of ${name}?`,
        body: h(
          "p",
          {},
          "A soft delete: the content stays, and Restore brings the version back. Refused while an alias points " +
            "at it or a consumer holds a live lease on it.",
        ),
        confirmLabel: "Delete",
        danger: true,
        reason: false,
        run: () => api("DELETE", path),
      },
      () => `${label} deleted (Restore brings it back)`,
    );
  return h("div", { class: "actions" }, v.deleted ? button("Restore…", restore) : button("Delete…", remove, "danger"));
}

function pointAliasForm(name, version, aliases) {
  const aliasName = { pattern: "[A-Za-z0-9_][A-Za-z0-9._\\-]{0,127}", required: true, autocomplete: "off", placeholder: "prod" };
  const input = h("input", { id: "point-alias", list: "alias-names", ...aliasName });
  const form = h(
    "form",
    { class: "inline-form" },
    h("label", { for: "point-alias" }, `Point an alias at ${vlabel(version.version)}`),
    input,
    h(
      "datalist",
      { id: "alias-names" },
      aliases.map((a) => h("option", { value: a.alias })),
    ),
    h("button", { type: "submit", class: "primary" }, "Set alias…"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const target = vlabel(version.version);
    const alias = aliases.find((a) => a.alias === input.value);
    act(
      {
        title: `Point ${input.value} at ${target}?`,
        body: alias
          ? [
              h("p", {}, `${alias.alias} now (revision ${alias.revision}):`),
              splitBar(alias),
              h("p", {}, `Afterwards all of its traffic goes to ${target}.`),
            ]
          : h("p", {}, `${input.value} does not exist yet: it is created pointing at ${target}.`),
        confirmLabel: alias ? "Move alias" : "Create alias",
        run: (reason) =>
          api("PUT", artifactPath(name, "aliases", input.value), {
            body: { version: version.version, reason },
            headers: alias ? ifRevision(alias) : { "If-None-Match": "*" },
          }),
      },
      moved,
    );
  });
  return form;
}

// ---- an alias -------------------------------------------------------------------------------------

export async function aliasView({ name, alias: aliasName }) {
  const path = artifactPath(name, "aliases", aliasName);
  const [alias, history, rollout, guard] = await Promise.all([
    optional(path, (data) => typeof data?.revision === "number"), // a deleted alias keeps its history
    get(`${path}/history`),
    optional(`${path}/rollout`, (data) => typeof data?.state === "string"),
    readProtection(name, aliasName),
  ]);
  // The consumers on the versions it serves (named under Now, and in the preview as those a change would leave).
  const leases = alias ? await leasesOnEach(name, [alias.version, alias.secondary_version]) : null;
  const preview = alias ? await changesPreview(name, alias, history.history ?? [], leases) : null;
  // Under a policy that asks for approvals, only an approved promotion moves the alias: its actions ask for one.
  const approvals = guard.policy?.approvals ?? 0;
  return {
    title: `${name} ${aliasName}`,
    crumbs: nameCrumbs(name, [aliasName, href.alias(name, aliasName)]),
    node: [
      h(
        "h1",
        {},
        h("code", {}, name),
        h("span", { class: "alias-badge" }, aliasName),
        guard.policy ? chip("protected", "guard") : null,
      ),
      alias
        ? currentAlias(name, alias, history.history ?? [], approvals, leases)
        : section("Now", h("p", {}, "This alias is deleted; its history remains.")),
      // What guards the alias comes before anything a person might try on it.
      protectionSection(name, aliasName, guard),
      preview,
      alias ? downloadSection(name, aliasName) : null,
      rollout ? rolloutSection(rollout) : null,
      historySection(name, aliasName, alias, history),
      alias ? setAliasSection(name, alias, approvals) : null,
    ],
  };
}

/** The "N consumers still on vX" line of each version in `versions` that `leases` (leasesOnEach's) has read. */
function stillOnLines(versions, leases, context = "") {
  const read = [...new Set(versions)].filter((v) => leases?.has(v));
  return read.map((v) => stillOn(v, leases.get(v).ids, leases.get(v).more, context));
}

function currentAlias(name, alias, revisions, approvals, leases) {
  const canary = alias.secondary_version !== null && alias.secondary_version !== undefined;
  const actions = [];
  if (canary && approvals) {
    const label = `Request promotion of ${vlabel(alias.secondary_version)}…`;
    const body = h(
      "p",
      {},
      `The policy moves ${alias.alias} only through a promotion approved by ${approvals} other ` +
        `${approvals === 1 ? "identity" : "identities"}: this asks for one, pending until approved.`,
    );
    actions.push(
      button(label, () => requestPromotion(name, alias.alias, alias.secondary_version, body), "primary"),
    );
  } else if (canary) {
    actions.push(button(`Promote ${vlabel(alias.secondary_version)}…`, () => promote(name, alias), "primary"));
  }
  const previous = revisions.find((r) => r.revision < alias.revision && !r.deleted);
  if (alias.revision > 1) actions.push(rollbackButton(name, alias, previous, "Roll back…"));
  return section(
    "Now",
    splitBar(alias, { large: true }),
    fields([
      ["version", versionLink(name, alias.version)],
      [
        "canary",
        canary ? [versionLink(name, alias.secondary_version), ` at ${alias.secondary_version_weight ?? 0}%`] : null,
      ],
      ["revision", String(alias.revision)],
      ["description", alias.description],
      ["moved", [when(alias.updated_at), " by ", who(alias.updated_by)]],
      ["reason", alias.reason],
    ]),
    leases ? h("div", { class: "consumers-on" }, stillOnLines([alias.version, alias.secondary_version], leases)) : null,
    actions.length ? h("div", { class: "actions" }, actions) : null,
  );
}

// What the two buttons would change, shown before either is pressed: a diff of the version served now (the
// primary) against the one a rollback (the previous revision's primary) or a promotion (the canary) would serve.
// Under each, the consumers still on the versions the change would leave (served now, not after).
async function changesPreview(name, alias, revisions, leases) {
  const previous = revisions.find((r) => r.revision < alias.revision && !r.deleted);
  const canary = alias.secondary_version ?? null;
  const wanted = [alias.version, previous?.version, canary].filter((v) => v !== null && v !== undefined);
  if (!previous && canary === null) return null;
  const versions = new Map();
  await Promise.all(
    [...new Set(wanted.map(String))].map(async (v) => {
      versions.set(v, await optional(artifactPath(name, "versions", v), (data) => typeof data?.sha256 === "string"));
    }),
  );
  const now = versions.get(String(alias.version));
  const parts = [];
  const served = (target) => [target.version, target.secondary_version].filter((v) => v !== null && v !== undefined);
  const left = (after) => served(alias).filter((v) => !served(after).includes(v));
  const leaving = (after) => {
    const lines = stillOnLines(left(after), leases, " (it would leave)");
    return lines.length ? h("div", { class: "consumers-on" }, lines) : null;
  };
  const one = (title, target, after) => {
    const then = versions.get(String(target));
    if (!now || !then) return;
    parts.push(
      h("h3", {}, title),
      diffTable(versionDiff(now, then), `now: ${vlabel(alias.version)}`, `after: ${vlabel(target)}`),
      h("p", { class: "small" }, h("a", { href: href.compare(name, alias.version, target) }, "open the full comparison")),
      leaving(after),
    );
  };
  if (canary !== null) {
    one(`Promoting the canary: ${vlabel(alias.version)} → ${vlabel(canary)}`, canary, { version: canary });
  }
  if (previous && previous.version !== alias.version) {
    one(
      `Rolling back to revision ${previous.revision}: ${vlabel(alias.version)} → ${vlabel(previous.version)}`,
      previous.version,
      previous,
    );
  } else if (previous && targetText(previous) !== targetText(alias)) {
    parts.push(
      h("h3", {}, `Rolling back to revision ${previous.revision}: ${targetText(alias)} → ${targetText(previous)}`),
      h("p", { class: "muted" }, `The primary stays ${vlabel(alias.version)}: only the split changes.`),
      leaving(previous),
    );
  }
  return parts.length ? section("What would change", ...parts) : null;
}

// Promote: the canary becomes the alias's only version.
function promote(name, alias) {
  const canary = vlabel(alias.secondary_version);
  return act(
    {
      title: `Promote ${canary} on ${alias.alias}?`,
      body: [
        h("p", {}, `${alias.alias} sends ${alias.secondary_version_weight ?? 0}% to the canary ${canary} now:`),
        splitBar(alias),
        h("p", {}, `Afterwards all traffic goes to ${canary} and ${vlabel(alias.version)} gets none.`),
      ],
      confirmLabel: `Promote ${canary}`,
      run: (reason) =>
        api("PUT", artifactPath(name, "aliases", alias.alias), {
          body: { version: alias.secondary_version, reason: reason ?? `promote canary ${canary}` },
          headers: ifRevision(alias),
        }),
    },
    moved,
  );
}

// A rollback is a new revision with an earlier one's target. `to` (when known) is named in the request, so
// the change made is the one the dialog showed.
function rollbackButton(name, alias, to, label, cls) {
  const rollback = () =>
    act(
      {
        title: to ? `Roll ${alias.alias} back to revision ${to.revision}?` : `Roll ${alias.alias} back?`,
        body: h(
          "p",
          {},
          `Now: ${targetText(alias)} (revision ${alias.revision}). `,
          to
            ? `Afterwards: ${targetText(to)}, as in revision ${to.revision}, recorded as revision ${alias.revision + 1}.`
            : "Afterwards: the target of the revision before this one.",
        ),
        confirmLabel: "Roll back",
        run: (reason) =>
          api("POST", artifactPath(name, "aliases", alias.alias, "rollback"), {
            body: { to_revision: to?.revision, reason },
          }),
      },
      (back) => `${back.alias} rolled back: ${targetText(back)} (revision ${back.revision})`,
    );
  return button(label, rollback, cls);
}

function setAliasSection(name, alias, approvals) {
  const canary = alias.secondary_version !== null && alias.secondary_version !== undefined;
  const target = { pattern: "[0-9]{1,6}|LATEST", inputmode: "numeric", autocomplete: "off" };
  const version = h("input", { id: "set-version", required: true, value: String(alias.version), ...target });
  const secondary = h("input", { id: "set-canary", value: canary ? String(alias.secondary_version) : "", ...target });
  const weight = h("input", {
    id: "set-weight",
    type: "number",
    min: 0,
    max: 99,
    value: String(alias.secondary_version_weight ?? 10),
  });
  const form = h(
    "form",
    { class: "set-form" },
    h("label", { for: "set-version" }, "Version"),
    version,
    h("label", { for: "set-canary" }, "Canary version ", muted("(optional)")),
    secondary,
    h("label", { for: "set-weight" }, "Canary weight %"),
    weight,
    h("div", {}, h("button", { type: "submit" }, "Set…")),
  );
  const asTarget = (text) => (text.toUpperCase() === "LATEST" ? "LATEST" : Number(text));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const body = { version: asTarget(version.value.trim()) };
    if (secondary.value.trim()) {
      body.secondary_version = asTarget(secondary.value.trim());
      body.secondary_version_weight = Number(weight.value);
    }
    const after = { ...alias, secondary_version: null, secondary_version_weight: null, ...body };
    act(
      {
        title: `Set ${alias.alias}?`,
        body: [
          h("p", {}, `Now (revision ${alias.revision}):`),
          splitBar(alias),
          h("p", {}, "Afterwards:"),
          splitBar(after),
        ],
        confirmLabel: "Set alias",
        run: (reason) =>
          api("PUT", artifactPath(name, "aliases", alias.alias), {
            body: { ...body, reason },
            headers: ifRevision(alias),
          }),
      },
      moved,
    );
  });
  return section(
    "Set",
    h("p", { class: "muted" }, "Point the alias elsewhere, or split its traffic with a canary."),
    approvals
      ? h(
          "p",
          { class: "muted small guard-note" },
          "Its policy refuses a direct move: request a promotion in Protection above (a rollback stays allowed).",
        )
      : null,
    form,
  );
}

function historySection(name, aliasName, alias, first) {
  const list = h("ol", { class: "timeline" });
  const footer = h("div", { class: "table-footer" });
  function add(page) {
    for (const r of page.history ?? []) {
      const current = alias?.revision === r.revision;
      const head = h(
        "div",
        { class: "entry-head" },
        h("span", { class: "revision" }, `revision ${r.revision}`),
        r.action ? chip(r.action) : null,
        h("span", { class: "target" }, targetText(r)),
        current ? chip("current", "ok") : null,
      );
      list.append(
        h(
          "li",
          { class: current ? "current" : r.deleted ? "gone" : null },
          h("div", { class: "marker", "aria-hidden": "true" }),
          h(
            "div",
            {},
            head,
            h("div", { class: "muted small" }, when(r.updated_at), ` · ${ago(r.updated_at)} · by `, who(r.updated_by)),
            r.reason ? h("p", { class: "reason" }, r.reason) : null,
            alias && !current && !r.deleted
              ? rollbackButton(name, alias, r, `Back to revision ${r.revision}…`, "link")
              : null,
          ),
        ),
      );
    }
    const next = async () =>
      add(await get(artifactPath(name, "aliases", aliasName, "history"), { next_token: page.next_token }));
    footer.replaceChildren(page.next_token ? moreButton("Older revisions", next) : "");
  }
  add(first);
  return section("History", list, footer);
}

function rolloutSection(rollout) {
  const weight = rollout.weight ?? 0;
  const state = { running: "ok", completed: "" }[rollout.state] ?? "warn";
  const steps = (rollout.steps ?? []).map((w) =>
    h("li", { class: w === weight ? "at" : w < weight ? "done" : null }, `${w}%`),
  );
  return section(
    "Rollout",
    h("p", {}, chip(rollout.state, state), ` rolling out ${vlabel(rollout.version)}`),
    h(
      "ol",
      { class: "steps", "aria-label": "steps" },
      steps,
      h("li", { class: rollout.state === "completed" ? "at" : null }, "100%"),
    ),
    fields([
      ["weight now", rollout.weight === undefined || rollout.weight === null ? null : `${rollout.weight}%`],
      ["next step", rollout.state === "running" ? when(rollout.next_at) : null],
      ["started", when(rollout.started_at)],
      ["ended", rollout.ended_at ? when(rollout.ended_at) : null],
      ["reason", rollout.reason],
    ]),
  );
}

export async function missingView({ hash }) {
  throw new ApiError(404, { code: "NotFound", message: `the console has no page #${hash}` });
}
