// Keys and webhooks: the key is entered once and kept in this browser's local storage (it never leaves the
// browser except in the X-API-Key header of this service's own API calls). The key's webhook registrations
// can be read, sent a test delivery, and their delivery log shown.

import { api, getKey, planName, setKey } from './api.js';
import { clock, errorNotice, fill, h, notice, panel } from './dom.js';
import { stream } from './stream.js';

const TYPES = ['whale', 'arbitrage'];

export function mount(root) {
  const keyPanel = panel('API key', 'key-panel');
  const hooks = panel('Webhooks', 'webhooks-panel');
  fill(root, keyPanel.el, hooks.el);

  const input = h('input', { id: 'key-input', type: 'password', placeholder: 'cbk_…', autocomplete: 'off', size: 40, 'aria-label': 'API key' });
  const save = h('button', { id: 'key-save', type: 'submit' }, 'Save');
  const forget = h('button', { id: 'key-forget', type: 'button' }, 'Forget');
  const status = h('p', { id: 'key-status' });
  keyPanel.body.append(
    h('p', { class: 'muted' }, 'The key is kept in this browser only (local storage) and sent to this service with each call. The command crossbook keys create --name NAME --plan PLAN makes one; serve --simulate prints one per plan on an empty database.'),
    h('form', { id: 'key-form' }, input, ' ', save, ' ', forget),
    status);
  const unState = stream.onState((state, plan) => {
    if (!getKey()) status.textContent = 'No key: search and the public whale feed work without one.';
    else if (plan) status.textContent = `Key saved; the stream accepted it: ${planName(plan)} plan.`;
    else status.textContent = `Key saved; stream: ${state}.`;
  });
  keyPanel.body.querySelector('#key-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    setKey(input.value.trim());
    input.value = '';
    loadHooks();
  });
  forget.addEventListener('click', () => {
    setKey('');
    loadHooks();
  });

  const hookBody = h('div');
  hooks.body.append(hookBody);
  const deliveries = (type, into) => api(`/v1/webhooks/${type}/deliveries`)
    .then((r) => fill(into, r.data.length
      ? h('table', { class: 'data' },
        h('thead', {}, h('tr', {}, h('th', {}, 'Time'), h('th', {}, 'Event'), h('th', {}, 'Status'), h('th', {}, 'Latency'), h('th', {}, 'Error'))),
        h('tbody', {}, r.data.map((d) => h('tr', {}, h('td', {}, clock(d.created_at)), h('td', {}, d.event_type),
          h('td', { class: d.status_code >= 200 && d.status_code < 300 ? 'good' : 'bad' }, d.status_code ?? (d.blocked ? 'blocked' : 'no answer')),
          h('td', {}, `${d.latency_ms} ms`), h('td', {}, d.error || '')))))
      : h('p', { class: 'muted' }, 'No delivery yet.')))
    .catch((e) => fill(into, errorNotice(e)));
  const loadHooks = async () => {
    if (!getKey()) {
      fill(hookBody, notice('info', 'Enter a key above to see its webhooks.'));
      return;
    }
    try {
      const r = await api('/v1/webhooks');
      const byType = new Map(r.data.map((w) => [w.type, w]));
      fill(hookBody, TYPES.map((type) => {
        const w = byType.get(type);
        if (!w) return h('div', { class: 'hook', dataset: { type } }, h('h3', {}, type), h('p', { class: 'muted' }, `No ${type} webhook registered (POST /v1/webhooks/${type} registers one).`));
        const log = h('div', { class: 'deliveries' });
        const result = h('div');
        const test = h('button', { type: 'button', class: 'test' }, 'Send a test');
        test.addEventListener('click', async () => {
          test.disabled = true;
          try {
            const t = await api(`/v1/webhooks/${type}/test`, { method: 'POST' });
            fill(result, notice(t.data.status_code >= 200 && t.data.status_code < 300 ? 'info' : 'error', `${t.message}${t.data.error ? `: ${t.data.error}` : ''}`));
          } catch (e) {
            fill(result, errorNotice(e));
          }
          test.disabled = false;
          deliveries(type, log);
        });
        deliveries(type, log);
        return h('div', { class: 'hook', dataset: { type } },
          h('h3', {}, type),
          h('p', {}, `${w.url} · ${w.enabled ? 'enabled' : 'disabled'} · since ${clock(w.created_at)}`),
          test, result, h('h4', {}, 'Delivery log'), log);
      }));
    } catch (e) {
      fill(hookBody, errorNotice(e));
    }
  };
  loadHooks();
  return () => unState();
}
