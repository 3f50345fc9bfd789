// Charts of rich output blocks, drawn as SVG elements (bar, line), each
// with its summary, a legend and a data table so that no value is told by
// colour or shape alone. A null value is a gap.
import { h } from './dom.js';

const W = 480;
const H = 240;
const PAD = { l: 44, r: 10, t: 10, b: 40 };

function s(tag, attrs, ...children) { return h(`svg:${tag}`, attrs, ...children); }

export function chart(block) {
  const labels = block.labels || [];
  const series = (block.series || []).slice(0, 10).map((x) => ({ ...x, values: (x.values || []).map((v) => (typeof v === 'number' && Number.isFinite(v) ? v : null)) }));
  const title = block.title || 'Chart';
  const svg = s('svg', { class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `${block.chart_type} chart: ${title}` });
  axes(svg, labels, series, block.chart_type === 'line');
  const legendItems = series.map((x) => x.label);
  const legend = h('ul', { class: 'legend' }, legendItems.map((name, i) => h('li', {},
    h('span', { class: 'key', 'aria-hidden': 'true' }, s('svg', { viewBox: '0 0 10 10' }, s('rect', { width: 10, height: 10, class: `c${i % 10}` }))), name)));
  const table = h('table', { class: 'list' },
    h('thead', {}, h('tr', {}, h('th', {}, ''), series.map((x) => h('th', {}, x.label)))),
    h('tbody', {}, labels.map((l, i) => h('tr', {}, h('th', {}, l), series.map((x) => h('td', {}, fmt(x.values[i])))))));
  return h('figure', { class: 'chart-block' }, h('figcaption', {}, h('strong', {}, title), block.summary ? h('span', {}, ` — ${block.summary}`) : null), svg, legend,
    h('details', {}, h('summary', {}, 'Data'), table));
}

function fmt(v) { return typeof v === 'number' ? v.toLocaleString() : ''; }

function axes(svg, labels, series, line) {
  const vals = series.flatMap((x) => x.values.filter((v) => v !== null));
  const max = Math.max(0, ...vals);
  const min = Math.min(0, ...vals);
  const span = max - min || 1;
  const iw = W - PAD.l - PAD.r;
  const ih = H - PAD.t - PAD.b;
  const y = (v) => PAD.t + ih - ((v - min) / span) * ih;
  svg.append(s('line', { class: 'axis', x1: PAD.l, x2: W - PAD.r, y1: y(0), y2: y(0) }),
    s('line', { class: 'axis', x1: PAD.l, x2: PAD.l, y1: PAD.t, y2: PAD.t + ih }),
    s('text', { x: PAD.l - 4, y: y(max) + 4, 'text-anchor': 'end' }, short(max)),
    s('text', { x: PAD.l - 4, y: y(min) + 4, 'text-anchor': 'end' }, short(min)));
  const band = iw / Math.max(1, labels.length);
  labels.forEach((l, i) => svg.append(s('text', { x: PAD.l + band * (i + 0.5), y: H - PAD.b + 14, 'text-anchor': 'middle' }, l.length > 12 ? `${l.slice(0, 11)}…` : l)));
  series.forEach((x, si) => {
    if (line) {
      // One polyline per run of values between gaps.
      let run = [];
      const flush = () => { if (run.length) svg.append(s('polyline', { class: `c${si % 10}`, points: run.join(' ') })); run = []; };
      x.values.forEach((v, i) => {
        if (v === null) { flush(); return; }
        run.push(`${PAD.l + band * (i + 0.5)},${y(v)}`);
        svg.append(s('circle', { class: `c${si % 10}`, cx: PAD.l + band * (i + 0.5), cy: y(v), r: 3 },
          s('title', {}, `${x.label}, ${labels[i]}: ${fmt(v)}`)));
      });
      flush();
      return;
    }
    const bw = (band * 0.8) / series.length;
    x.values.forEach((v, i) => {
      if (v === null) return;
      const top = Math.min(y(v), y(0));
      svg.append(s('rect', { class: `c${si % 10}`, x: PAD.l + band * i + band * 0.1 + bw * si, y: top, width: Math.max(1, bw - 1), height: Math.abs(y(v) - y(0)) },
        s('title', {}, `${x.label}, ${labels[i]}: ${fmt(v)}`)));
    });
  });
}

function short(v) {
  const a = Math.abs(v);
  if (a >= 1e9) return `${(v / 1e9).toFixed(1)}G`;
  if (a >= 1e6) return `${(v / 1e6).toFixed(1)}M`;
  if (a >= 1e3) return `${(v / 1e3).toFixed(1)}k`;
  return String(Math.round(v * 100) / 100);
}
