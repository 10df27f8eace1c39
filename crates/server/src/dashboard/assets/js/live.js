// Live: opportunities opening, changing and closing, the whale feed, and the venues' freshness and capture
// gaps, all from the stream. Opportunities already open when the page loads come from /v1/arbitrage/current
// (the stream does not replay them).

import { api, getKey } from './api.js';
import { age, clock, errorNotice, fill, h, notice, num, panel, price, venue } from './dom.js';
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
  fill(root, h('div', { class: 'grid' }, opp.el, venues.el, whales.el, gaps.el));

  // --- opportunities ---
  const rows = new Map(); // key -> {o, firstSeen, closedAt, tr}
  const oppNote = h('div');
  const oppBody = h('tbody');
  opp.body.append(
    oppNote,
    h('table', { class: 'data' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Pair'), h('th', {}, 'Buy YES / NO'), h('th', { class: 'num' }, 'Net ¢'),
        h('th', { class: 'num' }, 'Size'), h('th', { class: 'num' }, 'Max $'), h('th', { class: 'num' }, 'Age'))),
      oppBody),
  );
  const renderOpps = () => {
    const now = Date.now();
    for (const [k, r] of rows) {
      if (r.closedAt && now - r.closedAt > CLOSED_SHOWN_MS) rows.delete(k);
    }
    fill(oppBody, [...rows.values()]
      .sort((a, b) => (a.closedAt ? 1 : 0) - (b.closedAt ? 1 : 0) || b.o.net_cents - a.o.net_cents)
      .map((r) => h('tr', { class: r.closedAt ? 'closed' : r.flash && now - r.flash < 1500 ? 'flash' : null, dataset: { pair: r.o.pair_id || r.o.event_id } },
        h('td', { title: r.o.event_title }, r.o.label || r.o.event_title),
        h('td', {}, `${venue(r.o.buy_yes_market)} / ${venue(r.o.buy_no_market)}`),
        h('td', { class: 'num net' }, r.closedAt ? 'closed' : num(r.o.net_cents, 2)),
        h('td', { class: 'num' }, num(r.o.executable_size, 2)),
        h('td', { class: 'num' }, num(r.o.max_profit_dollars, 2)),
        h('td', { class: 'num' }, age(r.firstSeen, now)))));
    liveStats.opportunities = [...rows.values()].filter((r) => !r.closedAt).length;
    if (!rows.size && !oppNote.childElementCount) {
      oppBody.append(h('tr', {}, h('td', { colspan: 6, class: 'muted' }, 'No open opportunity right now.')));
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
        h('thead', {}, h('tr', {}, h('th', {}, 'Time'), h('th', {}, 'Market'), h('th', {}, 'Side'), h('th', { class: 'num' }, 'Price'), h('th', { class: 'num' }, 'Notional $'))),
        whaleBody)),
  );
  const whaleRow = (t) => h('tr', {},
    h('td', {}, clock(t.executed_at)),
    h('td', { title: t.market_title }, `${venue(t.exchange)} · ${t.market_title || t.event_title || t.market_id}`),
    h('td', {}, `${t.taker_side || ''} ${t.outcome || ''}`),
    h('td', { class: 'num' }, price(t.price)),
    h('td', { class: 'num' }, num(t.notional_usd, 0)));
  const addWhale = (t) => {
    whaleBody.prepend(whaleRow(t));
    while (whaleBody.childElementCount > MAX_WHALES) whaleBody.lastElementChild.remove();
    liveStats.whales = whaleBody.childElementCount;
  };
  const publicFeed = async () => {
    try {
      const feed = await api('/v1/whales/public/feed?limit=20');
      fill(whaleBody, feed.trades.map(whaleRow));
      liveStats.whales = whaleBody.childElementCount;
    } catch (e) {
      whaleNote.append(errorNotice(e));
    }
  };

  // --- venues and gaps ---
  const venueState = new Map();
  const venueBody = h('tbody');
  venues.body.append(h('table', { class: 'data' },
    h('thead', {}, h('tr', {}, h('th', {}, 'Venue'), h('th', {}, 'Connection'), h('th', {}, 'Data'), h('th', {}, 'Mode'),
      h('th', { class: 'num' }, 'Books'), h('th', { class: 'num' }, 'Stale'), h('th', { class: 'num' }, 'Since'))),
    venueBody));
  const renderVenues = () => {
    const now = Date.now();
    fill(venueBody, [...venueState.values()].map((v) => h('tr', { dataset: { venue: v.exchange } },
      h('td', {}, venue(v.exchange)),
      h('td', { class: v.connected ? 'good' : 'bad' }, v.connected ? 'connected' : 'down'),
      h('td', { class: v.fresh ? 'good' : 'bad' }, v.fresh ? 'fresh' : 'stale'),
      h('td', {}, v.mode || '–'),
      h('td', { class: 'num' }, num(v.books, 0)),
      h('td', { class: 'num' }, num(v.stale_books, 0)),
      h('td', { class: 'num' }, age(v.at, now)))));
  };
  const gapBody = h('tbody');
  gaps.body.append(h('div', { class: 'scroll' }, h('table', { class: 'data' },
    h('thead', {}, h('tr', {}, h('th', {}, 'Time'), h('th', {}, 'Venue'), h('th', {}, 'Cause'), h('th', { class: 'num' }, 'Books'))),
    gapBody)));
  const noGaps = h('tr', {}, h('td', { colspan: 4, class: 'muted' }, 'No gap since this page opened.'));
  gapBody.append(noGaps);

  if (!getKey()) {
    const ask = () => notice('info', 'Enter an API key on the Keys page to follow the live stream.');
    opp.body.prepend(ask());
    venues.body.prepend(ask());
    gaps.body.prepend(ask());
    whaleNote.append(notice('info', 'The public whale feed (a preview); a key on the Builder plan streams every whale trade.'));
    publicFeed();
    renderOpps();
    return () => {};
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
  cleanups.push(stream.subscribe('whales', null, (m) => {
    if (m.type === 'whale') addWhale(m.data);
    else if (m.type === 'error') {
      fill(whaleNote, errorNotice(refusal(m), 'Live whale trades: ', ' Below: the public feed.'));
      publicFeed();
    }
  }));
  cleanups.push(stream.subscribe('status', null, (m) => {
    if (m.type === 'venue') {
      venueState.set(m.exchange, { ...m, at: Date.now() });
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
