// Building blocks of the pages. Text from the API enters the page only as text nodes, never as HTML.

export const $ = (selector) => document.querySelector(selector);

/** An element: `h("a", {href, class, onclick}, ...children)`; null, undefined and false children are skipped. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "style") Object.assign(el.style, value);
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? "" : value);
  }
  el.append(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
  return el;
}

// Hash routes mirror the API's paths: `versions` and `aliases` are reserved in names, so they end one.
export const href = {
  registry: (query = "") => (query ? `#/?q=${encodeURIComponent(query)}` : "#/"),
  tree: (prefix = "") => `#/p/${prefix}`,
  artifact: (name) => `#/a/${name}`,
  version: (name, version) => `#/a/${name}/versions/${version}`,
  compare: (name, before, after) => `#/a/${name}/versions/${before}/compare/${after}`,
  alias: (name, alias) => `#/a/${name}/aliases/${alias}`,
};

const present = (value) => value !== null && value !== undefined;

export const vlabel = (version) => (!present(version) ? "–" : version === "LATEST" ? "LATEST" : `v${version}`);
export const versionLink = (name, version) => h("a", { href: href.version(name, version) }, vlabel(version));
export const aliasChip = (name, alias) => h("a", { href: href.alias(name, alias), class: "chip alias" }, alias);
export const chip = (text, cls = "") => h("span", { class: `chip ${cls}`.trim() }, text);
export const muted = (text) => h("span", { class: "muted" }, text);
export const button = (label, onclick, cls) => h("button", { type: "button", class: cls, onclick }, label);

export function humanSize(bytes) {
  if (!present(bytes)) return "–";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  for (; value >= 1024 && unit < units.length - 1; unit += 1) value /= 1024;
  return unit === 0 ? `${bytes} B` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** The first 12 hex digits of a sha256 (as the CLI prints it), the whole digest on hover. */
export const shortSha = (sha256) => h("code", { title: sha256 ?? "" }, (sha256 ?? "").slice(0, 12));

/** A size as a person reads it (`16 KiB`), the exact bytes on hover. */
export const sizeOf = (bytes) =>
  h("span", { title: present(bytes) ? `${bytes.toLocaleString("en")} bytes` : null }, humanSize(bytes));

export function ago(iso) {
  let value = Math.max(Math.round((Date.now() - Date.parse(iso)) / 1000), 0);
  if (!Number.isFinite(value)) return "";
  if (value === 0) return "just now";
  for (const [size, unit] of [
    [60, "second"],
    [60, "minute"],
    [24, "hour"],
    [30, "day"],
    [12, "month"],
    [Infinity, "year"],
  ]) {
    if (value < size) return `${value} ${unit}${value === 1 ? "" : "s"} ago`;
    value = Math.floor(value / size);
  }
  return "";
}

/** A time from the API (ISO 8601, UTC), shown in UTC as the CLI prints it; how long ago on hover. */
export function when(iso) {
  if (!iso) return muted("–");
  return h("time", { datetime: iso, title: ago(iso) }, `${iso.slice(0, 19).replace("T", " ")} UTC`);
}

/** `arn:aws:sts::123456789012:assumed-role/Deployer/jane` → `assumed-role/Deployer/jane`, the ARN on hover. */
export function who(arn) {
  if (!arn) return muted("unknown");
  const short = arn.startsWith("arn:") ? arn.split(":").slice(5).join(":") || arn : arn;
  return h("span", { class: "who", title: arn }, short);
}

/** An event's type as a person reads it: an aborted rollout is `rollout.aborted` (the feed records it as
 * `rollout.rolled_back` with `detail.state` aborted), as `arca events` shows it. */
export function eventAction(event) {
  return event.type === "rollout.rolled_back" && event.detail?.state === "aborted" ? "rollout.aborted" : event.type;
}

/** Who acted: the approver of an approval or a rejection (its `detail.by`), else the event's `by`. */
export function eventActor(event) {
  const decided = event.type === "promotion.approved" || event.type === "promotion.rejected";
  return decided && event.detail?.by ? event.detail.by : event.by;
}

export function tagChips(tags) {
  const entries = Object.entries(tags ?? {});
  return entries.length ? entries.map(([k, v]) => chip(v === "" ? k : `${k}=${v}`, "tag")) : null;
}

const hasCanary = (alias) => present(alias.secondary_version);

/** What an alias (or one of its revisions) points at, in words. */
export function targetText(alias) {
  if (alias.deleted) return "deleted";
  if (!hasCanary(alias)) return vlabel(alias.version);
  return `${vlabel(alias.version)} + canary ${vlabel(alias.secondary_version)} at ${alias.secondary_version_weight ?? 0}%`;
}

