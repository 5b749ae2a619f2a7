// What a benchmark run leaves behind: bench/results/<stamp>.json (everything), <stamp>.md (the table),
// <stamp>.svg (the chart) and one line in bench/README.md's `## Runs` section. Numbers are recorded,
// never asserted: the target columns say met / missed, nothing fails.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Measurement } from './load.js';
import type { Kind, Surface } from './scenarios.js';

export interface Targets {
  page1P99Ms: number;
  ratio: number;
  holdersOffsetP99Ms: number;
  holdersCursorP99Ms: number;
  /** a page of the biggest tick's holders at a past block height (issue 18, part 2) */
  holdersHistoryP99Ms: number;
  rssMb: number;
  /** PostgreSQL CPU per request: the gateway's backends ÷ the floor's at the gateway's rate (issue 17) */
  dbCpuRatio: number;
}

export const targets: Targets = {
  page1P99Ms: 25, ratio: 0.4, holdersOffsetP99Ms: 300, holdersCursorP99Ms: 25, holdersHistoryP99Ms: 50, rssMb: 300, dbCpuRatio: 1.3,
};

export interface ScenarioResult {
  name: string;
  surface: Surface;
  kind: Kind;
  method: string;
  statements: number;
  waves: number;
  gateway: Measurement;
  floor: Measurement;
  /** gateway req/s ÷ floor req/s */
  ratio: number;
  /**
   * CPU time per request (ms, /proc/<pid>/schedstat): the gateway process, its PostgreSQL backends (the
   * pool's and its state connections') and the load generator (autocannon, this process) during the
   * gateway run; this process (postgres.js) during the floor run. The floor's backends: `floorDbMs` in a
   * second floor run paced at the gateway's req/s (`floorDbRps`, what it reached), the figure the
   * gateway's is compared with (`dbRatio`); `floorDbMsClosed` in the closed-loop floor run, at the floor's
   * own (3–7× higher) rate, where the same statements cost PostgreSQL less per request (floor.ts measureFloor).
   */
  cpu: {
    gatewayMs: number | null; gatewayDbMs: number | null; loadgenMs: number | null; floorClientMs: number | null;
    floorDbMs: number | null; floorDbRps?: number; floorDbMsClosed?: number | null; dbRatio?: number | null;
  };
  /**
   * Calibration (--plain): the same statements behind a plain node:http server, loaded like the gateway
   * (bench/lib/plain.ts); measured once per statement sequence (`measuredAs`: the scenario it was run for).
   */
  plain?: Measurement & { cpuMs: number | null; ratioToFloor: number; measuredAs: string };
  /** Largest RSS of the gateway while this scenario ran (MB), if the gateway is our child. */
  rssMb: number | null;
  replyBytes: number;
}

export interface RunResult {
  startedAt: string;
  finishedAt: string;
  scale: number | null;
  database: string;
  gateway: string;
  settings: { connections: number; seconds: number; warmupSeconds: number; poolMax: number; cache: 'off' };
  machine: { cpus: number; node: string; postgres: string; loadBefore: number[]; loadAfter: number[] };
  fixture: Record<string, unknown>;
  maxRssMb: number | null;
  scenarios: ScenarioResult[];
  /** Each scenario's statements as captured (text and parameters), for bench/explain.ts and the record. */
  statements: Record<string, { text: string; params: unknown[] }[][]>;
}

// the run log lives with the benchmark narrative and its figures; the main README only links to it
const readmePath = fileURLToPath(new URL('../README.md', import.meta.url));

/** The p99 limit a scenario is held to, if any (section 3 of the issue). */
export function p99Limit(s: Pick<ScenarioResult, 'kind' | 'surface'>): number | null {
  if (s.kind === 'page1' && s.surface === 'rpc') return targets.page1P99Ms;
  if (s.kind === 'holders-offset') return targets.holdersOffsetP99Ms;
  if (s.kind === 'holders-cursor') return targets.holdersCursorP99Ms;
  if (s.kind === 'holders-history') return targets.holdersHistoryP99Ms;
  return null;
}

const ms = (v: number) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));
const rps = (v: number) => Math.round(v).toLocaleString('en-US');

export function verdicts(r: RunResult) {
  const p99Misses = r.scenarios.filter((s) => {
    const limit = p99Limit(s);
    return limit !== null && s.gateway.p99 > limit;
  });
  const ratioMisses = r.scenarios.filter((s) => s.ratio < targets.ratio);
  const rssMiss = r.maxRssMb !== null && r.maxRssMb > targets.rssMb;
  const failures = r.scenarios.filter((s) => s.gateway.failures > 0 || s.floor.failures > 0);
  const dbCpuMisses = r.scenarios.filter((s) => s.cpu.dbRatio != null && s.cpu.dbRatio > targets.dbCpuRatio);
  return { p99Misses, ratioMisses, rssMiss, failures, dbCpuMisses };
}

