// The Files card of a tree version: its files (GET …/versions/{n}/files?prefix=…), one folder at a time. The API
// lists a prefix's files in path order, a page at a time, with no folders of its own: a folder here is the run of
// listed paths that share its name, counted as pages arrive, and opening it lists its prefix. A tree of 10,000
// files is never read whole: each folder shows one page ("Load more files" for the next), and the filter jumps
// straight to any prefix. Each file links to its download (…/resolve/{n}/files/{path}: a 302 to its content) by
// the version's number, so an alias moved meanwhile cannot change what the link gives.
import { apiUrl, artifactPath, get } from "./api.js";
import { h, moreButton, muted, section, shortSha, showAlert, sizeOf, table } from "./ui.js";

export const TREE_MEDIA_TYPE = "application/vnd.arca.tree+json";
const PAGE = 1000; // files a page asks for (the API's largest page: the fewest requests to find the folders)

export const isTree = (v) => v.content_type === TREE_MEDIA_TYPE || typeof v.files === "number";

const count = (n) => `${n.toLocaleString("en")} file${n === 1 ? "" : "s"}`;
const folderOf = (prefix) => prefix.slice(0, prefix.lastIndexOf("/") + 1); // "a/b/c" → "a/b/", "a" → ""

/** The download URL of one file of version `version` (each segment of the path encoded once). */
export const fileUrl = (name, version, path) =>
  apiUrl(artifactPath(name, "resolve", String(version), "files", ...path.split("/")));

