// Small DOM helpers. The page builds every element with these (never from HTML strings), so text from the
// API is always text, whatever it contains.

import { describeError } from './api.js';

/** Creates an element: h('td', {class: 'num'}, '0.53'). Attributes starting with "on" are listeners. */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** Replaces an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** A panel: a titled section with a body element. */
export function panel(title, id, ...extra) {
  const body = h('div', { class: 'panel-body' });
  const el = h('section', { class: 'panel', id }, h('header', {}, h('h2', {}, title), ...extra), body);
  return { el, body };
}

/** A notice inside a panel: kind is "info", "plan" (a plan message) or "error". */
export function notice(kind, ...text) {
  return h('p', { class: `notice notice-${kind}`, role: kind === 'info' ? null : 'alert' }, ...text);
}

/** The notice a panel shows for a failed call or a refused subscription, after an optional lead-in. */
export function errorNotice(err, lead = '', tail = '') {
  const d = describeError(err);
  return notice(d.kind, `${lead}${d.text}${tail}`);
}

/** "12 s", "3 min", "2 h" since an ISO time or ms timestamp. */
export function age(since, now = Date.now()) {
  const t = typeof since === 'number' ? since : Date.parse(since);
  if (!Number.isFinite(t)) return '–';
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86400)} d`;
}

/** A time as HH:MM:SS (UTC), or a date and time when not today. */
export function clock(t) {
  const d = new Date(typeof t === 'number' ? t : Date.parse(t));
  if (Number.isNaN(d.getTime())) return '–';
  const iso = d.toISOString();
  const today = new Date().toISOString().slice(0, 10);
  return iso.slice(0, 10) === today ? iso.slice(11, 19) : `${iso.slice(0, 10)} ${iso.slice(11, 16)}`;
}

/** A number with thousands separators and at most `digits` decimals ("–" when missing). */
export function num(v, digits = 2) {
  if (v === null || v === undefined || v === '') return '–';
  const n = Number(v);
  if (!Number.isFinite(n)) return String(v);
  return n.toLocaleString('en-US', { maximumFractionDigits: digits });
}

/**
 * A price with its four decimals, as the API's book levels show it: prices other than book levels arrive as
 * JSON numbers (0.53), which would otherwise lose their trailing zeros ("–" when missing).
 */
export function price(v) {
  if (v === null || v === undefined || v === '') return '–';
  const n = Number(v);
  return Number.isFinite(n) ? n.toFixed(4) : String(v);
}

/**
 * A market's window in words ("window 14:45–15:00 UTC", "closes 2026-11-28 11:00 UTC"): what tells apart the
 * markets of one series that share a title. Empty when the market states no window.
 */
export function windowWords(start, end) {
  if (!end) return '';
  // Today's times without seconds ("14:45"), other days' with their date ("2026-11-28 11:00").
  const short = (t) => {
    const c = clock(t);
    return c.length === 8 ? c.slice(0, 5) : c;
  };
  if (!start) return `closes ${short(end)} UTC`;
  return `window ${short(start)}–${short(end)} UTC`;
}

/** The venue as the page shows it. */
export function venue(exchange) {
  return exchange === 'venue_a' ? 'venue A' : exchange === 'venue_b' ? 'venue B' : exchange || '–';
}

/** A pair's settlement basis, in words: whether its two legs settle on the same facts. */
const BASIS = {
  identical: { text: 'same terms', title: 'Same window and the same resolution source on both venues.' },
  same_window_different_source: { text: 'sources differ', title: 'Same window, but the venues name different resolution sources: the legs may settle differently.' },
  unverified: { text: 'unverified', title: 'A venue states no resolution source (or the windows differ): check both markets\' rules before trading.' },
};

/** A settlement basis as the page words it (`text`) and explains it on hover (`title`). */
export function basisWords(basis) {
  return BASIS[basis] || { text: basis || '–', title: '' };
}

/**
 * An opportunity's fees per contract as a cell's content: the total in cents and, when the legs carry
 * theirs, each leg's ("3.75 = 2.00 YES + 1.75 NO").
 */
export function feeCell(o) {
  const yes = o.yes_leg?.fee_cents;
  const no = o.no_leg?.fee_cents;
  const cents = (v) => (v == null ? '–' : Number(v).toFixed(2));
  if (yes == null || no == null) return cents(o.fee_cents);
  return [cents(o.fee_cents), h('span', { class: 'muted' }, ` = ${cents(yes)} YES + ${cents(no)} NO`)];
}

/** A long id shortened for a table cell; the whole id is its title. */
export function shortId(id) {
  const s = String(id ?? '');
  const el = h('span', { class: 'id', title: s }, s.length > 22 ? `${s.slice(0, 10)}…${s.slice(-8)}` : s);
  return el;
}

/** Calls `fn` after `ms` of quiet (search as you type). */
export function debounce(fn, ms) {
  let t = null;
  return (...args) => {
    clearTimeout(t);
    t = setTimeout(() => fn(...args), ms);
  };
}
