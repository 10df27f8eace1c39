// Live: opportunities opening, changing and closing, the whale feed, and the venues' freshness and capture
// gaps, all from the stream. Opportunities already open when the page loads come from /v1/arbitrage/current
// (the stream does not replay them).

import { api, getKey, readiness } from './api.js';
import { age, basisWords, clock, errorNotice, feeCell, fill, h, notice, num, panel, price, venue } from './dom.js';
import { marketHref } from './market.js';
import { opportunityHref } from './opportunity.js';
import { refusal, stream } from './stream.js';

const MAX_WHALES = 100;
const MAX_GAPS = 50;
const CLOSED_SHOWN_MS = 5000;


export const liveStats = { opportunities: 0, whales: 0 };

/** One opportunity's identity: the pair, the outcome and which venue's YES is bought. */
function oppKey(o) {
  return `${o.pair_id || o.event_id}|${o.outcome_key || ''}|${o.buy_yes_market}`;
}

export function mount(root) {
  const cleanups = [];
  const opp = panel('Opportunities', 'live-opportunities');
  const whales = panel('Whale trades', 'live-whales');
  const venues = panel('Venues', 'live-venues');
  const gaps = panel('Capture gaps', 'live-gaps');
  opp.el.classList.add('wide');
  fill(root, h('div', { class: 'grid' }, opp.el, venues.el, whales.el, gaps.el));

  // --- opportunities ---
  const rows = new Map(); // key -> {o, firstSeen, closedAt, tr}
  const oppNote = h('div');
  const oppBody = h('tbody');
  // The sortable columns: the figure each sorts on (descending, best first), and its header.
  const SORTS = {
    net: { label: 'Net ¢', of: (o) => o.net_cents },
    roi: { label: 'ROI %', of: (o) => o.roi_percent },
    profit: { label: 'Max $', of: (o) => o.max_profit_dollars },
  };
  let sortBy = 'net';
  const sortHeads = {};
  const sortHead = (key) => {
    const button = h('button', { type: 'button', class: 'sort', dataset: { sort: key }, onclick: () => { sortBy = key; renderOpps(); } }, SORTS[key].label);
    sortHeads[key] = h('th', { class: 'num', scope: 'col' }, button);
    return sortHeads[key];
  };
  const th = (text, cls) => h('th', { class: cls, scope: 'col' }, text);
  opp.body.append(
    oppNote,
    h('div', { class: 'scroll-x' }, h('table', { class: 'data opps' },
      h('caption', { class: 'muted' }, 'Buy YES on one venue and NO on the other; each pair of contracts pays $1. Prices are asks; fees are each leg\'s taker fee per contract, in cents.'),
      h('thead', {}, h('tr', {}, th('Pair'), th('Basis'), th('Buy YES'), th('Buy NO'), sortHead('net'), sortHead('roi'),
        th('Size', 'num'), th('Capital $', 'num'), th('Fees ¢', 'num'), sortHead('profit'), th('Age', 'num'))),
      oppBody)),
  );
  /** A leg: its venue (a link to the market's page) and its ask. */
  const leg = (o, side) => {
    const ex = side === 'yes' ? o.buy_yes_market : o.buy_no_market;
    const market = ex === 'venue_a' ? o.venue_a.market_ticker : o.venue_b.condition_id;
    const ask = (ex === 'venue_a' ? o.venue_a : o.venue_b)[side === 'yes' ? 'yes_ask' : 'no_ask'];
    return h('td', { class: 'leg' },
      h('a', { href: marketHref(ex, market), title: `${side.toUpperCase()} on ${venue(ex)}: ${market}` }, venue(ex)),
      ` @ ${price(ask)}`);
  };
  const renderOpps = () => {
    const now = Date.now();
    for (const [k, r] of rows) {
      if (r.closedAt && now - r.closedAt > CLOSED_SHOWN_MS) rows.delete(k);
    }
    const of = SORTS[sortBy].of;
    for (const [key, cell] of Object.entries(sortHeads)) cell.setAttribute('aria-sort', key === sortBy ? 'descending' : 'none');
    fill(oppBody, [...rows.values()]
      .sort((a, b) => (a.closedAt ? 1 : 0) - (b.closedAt ? 1 : 0) || (of(b.o) ?? -Infinity) - (of(a.o) ?? -Infinity))
      .map((r) => h('tr', {
        class: `opp-row${r.closedAt ? ' closed' : r.flash && now - r.flash < 1500 ? ' flash' : ''}`,
        dataset: { pair: r.o.pair_id || r.o.event_id },
        // The whole row opens the opportunity; its first cell is the link, for the keyboard.
        onclick: (ev) => { if (!ev.target.closest('a')) location.hash = opportunityHref(r.o); },
      },
        h('td', { title: r.o.event_title }, h('a', { href: opportunityHref(r.o), class: 'opp-link' }, r.o.label || r.o.event_title)),
        h('td', { class: `basis basis-${r.o.settlement_basis}`, title: basisWords(r.o.settlement_basis).title }, basisWords(r.o.settlement_basis).text),
        leg(r.o, 'yes'),
        leg(r.o, 'no'),
        h('td', { class: 'num net' }, r.closedAt ? 'closed' : num(r.o.net_cents, 2)),
        h('td', { class: 'num roi' }, num(r.o.roi_percent, 2)),
        h('td', { class: 'num' }, num(r.o.executable_size, 2)),
        h('td', { class: 'num capital' }, num(r.o.capital_dollars, 2)),
        h('td', { class: 'num fees' }, feeCell(r.o)),
        h('td', { class: 'num' }, num(r.o.max_profit_dollars, 2)),
        h('td', { class: 'num' }, age(r.firstSeen, now)))));
    liveStats.opportunities = [...rows.values()].filter((r) => !r.closedAt).length;
    if (!rows.size && !oppNote.childElementCount) {
      oppBody.append(h('tr', {}, h('td', { colspan: 11, class: 'muted' }, 'No open opportunity right now.')));
    }
  };
  const upsert = (o, firstSeen, closed) => {
    const k = oppKey(o);
    const prev = rows.get(k);
    rows.set(k, { o, firstSeen: firstSeen || prev?.firstSeen || o.timestamp, closedAt: closed ? Date.now() : null, flash: Date.now() });
  };
  const loadCurrent = async () => {
    try {
      const list = await api('/v1/arbitrage/current');
      const seen = new Set();
      for (const o of list) {
        seen.add(oppKey(o));
        if (!rows.get(oppKey(o))?.closedAt) upsert(o, rows.get(oppKey(o))?.firstSeen, false);
      }
      return seen;
    } catch (e) {
      fill(oppNote, errorNotice(e));
      return null;
    }
  };

  // --- whales ---
  const whaleNote = h('div');
  const whaleBody = h('tbody');
  whales.body.append(
    whaleNote,
    h('div', { class: 'scroll' },
      h('table', { class: 'data' },
        h('thead', {}, h('tr', {}, h('th', {}, 'Time (UTC)'), h('th', {}, 'Market'), h('th', {}, 'Side'), h('th', { class: 'num' }, 'Price'), h('th', { class: 'num' }, 'Notional $'))),
        whaleBody)),
  );
  const whaleRow = (t) => h('tr', { dataset: { trade: `${t.exchange}:${t.source_trade_id}` } },
    h('td', {}, clock(t.executed_at)),
    h('td', { title: t.market_title }, `${venue(t.exchange)} · ${t.market_title || t.event_title || t.market_id}`),
    h('td', {}, `${t.taker_side || ''} ${t.outcome || ''}`),
    h('td', { class: 'num' }, price(t.price)),
    h('td', { class: 'num' }, num(t.notional_usd, 0)));
  // Trades shown, by venue and venue trade id: the opening list and the stream may both carry one.
  const whaleIds = new Set();
  const whaleId = (t) => `${t.exchange}:${t.source_trade_id}`;
  const addWhale = (t) => {
    if (whaleIds.has(whaleId(t))) return;
    if (!whaleIds.size) whaleNote.querySelector('p.muted')?.remove();
    whaleIds.add(whaleId(t));
    whaleBody.prepend(whaleRow(t));
    while (whaleBody.childElementCount > MAX_WHALES) whaleBody.lastElementChild.remove();
    liveStats.whales = whaleBody.childElementCount;
  };
  // The latest whale trades this caller may see (the whole daily pool with a paid key, its preview
  // otherwise), oldest first so the newest ends on top; live ones are added above them.
  const publicFeed = async () => {
    try {
      const feed = await api('/v1/whales/public/feed?limit=20');
      for (const t of [...feed.trades].reverse()) addWhale(t);
      if (!whaleBody.childElementCount) whaleNote.append(h('p', { class: 'muted' }, 'No whale trade yet; new ones appear here.'));
      liveStats.whales = whaleBody.childElementCount;
    } catch (e) {
      whaleNote.append(errorNotice(e));
    }
  };

  // --- venues and gaps ---
  // Each venue as /readyz (public) and then the stream's status channel tell it: whether its data can be
  // vouched for, why not, and how old the latest data is.
  const venueState = new Map();
  const venueNote = h('div');
  const venueBody = h('tbody');
  venues.body.append(venueNote, h('div', { class: 'scroll-x' }, h('table', { class: 'data' },
    h('thead', {}, h('tr', {}, h('th', {}, 'Venue'), h('th', {}, 'Connection'), h('th', {}, 'Data'), h('th', {}, 'Mode'),
      h('th', { class: 'num' }, 'Books'), h('th', { class: 'num' }, 'Stale'), h('th', { class: 'num' }, 'For'), h('th', { class: 'num' }, 'Last data'), h('th', {}, 'Why'))),
    venueBody)));
  const renderVenues = () => {
    const now = Date.now();
    fill(venueBody, [...venueState.values()].map((v) => h('tr', { dataset: { venue: v.exchange } },
      h('td', {}, venue(v.exchange)),
      h('td', { class: v.connected ? 'good' : 'bad' }, v.connected ? 'connected' : 'down'),
      h('td', { class: v.fresh ? 'good' : 'bad' }, v.status || (v.fresh ? 'fresh' : 'stale')),
      h('td', {}, v.mode || '–'),
      h('td', { class: 'num' }, num(v.books, 0)),
      h('td', { class: 'num' }, num(v.stale_books, 0)),
      h('td', { class: 'num since', title: v.since ? `since ${clock(v.since)} UTC` : '' }, v.since ? age(v.since, now) : '–'),
      h('td', { class: 'num' }, v.last_data ? `${age(v.last_data, now)} ago` : '–'),
      h('td', { class: 'reason', title: v.reason || '' }, v.reason || '–'))));
  };
  const loadReady = async () => {
    try {
      const r = await readiness();
      for (const [ex, v] of Object.entries(r.venues || {})) {
        if (v.status === 'not_configured') continue;
        venueState.set(ex, {
          exchange: ex, connected: v.connected, fresh: v.status === 'fresh', status: v.status, mode: v.mode,
          books: v.books, stale_books: v.stale_books, last_data: v.last_update_at, reason: v.reason || v.last_error,
          since: v.status_since,
        });
      }
      if (venueState.size) venueNote.replaceChildren();
      else fill(venueNote, notice('info', r.live?.reason || 'This process does not ingest the venues; the ingesting process reports them.'));
      renderVenues();
    } catch (e) {
      fill(venueNote, errorNotice(e));
    }
  };
  loadReady();
  // The stream says when a venue's state changes; the ages move on between, so /readyz is read again.
  const readyTick = setInterval(loadReady, 5000);
  cleanups.push(() => clearInterval(readyTick));
  const gapBody = h('tbody');
  gaps.body.append(h('div', { class: 'scroll' }, h('table', { class: 'data' },
    h('thead', {}, h('tr', {}, h('th', {}, 'Time (UTC)'), h('th', {}, 'Venue'), h('th', {}, 'Cause'), h('th', { class: 'num' }, 'Books'))),
    gapBody)));
  const noGaps = h('tr', {}, h('td', { colspan: 4, class: 'muted' }, 'No gap since this page opened.'));
  gapBody.append(noGaps);

  if (!getKey()) {
    const ask = () => notice('info', 'Enter an API key on the Keys page to follow the live stream.');
    opp.body.prepend(ask());
    gaps.body.prepend(ask());
    whaleNote.append(notice('info', 'The public whale feed (a preview); a key on the Builder plan streams every whale trade.'));
    publicFeed();
    renderOpps();
    return () => cleanups.forEach((f) => f());
  }

  // The list as /v1/arbitrage/current has it now: rows it no longer has are closed. Run on load, after every
  // reconnect (what closed while the stream was down was not reported), and every 10 s without live updates.
  const resync = async () => {
    const seen = await loadCurrent();
    if (seen) for (const [k, r] of rows) if (!seen.has(k) && !r.closedAt) r.closedAt = Date.now();
    renderOpps();
  };
  let polling = null;
  cleanups.push(stream.onState((state) => {
    if (state === 'live') resync();
  }));
  cleanups.push(stream.subscribe('arbitrage', null, (m) => {
    if (m.type === 'opportunity') {
      upsert(m.opportunity, m.episode?.first_seen_at, m.change === 'closed');
      renderOpps();
    } else if (m.type === 'error') {
      // Not on the Trader plan: say so, and show the current list, refreshed, without live updates.
      fill(oppNote, errorNotice(refusal(m), 'Live updates: ', ' Below: the current opportunities, refreshed every 10 s.'));
      if (!polling) {
        polling = setInterval(resync, 10000);
      }
    }
  }));
  publicFeed();
  cleanups.push(stream.subscribe('whales', null, (m) => {
    if (m.type === 'whale') addWhale(m.data);
    else if (m.type === 'error') {
      fill(whaleNote, errorNotice(refusal(m), 'Live whale trades: ', ' Below: the public feed.'));
    }
  }));
  cleanups.push(stream.subscribe('status', null, (m) => {
    if (m.type === 'venue') {
      venueNote.replaceChildren();
      venueState.set(m.exchange, { ...m, status: m.fresh ? 'fresh' : 'not fresh', last_data: m.received_at || venueState.get(m.exchange)?.last_data });
      renderVenues();
    } else if (m.type === 'gap') {
      noGaps.remove();
      gapBody.prepend(h('tr', {}, h('td', {}, clock(m.received_at || m.sent_at)), h('td', {}, venue(m.exchange)),
        h('td', {}, m.cause), h('td', { class: 'num' }, num(m.books?.length ?? 0, 0))));
      while (gapBody.childElementCount > MAX_GAPS) gapBody.lastElementChild.remove();
    } else if (m.type === 'error') {
      fill(venues.body, errorNotice(refusal(m)));
    }
  }));
  // Ages move on by themselves.
  const tick = setInterval(() => {
    renderOpps();
    renderVenues();
  }, 1000);
  cleanups.push(() => clearInterval(tick), () => clearInterval(polling));
  return () => cleanups.forEach((f) => f());
}
