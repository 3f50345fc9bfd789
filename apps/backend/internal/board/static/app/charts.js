// Charts of rich output blocks, drawn as SVG elements (bar, line, pie),
// each with a legend and a data table so that no value is told by colour
// or shape alone.
import { h } from './dom.js';

const W = 480;
const H = 240;
const PAD = { l: 44, r: 10, t: 10, b: 40 };

function s(tag, attrs, ...children) { return h(`svg:${tag}`, attrs, ...children); }

export function chart(block) {
  const labels = block.labels || [];
  const series = (block.series || []).slice(0, 10);
  const title = block.title || 'Chart';
  const svg = s('svg', { class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `${block.chart_type} chart: ${title}` });
  if (block.chart_type === 'pie') pie(svg, labels, series[0] || { values: [] });
  else axes(svg, labels, series, block.chart_type === 'line');
  const legendItems = block.chart_type === 'pie' ? labels : series.map((x) => x.name);
  const legend = h('ul', { class: 'legend' }, legendItems.map((name, i) => h('li', {},
    h('span', { class: 'key', 'aria-hidden': 'true' }, s('svg', { viewBox: '0 0 10 10' }, s('rect', { width: 10, height: 10, class: `c${i % 10}` }))), name)));
  const table = h('table', { class: 'list' },
    h('thead', {}, h('tr', {}, h('th', {}, ''), series.map((x) => h('th', {}, x.name)))),
    h('tbody', {}, labels.map((l, i) => h('tr', {}, h('th', {}, l), series.map((x) => h('td', {}, fmt(x.values[i])))))));
  return h('figure', { class: 'chart-block' }, h('figcaption', {}, h('strong', {}, title)), svg, legend,
    h('details', {}, h('summary', {}, 'Data'), table));
}

function fmt(v) { return typeof v === 'number' ? v.toLocaleString() : ''; }

function axes(svg, labels, series, line) {
  const vals = series.flatMap((x) => x.values.filter((v) => typeof v === 'number' && Number.isFinite(v)));
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
      const pts = x.values.map((v, i) => `${PAD.l + band * (i + 0.5)},${y(v)}`).join(' ');
      svg.append(s('polyline', { class: `c${si % 10}`, points: pts }));
      x.values.forEach((v, i) => svg.append(s('circle', { class: `c${si % 10}`, cx: PAD.l + band * (i + 0.5), cy: y(v), r: 3 },
        s('title', {}, `${x.name}, ${labels[i]}: ${fmt(v)}`))));
      return;
    }
    const bw = (band * 0.8) / series.length;
    x.values.forEach((v, i) => {
      const top = Math.min(y(v), y(0));
      svg.append(s('rect', { class: `c${si % 10}`, x: PAD.l + band * i + band * 0.1 + bw * si, y: top, width: Math.max(1, bw - 1), height: Math.abs(y(v) - y(0)) },
        s('title', {}, `${x.name}, ${labels[i]}: ${fmt(v)}`)));
    });
  });
}

function pie(svg, labels, series) {
  const vals = series.values.map((v) => (typeof v === 'number' && v > 0 ? v : 0));
  const total = vals.reduce((a, b) => a + b, 0) || 1;
  const cx = W / 2;
  const cy = H / 2;
  const r = H / 2 - 12;
  let a0 = -Math.PI / 2;
  vals.forEach((v, i) => {
    const a1 = a0 + (v / total) * Math.PI * 2;
    const large = a1 - a0 > Math.PI ? 1 : 0;
    const p = (a) => `${cx + r * Math.cos(a)},${cy + r * Math.sin(a)}`;
    const d = v >= total ? `M${cx - r},${cy}a${r},${r} 0 1,0 ${2 * r},0a${r},${r} 0 1,0 ${-2 * r},0` : `M${cx},${cy}L${p(a0)}A${r},${r} 0 ${large} 1 ${p(a1)}Z`;
    svg.append(s('path', { class: `c${i % 10}`, d }, s('title', {}, `${labels[i]}: ${fmt(series.values[i])} (${Math.round((v / total) * 100)}%)`)));
    a0 = a1;
  });
}

function short(v) {
  const a = Math.abs(v);
  if (a >= 1e9) return `${(v / 1e9).toFixed(1)}G`;
  if (a >= 1e6) return `${(v / 1e6).toFixed(1)}M`;
  if (a >= 1e3) return `${(v / 1e3).toFixed(1)}k`;
  return String(Math.round(v * 100) / 100);
}
