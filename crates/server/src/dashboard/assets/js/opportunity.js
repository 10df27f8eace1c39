// One opportunity, opened from its row on the Live page (#/opportunity/<pair>/<outcome>/<buy-YES venue>):
// its figures and legs, the depth walk behind its size, both legs' live books side by side, a live chart of
// both legs as YES prices with the band the fees take, and its episode (first seen, peak, how the net moved).
// The figures come from /v1/arbitrage/current with the depth walk, read again every few seconds and on every
// stream update; the books from the stream's book channel.

import { api, getKey, query } from './api.js';
import { legsChart, netChart } from './charts.js';
import { age, basisWords, clock, errorNotice, fill, h, notice, num, panel, price, venue } from './dom.js';
import { bookView, marketHref } from './market.js';
import { refusal, stream } from './stream.js';

const REFRESH_MS = 5000;

/** The hash of an opportunity's view: its pair, outcome and the venue where YES is bought. */
export function opportunityHref(o) {
  return `#/opportunity/${[o.pair_id || o.event_id, o.outcome_key || '', o.buy_yes_market].map(encodeURIComponent).join('/')}`;
}

function sameOpportunity(o, [pair, outcome, buyYes]) {
  return (o.pair_id || o.event_id) === pair && (o.outcome_key || '') === (outcome || '') && o.buy_yes_market === buyYes;
}

/** A leg's market id on its venue: the venue_a ticker or the venue_b condition id. */
function legMarket(o, exchange) {
  return exchange === 'venue_a' ? o.venue_a.market_ticker : o.venue_b.condition_id;
}

