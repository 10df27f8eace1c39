// Markets: search as you type, and a market's page: its book (depth chart and ladder) live from the stream,
// its price history at a chosen interval with the capture gaps shaded, its trades, and the book of the
// market it is paired with on the other venue.

import { api, getKey, query } from './api.js';
import { depthChart, priceChart } from './charts.js';
import { basisWords, clock, debounce, errorNotice, fill, h, notice, num, panel, price, shortId, venue, windowWords } from './dom.js';
import { refusal, stream } from './stream.js';

const INTERVALS = ['1m', '5m', '1h', '6h', '1d', '1w'];
const LADDER_ROWS = 10;
const MAX_TRADES = 100;

export function mount(root, params) {
  if (params.length >= 2) return mountMarket(root, params[0], params.slice(1).join('/'));
  return mountSearch(root);
}

/** The hash of a market's page. */
export function marketHref(exchange, id) {
  return `#/market/${encodeURIComponent(exchange)}/${encodeURIComponent(id)}`;
}

// --- search ---

function mountSearch(root) {
  const input = h('input', { id: 'market-search', type: 'search', placeholder: 'Search markets of both venues (e.g. btc 15m, boston)', autocomplete: 'off', 'aria-label': 'Search markets' });
  const status = h('p', { class: 'muted' });
  const results = h('tbody');
  const p = panel('Markets', 'market-search-panel');
  p.body.append(input, status, h('table', { class: 'data', id: 'search-results' },
    h('thead', {}, h('tr', {}, h('th', {}, 'Venue'), h('th', {}, 'Market'), h('th', {}, 'Status'), h('th', { class: 'num' }, 'Last YES'), h('th', { class: 'num' }, 'Volume'))),
    results));
  fill(root, p.el);
  let ctl = null;
  const show = (list, what) => {
    status.textContent = list.length ? what : 'No market matches.';
    fill(results, list.map((m) => h('tr', {},
      h('td', {}, venue(m.exchange)),
      // The subtitle (a strike, a team) and the window tell apart the markets of a series with one title.
      h('td', {}, h('a', { href: marketHref(m.exchange, m.market_id) }, m.title || m.question || m.market_id),
        h('span', { class: 'muted' }, [m.subtitle, windowWords(m.window_start, m.window_end)].filter(Boolean).map((x) => ` · ${x}`).join(''))),
      h('td', {}, m.status),
      // A binary market never trades at 0: a zero last price means no trade yet, not a price.
      h('td', { class: 'num' }, Number(m.last_yes_price) > 0 ? m.last_yes_price : h('span', { class: 'muted' }, 'no trade yet')),
      h('td', { class: 'num' }, num(m.volume, 0)))));
  };
  const run = async () => {
    ctl?.abort();
    ctl = new AbortController();
    const q = input.value.trim();
    try {
      if (!q) show(await api('/v1/search/recent/markets?limit=20', { signal: ctl.signal }), 'Recently listed markets:');
      else show(await api(`/v1/search/markets${query({ q, limit: 25 })}`, { signal: ctl.signal }), `Markets matching “${q}”:`);
    } catch (e) {
      if (e.name === 'AbortError') return;
      status.replaceChildren(errorNotice(e));
    }
  };
  input.addEventListener('input', debounce(run, 150));
  run();
  input.focus();
  return () => ctl?.abort();
}

// --- one book ---

/** Basis points of a 4-decimal price string. */
function ticks(p) {
  return Math.round(Number(p) * 10000);
}

function priceOf(t) {
  return (t / 10000).toFixed(4);
}

/**
 * The book of one market, kept from the stream's snapshots and changes. venue_a sends YES bids and NO bids
 * (a NO bid at p is a YES ask at 1 − p) and its YES book is drawn; venue_b sends one book per token, of which
 * the token `asset` is drawn (the YES token on a market's page, the token a leg buys on an opportunity's).
 * `outcome` names what the drawn book trades.
 */
