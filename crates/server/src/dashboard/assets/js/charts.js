// The two charts of the market page, drawn with uPlot (vendored, see docs/dashboard.md): a depth chart of one book
// and a price line with the capture gaps shaded. uPlot is loaded by index.html as a classic script, before
// the page's modules run.

const BID = '#15803d';
const ASK = '#b91c1c';

function width(el) {
  return Math.max(280, el.clientWidth || 480);
}

/** A time as the page shows it everywhere: 24-hour, UTC ("14:05:09"). */
export function utcTime(sec) {
  return new Date(sec * 1000).toISOString().slice(11, 19);
}

/**
 * The time axis of every chart: 24-hour UTC labels (with the date when the range spans more than a day, and
 * seconds when ticks are less than a minute apart), and the zone named on the axis.
 */
function timeAxis() {
  return {
    label: 'UTC',
    labelSize: 20,
    values: (u, ticks, axisIdx, space, incr) => {
      const span = (u.scales.x.max ?? 0) - (u.scales.x.min ?? 0);
      return ticks.map((t) => {
        const iso = new Date(t * 1000).toISOString();
        if (span > 86400) return `${iso.slice(5, 10)} ${iso.slice(11, 16)}`;
        return incr < 60 ? iso.slice(11, 19) : iso.slice(11, 16);
      });
    },
  };
}

/**
 * Shows the latest values in a chart's legend whenever the cursor is not over it (uPlot shows none then),
 * so that a legend never reads "--" on a chart that has data.
 */
function latestInLegend() {
  return (u) => {
    if (u.legend.idx != null || !u.data[0]?.length) return;
    let last = u.data[0].length - 1;
    while (last > 0 && u.data.slice(1).every((s) => s[last] == null)) last--;
    u.setLegend({ idx: last }, false);
  };
}

/** Keeps a chart as wide as its container. Returns the function that stops it. */
function follow(el, plot, height) {
  const ro = new ResizeObserver(() => plot.setSize({ width: width(el), height }));
  ro.observe(el);
  return () => ro.disconnect();
}

/**
 * Cumulative depth of a YES book: bids (best = highest) and asks (best = lowest), each [{price, size}] with
 * price a decimal string. Returns uPlot data: [prices, bid depth or null, ask depth or null].
 */
export function depthData(bids, asks) {
  const b = bids.map((l) => [Number(l.price), l.size]).sort((x, y) => y[0] - x[0]);
  const a = asks.map((l) => [Number(l.price), l.size]).sort((x, y) => x[0] - y[0]);
  const prices = [...new Set([...b.map((l) => l[0]), ...a.map((l) => l[0])])].sort((x, y) => x - y);
  const bidY = prices.map((p) => {
    if (!b.length || p > b[0][0]) return null;
    return b.filter((l) => l[0] >= p).reduce((s, l) => s + l[1], 0);
  });
  const askY = prices.map((p) => {
    if (!a.length || p < a[0][0]) return null;
    return a.filter((l) => l[0] <= p).reduce((s, l) => s + l[1], 0);
  });
  return [prices, bidY, askY];
}

/** A depth chart in `el` of a book trading `outcome`. Returns {update(bids, asks), destroy()}. */
export function depthChart(el, title, outcome = 'YES') {
  const height = 220;
  const stepped = uPlot.paths.stepped;
  const opts = {
    title,
    width: width(el),
    height,
    scales: { x: { time: false } },
    cursor: { drag: { x: false, y: false } },
    // The legend names the series; its values would be the depth at the cursor's price, which the ladder
    // below already lists.
    legend: { show: true, live: false },
    axes: [
      { values: (u, ticks) => ticks.map((t) => t.toFixed(2)) },
      { size: 60 },
    ],
    series: [
      { label: `${outcome} price`, value: (u, v) => (v == null ? '–' : v.toFixed(4)) },
      { label: 'bids', stroke: BID, fill: 'rgba(21,128,61,0.15)', paths: stepped({ align: -1 }), points: { show: false } },
      { label: 'asks', stroke: ASK, fill: 'rgba(185,28,28,0.15)', paths: stepped({ align: 1 }), points: { show: false } },
    ],
  };
  const plot = new uPlot(opts, [[], [], []], el);
  const unfollow = follow(el, plot, height);
  return {
    update(bids, asks) {
      plot.setData(depthData(bids, asks));
    },
    destroy() {
      unfollow();
      plot.destroy();
    },
  };
}

