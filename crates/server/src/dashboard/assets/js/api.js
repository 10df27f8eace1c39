// The API client of the page: the key kept in the browser, and calls that turn every error answer into an
// ApiError carrying the API's own message, so a panel can always say why it is empty.

const KEY = 'crossbook.key';

export function getKey() {
  return localStorage.getItem(KEY) || '';
}

export function setKey(key) {
  if (key) localStorage.setItem(KEY, key);
  else localStorage.removeItem(KEY);
  window.dispatchEvent(new Event('crossbook:key'));
}

/** An error answer of the API: its status and error body (detail, code, param, required_plan). */
export class ApiError extends Error {
  constructor(status, body) {
    super(body?.detail || body?.message || `HTTP ${status}`);
    this.status = status;
    this.code = body?.code || null;
    this.param = body?.param || null;
    this.requiredPlan = body?.required_plan || null;
  }
}

/**
 * Calls the API with the stored key. Resolves to the JSON answer; rejects with ApiError (status 0 when the
 * service did not answer). An AbortError is passed through, so a page can cancel calls it no longer needs.
 */
export async function api(path, { method = 'GET', body, signal } = {}) {
  const headers = { Accept: 'application/json' };
  const key = getKey();
  if (key) headers['X-API-Key'] = key;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let resp;
  try {
    resp = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, { code: 'unavailable', detail: `the service did not answer (${e.message})` });
  }
  const text = await resp.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (!resp.ok) throw new ApiError(resp.status, json || { detail: text || resp.statusText });
  return json;
}

/**
 * The service's readiness (`/readyz`, public): its body whether the process is ready (200) or not (503), so
 * a page can say why. Rejects with ApiError when the service does not answer.
 */
export async function readiness() {
  let resp;
  try {
    resp = await fetch('/readyz', { headers: { Accept: 'application/json' } });
  } catch (e) {
    throw new ApiError(0, { code: 'unavailable', detail: `the service did not answer (${e.message})` });
  }
  const body = await resp.json().catch(() => null);
  if (!body || !body.venues) throw new ApiError(resp.status, body || { detail: resp.statusText });
  return body;
}

/** A query string from an object, leaving out empty values. */
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, v);
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

const PLAN_NAMES = { free: 'Free', builder: 'Builder', trader: 'Trader' };

export function planName(plan) {
  return PLAN_NAMES[plan] || plan || '';
}

/**
 * What a panel shows instead of its data when a call failed: the API's own message, and for a plan refusal
 * (403 with required_plan, or the stream's entitlement_required) the plan it needs.
 */
export function describeError(err) {
  if (err?.requiredPlan) {
    // The API's message already names the plan; say it only where it does not.
    const plan = `${planName(err.requiredPlan)} plan`;
    return { kind: 'plan', text: err.message.includes(plan) ? `${err.message}.` : `${err.message}. This needs the ${plan}.` };
  }
  if (err?.status === 401) {
    return { kind: 'plan', text: `${err.message}. Enter a valid key on the Keys page.` };
  }
  return { kind: 'error', text: err?.message || String(err) };
}