export function bookView(exchange, marketId, title, asset, outcome = 'YES') {
  const chartEl = h('div', { class: 'chart' });
  const ladder = h('div', { class: 'ladder' });
  const state = h('p', { class: 'muted' }, 'Waiting for the book…');
  const el = h('div', { class: 'book', dataset: { market: marketId } }, h('h3', {}, `${venue(exchange)}: ${title}`), state, chartEl, ladder);
  // One book per token (venue_a has one book, its asset_id null); the YES token's is drawn.
  const books = new Map();
  let chart = null;
  let frame = 0;
  let yes = asset;
  let yesKnown = exchange === 'venue_a' || !!asset;

  const shown = () => {
    if (exchange === 'venue_a') return books.values().next().value;
    // Until the YES token is known (or known to be unknowable), nothing is drawn rather than the wrong token.
    return yes ? books.get(yes) : yesKnown ? books.values().next().value : undefined;
  };
  const levels = (m, desc) => [...m.entries()].sort((a, b) => (desc ? b[0] - a[0] : a[0] - b[0])).map(([t, size]) => ({ price: priceOf(t), size }));
  const yesSides = (book) => {
    const bids = levels(book.bids, true);
    const asks = exchange === 'venue_a'
      ? levels(new Map([...book.no_bids].map(([t, s]) => [10000 - t, s])), false)
      : levels(book.asks, false);
    return { bids, asks };
  };
  const render = () => {
    frame = 0;
    const book = shown();
    if (!book) return;
    const { bids, asks } = yesSides(book);
    if (!chart) chart = depthChart(chartEl, `Depth (${outcome})`, outcome);
    chart.update(bids, asks);
    el.dataset.levels = String(bids.length + asks.length);
    const cells = (l) => [h('td', { class: 'num' }, l ? l.price : ''), h('td', { class: 'num' }, l ? num(l.size, 2) : '')];
    const n = Math.max(Math.min(bids.length, LADDER_ROWS), Math.min(asks.length, LADDER_ROWS));
    const rows = [];
    for (let i = 0; i < n; i++) rows.push(h('tr', {}, cells(bids[i]), cells(asks[i])));
    fill(ladder, h('table', { class: 'data ladder-table' },
      h('thead', {}, h('tr', {}, h('th', { class: 'num' }, 'Bid'), h('th', { class: 'num' }, 'Size'), h('th', { class: 'num' }, 'Ask'), h('th', { class: 'num' }, 'Size'))),
      h('tbody', {}, rows)));
    const spread = bids.length && asks.length ? (ticks(asks[0].price) - ticks(bids[0].price)) / 100 : null;
    state.textContent = spread === null ? 'One side of the book is empty.' : `Best bid ${bids[0].price}, best ask ${asks[0].price}, spread ${spread.toFixed(2)} ¢`;
  };
  const schedule = () => {
    if (!frame) frame = requestAnimationFrame(render);
  };
  const bookOf = (asset) => {
    const k = asset ?? '';
    if (!books.has(k)) books.set(k, { bids: new Map(), asks: new Map(), no_bids: new Map() });
    return books.get(k);
  };
  const ladderOf = (list) => new Map((list || []).map((l) => [ticks(l.price), l.size]));
  const best = (m, desc) => {
    let b = null;
    for (const t of m.keys()) if (b === null || (desc ? t > b : t < b)) b = t;
    return b;
  };
  return {
    el,
    /**
     * The best ask of an outcome in basis points (null when that side is empty): on venue_a a YES ask is
     * 1 − the best NO bid and a NO ask 1 − the best YES bid; on venue_b it is the ask of the outcome's token.
     */
    bestAsk(which, tokens = {}) {
      if (exchange === 'venue_a') {
        const book = books.values().next().value;
        const bid = book && best(which === 'YES' ? book.no_bids : book.bids, true);
        return bid === null || bid === undefined ? null : 10000 - bid;
      }
      const book = books.get(which === 'YES' ? tokens.yes : tokens.no);
      return book ? best(book.asks, false) : null;
    },
    /** The YES token of a venue_b market, once known (null: it cannot be known; the first token is drawn). */
    setYesAsset(id) {
      yes = id;
      yesKnown = true;
      schedule();
    },
    onMessage(m) {
      if (m.market_id !== marketId) return;
      const book = bookOf(m.asset_id);
      if (m.type === 'snapshot') {
        book.bids = ladderOf(m.bids);
        book.asks = ladderOf(m.asks);
        book.no_bids = ladderOf(m.no_bids);
        el.classList.remove('stale');
        schedule();
      } else if (m.type === 'change') {
        for (const c of m.changes) {
          const side = c.side === 'bid' ? 'bids' : c.side === 'ask' ? 'asks' : 'no_bids';
          if (c.size > 0) book[side].set(ticks(c.price), c.size);
          else book[side].delete(ticks(c.price));
        }
        schedule();
      } else if (m.type === 'stale') {
        el.classList.add('stale');
        state.textContent = `The book lost continuity (${m.cause || 'stale'}); it is unknown until the venue sends it again.`;
      }
    },
    destroy() {
      cancelAnimationFrame(frame);
      chart?.destroy();
    },
  };
}

