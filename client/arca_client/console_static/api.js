// The HTTP API, by URLs relative to this file ("../artifacts…"): the same files work under local mode
// (/console/ on the API's own origin) and under `arca console` (a proxy on 127.0.0.1 that signs each call).

const API_ROOT = new URL("../", import.meta.url);

export class ApiError extends Error {
  constructor(status, error) {
    super(error.message || `HTTP ${status}`);
    this.status = status;
    this.code = error.code || `HTTP ${status}`;
    this.requestId = error.request_id || null;
    this.violations = error.violations ?? null; // an alias policy's refusal: every rule broken
  }
}

/** The absolute URL of an API path (what curl or a download link needs). */
export const apiUrl = (path) => new URL(path, API_ROOT).href;

/** `artifacts/<name>/<rest…>`, each segment percent-encoded (names keep their slashes). */
export function artifactPath(name, ...rest) {
  return ["artifacts", ...String(name).split("/"), ...rest].map((s) => encodeURIComponent(s)).join("/");
}

function queryString(query = {}) {
  return Object.entries(query)
    .filter(([, value]) => value !== undefined && value !== null && value !== "")
    .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`)
    .join("&");
}

/** One call, JSON in and out (null for an empty answer); rejects with ApiError carrying the API's error. */
export async function api(method, path, { query, body, headers = {} } = {}) {
  const url = new URL(path, API_ROOT);
  url.search = queryString(query);
  // The proxy forwards writes only with this header, which a page of another origin cannot add.
  const init = { method, headers: { Accept: "application/json", "X-Arca-Console": "1", ...headers } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers["Content-Type"] = "application/json";
  }
  let response;
  try {
    response = await fetch(url, init);
  } catch (error) {
    throw new ApiError(0, { code: "NetworkError", message: `${method} ${url.pathname}: no answer (${error.message})` });
  }
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    if (response.ok) throw new ApiError(response.status, { code: "BadResponse", message: "the answer is not JSON" });
  }
  if (!response.ok) {
    // The API's {"error": {…}}, else API Gateway's bare {"message"}, else whatever text came.
    throw new ApiError(response.status, data?.error ?? data ?? { message: text.slice(0, 300) || response.statusText });
  }
  return data;
}

export const get = (path, query) => api("GET", path, { query });

/** For routes not every API has yet: the answer if `isAnswer` accepts it, null if the route is unknown (404/405). */
export async function optional(path, isAnswer, query) {
  try {
    const data = await get(path, query);
    return isAnswer(data) ? data : null;
  } catch (error) {
    if (error.status === 404 || error.status === 405) return null;
    throw error;
  }
}