/** The traffic split of an alias as one bar: the canary's share drawn beside the primary's. */
export function splitBar(alias, { large = false } = {}) {
  const weight = hasCanary(alias) ? (alias.secondary_version_weight ?? 0) : 0;
  const parts = [{ version: alias.version, share: 100 - weight, cls: "primary" }];
  if (hasCanary(alias)) parts.push({ version: alias.secondary_version, share: weight, cls: "canary" });
  const label = parts.map((p) => `${p.share}% to ${vlabel(p.version)}`).join(", ");
  const segments = parts.map((p) => h("span", { class: `segment ${p.cls}`, style: { flexGrow: String(p.share) } }));
  const keys = parts.map((p) =>
    h(
      "span",
      { class: `key ${p.cls}` },
      h("strong", {}, vlabel(p.version)),
      ` ${p.share}%`,
      p.cls === "canary" ? muted(" canary") : null,
    ),
  );
  return h(
    "figure",
    { class: `split${large ? " large" : ""}` },
    h("div", { class: "bar", role: "img", "aria-label": label }, segments),
    h("figcaption", {}, keys),
  );
}

/** A definition list of [label, value] pairs; empty values are left out. */
export function fields(pairs) {
  const shown = pairs.filter(([, value]) => present(value) && value !== "");
  return h(
    "dl",
    { class: "fields" },
    shown.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]),
  );
}

/** A card with a heading; the heading names the region for assistive technology. */
export function section(title, ...children) {
  const id = `s-${title.toLowerCase().replace(/[^a-z0-9]+/g, "-")}`;
  return h("section", { class: "card", "aria-labelledby": id }, h("h2", { id }, title), ...children);
}

/** A table with a header row; `body` is the tbody to fill (rows may come later, page by page). */
export function table(cls, headers, body) {
  const head = h(
    "thead",
    {},
    h(
      "tr",
      {},
      headers.map((t) => h("th", { scope: "col" }, t)),
    ),
  );
  return h("div", { class: "scroll" }, h("table", { class: cls }, head, body));
}

/** A button that runs `load` (the next page) and then goes away, or stays and says what went wrong. */
export function moreButton(label, load) {
  const more = button(
    label,
    async () => {
      more.disabled = true;
      try {
        await load();
        more.remove();
      } catch (error) {
        more.disabled = false;
        showAlert(error);
      }
    },
    "more",
  );
  return more;
}

// ---- notices --------------------------------------------------------------------------------------

/** An API error as the user sees it: code, message and, for a support ticket, the request id. */
export function errorText(error) {
  return h(
    "span",
    { class: "error-text" },
    h("strong", {}, error.code || "Error"),
    `: ${error.message}`,
    error.requestId ? h("span", { class: "request-id" }, ` (request id ${error.requestId})`) : null,
    error.violations?.length
      ? h(
          "ul",
          { class: "violations" },
          error.violations.map((v) => h("li", {}, h("strong", {}, v.rule), `: ${inWords(v)}`)),
        )
      : null,
  );
}

/** A policy's rule in the console's words: what to press, not the API route the message names for scripts. */
function inWords(violation) {
  const message = String(violation.message ?? "").replace(/\s*\((?:POST|PUT|GET|DELETE) [^)]*\)/g, "");
  return violation.rule === "approvals" ? `${message}; ask with Request promotion (under Protection)` : message;
}

let flashTimer = 0;
export function flash(message) {
  const el = $("#flash");
  el.textContent = message;
  el.hidden = false;
  clearTimeout(flashTimer);
  flashTimer = setTimeout(() => (el.hidden = true), 8000);
}

export function showAlert(error) {
  const el = $("#alert");
  const close = h("button", { type: "button", class: "close", "aria-label": "Dismiss" }, "×");
  close.addEventListener("click", () => (el.hidden = true));
  el.replaceChildren(errorText(error), close);
  el.hidden = false;
}

// ---- the confirmation dialog ----------------------------------------------------------------------

/**
 * Ask before a write. `run(reason)` does it; while it fails, the dialog stays open and shows the API's error.
 * Resolves with run's result, or null when cancelled (the button or Escape).
 */
export function confirmAction({ title, body, confirmLabel = "Confirm", danger = false, reason = true, run }) {
  const dialog = $("#confirm");
  const [form, ok, cancel, error, reasonInput] = ["form", "ok", "cancel", "error", "reason"].map((id) =>
    $(`#confirm-${id}`),
  );
  $("#confirm-title").textContent = title;
  $("#confirm-body").replaceChildren(...[body].flat());
  $("#confirm-reason-field").hidden = !reason;
  reasonInput.value = "";
  ok.textContent = confirmLabel;
  ok.classList.toggle("danger", danger);
  error.hidden = true;
  return new Promise((resolve) => {
    const cleanup = () => {
      form.removeEventListener("submit", onSubmit);
      dialog.removeEventListener("close", onClose);
      cancel.removeEventListener("click", onCancel);
    };
    const onClose = () => {
      cleanup();
      resolve(null);
    };
    const onCancel = () => dialog.close();
    async function onSubmit(event) {
      event.preventDefault();
      ok.disabled = true;
      try {
        const result = await run(reasonInput.value.trim() || undefined);
        cleanup();
        dialog.close();
        resolve(result ?? true);
      } catch (failure) {
        error.replaceChildren(errorText(failure));
        error.hidden = false;
      } finally {
        ok.disabled = false;
      }
    }
    form.addEventListener("submit", onSubmit);
    dialog.addEventListener("close", onClose);
    cancel.addEventListener("click", onCancel);
    dialog.showModal();
    (reason ? reasonInput : cancel).focus();
  });
}