/** The Files card of version `v` (a tree), its first page read; `limit` sets the page size (tests use a small one). */
export async function filesSection(name, v, limit) {
  const pageSize = Number(limit) >= 1 ? Math.min(Math.floor(Number(limit)), PAGE) : PAGE;
  const path = artifactPath(name, "versions", String(v.version), "files");
  const body = h("tbody");
  const footer = h("div", { class: "table-footer" });
  const status = h("p", { class: "muted small files-status", role: "status" });
  const crumbs = h("ol", {});
  const input = h("input", {
    id: "files-prefix",
    autocomplete: "off",
    spellcheck: "false",
    placeholder: "weights/",
    maxlength: 1024,
  });
  let drawn = 0; // the listing shown: a later one makes an earlier one's answers stale
  let listed = 0;
  let folders = new Map(); // the folder rows of this listing, by name

  function fileRow(file, base) {
    return h(
      "tr",
      { class: "file" },
      h("td", {}, h("code", { class: "wrap", title: file.path }, file.path.slice(base.length))),
      h("td", { class: "num" }, sizeOf(file.size)),
      h("td", {}, shortSha(file.sha256)),
      h("td", {}, file.content_type ? h("code", {}, file.content_type) : muted("–")),
      h(
        "td",
        {},
        h(
          "a",
          { href: fileUrl(name, v.version, file.path), download: "", "aria-label": `Download ${file.path}` },
          "Download",
        ),
      ),
    );
  }

  function folderRow(folder, base) {
    const entry = { count: 0, size: 0, label: muted(""), sizeCell: h("td", { class: "num" }) };
    const label = folder.slice(base.length);
    const open = h("button", { type: "button", class: "folder", onclick: () => show(folder) }, label);
    const cells = [h("td", {}, open, " ", entry.label), entry.sizeCell, h("td", { colspan: 3 })];
    entry.row = h("tr", { class: "folder-row" }, cells);
    return entry;
  }

  // One page of the listing of `prefix`: files directly in its folder as rows, deeper ones counted on the row of
  // the folder they are in (a folder's paths are consecutive, so its row is made once and grows page by page).
  function add(page, prefix, more) {
    const base = folderOf(prefix);
    for (const file of page.files ?? []) {
      const rest = file.path.slice(base.length);
      const slash = rest.indexOf("/");
      if (slash === -1) {
        body.append(fileRow(file, base));
      } else {
        const folder = base + rest.slice(0, slash + 1);
        if (!folders.has(folder)) {
          folders.set(folder, folderRow(folder, base));
          body.append(folders.get(folder).row);
        }
        const entry = folders.get(folder);
        entry.count += 1;
        entry.size += file.size;
      }
    }
    listed += (page.files ?? []).length;
    // A folder the listing may go on into (the last one, with pages to come) says so: "1,000+ files".
    const last = (page.files ?? []).at(-1)?.path.slice(base.length) ?? "";
    const open = page.next_token && last.includes("/") ? folders.get(base + last.split("/")[0] + "/") : null;
    for (const entry of folders.values()) {
      const plus = entry === open ? "+" : "";
      const files = entry.count === 1 && !plus ? "file" : "files";
      entry.label.textContent = `${entry.count.toLocaleString("en")}${plus} ${files}`;
      entry.sizeCell.replaceChildren(sizeOf(entry.size));
    }
    if (!body.children.length) {
      body.append(h("tr", {}, h("td", { colspan: 5, class: "muted" }, `No file's path starts with ${prefix}.`)));
    }
    const whole = prefix === "" && typeof v.files === "number";
    status.textContent = whole
      ? `Showing ${listed.toLocaleString("en")} of ${count(v.files)}.`
      : `${count(listed)} under ${prefix}${page.next_token ? " so far" : ""}.`;
    footer.replaceChildren(page.next_token ? moreButton("Load more files", () => more(page.next_token)) : "");
  }

  function drawCrumbs(prefix) {
    const segments = folderOf(prefix).split("/").filter(Boolean);
    const at = (i) => `${segments.slice(0, i).join("/")}${i ? "/" : ""}`;
    const items = [["all files", ""], ...segments.map((s, i) => [s, at(i + 1)])];
    crumbs.replaceChildren(
      ...items.map(([label, target], i) =>
        h(
          "li",
          {},
          i === items.length - 1 && target === prefix
            ? h("span", { "aria-current": "location", tabindex: "-1", class: "here" }, label)
            : h("button", { type: "button", class: "link", onclick: () => show(target) }, label),
        ),
      ),
    );
    if (prefix !== folderOf(prefix)) {
      const start = h("span", { class: "here", tabindex: "-1" }, `${prefix.slice(folderOf(prefix).length)}…`);
      crumbs.append(h("li", {}, start));
    }
  }

  // Show the files whose paths start with `prefix`: the first page read, then drawn in place of the last listing.
  async function list(prefix, { focus = false } = {}) {
    const mine = ++drawn;
    const first = await get(path, { prefix, limit: pageSize });
    if (mine !== drawn) return;
    body.replaceChildren();
    folders = new Map();
    listed = 0;
    input.value = prefix;
    drawCrumbs(prefix);
    const more = async (token) => {
      const page = await get(path, { prefix, limit: pageSize, next_token: token });
      if (mine === drawn) add(page, prefix, more);
    };
    add(first, prefix, more);
    if (focus) crumbs.querySelector(".here")?.focus({ preventScroll: true });
  }
  const show = (prefix) => list(prefix, { focus: true }).catch(showAlert);

  const filter = h(
    "form",
    { class: "inline-form files-filter", role: "search", "aria-label": "Files" },
    h("label", { for: "files-prefix" }, "Path starts with"),
    input,
    h("button", { type: "submit" }, "Filter"),
  );
  filter.addEventListener("submit", (event) => {
    event.preventDefault();
    show(input.value);
  });
  await list("");
  const card = section(
    "Files",
    filter,
    h("nav", { class: "file-crumbs", "aria-label": "Folder" }, crumbs),
    table("files", ["Path", "Size", "SHA-256", "Content type", "File"], body),
    footer,
    status,
  );
  const total = typeof v.files === "number" ? [count(v.files), ", "] : [];
  card.querySelector("h2").append(
    " ",
    h("span", { class: "files-total muted" }, total, sizeOf(v.size)),
  );
  return card;
}