export function markdown(r: RunResult): string {
  const v = verdicts(r);
  const lines: string[] = [];
  lines.push(`# Benchmark ${r.startedAt.slice(0, 16).replace('T', ' ')} UTC — scale ${r.scale ?? '?'} (${r.database})`);
  lines.push('');
  lines.push(`${r.settings.connections} connections, ${r.settings.seconds} s per scenario after ${r.settings.warmupSeconds} s of warm-up, ` +
    `response cache off, pool ${r.settings.poolMax}. ${r.machine.cpus} CPUs shared by the load generator, the gateway and ` +
    `PostgreSQL; load average ${r.machine.loadBefore.join(' ')} before, ${r.machine.loadAfter.join(' ')} after. ` +
    `Node ${r.machine.node}, ${r.machine.postgres.split(' on ')[0]}.`);
  lines.push('');
  lines.push('Floor: the same statements with the same parameters, sent straight through postgres.js (prepared, same pool ' +
    'size, same concurrency, same duration); a request is the whole statement sequence, statements the gateway runs ' +
    'together run together. Ratio = gateway req/s ÷ floor req/s. Latencies in ms.');
  lines.push('');
  lines.push('| scenario | req/s | p50 | p99 | floor req/s | floor p50 | floor p99 | ratio | stmts | target |');
  lines.push('|---|--:|--:|--:|--:|--:|--:|--:|--:|---|');
  for (const s of r.scenarios) {
    const notes: string[] = [];
    const limit = p99Limit(s);
    if (limit !== null) notes.push(`p99 ≤ ${limit} ${s.gateway.p99 <= limit ? '✓' : '✗'}`);
    notes.push(`ratio ≥ ${targets.ratio} ${s.ratio >= targets.ratio ? '✓' : '✗'}`);
    if (s.gateway.failures > 0) notes.push(`${s.gateway.failures} failed`);
    lines.push(`| ${s.name} | ${rps(s.gateway.rps)} | ${ms(s.gateway.p50)} | ${ms(s.gateway.p99)} | ${rps(s.floor.rps)} | ` +
      `${ms(s.floor.p50)} | ${ms(s.floor.p99)} | ${s.ratio.toFixed(2)} | ${s.statements} | ${notes.join(', ')} |`);
  }
  lines.push('');
  const calibrated = r.scenarios.filter((s) => s.plain);
  if (calibrated.length > 0) {
    lines.push('Calibration — the same statements behind a plain `node:http` server (bench/plain-server.ts: read the body, ' +
      'run the statements, `JSON.stringify` the rows; no GraphQL, no JSON-RPC), loaded like the gateway. "plain ÷ floor" ' +
      'is the most any Node HTTP service reaches here; "gateway ÷ plain" is what the gateway keeps of it. CPU per ' +
      'request in ms (gateway process vs plain server process).');
    lines.push('');
    lines.push('| scenario | plain req/s | plain p50 | plain p99 | plain ÷ floor | gateway ÷ floor | gateway ÷ plain | cpu/req gateway | cpu/req plain |');
    lines.push('|---|--:|--:|--:|--:|--:|--:|--:|--:|');
    for (const s of calibrated) {
      const p = s.plain!;
      lines.push(`| ${s.name} | ${rps(p.rps)} | ${ms(p.p50)} | ${ms(p.p99)} | ${p.ratioToFloor.toFixed(2)} | ${s.ratio.toFixed(2)} | ` +
        `${p.rps > 0 ? (s.gateway.rps / p.rps).toFixed(2) : '?'} | ${s.cpu.gatewayMs ?? '?'} | ${p.cpuMs ?? '?'} |`);
    }
    lines.push('');
  }
  const withDb = r.scenarios.filter((s) => s.cpu.dbRatio != null);
  if (withDb.length > 0) {
    lines.push('PostgreSQL CPU per request (ms, /proc/<pid>/schedstat of the backends): the gateway\'s backends during its ' +
      'run, against the floor\'s in a floor run paced at the gateway\'s req/s (the same statements cost less per request ' +
      'at the closed-loop floor\'s own, higher rate: last column, for reference).');
    lines.push('');
    lines.push('| scenario | gateway db | floor db at the gateway\'s rate | at req/s | ratio | target | floor db, closed loop |');
    lines.push('|---|--:|--:|--:|--:|---|--:|');
    for (const s of withDb) {
      const c = s.cpu;
      lines.push(`| ${s.name} | ${c.gatewayDbMs ?? '?'} | ${c.floorDbMs ?? '?'} | ${c.floorDbRps !== undefined ? rps(c.floorDbRps) : '?'} | ` +
        `${c.dbRatio!.toFixed(2)} | ≤ ${targets.dbCpuRatio} ${c.dbRatio! <= targets.dbCpuRatio ? '✓' : '✗'} | ${c.floorDbMsClosed ?? '?'} |`);
    }
    lines.push('');
  }
  lines.push(`Gateway RSS: max ${r.maxRssMb ?? '?'} MB (target ≤ ${targets.rssMb} ${v.rssMiss ? '✗' : '✓'}).`);
  lines.push('');
  lines.push(`Targets missed: ${v.p99Misses.length + v.ratioMisses.length + v.dbCpuMisses.length + (v.rssMiss ? 1 : 0) === 0 ? 'none' : ''}`);
  for (const s of v.p99Misses) lines.push(`- ${s.name}: p99 ${ms(s.gateway.p99)} ms > ${p99Limit(s)} ms`);
  for (const s of v.ratioMisses) lines.push(`- ${s.name}: ratio ${s.ratio.toFixed(2)} < ${targets.ratio}`);
  for (const s of v.dbCpuMisses) lines.push(`- ${s.name}: PostgreSQL CPU ${s.cpu.dbRatio!.toFixed(2)}× the floor's > ${targets.dbCpuRatio}×`);
  if (v.rssMiss) lines.push(`- RSS ${r.maxRssMb} MB > ${targets.rssMb} MB`);
  lines.push('');
  return lines.join('\n');
}