/** The YES token of a venue_b market, from its latest top-of-book rows. */
async function yesToken(marketId) {
  const r = await api(`/v1/historical/venue_b/top-of-book${query({ market_id: marketId, limit: 10 })}`);
  return r.rows.find((x) => x.outcome === 'YES')?.asset_id || null;
}

/** The pair this market belongs to, if the scanner forms one. */
async function findPair(exchange, marketId) {
  let offset = 0;
  for (let page = 0; page < 10; page++) {
    const r = await api(`/v1/arbitrage/pairs${query({ limit: 100, offset })}`);
    const hit = r.items.find((p) => p[exchange]?.market_id === marketId);
    if (hit) return hit;
    if (!r.has_more) return null;
    offset += r.items.length;
  }
  return null;
}

// --- one market ---

function mountMarket(root, exchange, marketId) {
  const cleanups = [];
  const head = h('div', { class: 'market-head' }, h('h1', {}, marketId));
  const books = panel('Order book', 'market-book');
  const hist = panel('Price history', 'market-history');
  const trades = panel('Trades', 'market-trades');
  fill(root, h('p', {}, h('a', { href: '#/market' }, '← Search')), head, books.el, hist.el, trades.el);

  if (!getKey()) {
    for (const p of [books, hist, trades]) p.body.append(notice('info', 'Enter an API key on the Keys page: the books, history and trades need one (any plan).'));
    // The catalog is public: the heading names the market even without a key.
    api(`/v1/search/markets${query({ q: marketId, exchange, limit: 10 })}`)
      .then((list) => {
        const m = list.find((x) => x.market_id === marketId);
        if (m) fill(head, h('h1', {}, m.title || m.question || marketId), h('p', { class: 'muted' }, `${venue(exchange)} · `, shortId(marketId), m.subtitle ? ` · ${m.subtitle}` : '', ` · ${m.status}`));
      })
      .catch(() => {});
    return () => {};
  }

  // What YES stands for (the team YES backs on a game), once the pair says it.
  const yesNote = h('p', { class: 'yes-note' });
  // Header and price history from the OHLCV route.
  const select = h('select', { id: 'history-interval', 'aria-label': 'Interval' }, INTERVALS.map((i) => h('option', { value: i }, i)));
  const histNote = h('div');
  const gapNote = h('p', { class: 'muted' });
  const chartEl = h('div', { class: 'chart', id: 'history-chart' });
  hist.body.append(h('label', {}, 'Interval ', select), histNote, chartEl, gapNote);
  let chart = null;
  let loadCtl = null;
  const loadHistory = async () => {
    loadCtl?.abort();
    loadCtl = new AbortController();
    const signal = loadCtl.signal;
    try {
      const r = await api(`/v1/markets/ohlcv${query({ market_ids: marketId, exchange, interval: select.value })}`, { signal });
      const m = r.markets[0];
      // A binary market never trades at 0: a zero last price means no trade yet.
      const last = Number(m.last_price) > 0 ? `last price ${price(m.last_price)} · 1-day change ${price(m.change_1d)}` : 'no trade yet: the book below has its prices';
      fill(head, h('h1', {}, m.title || marketId),
        h('p', { class: 'muted' }, `${venue(m.exchange)} · `, shortId(m.market_id), ` · event ${m.event_id} · ${last}`),
        yesNote);
      // The chart opens where this market's data begins (a market recorded for minutes would otherwise be a
      // dot at the end of an empty window); a capture gap in the window still widens it.
      const firstData = m.candles.find((c) => c.close != null)?.timestamp;
      const to = Date.parse(r.to);
      const windowFrom = Date.parse(r.from);
      const g = await api(`/v1/historical/gaps${query({ exchange, market_id: marketId, start_time: windowFrom, end_time: to, limit: 200 })}`, { signal });
      const gapStart = Math.min(...g.gaps.map((x) => Math.max(windowFrom, x.start_time)));
      const from = Math.min(firstData ?? windowFrom, gapStart);
      const gaps = g.gaps.map((x) => ({ start: Math.max(from, x.start_time), end: x.end_time ? Math.min(to, x.end_time) : to, cause: x.cause }));
      if (!chart) chart = priceChart(chartEl, 'YES price');
      // The chart spans to `to`: a gap in the interval still open is inside it.
      chart.update([...m.candles.filter((c) => c.timestamp >= from), { timestamp: to, close: null }], gaps);
      chartEl.dataset.candles = String(m.candles.filter((c) => c.close != null).length);
      chartEl.dataset.gaps = String(gaps.length);
      gapNote.textContent = gaps.length
        ? `Shaded: ${gaps.length} capture gap(s) in this window (${[...new Set(gaps.map((x) => x.cause))].join(', ')}); nothing was recorded then.`
        : 'No capture gap in this window.';
      histNote.replaceChildren();
    } catch (e) {
      if (e.name === 'AbortError') return;
      fill(histNote, errorNotice(e));
    }
  };
  select.value = '1m';
  select.addEventListener('change', loadHistory);
  loadHistory();
  const refresh = setInterval(loadHistory, 30000);
  cleanups.push(() => clearInterval(refresh), () => loadCtl?.abort());

  // Books: this market's, then the paired market's beside it once known.
  const bookRow = h('div', { class: 'books' });
  const bookNote = h('div');
  books.body.append(bookNote, bookRow);
  const views = new Map();
  const follow = (ex, id, title, yes) => {
    const v = bookView(ex, id, title, yes);
    views.set(id, v);
    bookRow.append(v.el);
    cleanups.push(() => v.destroy());
    cleanups.push(stream.subscribe('book', [id], (m) => {
      if (m.type === 'error') {
        fill(bookNote, errorNotice(refusal(m)));
      } else v.onMessage(m);
    }));
    if (ex === 'venue_b' && !yes) yesToken(id).then((t) => v.setYesAsset(t)).catch(() => v.setYesAsset(null));
  };
  follow(exchange, marketId, 'this market', null);
  findPair(exchange, marketId).then((pair) => {
    if (!pair) {
      bookNote.append(notice('info', 'Not paired with a market of the other venue.'));
      return;
    }
    const other = exchange === 'venue_a' ? pair.venue_b : pair.venue_a;
    const self = pair[exchange];
    if (self?.yes_outcome) yesNote.textContent = `YES here is ${self.yes_outcome}; on the paired market YES is ${other.yes_outcome || 'not stated'}.`;
    const basis = basisWords(pair.settlement_basis);
    bookNote.append(h('p', { class: 'muted pair-note' }, 'Paired with ', h('a', { href: marketHref(other.exchange, other.market_id) }, other.title),
      ` (settlement terms: ${basis.text}${pair.status === 'rejected' ? '; rejected by the operator' : ''}). ${basis.title}`));
    follow(other.exchange, other.market_id, 'paired market', null);
  }).catch((e) => bookNote.append(errorNotice(e)));

  // Trades: the latest from the history, then live.
  const tradeBody = h('tbody');
  const tradeNote = h('div');
  trades.body.append(tradeNote, h('div', { class: 'scroll' }, h('table', { class: 'data', id: 'trades-table' },
    h('thead', {}, h('tr', {}, h('th', {}, 'Time (UTC)'), h('th', {}, 'Side'), h('th', { class: 'num' }, 'Price'), h('th', { class: 'num' }, 'Size'), h('th', { class: 'num' }, 'Notional $'))),
    tradeBody)));
  const tradeRow = (t) => h('tr', {}, h('td', {}, clock(t.executed_at)), h('td', {}, `${t.side || t.taker_side || ''} ${t.outcome || ''}`),
    h('td', { class: 'num' }, price(t.price)), h('td', { class: 'num' }, num(t.size, 2)), h('td', { class: 'num' }, num(t.notional ?? t.notional_usd, 2)));
  api(`/v1/historical/${exchange}/trades${query({ market_id: marketId, limit: 50 })}`)
    .then((r) => {
      tradeBody.append(...r.trades.map(tradeRow));
      if (!r.trades.length) tradeNote.append(h('p', { class: 'muted' }, 'No trade recorded yet; new ones appear here.'));
    })
    .catch((e) => fill(tradeNote, errorNotice(e)));
  cleanups.push(stream.subscribe('trades', [marketId], (m) => {
    if (m.type === 'trade' && m.market_id === marketId) {
      tradeNote.replaceChildren();
      tradeBody.prepend(tradeRow(m));
      while (tradeBody.childElementCount > MAX_TRADES) tradeBody.lastElementChild.remove();
    }
  }));
  return () => cleanups.forEach((f) => f());
}
