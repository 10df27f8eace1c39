// One WebSocket to /v1/stream shared by every panel of the page. The key is sent in the first message (a
// browser cannot set headers on a WebSocket). Panels subscribe with a handler; the connection re-subscribes
// after a reconnect, and a panel's refusal (for example a channel its plan does not include) goes to that
// panel's handler as an `error` message.

import { getKey } from './api.js';

export const stats = { messages: 0, reconnects: 0 };

class Stream {
  constructor() {
    this.ws = null;
    this.subs = new Set(); // {channel, markets, onMessage}
    this.state = 'offline';
    this.plan = null;
    this.listeners = new Set();
    this.retry = 0;
    this.timer = null;
  }

  /** Calls fn(state, plan) now and on every change of the connection. Returns the unsubscribe function. */
  onState(fn) {
    this.listeners.add(fn);
    fn(this.state, this.plan);
    return () => this.listeners.delete(fn);
  }

  setState(state, plan = this.plan) {
    this.state = state;
    this.plan = plan;
    for (const fn of this.listeners) fn(state, plan);
  }

  /** (Re)connects with the stored key; without one the stream stays offline. */
  connect() {
    clearTimeout(this.timer);
    if (this.ws) {
      this.ws.onclose = null;
      this.ws.close(1000);
      this.ws = null;
    }
    const key = getKey();
    if (!key) {
      this.setState('no key', null);
      return;
    }
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(`${scheme}//${location.host}/v1/stream`);
    this.ws = ws;
    this.setState('connecting');
    ws.onopen = () => ws.send(JSON.stringify({ op: 'auth', key }));
    ws.onmessage = (ev) => this.receive(ev.data);
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      this.ws = null;
      // 1008 is a refusal (bad key, too many streams): say why and wait longer before trying again.
      this.setState(ev.code === 1008 ? `refused: ${ev.reason || 'policy'}` : 'reconnecting');
      this.retry = Math.min(this.retry + 1, 6);
      const delay = (ev.code === 1008 ? 15000 : 500 * 2 ** this.retry) * (0.8 + Math.random() * 0.4);
      this.timer = setTimeout(() => {
        stats.reconnects += 1;
        this.connect();
      }, delay);
    };
  }

  receive(text) {
    stats.messages += 1;
    let m;
    try {
      m = JSON.parse(text);
    } catch {
      return;
    }
    if (m.type === 'authenticated') {
      this.retry = 0;
      this.setState('live', m.plan);
      for (const s of this.subs) this.send(s);
      return;
    }
    if (m.type === 'error' && !m.channel) {
      this.setState(`error: ${m.detail}`);
      return;
    }
    for (const s of this.subs) {
      if (s.channel === m.channel) s.onMessage(m);
    }
  }

  send(sub, op = 'subscribe') {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN || this.state !== 'live') return;
    const msg = { op, channel: sub.channel };
    if (sub.markets && sub.markets.length) msg.markets = sub.markets;
    this.ws.send(JSON.stringify(msg));
  }

  /**
   * Follows a channel (and markets) until the returned function is called. The handler gets every message
   * of the channel, including `subscribed`, and an `error` message when the subscription is refused.
   */
  subscribe(channel, markets, onMessage) {
    const sub = { channel, markets, onMessage };
    this.subs.add(sub);
    this.send(sub);
    return () => {
      this.subs.delete(sub);
      // Another panel may follow the same channel: unsubscribe only what no one else follows.
      const still = [...this.subs].filter((s) => s.channel === channel);
      if (!still.length) this.send({ channel }, 'unsubscribe');
      else if (markets && markets.length) {
        const kept = new Set(still.flatMap((s) => s.markets || []));
        const drop = markets.filter((m) => !kept.has(m));
        if (drop.length) this.send({ channel, markets: drop }, 'unsubscribe');
      }
    };
  }
}

export const stream = new Stream();

/** A stream `error` message as the error a panel describes (its detail and the plan it needs). */
export function refusal(m) {
  return { message: m.detail, requiredPlan: m.required_plan };
}
