// The page's entry: a hash router over the pages, the header's key and stream state, and the counters
// the browser tests and the dashboard benchmark read (window.crossbookStats).

import { getKey, planName } from './api.js';
import { fill, h } from './dom.js';
import * as backtests from './backtests.js';
import * as history from './history.js';
import * as keys from './keys.js';
import * as live from './live.js';
import * as market from './market.js';
import * as opportunity from './opportunity.js';
import { stats, stream } from './stream.js';

const PAGES = { live, market, history, backtests, keys, opportunity };
// The page a page's tab belongs to (an opportunity is opened from Live).
const TAB = { opportunity: 'live' };

window.crossbookStats = {
  get messages() {
    return stats.messages;
  },
  get reconnects() {
    return stats.reconnects;
  },
  get opportunities() {
    return live.liveStats.opportunities;
  },
  get whales() {
    return live.liveStats.whales;
  },
};

const root = document.getElementById('page');
let unmount = null;

function route() {
  const [name, ...params] = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  const page = PAGES[name] ? name : 'live';
  for (const a of document.querySelectorAll('nav a')) a.classList.toggle('active', a.dataset.page === (TAB[page] || page));
  if (unmount) unmount();
  unmount = null;
  fill(root);
  try {
    unmount = PAGES[page].mount(root, params);
  } catch (e) {
    fill(root, h('p', { class: 'notice notice-error' }, `This page failed: ${e.message}`));
    throw e;
  }
  document.body.dataset.page = page;
}

const who = document.getElementById('who');
const conn = document.getElementById('conn');
stream.onState((state, plan) => {
  who.textContent = getKey() ? (plan ? `${planName(plan)} key` : 'key set') : 'no key';
  conn.textContent = `stream: ${state}`;
  conn.className = `conn ${state === 'live' ? 'good' : state === 'connecting' ? '' : 'bad'}`;
});

window.addEventListener('hashchange', route);
window.addEventListener('crossbook:key', () => {
  stream.connect();
  route();
});
stream.connect();
route();
