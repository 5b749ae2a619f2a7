// The chart of a run, as a hand-written SVG: per scenario, the ratio of the gateway's req/s to its floor
// (linear, the 0.4 target marked) and the gateway's p99 beside the floor's (log scale, each scenario's
// p99 limit marked where it has one).
import { p99Limit, targets, type RunResult } from './report.js';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function chart(r: RunResult): string {
  const rows = r.scenarios;
  const rowH = 18;
  const top = 48;
  const labelW = 250;
  const panelW = 330;
  const gap = 40;
  const width = labelW + panelW * 2 + gap + 30;
  const height = top + rows.length * rowH + 40;
  const x1 = labelW; // ratio panel
  const x2 = labelW + panelW + gap; // p99 panel
  const maxRatio = Math.max(1, ...rows.map((s) => s.ratio));
  const rx = (v: number) => x1 + (Math.min(v, maxRatio) / maxRatio) * panelW;
  const lo = 0.1;
  const hi = Math.max(1000, ...rows.map((s) => s.gateway.p99 * 1.2));
  const px = (v: number) => x2 + (Math.log10(Math.max(lo, Math.min(v, hi)) / lo) / Math.log10(hi / lo)) * panelW;
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="11">`);
  out.push(`<rect width="100%" height="100%" fill="white"/>`);
  out.push(`<text x="8" y="16" font-size="13" font-weight="bold">${esc(`Gateway benchmark, scale ${r.scale ?? '?'}, ` +
    `c=${r.settings.connections}, ${r.settings.seconds} s, ${r.startedAt.slice(0, 16).replace('T', ' ')} UTC`)}</text>`);
  out.push(`<text x="${x1}" y="36" font-weight="bold">req/s ÷ floor req/s (target ≥ ${targets.ratio})</text>`);
  out.push(`<text x="${x2}" y="36" font-weight="bold">p99 ms, log scale (gateway bar, floor tick; | limit)</text>`);
  rows.forEach((s, i) => {
    const y = top + i * rowH;
    if (i % 2 === 0) out.push(`<rect x="0" y="${y - 2}" width="${width}" height="${rowH}" fill="#f4f4f4"/>`);
    out.push(`<text x="${labelW - 6}" y="${y + 11}" text-anchor="end">${esc(s.name)}</text>`);
    const ok = s.ratio >= targets.ratio;
    out.push(`<rect x="${x1}" y="${y + 2}" width="${(rx(s.ratio) - x1).toFixed(1)}" height="${rowH - 6}" fill="${ok ? '#4a7fc1' : '#d9534f'}"/>`);
    out.push(`<text x="${(rx(s.ratio) + 3).toFixed(1)}" y="${y + 11}">${s.ratio.toFixed(2)}</text>`);
    const limit = p99Limit(s);
    const over = limit !== null && s.gateway.p99 > limit;
    out.push(`<rect x="${x2}" y="${y + 2}" width="${(px(s.gateway.p99) - x2).toFixed(1)}" height="${rowH - 6}" fill="${over ? '#d9534f' : '#5cb85c'}"/>`);
    out.push(`<line x1="${px(s.floor.p99).toFixed(1)}" x2="${px(s.floor.p99).toFixed(1)}" y1="${y}" y2="${y + rowH - 2}" stroke="#222" stroke-width="2"/>`);
    if (limit !== null) {
      out.push(`<line x1="${px(limit).toFixed(1)}" x2="${px(limit).toFixed(1)}" y1="${y - 1}" y2="${y + rowH - 1}" stroke="#d9534f" stroke-dasharray="2,2"/>`);
    }
    out.push(`<text x="${(px(s.gateway.p99) + 3).toFixed(1)}" y="${y + 11}">${s.gateway.p99.toFixed(1)}</text>`);
  });
  const bottom = top + rows.length * rowH;
  // axes: the ratio target and p99 decades
  out.push(`<line x1="${rx(targets.ratio)}" x2="${rx(targets.ratio)}" y1="${top - 4}" y2="${bottom}" stroke="#d9534f" stroke-dasharray="4,3"/>`);
  for (let v = 0; v <= maxRatio + 1e-9; v += maxRatio > 2 ? 1 : 0.2) {
    out.push(`<text x="${rx(v)}" y="${bottom + 14}" text-anchor="middle">${v.toFixed(1)}</text>`);
  }
  for (let v = lo; v <= hi * 1.0001; v *= 10) {
    out.push(`<line x1="${px(v)}" x2="${px(v)}" y1="${top - 4}" y2="${bottom}" stroke="#ccc"/>`);
    out.push(`<text x="${px(v)}" y="${bottom + 14}" text-anchor="middle">${v >= 1 ? v.toFixed(0) : v.toFixed(1)}</text>`);
  }
  out.push(`<text x="8" y="${bottom + 32}" fill="#555">${esc(`max gateway RSS ${r.maxRssMb ?? '?'} MB (target ≤ ${targets.rssMb}); ` +
    `load average ${r.machine.loadBefore.join(' ')} → ${r.machine.loadAfter.join(' ')}`)}</text>`);
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