/**
 * A price line in `el`: candles' closes (null where an interval had neither a trade nor a book) and the
 * capture gaps [{start, end}] in ms, shaded so that a flat line across a gap is not mistaken for data.
 */
export function priceChart(el, title) {
  const height = 240;
  let gaps = [];
  const opts = {
    title,
    width: width(el),
    height,
    scales: { x: { time: true }, y: { range: (u, min, max) => [Math.max(0, (min ?? 0) - 0.02), Math.min(1, (max ?? 1) + 0.02)] } },
    series: [
      { label: 'time', value: (u, v) => (v == null ? '–' : `${utcTime(v)} UTC`) },
      { label: 'YES close', stroke: '#1d4ed8', width: 2, spanGaps: false, points: { show: true, size: 5 }, value: (u, v) => (v == null ? '–' : v.toFixed(4)) },
    ],
    axes: [timeAxis(), { size: 60, values: (u, ticks) => ticks.map((t) => t.toFixed(2)) }],
    hooks: {
      setLegend: [latestInLegend()],
      drawClear: [
        (u) => {
          const { ctx, bbox } = u;
          ctx.save();
          ctx.fillStyle = 'rgba(234,88,12,0.35)';
          const bands = [];
          for (const g of gaps) {
            const x0 = Math.max(bbox.left, Math.floor(u.valToPos(g.start / 1000, 'x', true)));
            const x1 = Math.min(bbox.left + bbox.width, Math.ceil(u.valToPos((g.end ?? Date.now()) / 1000, 'x', true)));
            // At least 3 px, so that a gap of seconds on a chart of hours is still seen.
            const w = Math.max(3, x1 - x0);
            if (x1 >= x0) {
              ctx.fillRect(x0, bbox.top, w, bbox.height);
              bands.push([x0, x0 + w]);
            }
          }
          ctx.restore();
          // Where the bands are, in canvas pixels (the browser tests look there).
          el.dataset.bands = JSON.stringify(bands);
        },
      ],
    },
  };
  const plot = new uPlot(opts, [[], []], el);
  const unfollow = follow(el, plot, height);
  return {
    update(candles, newGaps) {
      gaps = newGaps;
      plot.setData([candles.map((c) => c.timestamp / 1000), candles.map((c) => (c.close == null ? null : Number(c.close)))]);
    },
    destroy() {
      unfollow();
      plot.destroy();
    },
  };
}

/**
 * The prices of an opportunity's two legs over time, as YES prices: the YES ask on the venue where YES is
 * bought, and 1 − the NO ask on the other venue (the YES price the NO leg sells at). The band below the
 * second line is as wide as both legs' fees: while the YES ask is under the band, the pair nets after fees;
 * inside it the fees eat the edge; above it there is no edge. Returns {push(t, yesAsk, yesViaNo, feeCents),
 * destroy()}, times in ms and prices in dollars (null when a side is empty).
 */
