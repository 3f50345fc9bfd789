// A task's Terminal tab: the operator's shell on the backend machine, in
// the task's working directory, over GET /terminal (the board's session
// cookie authenticates the upgrade; see docs/public/terminal.md). The
// terminal emulator is xterm.js, vendored in /lib/xterm and loaded only
// when the tab is first opened. A page that reloads reattaches to its
// shell within the backend's grace period (the terminal's id is kept in
// sessionStorage, per task).
import { h, fill, toast } from './dom.js';

const RECONNECT_KEY = (taskId) => `kandev.terminal.${taskId}`;
// MAX_INPUT is the backend's bound on one input message (terminal.MaxInput).
const MAX_INPUT = 64 * 1024;

let lib = null;

// loadXterm imports xterm.js and its fit addon once, with its stylesheet.
// xterm.js writes its measured cell sizes and theme into <style> elements,
// which the board's CSP (style-src 'self') refuses; it is given an inert
// stand-in for each instead, whose text becomes a constructed stylesheet
// (CSSOM, which the policy allows), replaced when xterm.js rewrites it and
// dropped when it removes the element.
async function loadXterm() {
  if (lib) return lib;
  document.head.append(h('link', { rel: 'stylesheet', href: '/lib/xterm/xterm.css' }));
  const create = Document.prototype.createElement;
  Document.prototype.createElement = function createElement(tag, opts) {
    if (String(tag).toLowerCase() !== 'style') return create.call(this, tag, opts);
    const el = create.call(this, 'span', opts);
    el.hidden = true;
    adoptStyle(this, el);
    return el;
  };
  const [{ Terminal }, { FitAddon }] = await Promise.all([import('/lib/xterm/xterm.mjs'), import('/lib/xterm/addon-fit.mjs')]);
  lib = { Terminal, FitAddon };
  return lib;
}

function adoptStyle(doc, el) {
  const sheet = new CSSStyleSheet();
  doc.adoptedStyleSheets = [...doc.adoptedStyleSheets, sheet];
  let text = '';
  Object.defineProperty(el, 'textContent', {
    get: () => text,
    set: (v) => { text = String(v); sheet.replaceSync(text); },
  });
  const remove = el.remove.bind(el);
  el.remove = () => { doc.adoptedStyleSheets = doc.adoptedStyleSheets.filter((s) => s !== sheet); remove(); };
}

export class TerminalView {
  constructor(task) {
    this.task = task;
    this.status = h('p', { class: 'hint', id: 'terminal-status', role: 'status' });
    this.screen = h('div', { class: 'terminal-screen', id: 'terminal-screen' });
    this.el = h('section', { class: 'panel', id: 'panel-terminal', 'aria-labelledby': 'terminal-title' },
      h('h2', { id: 'terminal-title' }, 'Terminal'),
      h('p', { class: 'hint' }, 'A shell on the machine Kandev runs on, in this task’s working directory. It ends when the task is stopped, archived or deleted.'),
      h('div', { class: 'actions' },
        h('button', { type: 'button', id: 'terminal-new', onclick: () => this.restart() }, 'New shell'),
        h('button', { type: 'button', class: 'danger', id: 'terminal-close', onclick: () => this.closeShell() }, 'Close shell')),
      this.status, this.screen);
    this.onResize = () => this.fit();
  }

  // open shows the terminal, starting (or reattaching to) a shell.
  async open() {
    if (!this.term) {
      const { Terminal, FitAddon } = await loadXterm();
      this.term = new Terminal({ cursorBlink: true, convertEol: false, scrollback: 5000, fontSize: 14 });
      this.fitter = new FitAddon();
      this.term.loadAddon(this.fitter);
      this.term.open(this.screen);
      this.term.onData((d) => this.input(d));
      this.term.onResize(({ cols, rows }) => this.control({ type: 'resize', cols, rows }));
      window.addEventListener('resize', this.onResize);
    }
    this.fit();
    if (!this.sock) this.connect();
    this.term.focus();
  }

  fit() { try { this.fitter.fit(); } catch { /* hidden: no size yet */ } }

  connect(fresh = false) {
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const sock = new WebSocket(`${scheme}://${location.host}/terminal`);
    sock.binaryType = 'arraybuffer';
    this.sock = sock;
    const saved = fresh ? null : sessionStorage.getItem(RECONNECT_KEY(this.task.id));
    const size = { cols: this.term.cols, rows: this.term.rows };
    sock.onopen = () => sock.send(JSON.stringify(saved
      ? { type: 'attach', task_id: this.task.id, terminal_id: saved, ...size }
      : { type: 'open', task_id: this.task.id, ...size }));
    sock.onmessage = (ev) => {
      if (typeof ev.data !== 'string') { this.term.write(new Uint8Array(ev.data)); return; }
      const m = JSON.parse(ev.data);
      if (m.type !== 'ready' && this.sock === sock) this.sock = null; // the server closes after exit and error
      this.notice(m, saved);
    };
    sock.onclose = () => { if (this.sock === sock) { this.sock = null; this.setStatus('Disconnected. Open the tab again or press New shell.'); } };
  }

  notice(m, saved) {
    if (m.type === 'ready') {
      sessionStorage.setItem(RECONNECT_KEY(this.task.id), m.terminal_id);
      this.setStatus(saved ? 'Reattached to the shell.' : 'Shell started.');
    } else if (m.type === 'exit') {
      sessionStorage.removeItem(RECONNECT_KEY(this.task.id));
      this.setStatus(`The shell ended (exit code ${m.code}${m.reason ? `: ${m.reason}` : ''}).`);
    } else if (m.type === 'error') {
      if (saved && m.code === 'NOT_FOUND') { // the old shell ended: start a new one
        sessionStorage.removeItem(RECONNECT_KEY(this.task.id));
        this.connect(true);
        return;
      }
      this.setStatus(m.message);
      toast(m.message, 'error');
    }
  }

  setStatus(text) { fill(this.status, text); }

  input(d) {
    if (!this.sock || this.sock.readyState !== WebSocket.OPEN) return;
    const bytes = new TextEncoder().encode(d);
    for (let i = 0; i < bytes.length; i += MAX_INPUT) this.sock.send(bytes.subarray(i, i + MAX_INPUT));
  }

  control(m) { if (this.sock && this.sock.readyState === WebSocket.OPEN) this.sock.send(JSON.stringify(m)); }

  closeShell() {
    this.control({ type: 'close' });
  }

  restart() {
    if (this.sock) { this.control({ type: 'close' }); const s = this.sock; this.sock = null; s.close(); }
    sessionStorage.removeItem(RECONNECT_KEY(this.task.id));
    if (this.term) { this.term.reset(); this.connect(true); this.term.focus(); }
  }

  // close leaves the page: the connection ends, the shell lives on for
  // the backend's grace period (to be reattached).
  close() {
    window.removeEventListener('resize', this.onResize);
    if (this.sock) { const s = this.sock; this.sock = null; s.close(); }
    if (this.term) this.term.dispose();
  }
}
