// The two charts of the market page, drawn with uPlot (vendored, see docs/dashboard.md): a depth chart of one book
// and a price line with the capture gaps shaded. uPlot is loaded by index.html as a classic script, before
// the page's modules run.

const BID = '#15803d';
const ASK = '#b91c1c';

function width(el) {
  return Math.max(280, el.clientWidth || 480);
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

/** A depth chart in `el`. Returns {update(bids, asks), destroy()}. */
export function depthChart(el, title) {
  const height = 220;
  const stepped = uPlot.paths.stepped;
  const opts = {
    title,
    width: width(el),
    height,
    scales: { x: { time: false } },
    cursor: { drag: { x: false, y: false } },
    legend: { show: true },
    axes: [
      { values: (u, ticks) => ticks.map((t) => t.toFixed(2)) },
      { size: 60 },
    ],
    series: [
      { label: 'YES price', value: (u, v) => (v == null ? '–' : v.toFixed(4)) },
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
      {},
      { label: 'YES close', stroke: '#1d4ed8', width: 2, spanGaps: false, points: { show: true, size: 5 }, value: (u, v) => (v == null ? '–' : v.toFixed(4)) },
    ],
    axes: [{}, { size: 60, values: (u, ticks) => ticks.map((t) => t.toFixed(2)) }],
    hooks: {
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