export function legsChart(el, yesLabel, noLabel) {
  const height = 240;
  const data = [[], [], [], []];
  const four = (u, v) => (v == null ? '–' : v.toFixed(4));
  const opts = {
    title: 'Both legs as YES prices',
    width: width(el),
    height,
    scales: { x: { time: true }, y: { range: (u, min, max) => [Math.max(0, (min ?? 0) - 0.02), Math.min(1, (max ?? 1) + 0.02)] } },
    series: [
      { label: 'time', value: (u, v) => (v == null ? '–' : `${utcTime(v)} UTC`) },
      { label: yesLabel, stroke: BID, width: 2, spanGaps: false, points: { show: false }, value: four },
      { label: noLabel, stroke: '#1d4ed8', width: 2, spanGaps: false, points: { show: false }, value: four },
      { label: 'less both fees', stroke: 'rgba(29,78,216,0.5)', dash: [4, 4], spanGaps: false, points: { show: false }, value: four },
    ],
    bands: [{ series: [2, 3], fill: 'rgba(29,78,216,0.12)' }],
    axes: [timeAxis(), { size: 60, values: (u, ticks) => ticks.map((t) => t.toFixed(2)) }],
    hooks: { setLegend: [latestInLegend()] },
  };
  const plot = new uPlot(opts, data, el);
  const unfollow = follow(el, plot, height);
  // A few minutes at one sample a second is plenty for a live view and keeps the page's memory flat.
  const MAX_POINTS = 900;
  return {
    push(t, yesAsk, yesViaNo, feeCents) {
      data[0].push(t / 1000);
      data[1].push(yesAsk);
      data[2].push(yesViaNo);
      data[3].push(yesViaNo == null || feeCents == null ? null : yesViaNo - feeCents / 100);
      if (data[0].length > MAX_POINTS) for (const s of data) s.shift();
      plot.setData(data);
      el.dataset.points = String(data[0].length);
    },
    destroy() {
      unfollow();
      plot.destroy();
    },
  };
}

/** The net of an opportunity over time, cents per contract (null while closed). Returns {push(t, net), destroy()}. */
export function netChart(el) {
  const height = 180;
  const data = [[], []];
  const opts = {
    title: 'Net ¢ per contract',
    width: width(el),
    height,
    scales: { x: { time: true } },
    series: [
      { label: 'time', value: (u, v) => (v == null ? '–' : `${utcTime(v)} UTC`) },
      { label: 'net ¢', stroke: BID, width: 2, spanGaps: false, points: { show: true, size: 4 }, paths: uPlot.paths.stepped({ align: 1 }), value: (u, v) => (v == null ? '–' : v.toFixed(2)) },
    ],
    axes: [timeAxis(), { size: 50 }],
    hooks: { setLegend: [latestInLegend()] },
  };
  const plot = new uPlot(opts, data, el);
  const unfollow = follow(el, plot, height);
  return {
    push(t, net) {
      const sec = t / 1000;
      // One point per second: a burst of updates keeps the latest.
      if (data[0].length && Math.floor(data[0][data[0].length - 1]) === Math.floor(sec)) {
        data[1][data[1].length - 1] = net;
      } else {
        data[0].push(sec);
        data[1].push(net);
      }
      if (data[0].length > 900) for (const s of data) s.shift();
      plot.setData(data);
      el.dataset.points = String(data[0].length);
    },
    destroy() {
      unfollow();
      plot.destroy();
    },
  };
}

/**
 * A backtest's equity curve: the summed net result in dollars after each trade closes, drawn as steps from
 * zero at the start of the range (`from`, Unix ms).
 */
export function equityChart(el, from, points) {
  const height = 220;
  const start = Math.min(from / 1000, ...points.map((p) => Date.parse(p.at) / 1000));
  const data = [[start, ...points.map((p) => Date.parse(p.at) / 1000)], [0, ...points.map((p) => p.pnl_net_dollars)]];
  const opts = {
    title: 'Equity: net P&L, dollars',
    width: width(el),
    height,
    scales: { x: { time: true } },
    series: [
      { label: 'time', value: (u, v) => (v == null ? '–' : `${utcTime(v)} UTC`) },
      { label: 'net $', stroke: BID, width: 2, points: { show: points.length < 200, size: 4 }, paths: uPlot.paths.stepped({ align: 1 }), value: (u, v) => (v == null ? '–' : v.toFixed(2)) },
    ],
    axes: [timeAxis(), { size: 60 }],
    hooks: { setLegend: [latestInLegend()] },
  };
  const plot = new uPlot(opts, data, el);
  el.dataset.points = String(points.length);
  const unfollow = follow(el, plot, height);
  return () => {
    unfollow();
    plot.destroy();
  };
}