/** The one-line summary appended to bench/README.md. */
export function summaryLine(r: RunResult, tablePath: string): string {
  const v = verdicts(r);
  const page1 = r.scenarios.filter((s) => s.kind === 'page1' && s.surface === 'rpc');
  const worstP99 = page1.reduce((m, s) => Math.max(m, s.gateway.p99), 0);
  const ratios = r.scenarios.map((s) => s.ratio).sort((a, b) => a - b);
  const median = ratios.length ? ratios[Math.floor(ratios.length / 2)]! : 0;
  const offset = r.scenarios.find((s) => s.kind === 'holders-offset');
  const cursor = r.scenarios.find((s) => s.kind === 'holders-cursor');
  const history = r.scenarios.filter((s) => s.kind === 'holders-history');
  const overPage1 = page1.filter((s) => s.gateway.p99 > targets.page1P99Ms).length;
  const parts = [
    page1.length ? `v2 page 1 p99 max ${ms(worstP99)} ms (${overPage1} of ${page1.length} over ${targets.page1P99Ms})` : null,
    ratios.length ? `ratio to floor ${ratios[0]!.toFixed(2)}–${ratios.at(-1)!.toFixed(2)}, median ${median.toFixed(2)} ` +
      `(${v.ratioMisses.length} of ${ratios.length} below ${targets.ratio})` : null,
    offset ? `holders offset ${offset.name.split('@')[1]} p99 ${ms(offset.gateway.p99)} ms` : null,
    cursor ? `its cursor p99 ${ms(cursor.gateway.p99)} ms` : null,
    history.length ? `holders at a past height p99 max ${ms(Math.max(...history.map((s) => s.gateway.p99)))} ms` : null,
    r.scenarios.some((s) => s.cpu.dbRatio != null)
      ? `PostgreSQL CPU ≤ ${targets.dbCpuRatio}× the floor's on ${r.scenarios.filter((s) => s.cpu.dbRatio != null).length - v.dbCpuMisses.length} ` +
        `of ${r.scenarios.filter((s) => s.cpu.dbRatio != null).length}`
      : null,
    r.maxRssMb !== null ? `RSS max ${Math.round(r.maxRssMb)} MB` : null,
  ].filter(Boolean);
  const head = `${r.startedAt.slice(0, 16).replace('T', ' ')} UTC, scale ${r.scale ?? '?'}, c=${r.settings.connections}, ${r.settings.seconds} s`;
  return `- ${head}: ${parts.join('; ')} — [table](${tablePath})`;
}

/** Appends the line under `## Runs` at the end of bench/README.md (the section is created when missing). */
export function appendReadme(line: string, intro: string): void {
  let text = existsSync(readmePath) ? readFileSync(readmePath, 'utf8') : '';
  if (!/^## Runs\s*$/m.test(text)) {
    text = `${text.replace(/\s*$/, '')}\n\n## Runs\n\n${intro}\n`;
  }
  const start = text.search(/^## Runs\s*$/m);
  const nextSection = text.slice(start + 3).search(/^#{1,2} /m);
  const end = nextSection === -1 ? text.length : start + 3 + nextSection;
  const section = text.slice(start, end).replace(/\s*$/, '');
  // a blank line between the intro and the first entry
  const separator = /\n- [^\n]*$/.test(section) ? '\n' : '\n\n';
  text = `${text.slice(0, start)}${section}${separator}${line}\n${nextSection === -1 ? '' : `\n${text.slice(end)}`}`;
  writeFileSync(readmePath, text);
}

export function writeJson(path: string, r: RunResult) {
  writeFileSync(path, `${JSON.stringify(r, null, 2)}\n`);
}
