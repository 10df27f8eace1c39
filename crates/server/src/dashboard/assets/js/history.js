// Arbitrage history: the episodes of /v1/arbitrage/history with its filters, as the key's plan shows them
// (below Trader the API locks all but the best few rows; a locked row says so), and the price spreads of
// /v1/arbitrage/current/difference, a Trader-only route whose refusal the panel shows as the API words it.

import { api, query } from './api.js';
import { clock, errorNotice, feeCell, fill, h, num, panel, price, venue } from './dom.js';

const PAGE = 50;

/**
 * The fee rates of an opportunity's `fee_model` in words: `venue_a:0.07;venue_b:crypto=0.07` reads
 * "venue A 7 % × p × (1 − p); venue B (crypto) 7 % × p × (1 − p)", each per contract at the leg's price p.
 */
function feeWords(model) {
  if (!model) return '';
  return model.split(';').map((entry) => {
    const [ex, rest = ''] = entry.split(':');
    const [category, rate] = rest.includes('=') ? rest.split('=') : [null, rest];
    const pct = Number(rate) * 100;
    const shown = Number.isFinite(pct) ? `${pct.toLocaleString('en-US', { maximumFractionDigits: 3 })} %` : rate;
    return `${venue(ex)}${category ? ` (${category})` : ''} ${shown} × p × (1 − p)`;
  }).join('; ');
}

function choice(id, label, values) {
  return h('label', {}, `${label} `, h('select', { id }, h('option', { value: '' }, 'any'), values.map((v) => h('option', { value: v }, v))));
}

export function mount(root) {
  const hist = panel('Arbitrage episodes', 'history-panel');
  const spreads = panel('Price spreads (Trader)', 'spreads-panel');
  fill(root, hist.el, spreads.el);

  const form = h('form', { class: 'filters', id: 'history-filters' },
    choice('f-category', 'Category', ['crypto', 'sports', 'other']),
    choice('f-interval', 'Interval', ['5m', '15m', '1h', '24h', '1w']),
    h('label', {}, 'Min net ¢ ', h('input', { id: 'f-min-net', type: 'number', step: '0.01', min: '0', size: 6 })),
    h('label', {}, 'From ', h('input', { id: 'f-from', type: 'datetime-local' })),
    h('label', {}, 'To ', h('input', { id: 'f-to', type: 'datetime-local' })),
    h('button', { type: 'submit' }, 'Apply'));
  const note = h('div');
  const body = h('tbody');
  const more = h('button', { type: 'button', class: 'more', hidden: true }, 'More');
  hist.body.append(form, note, h('div', { class: 'scroll-x' }, h('table', { class: 'data', id: 'history-table' },
    h('caption', { class: 'muted' }, 'Sorted by last seen, newest first. Fees are per contract, in cents: the total, then each leg\'s taker fee at the rates named.'),
    h('thead', {}, h('tr', {}, h('th', {}, 'First seen (UTC)'), h('th', { 'aria-sort': 'descending' }, 'Last seen (UTC) ▼'), h('th', {}, 'Pair'), h('th', {}, 'Buy YES / NO'),
      h('th', { class: 'num' }, 'Net ¢'), h('th', { class: 'num' }, 'Peak ¢'), h('th', { class: 'num' }, 'Size'), h('th', { class: 'num' }, 'Fees ¢'), h('th', {}, 'Fee rates'))),
    body)), more);

  let offset = 0;
  let ctl = null;
  const value = (id) => root.querySelector(`#${id}`).value;
  const iso = (local) => (local ? new Date(local).toISOString() : '');
  const row = (ep) => {
    const o = ep.opportunity;
    const locked = o.locked;
    return h('tr', { class: locked ? 'locked' : null },
      h('td', {}, clock(ep.first_seen_at)),
      h('td', {}, clock(ep.last_seen_at)),
      h('td', { title: o.event_title }, o.label || o.event_title),
      h('td', {}, `${venue(o.buy_yes_market)} / ${venue(o.buy_no_market)}`),
      locked
        ? h('td', { colspan: 4, class: 'muted' }, 'locked: the Trader plan shows every episode')
        : [h('td', { class: 'num' }, num(o.net_cents, 2)), h('td', { class: 'num' }, num(o.peak_net_cents, 2)), h('td', { class: 'num' }, num(o.executable_size, 2)),
          h('td', { class: 'num fees' }, feeCell(o))],
      h('td', { class: 'muted fee-rates', title: o.fee_model || '' }, feeWords(o.fee_model)));
  };
  const load = async (append) => {
    ctl?.abort();
    ctl = new AbortController();
    if (!append) offset = 0;
    const params = {
      limit: PAGE,
      offset,
      category: value('f-category'),
      interval_code: value('f-interval'),
      min_net_cents: value('f-min-net'),
      from: iso(value('f-from')),
      to: iso(value('f-to')),
    };
    try {
      const r = await api(`/v1/arbitrage/history${query(params)}`, { signal: ctl.signal });
      note.replaceChildren();
      if (!append) body.replaceChildren();
      body.append(...r.items.map(row));
      offset += r.items.length;
      more.hidden = !r.has_more;
      if (!body.childElementCount) body.append(h('tr', {}, h('td', { colspan: 9, class: 'muted' }, 'No episode matches.')));
    } catch (e) {
      if (e.name === 'AbortError') return;
      fill(note, errorNotice(e));
    }
  };
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    load(false);
  });
  more.addEventListener('click', () => load(true));
  load(false);

  // Spreads: Trader only; other plans see the API's refusal.
  const spreadBody = h('div');
  spreads.body.append(spreadBody);
  api('/v1/arbitrage/current/difference?limit=20')
    .then((list) => fill(spreadBody, list.length
      ? h('table', { class: 'data' },
        h('thead', {}, h('tr', {}, h('th', {}, 'Pair'), h('th', {}, 'Side'), h('th', { class: 'num' }, 'venue A'), h('th', { class: 'num' }, 'venue B'), h('th', { class: 'num' }, 'Difference'))),
        h('tbody', {}, list.map((s) => h('tr', {}, h('td', {}, s.label), h('td', {}, s.side), h('td', { class: 'num' }, price(s.side1_price)),
          h('td', { class: 'num' }, price(s.side2_price)), h('td', { class: 'num' }, price(s.diff))))))
      : h('p', { class: 'muted' }, 'No pair is quoted on both venues right now.')))
    .catch((e) => fill(spreadBody, errorNotice(e)));
  return () => ctl?.abort();
}
