// A version's signature, checked in the browser, and its attestations.
//
// The stage signs each version's manifest with ECDSA P-256 / SHA-256; the API gives the signature as base64 of
// DER (SEQUENCE of two INTEGERs), while WebCrypto verifies the raw form, r and s as 32 bytes each.

import { artifactPath, get, optional } from "./api.js";
import { button, chip, fields, h, humanSize, muted, section, showAlert, table, when, who } from "./ui.js";

const bytes = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));

/** DER `SEQUENCE { INTEGER r, INTEGER s }` -> r || s, each left-padded to `size` bytes. */
export function derToRaw(der, size = 32) {
  let at = 2 + (der[1] & 0x80 ? der[1] & 0x7f : 0); // past the SEQUENCE's tag and length
  const out = new Uint8Array(size * 2);
  for (let part = 0; part < 2; part += 1) {
    if (der[at] !== 0x02) throw new Error("not a DER ECDSA signature");
    const length = der[at + 1];
    let value = der.slice(at + 2, at + 2 + length);
    while (value.length > size && value[0] === 0) value = value.slice(1); // the sign byte of a high bit
    if (value.length > size) throw new Error("not a P-256 signature");
    out.set(value, size * (part + 1) - value.length);
    at += 2 + length;
  }
  return out;
}

/** "verified", "invalid" (the signature or the manifest's content does not hold) or "unsigned". */
export async function signatureState(version, pem) {
  if (!version.manifest || !version.signature) return "unsigned";
  const spki = bytes(pem.replace(/-----[A-Z ]+-----/g, "").replace(/\s+/g, ""));
  const key = await crypto.subtle.importKey("spki", spki, { name: "ECDSA", namedCurve: "P-256" }, false, ["verify"]);
  let ok = false;
  try {
    const raw = derToRaw(bytes(version.signature));
    const message = new TextEncoder().encode(version.manifest);
    ok = await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, key, raw, message);
  } catch {
    ok = false;
  }
  const manifest = ok ? JSON.parse(version.manifest) : {};
  const names = ["name", "version", "sha256", "size"].every((field) => manifest[field] === version[field]);
  return ok && names ? "verified" : "invalid";
}

const STATES = {
  verified: () => chip("signature verified", "ok"),
  invalid: () => chip("signature does not verify", "warn"),
  unsigned: () => chip("unsigned: published before this stage signed versions"),
};

/** The Signature and Attestations cards of a version page (null each where the API has no such route). */
export async function provenanceSections(name, version) {
  if (version.version === "LATEST") return []; // the working copy is not a published version: nothing signed
  const [key, listed] = await Promise.all([
    optional("signing-key", (data) => typeof data?.public_key_pem === "string"),
    optional(artifactPath(name, "versions", version.version, "attestations"), (d) => Array.isArray(d?.attestations)),
  ]);
  const sections = [];
  if (key) {
    let state;
    try {
      state = await signatureState(version, key.public_key_pem);
    } catch {
      state = "invalid";
    }
    sections.push(
      section(
        "Signature",
        fields([
          ["status", STATES[state]()],
          ["manifest", version.manifest ? h("code", { class: "wrap" }, version.manifest) : null],
        ]),
      ),
    );
  }
  if (listed) sections.push(attestationsSection(name, version.version, listed));
  return sections;
}

function attestationsSection(name, number, listed) {
  const rows = h("tbody", {});
  const open = async (id) => {
    try {
      const one = await get(artifactPath(name, "versions", number, "attestations", id));
      window.open(one.download_url, "_blank", "noopener");
    } catch (error) {
      showAlert(error);
    }
  };
  for (const a of listed.attestations) {
    rows.append(
      h(
        "tr",
        {},
        h("td", {}, chip(a.type)),
        h("td", {}, h("code", { title: a.id }, a.id.slice(0, 12))),
        h("td", {}, humanSize(a.size)),
        h("td", {}, a.media_type),
        h("td", {}, when(a.created_at)),
        h("td", {}, a.created_by ? who(a.created_by) : ""),
        h("td", {}, button("Download", () => open(a.id))),
      ),
    );
  }
  if (!listed.attestations.length) return section("Attestations", h("p", { class: "muted" }, "No attestations."));
  const more = listed.next_token ? muted("more than shown: arca attestations lists them all") : null;
  return section(
    "Attestations",
    table("attestations", ["Type", "ID", "Size", "Media type", "Created", "By", ""], rows),
    more,
  );
}
