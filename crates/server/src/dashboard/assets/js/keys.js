// Keys and webhooks: the key is entered once and kept in this browser's local storage (it never leaves the
// browser except in the X-API-Key header of this service's own API calls). The key's webhook registrations
// are registered, changed, enabled or disabled, deleted and sent a test delivery from here, and their delivery
// log shown. The signing secret is shown once, when a registration is made.

import { api, getKey, planName, setKey } from './api.js';
import { clock, errorNotice, fill, h, notice, panel } from './dom.js';
import { stream } from './stream.js';

const TYPES = ['whale', 'arbitrage'];

/** The saved key's prefix, as `crossbook keys list` shows keys (`cbk_` and 8 characters). */
const keyPrefix = () => getKey().slice(0, 12);

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
    else if (plan) status.textContent = `Key ${keyPrefix()}… saved; the stream accepted it: ${planName(plan)} plan.`;
    else status.textContent = `Key ${keyPrefix()}… saved; stream: ${state}.`;
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
        h('thead', {}, h('tr', {}, h('th', {}, 'Time (UTC)'), h('th', {}, 'Event'), h('th', {}, 'Status'), h('th', {}, 'Latency'), h('th', {}, 'Error'))),
        h('tbody', {}, r.data.map((d) => h('tr', {}, h('td', {}, clock(d.created_at)), h('td', {}, d.event_type),
          h('td', { class: d.status_code >= 200 && d.status_code < 300 ? 'good' : 'bad' }, d.status_code ?? (d.blocked ? 'blocked' : 'no answer')),
          h('td', {}, `${d.latency_ms} ms`), h('td', {}, d.error || '')))))
      : h('p', { class: 'muted' }, 'No delivery yet.')))
    .catch((e) => fill(into, errorNotice(e)));
  // The signing secret, shown once after registering: with a copy button and how a receiver checks a delivery.
  const secretBox = (secret) => {
    const copied = h('span', { class: 'muted', role: 'status' });
    const copy = h('button', { type: 'button', class: 'copy' }, 'Copy');
    copy.addEventListener('click', () => navigator.clipboard.writeText(secret)
      .then(() => { copied.textContent = ' copied'; })
      .catch(() => { copied.textContent = ' select the secret and copy it'; }));
    return h('div', { class: 'secret notice notice-info' },
      h('p', {}, 'The signing secret. It is shown here once; keep it with your receiver: ',
        h('code', { class: 'secret-value' }, secret), ' ', copy, copied),
      h('p', {}, 'A receiver checks each delivery over its raw body (Python; see the webhooks guide for a complete receiver):'),
      h('pre', {}, 'mac = hmac.new(secret.encode(), f"{msg_id}.{ts}.".encode() + body, hashlib.sha256).digest()\n'
        + 'ok = any(hmac.compare_digest("v1," + base64.b64encode(mac).decode(), s) for s in signature_header.split(" "))'));
  };
  const registerForm = (type, result) => {
    const url = h('input', { type: 'url', class: 'hook-url', required: true, placeholder: 'URL of your receiver', size: 40, 'aria-label': `${type} webhook URL` });
    const form = h('form', { class: 'hook-register' }, url, ' ', h('button', { type: 'submit' }, 'Register'));
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      try {
        const r = await api(`/v1/webhooks/${type}`, { method: 'POST', body: { url: url.value.trim() } });
        await loadHooks(type, secretBox(r.data.secret));
      } catch (e) {
        fill(result, errorNotice(e));
      }
    });
    return form;
  };
  const registered = (type, w, result, shown) => {
    const log = h('div', { class: 'deliveries' });
    const act = (label, cls, fn) => {
      const b = h('button', { type: 'button', class: cls }, label);
      b.addEventListener('click', async () => {
        b.disabled = true;
        try {
          await fn(b);
        } catch (e) {
          fill(result, errorNotice(e));
        }
        b.disabled = false;
      });
      return b;
    };
    const put = (body) => api(`/v1/webhooks/${type}`, { method: 'PUT', body }).then(() => loadHooks(type));
    const url = h('input', { type: 'url', class: 'hook-url', value: w.url, size: 40, 'aria-label': `${type} webhook URL` });
    const change = h('form', { class: 'hook-change' }, url, ' ', h('button', { type: 'submit' }, 'Change URL'));
    change.addEventListener('submit', (ev) => {
      ev.preventDefault();
      put({ url: url.value.trim(), enabled: w.enabled }).catch((e) => fill(result, errorNotice(e)));
    });
    let confirming = false;
    const buttons = h('p', {},
      act('Send a test', 'test', async () => {
        const t = await api(`/v1/webhooks/${type}/test`, { method: 'POST' });
        fill(result, notice(t.data.status_code >= 200 && t.data.status_code < 300 ? 'info' : 'error', `${t.message}${t.data.error ? `: ${t.data.error}` : ''}`));
        deliveries(type, log);
      }), ' ',
      act(w.enabled ? 'Disable' : 'Enable', 'toggle', () => put({ url: w.url, enabled: !w.enabled })), ' ',
      // Two clicks: deleting drops the registration and its secret.
      act('Delete', 'delete', async (b) => {
        if (!confirming) {
          confirming = true;
          b.textContent = 'Delete: click again to confirm';
          return;
        }
        await api(`/v1/webhooks/${type}`, { method: 'DELETE' });
        await loadHooks(type);
      }));
    deliveries(type, log);
    return [
      h('p', { class: 'hook-state' }, `${w.url} · `, h('strong', {}, w.enabled ? 'enabled' : 'disabled'), ` · since ${clock(w.created_at)}`),
      shown, change, buttons, result, h('h4', {}, 'Delivery log'), log,
    ];
  };
  // Draws every type's registration; `shown` (the secret box) goes under the type `justFor` just registered.
  const loadHooks = async (justFor = null, shown = null) => {
    if (!getKey()) {
      fill(hookBody, notice('info', 'Enter a key above to see its webhooks.'));
      return;
    }
    try {
      const r = await api('/v1/webhooks');
      const byType = new Map(r.data.map((w) => [w.type, w]));
      fill(hookBody, TYPES.map((type) => {
        const w = byType.get(type);
        const result = h('div', { class: 'hook-result' });
        return h('div', { class: 'hook', dataset: { type } },
          h('h3', {}, `${type} webhook`),
          w ? registered(type, w, result, type === justFor ? shown : null)
            : [h('p', { class: 'muted' }, `No ${type} webhook registered. Deliveries are signed POSTs to your URL.`), registerForm(type, result), result]);
      }));
    } catch (e) {
      fill(hookBody, errorNotice(e));
    }
  };
  loadHooks();
  return () => unState();
}
