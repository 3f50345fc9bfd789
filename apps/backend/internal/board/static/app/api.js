// The WebSocket API client of the board. The browser sends the board's
// session cookie with the upgrade; no token ever passes through script.

import { MAX_LIMIT, SUBSCRIBE, UNSUBSCRIBE } from './contract.js';

// ApiError is a server error: code, message and the field it names.
export class ApiError extends Error {
  constructor(code, message, field) {
    super(message);
    this.code = code;
    this.field = field || '';
  }
}

const REQUEST_TIMEOUT_MS = 30000;
const MAX_BACKOFF_MS = 10000;
// MAX_LIST_PAGES bounds listAll (MAX_LIMIT items a page).
const MAX_LIST_PAGES = 100;

export class API {
  constructor() {
    this.seq = 0;
    this.pending = new Map();
    this.handlers = new Map();
    this.topics = new Set();
    this.backoff = 500;
    this.ready = null;
    this.everOpened = false;
  }

  // connect opens the socket; it resolves once the connection is usable
  // and reconnects with backoff whenever it drops.
  connect() {
    if (this.ready) return this.ready;
    this.ready = new Promise((resolve) => {
      const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
      const sock = new WebSocket(`${scheme}://${location.host}/ws`);
      let opened = false;
      sock.onopen = async () => {
        opened = true;
        this.sock = sock;
        this.backoff = 500;
        this.emit('connection', { state: 'up', again: this.everOpened });
        const again = this.everOpened;
        this.everOpened = true;
        if (this.topics.size) await this.send(SUBSCRIBE, { topics: [...this.topics] }).catch(() => {});
        resolve();
        if (again) this.emit('reconnected', {});
      };
      sock.onmessage = (ev) => this.receive(ev.data);
      sock.onclose = () => {
        this.sock = null;
        this.ready = null;
        for (const [, p] of this.pending) p.reject(new ApiError('UNAVAILABLE', 'the connection to the backend was lost; retrying'));
        this.pending.clear();
        this.emit('connection', { state: 'down' });
        if (!opened) this.checkSignedIn();
        const wait = this.backoff;
        this.backoff = Math.min(this.backoff * 2, MAX_BACKOFF_MS);
        const again = new Promise((r) => { setTimeout(() => r(this.connect()), wait); });
        if (!opened) resolve(again);
      };
    });
    return this.ready;
  }

  // checkSignedIn reloads the page (showing the sign-in form) once the
  // board session has ended, e.g. after signing out in another tab.
  async checkSignedIn() {
    try {
      const r = await fetch('/app/api.js', { method: 'HEAD', cache: 'no-store' });
      if (r.status === 401) location.reload();
    } catch { /* the backend is down: keep retrying */ }
  }

  receive(data) {
    let m;
    try { m = JSON.parse(data); } catch { return; }
    if (m.type === 'notification') { this.emit(m.action, m.payload || {}); return; }
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    clearTimeout(p.timer);
    if (m.type === 'error') {
      const e = m.payload || {};
      p.reject(new ApiError(e.code, e.message, e.details && e.details.field));
    } else p.resolve(m.payload);
  }

  // request runs one action and resolves with its result.
  async request(action, payload = {}, timeout = REQUEST_TIMEOUT_MS) {
    await this.connect();
    return this.send(action, payload, timeout);
  }

  send(action, payload, timeout = REQUEST_TIMEOUT_MS) {
    return new Promise((resolve, reject) => {
      if (!this.sock || this.sock.readyState !== WebSocket.OPEN) {
        reject(new ApiError('UNAVAILABLE', 'not connected to the backend; retrying'));
        return;
      }
      this.seq += 1;
      const id = `b${this.seq}`;
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new ApiError('UNAVAILABLE', 'the backend did not answer in time'));
      }, timeout);
      this.pending.set(id, { resolve, reject, timer });
      this.sock.send(JSON.stringify({ id, type: 'request', action, payload }));
    });
  }

  // listAll pages through a list action (bounded) and returns every item.
  async listAll(action, payload = {}) {
    const items = [];
    let cursor = '';
    for (let i = 0; i < MAX_LIST_PAGES; i += 1) {
      const page = await this.request(action, { ...payload, limit: MAX_LIMIT, ...(cursor ? { cursor } : {}) });
      items.push(...(page.items || []));
      if (!page.next_cursor) return items;
      cursor = page.next_cursor;
    }
    return items;
  }

  // subscribe follows topics (kept across reconnects).
  async subscribe(...topics) {
    const fresh = topics.filter((t) => !this.topics.has(t));
    if (!fresh.length) return;
    fresh.forEach((t) => this.topics.add(t));
    await this.request(SUBSCRIBE, { topics: fresh });
  }

  async unsubscribe(...topics) {
    const had = topics.filter((t) => this.topics.delete(t));
    if (had.length && this.sock) await this.send(UNSUBSCRIBE, { topics: had }).catch(() => {});
  }

  // on registers a handler for a notification (or "connection",
  // "reconnected") and returns a function that removes it.
  on(event, fn) {
    if (!this.handlers.has(event)) this.handlers.set(event, new Set());
    this.handlers.get(event).add(fn);
    return () => this.handlers.get(event).delete(fn);
  }

  emit(event, payload) {
    for (const fn of this.handlers.get(event) || []) {
      try { fn(payload); } catch (e) { console.error(e); }
    }
  }
}

export const api = new API();