export function mount(root, params) {
  const cleanups = [];
  const head = h('div', { class: 'market-head' }, h('h1', {}, 'Opportunity'));
  const figures = panel('Trade', 'opp-trade');
  const walk = panel('Depth walk', 'opp-walk');
  const books = panel('Both legs\' books', 'opp-books');
  const prices = panel('Prices', 'opp-prices');
  const episode = panel('Episode', 'opp-episode');
  fill(root, h('p', {}, h('a', { href: '#/live' }, '← Live')), head,
    h('div', { class: 'grid' }, figures.el, walk.el, h('div', { class: 'wide' }, books.el), prices.el, episode.el));

  if (!getKey()) {
    figures.body.append(notice('info', 'Enter an API key on the Keys page: the current opportunities need one (any plan).'));
    return () => {};
  }

  const status = h('p', { class: 'muted', id: 'opp-status' }, 'Loading…');
  head.append(status);
  const figNote = h('div');
  const figBody = h('tbody');
  figures.body.append(figNote, h('table', { class: 'data figures', id: 'opp-figures' }, figBody));
  const walkBody = h('tbody');
  walk.body.append(h('div', { class: 'scroll-x' }, h('table', { class: 'data', id: 'opp-walk-table' },
    h('caption', { class: 'muted' }, 'Both ask ladders merged cheapest first: each row buys its size on both legs at one pair of asks. The walk stops before the first pair that no longer nets after fees; the sizes add up to the executable size. Once the opportunity closes, its last walk stays shown.'),
    h('thead', {}, h('tr', {}, h('th', { class: 'num' }, '#'), h('th', { class: 'num' }, 'YES ask'), h('th', { class: 'num' }, 'NO ask'),
      h('th', { class: 'num' }, 'Size'), h('th', { class: 'num' }, 'Total size'), h('th', { class: 'num' }, 'Net ¢'), h('th', { class: 'num' }, 'Profit $'))),
    walkBody)));
  const bookNote = h('div');
  const bookRow = h('div', { class: 'books' });
  books.body.append(bookNote, bookRow);
  const priceEl = h('div', { class: 'chart', id: 'opp-legs-chart' });
  prices.body.append(priceEl, h('p', { class: 'muted' },
    'Sampled every second from the live books. While the YES ask is below the shaded band the pair nets after fees; inside the band the fees take the edge; above it there is none. The band is both legs\' fees as last priced.'));
  const epBody = h('tbody');
  const netEl = h('div', { class: 'chart', id: 'opp-net-chart' });
  episode.body.append(h('table', { class: 'data figures', id: 'opp-episode-table' }, epBody), netEl);

  let o = null; // the latest figures
  let updates = 0;
  let closed = false;
  let firstSeen = null;
  let peak = null;
  const started = Date.now();
  let views = null;
  let legs = null;
  let net = null;

  const row = (label, ...value) => h('tr', {}, h('th', { scope: 'row' }, label), h('td', { class: 'num' }, ...value));
  const legCell = (side) => {
    const ex = side === 'yes' ? o.buy_yes_market : o.buy_no_market;
    const leg = side === 'yes' ? o.yes_leg : o.no_leg;
    const ask = (ex === 'venue_a' ? o.venue_a : o.venue_b)[side === 'yes' ? 'yes_ask' : 'no_ask'];
    return [h('a', { href: marketHref(ex, legMarket(o, ex)) }, venue(ex)), ` @ ${price(ask)}`,
      leg?.fee_cents != null ? h('span', { class: 'muted' }, ` · fee ${Number(leg.fee_cents).toFixed(2)} ¢`) : null];
  };
  const renderFigures = () => {
    if (!o) return;
    const basis = basisWords(o.settlement_basis);
    fill(head, h('h1', {}, o.label || o.event_title),
      h('p', { class: 'muted' }, o.event_title, ' · ', h('span', { class: `basis basis-${o.settlement_basis}`, title: basis.title }, `settlement terms: ${basis.text}`),
        o.resolution_time ? ` · resolves ${clock(o.resolution_time)} UTC` : ''),
      h('p', { class: 'muted' }, basis.title),
      status);
    status.textContent = closed ? `Closed: the scanner no longer finds this edge (last priced ${clock(o.timestamp)} UTC).` : `Open · priced ${clock(o.timestamp)} UTC`;
    status.className = closed ? 'bad' : 'good';
    fill(figBody,
      row(`Buy YES (${venue(o.buy_yes_market)})`, ...legCell('yes')),
      row(`Buy NO (${venue(o.buy_no_market)})`, ...legCell('no')),
      row('Gross ¢ per contract', num(o.gross_cents, 2)),
      row('Fees ¢ per contract', num(o.fee_cents, 2)),
      row('Net ¢ per contract', h('strong', { class: 'net' }, num(o.net_cents, 2))),
      row('ROI %', num(o.roi_percent, 2)),
      row('Executable size', num(o.executable_size, 2)),
      row('Capital $', num(o.capital_dollars, 2)),
      row('Max profit $', num(o.max_profit_dollars, 2)));
    fill(walkBody, (o.orderbook?.walk || []).reduce((acc, s, i) => {
      const total = (acc.total || 0) + s.size;
      const profit = (acc.profit || 0) + (s.size * s.net_cents) / 100;
      acc.rows.push(h('tr', {}, h('td', { class: 'num' }, i + 1), h('td', { class: 'num' }, s.yes_price), h('td', { class: 'num' }, s.no_price),
        h('td', { class: 'num' }, num(s.size, 2)), h('td', { class: 'num' }, num(total, 2)), h('td', { class: 'num' }, num(s.net_cents, 2)), h('td', { class: 'num' }, num(profit, 2))));
      return { rows: acc.rows, total, profit };
    }, { rows: [] }).rows);
    if (!walkBody.childElementCount) walkBody.append(h('tr', {}, h('td', { colspan: 7, class: 'muted' }, 'No depth captured for this row yet.')));
    if (o.peak_net_cents != null) peak = Math.max(peak ?? -Infinity, o.peak_net_cents);
    renderEpisode();
  };
  const renderEpisode = () => {
    const now = Date.now();
    fill(epBody,
      row('First seen', firstSeen ? `${clock(firstSeen)} UTC (${age(firstSeen, now)} ago)` : `before ${clock(started)} UTC`),
      row('Peak net ¢', num(peak, 2)),
      row('Net ¢ now', closed ? 'closed' : num(o?.net_cents, 2)),
      row('Updates seen', updates));
  };

  const follow = () => {
    const yesEx = o.buy_yes_market;
    const noEx = o.buy_no_market;
    const tokens = { yes: o.venue_b.yes_token_id, no: o.venue_b.no_token_id };
    // venue_a's book is its YES book whatever the leg buys; venue_b's leg buys its outcome's own token.
    const view = (ex, outcome) => bookView(ex, legMarket(o, ex), `${outcome === 'YES' ? 'buy YES' : 'buy NO'} here`,
      ex === 'venue_b' ? (outcome === 'YES' ? tokens.yes : tokens.no) : null, ex === 'venue_b' ? outcome : 'YES');
    views = { yes: view(yesEx, 'YES'), no: view(noEx, 'NO') };
    for (const [side, v] of Object.entries(views)) {
      v.el.dataset.leg = side;
      bookRow.append(v.el);
      cleanups.push(() => v.destroy());
    }
    bookNote.append(h('p', { class: 'muted' }, `venue A quotes one YES book: its NO ask is 1 − its best YES bid. venue B has a book per outcome: the leg's own token is shown.`));
    // The legs are on the two venues, so each view follows its own market.
    for (const [ex, v] of [[yesEx, views.yes], [noEx, views.no]]) {
      cleanups.push(stream.subscribe('book', [legMarket(o, ex)], (m) => {
        if (m.type === 'error') fill(bookNote, errorNotice(refusal(m)));
        else v.onMessage(m);
      }));
    }
    legs = legsChart(priceEl, `YES ask, ${venue(yesEx)}`, `1 − NO ask, ${venue(noEx)}`);
    net = netChart(netEl);
    cleanups.push(() => legs.destroy(), () => net.destroy());
    const sample = setInterval(() => {
      const yesAsk = views.yes.bestAsk('YES', tokens);
      const noAsk = views.no.bestAsk('NO', tokens);
      const fee = (o.yes_leg?.fee_cents ?? 0) + (o.no_leg?.fee_cents ?? 0);
      if (yesAsk === null && noAsk === null) return;
      legs.push(Date.now(), yesAsk === null ? null : yesAsk / 10000, noAsk === null ? null : (10000 - noAsk) / 10000, o.fee_cents ?? fee);
    }, 1000);
    cleanups.push(() => clearInterval(sample));
  };

  const seen = (next, when) => {
    updates += 1;
    const first = !o;
    o = { ...next, orderbook: next.orderbook || o?.orderbook };
    closed = false;
    renderFigures();
    if (first) follow();
    net.push(when, o.net_cents);
  };
  const load = async () => {
    try {
      const list = await api(`/v1/arbitrage/current${query({ orderbook: true })}`);
      const hit = list.find((x) => sameOpportunity(x, params));
      figNote.replaceChildren();
      if (hit) seen(hit, Date.now());
      else if (o && !closed) {
        closed = true;
        net.push(Date.now(), null);
        renderFigures();
      } else if (!o) {
        fill(figNote, notice('info', 'This opportunity is not open now. Past ones are on the Arbitrage history page.'));
        status.textContent = 'Not open.';
      }
    } catch (e) {
      fill(figNote, errorNotice(e));
    }
  };
  // When the episode began: the stream says it with every update; before one arrives, the history has it.
  const loadEpisode = async () => {
    try {
      const r = await api(`/v1/arbitrage/history${query({ limit: 100 })}`);
      const ep = r.items.find((e) => sameOpportunity(e.opportunity, params));
      if (ep && !firstSeen) firstSeen = ep.first_seen_at;
      if (ep?.opportunity?.peak_net_cents != null) peak = Math.max(peak ?? -Infinity, ep.opportunity.peak_net_cents);
      renderEpisode();
    } catch {
      // The episode's start is a nicety: without it the table says since when this page has watched.
    }
  };
  load().then(loadEpisode);
  const refresh = setInterval(load, REFRESH_MS);
  const tick = setInterval(renderEpisode, 1000);
  cleanups.push(() => clearInterval(refresh), () => clearInterval(tick));
  cleanups.push(stream.subscribe('arbitrage', null, (m) => {
    if (m.type !== 'opportunity' || !sameOpportunity(m.opportunity, params)) return;
    if (m.episode?.first_seen_at) firstSeen = m.episode.first_seen_at;
    if (m.change === 'closed') {
      if (o) {
        closed = true;
        o = { ...o, ...m.opportunity, orderbook: o.orderbook };
        net.push(Date.now(), null);
        renderFigures();
      }
    } else seen(m.opportunity, Date.now());
  }));
  return () => cleanups.forEach((f) => f());
}
