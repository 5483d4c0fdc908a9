// The Arca console: hash routes, each drawn by a view from the HTTP API (see api.js for how calls are made).

import { $, errorText, h, href } from "./ui.js";
import { registryView } from "./registry.js";
import { aliasView, artifactView, compareView, missingView, treeView, versionView } from "./views.js";

const VIEWS = {
  registry: registryView,
  tree: treeView,
  artifact: artifactView,
  version: versionView,
  compare: compareView,
  alias: aliasView,
  missing: missingView,
};
const NAME_ENDS = new Set(["versions", "aliases"]); // reserved in artifact names, so the first one ends a name

/** `#/` (`?q=…`), `#/p/<prefix>/`, `#/a/<name>`, `#/a/<name>/versions/<n>` (`?limit=N`, or `/compare/<m>`),
 * `#/a/<name>/aliases/<alias>`. */
export function parseRoute(hash) {
  const raw = hash.replace(/^#\/?/, "");
  if (raw === "" || raw.startsWith("?")) {
    const params = new URLSearchParams(raw.slice(1));
    return { view: "registry", query: params.get("q") ?? "", limit: params.get("limit") };
  }
  // A page's options follow a `?` (names never hold one): `?limit=N` sets the version page's files per page.
  const [path, options = ""] = raw.split(/\?(.*)/s);
  const limit = new URLSearchParams(options).get("limit");
  const segments = path.split("/").filter(Boolean).map(decodeURIComponent);
  if (segments[0] === "p") {
    const prefix = segments.slice(1).join("/");
    return { view: "tree", prefix: prefix ? `${prefix}/` : "" };
  }
  if (segments[0] === "a" && segments.length > 1) {
    const rest = segments.slice(1);
    const end = rest.findIndex((s) => NAME_ENDS.has(s));
    if (end === -1) return { view: "artifact", name: rest.join("/") };
    const name = rest.slice(0, end).join("/");
    if (end > 0 && rest[end] === "versions" && rest.length === end + 4 && rest[end + 2] === "compare") {
      return { view: "compare", name, before: rest[end + 1], after: rest[end + 3] };
    }
    if (end > 0 && rest.length === end + 2) {
      return rest[end] === "versions"
        ? { view: "version", name, version: rest[end + 1], limit }
        : { view: "alias", name, alias: rest[end + 1] };
    }
  }
  return { view: "missing", hash: raw };
}

function setCrumbs(crumbs) {
  const items = crumbs.map(([label, link], i) =>
    h("li", {}, h("a", { href: link, "aria-current": i === crumbs.length - 1 ? "page" : null }, label)),
  );
  $("#crumbs").replaceChildren(h("ol", {}, items));
}

let drawing = 0;

/** Draw the page of the current hash; `focus` moves the keyboard focus to its heading (after a navigation). */
async function render({ focus = true } = {}) {
  const mine = ++drawing;
  const main = $("#main");
  const route = parseRoute(location.hash);
  main.setAttribute("aria-busy", "true");
  let view;
  try {
    view = await VIEWS[route.view](route);
  } catch (error) {
    view = {
      title: "Error",
      crumbs: [["Artifacts", href.registry()]],
      node: [
        h("h1", {}, error.status === 404 ? "Not found" : "Something went wrong"),
        h("div", { class: "alert" }, errorText(error)),
        h("p", {}, h("a", { href: href.registry() }, "Back to the artifacts")),
      ],
    };
  }
  if (mine !== drawing) return; // a later navigation won
  main.replaceChildren(...[view.node].flat().filter(Boolean));
  setCrumbs(view.crumbs);
  document.title = `${view.title} · Arca`;
  main.removeAttribute("aria-busy");
  if (focus) {
    const heading = main.querySelector("h1");
    heading.setAttribute("tabindex", "-1");
    heading.focus({ preventScroll: true });
  }
}

// Which API this page acts on: `arca console` says (a write on a production stage should look like one);
// local mode has no such file, and there the API is the page's own origin.
async function showEndpoint() {
  const el = $("#endpoint");
  el.title = "the API this console acts on";
  try {
    const response = await fetch("endpoint.json", { headers: { Accept: "application/json" } });
    if (response.ok) {
      const about = await response.json();
      el.textContent = `${about.endpoint}${about.signed ? " · signed" : ""}`;
      return;
    }
  } catch {
    // the page's own origin, below
  }
  el.textContent = location.host;
}

$("#skip").addEventListener("click", (event) => {
  event.preventDefault(); // "#main" is not a route
  $("#main").focus();
});
window.addEventListener("hashchange", () => {
  $("#alert").hidden = true;
  render();
});
window.addEventListener("arca:changed", () => render({ focus: false }));
showEndpoint();
render({ focus: false });
