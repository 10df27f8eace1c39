// Backtests (Trader plan): a form that starts one with the main assumptions, the key's runs, and a run's
// report: its figures, its equity curve and its trades, with the trades as a CSV download. Below Trader the
// API refuses and the page shows its words.

import { api, getKey } from './api.js';
import { equityChart } from './charts.js';
import { clock, errorNotice, fill, h, notice, num, panel, venue } from './dom.js';

/** Trades the table shows; the CSV has them all. */
const SHOWN_TRADES = 200;

/** A datetime-local value for a time (the browser's zone, as the input reads it). */
function localValue(ms) {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60000);
  return d.toISOString().slice(0, 19);
}

function field(label, input) {
  return h('label', {}, `${label} `, input);
}

function dollars(v) {
  return v === null || v === undefined ? '–' : `${v < 0 ? '−' : ''}$${Math.abs(v).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 6 })}`;
}

export function mount(root, params) {
  const id = params[0];
  return id ? mountRun(root, id) : mountList(root);
}

function mountList(root) {
  const form = panel('New backtest', 'backtest-form');
  const runs = panel('Your backtests', 'backtest-list');
  fill(root, form.el, runs.el);
  const now = Date.now();
  const el = h('form', { class: 'filters', id: 'backtest-new' },
    field('From', h('input', { id: 'b-from', type: 'datetime-local', step: '1', value: localValue(now - 3600000), required: true })),
    field('To (empty: now)', h('input', { id: 'b-to', type: 'datetime-local', step: '1' })),
    field('Min net ¢', h('input', { id: 'b-min-net', type: 'number', step: '0.01', min: '0', value: '1', size: 5 })),
    field('Latency ms', h('input', { id: 'b-latency', type: 'number', step: '1', min: '0', max: '60000', value: '250', size: 6 })),
    field('Capital per trade $', h('input', { id: 'b-cap-trade', type: 'number', step: '1', min: '1', value: '100', size: 6 })),
    field('Capital total $', h('input', { id: 'b-cap-total', type: 'number', step: '1', min: '1', value: '1000', size: 7 })),
    field('Legs', h('select', { id: 'b-legs' }, h('option', { value: 'simultaneous' }, 'simultaneous'), h('option', { value: 'venue_a_first' }, 'venue A first'))),
    field('Missing leg', h('select', { id: 'b-missing' }, h('option', { value: 'unwind' }, 'unwind'), h('option', { value: 'hold' }, 'hold'))),
    h('button', { type: 'submit', id: 'b-run' }, 'Run'));
  const formNote = h('div');
  form.body.append(h('p', { class: 'muted' }, 'Replays both venues\' recorded books over the range, prices every pair as the live scanner does, and trades each opportunity: each leg a limit order at the depth walk\'s price, filled against the book as it stood when the order arrived. Times are your browser\'s; the report shows UTC.'), el, formNote);
  const value = (x) => root.querySelector(`#${x}`).value;
  el.addEventListener('submit', async (e) => {
    e.preventDefault();
    const body = {
      from: new Date(value('b-from')).getTime(),
      to: value('b-to') ? new Date(value('b-to')).getTime() : Date.now(),
      min_net_cents: Number(value('b-min-net')),
      latency_ms: Number(value('b-latency')),
      capital_per_trade_dollars: Number(value('b-cap-trade')),
      capital_total_dollars: Number(value('b-cap-total')),
      leg_order: value('b-legs'),
      missing_leg: value('b-missing'),
    };
    fill(formNote);
    try {
      const started = await api('/v1/backtests', { method: 'POST', body });
      location.hash = `#/backtests/${started.id}`;
    } catch (err) {
      fill(formNote, errorNotice(err, 'Not started: '));
    }
  });

  const body = h('tbody');
  const listNote = h('div');
  runs.body.append(listNote, h('div', { class: 'scroll-x' }, h('table', { class: 'data', id: 'backtest-runs' },
    h('thead', {}, h('tr', {}, h('th', {}, 'Started (UTC)'), h('th', {}, 'Range (UTC)'), h('th', {}, 'Status'), h('th', { class: 'num' }, 'Latency ms'), h('th', { class: 'num' }, 'Min net ¢'), h('th', {}, ''))),
    body)));
  let stopped = false;
  const load = async () => {
    if (!getKey()) {
      fill(listNote, notice('plan', 'Set a Trader key (Keys & webhooks) to run backtests.'));
      return;
    }
    try {
      const list = await api('/v1/backtests');
      fill(listNote, list.backtests.length ? null : notice('info', 'No backtest yet: start one above.'));
      fill(body, list.backtests.map((b) => h('tr', {},
        h('td', {}, clock(b.created_at)),
        h('td', {}, b.params ? `${clock(b.params.from)} – ${clock(b.params.to)}` : '–'),
        h('td', {}, b.status === 'running' ? `running ${Math.round((b.progress ?? 0) * 100)} %` : b.status),
        h('td', { class: 'num' }, b.params?.latency_ms ?? '–'),
        h('td', { class: 'num' }, num(b.params?.min_net_cents, 2)),
        h('td', {}, h('a', { href: `#/backtests/${b.id}` }, 'open')))));
    } catch (err) {
      fill(listNote, errorNotice(err));
    }
  };
  load();
  const timer = setInterval(() => !stopped && load(), 5000);
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}

function figure(label, value, id) {
  return h('div', { class: 'figure', id }, h('span', { class: 'muted' }, label), h('strong', {}, value));
}

function mountRun(root, id) {
  const head = panel('Backtest', 'backtest-run');
  const curve = panel('Equity curve', 'backtest-equity');
  const list = panel('Trades', 'backtest-trades');
  fill(root, head.el, curve.el, list.el);
  const status = h('div', { id: 'backtest-status' });
  const figures = h('div', { class: 'figures', id: 'backtest-figures' });
  head.body.append(h('p', {}, h('a', { href: '#/backtests' }, '← all backtests')), status, figures);
  const chartEl = h('div', { class: 'chart', id: 'backtest-equity-chart' });
  curve.body.append(chartEl);
  let destroyChart = null;
  let timer = null;

  const download = async () => {
    try {
      const resp = await fetch(`/v1/backtests/${encodeURIComponent(id)}/trades`, { headers: { 'X-API-Key': getKey() } });
      if (!resp.ok) throw new Error(`HTTP ${resp.status}`);
      const url = URL.createObjectURL(await resp.blob());
      const a = h('a', { href: url, download: `${id}_trades.csv` });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
    } catch (err) {
      fill(status, errorNotice(err, 'The CSV could not be fetched: '));
    }
  };

  const render = (r) => {
    const p = r.params || {};
    const s = r.summary || {};
    fill(status, h('p', {},
      h('strong', { id: 'backtest-state', dataset: { status: r.status } }, r.status),
      r.status === 'running' ? ` ${Math.round((r.progress ?? 0) * 100)} %` : '',
      ` · ${clock(p.from)} – ${clock(p.to)} UTC · min net ${num(p.min_net_cents, 2)} ¢ · latency ${p.latency_ms} ms · ${p.leg_order} · ${p.missing_leg}`),
      r.error ? notice('error', r.error) : null);
    if (r.status !== 'done') return;
    fill(figures,
      figure('Opportunities seen / taken', `${r.opportunities_seen} / ${r.opportunities_taken}`, 'fig-opps'),
      figure('Fills / partial / second leg missed', `${s.fills} / ${s.partial_fills} / ${s.second_legs_missed}`, 'fig-fills'),
      figure('P&L net', dollars(r.pnl_net_dollars), 'fig-net'),
      figure('P&L gross · fees', `${dollars(r.pnl_gross_dollars)} · ${dollars(s.fees_dollars)}`, 'fig-gross'),
      figure('Max drawdown', dollars(r.max_drawdown_dollars), 'fig-drawdown'),
      figure('Capital used', dollars(s.capital_used_dollars), 'fig-capital'),
      figure('With no latency', dollars(r.zero_latency?.pnl_net_dollars), 'fig-zero'),
      figure('Cost of latency', dollars(r.latency_cost_dollars), 'fig-latency'),
      figure('Skipped: capital · gap', `${s.skipped_capital} · ${s.skipped_gap}`, 'fig-skipped'),
      figure('Settled · marked to the book', `${s.settled_trades} · ${s.marked_trades}`, 'fig-valued'));
    if (destroyChart) destroyChart();
    destroyChart = r.equity?.length ? equityChart(chartEl, p.from, r.equity) : null;
    if (!r.equity?.length) fill(chartEl, notice('info', 'No trade closed: nothing to draw.'));
    const trades = r.trades || [];
    const rows = trades.slice(0, SHOWN_TRADES).map((t) => h('tr', {},
      h('td', { class: 'num' }, t.id),
      h('td', {}, clock(t.detected_at)),
      h('td', { title: t.event_id }, t.label),
      h('td', {}, `${venue(t.yes_leg.market)} / ${venue(t.no_leg.market)}`),
      h('td', {}, t.kind.replaceAll('_', ' ')),
      h('td', { class: 'num' }, `${num(t.yes_leg.filled, 0)} / ${num(t.no_leg.filled, 0)}`),
      h('td', { class: 'num' }, num(t.detected_net_cents, 2)),
      h('td', { class: 'num' }, dollars(t.fees_dollars)),
      h('td', { class: `num ${t.pnl_net_dollars < 0 ? 'neg' : 'pos'}` }, dollars(t.pnl_net_dollars)),
      h('td', {}, t.valuation)));
    fill(list.body,
      h('p', {}, `${trades.length} trades`, trades.length > SHOWN_TRADES ? ` (the first ${SHOWN_TRADES} shown)` : '', ' · ',
        h('button', { type: 'button', id: 'backtest-csv', onclick: download }, 'Download CSV')),
      h('div', { class: 'scroll-x' }, h('table', { class: 'data', id: 'backtest-trade-table' },
        h('thead', {}, h('tr', {}, h('th', { class: 'num' }, '#'), h('th', {}, 'Detected (UTC)'), h('th', {}, 'Pair'), h('th', {}, 'Buy YES / NO'), h('th', {}, 'Fill'),
          h('th', { class: 'num' }, 'Filled YES / NO'), h('th', { class: 'num' }, 'Net ¢ at detection'), h('th', { class: 'num' }, 'Fees'), h('th', { class: 'num' }, 'P&L net'), h('th', {}, 'Valued'))),
        h('tbody', {}, rows))));
  };

  const load = async () => {
    try {
      const r = await api(`/v1/backtests/${encodeURIComponent(id)}`);
      render(r);
      if (r.status === 'running') timer = setTimeout(load, 1000);
    } catch (err) {
      fill(status, errorNotice(err));
    }
  };
  load();
  return () => {
    clearTimeout(timer);
    if (destroyChart) destroyChart();
  };
}
