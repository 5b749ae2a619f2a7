// npm run bench:cache-hit -- [--database-url URL] [--duration 10] [--connections 8] [--warmup 2] [--pool 10] [--only name,name]
//
// What a response-cache hit costs the gateway beside a miss, on both surfaces (issue 28: cached answers are
// what a busy public deployment serves most). Four paged v2 calls and their GraphQL twins on the bench data
// (npm run bench:data), each in three modes, one gateway per mode (the compiled build, as npm start runs it):
//
// - off:  CACHE=off, one request repeated (every request executed; what `npm run bench` measures);
// - miss: CACHE=on with CACHE_MAX_ENTRIES=10 and 32 variants of the request (offsets 0–31) sent in turn over
//         all connections, so an entry is evicted before its key comes back (every request executed, keyed and stored);
// - hit:  CACHE=on, one request repeated (every request after the first answered from the cache).
//
// For each: requests/s, p50/p99, the gateway's CPU per request (its threads' schedstat) and its PostgreSQL
// backends' CPU per request, and the hits and misses the gateway itself counted (igw_cache_lookups_total), so a
// mode that did not get what it meant to is visible. Writes bench/results/<YYYY-MM-DD-HHMM>-cache-hit.{json,md}.
// Nothing is asserted.
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { loadOptions, loadSettings, loadUsage } from './lib/cli.js';
import { startGateway, type ServerProcess } from './lib/gateway.js';
import { cpuMs, loadAverage, runHttp, type Measurement } from './lib/load.js';
import { graphqlBody, loadFixture, resultsDir, rpcBody, type Fixture } from './lib/scenarios.js';

const { values } = parseArgs({ options: { ...loadOptions }, strict: true });
if (values.help) {
  console.log(`usage: npm run bench:cache-hit -- ${loadUsage}`);
  process.exit(0);
}
const { databaseUrl, database, seconds, connections, warmupSeconds, poolMax, only } = loadSettings(values);
const log = (s: string) => console.log(s);
const variants = 32;

type Mode = 'off' | 'miss' | 'hit';
const modes: { mode: Mode; env: Record<string, string> }[] = [
  { mode: 'off', env: { CACHE: 'off' } },
  { mode: 'miss', env: { CACHE: 'on', CACHE_MAX_ENTRIES: '10' } },
  { mode: 'hit', env: { CACHE: 'on' } },
];

interface Call { label: string; method: string; params: (offset: number) => unknown[] }

function calls(f: Fixture): Call[] {
  const t = f.biggestTick;
  const a = f.busiestAddress;
  return [
    { label: 'getTicks/holders', method: 'inds_getTicks', params: (o) => [10, o, '', '', '', '', 3, 2] },
    { label: 'getHoldersByTick', method: 'inds_getHoldersByTick', params: (o) => [10, o, t.chain, t.protocol, t.tick, 2] },
    { label: 'getBalancesByAddress', method: 'inds_getBalancesByAddress', params: (o) => [10, o, a, '', '', '', '', 2] },
    { label: 'getTransactions', method: 'inds_getTransactions', params: (o) => [10, o, '', '', '', '', 2] },
  ];
}

interface Case { name: string; surface: 'rpc' | 'graphql'; path: string; bodies: string[] }

function cases(f: Fixture): Case[] {
  const out: Case[] = [];
  for (const c of calls(f)) {
    const offsets = Array.from({ length: variants }, (_, i) => i);
    out.push({ name: `rpc ${c.label}`, surface: 'rpc', path: `/v2/rpc/${c.method}`, bodies: offsets.map((o) => rpcBody(c.method, c.params(o))) });
    out.push({ name: `gql ${c.label}`, surface: 'graphql', path: '/graphql', bodies: offsets.map((o) => graphqlBody(c.method, c.params(o))) });
  }
  return out.filter((c) => only.length === 0 || only.some((o) => c.name.toLowerCase().includes(o)));
}

/** A successful answer of either surface: no JSON-RPC error, no GraphQL errors. */
const succeeded = (body: string) => !body.includes('"error":') && !body.includes('"errors":');

/** igw_cache_lookups_total by surface and result, read from the gateway's /metrics. */
async function lookups(base: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const out = new Map<string, number>();
  for (const m of text.matchAll(/^igw_cache_lookups_total\{([^}]*)\} (\d+(?:\.\d+)?)$/gm)) {
    const surface = /surface="([^"]+)"/.exec(m[1]!)?.[1];
    const result = /result="([^"]+)"/.exec(m[1]!)?.[1];
    out.set(`${surface}:${result}`, Number(m[2]));
  }
  return out;
}

interface Row {
  name: string;
  mode: Mode;
  measurement: Measurement;
  gatewayCpuMs: number | null;
  dbCpuMs: number | null;
  hits: number;
  misses: number;
}

async function main() {
  const startedAt = new Date();
  const loadBefore = loadAverage();
  const sql = postgres(databaseUrl, { max: 2, onnotice: () => {} });
  let fixture: Fixture;
  try {
    fixture = await loadFixture(sql, database);
  } finally {
    await sql.end({ timeout: 5 });
  }
  const list = cases(fixture);
  const monitor = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  const rows: Row[] = [];
  try {
    for (const { mode, env } of modes) {
      log(`\nmode ${mode}: a gateway with ${Object.entries(env).map(([k, v]) => `${k}=${v}`).join(' ')}`);
      const gateway: ServerProcess = await startGateway({ databaseUrl, poolMax, env });
      const pid = gateway.child.pid!;
      try {
        for (const c of list) {
          const url = `${gateway.base}${c.path}`;
          let turn = 0;
          const nextBody = mode === 'miss' ? () => c.bodies[turn++ % c.bodies.length]! : undefined;
          const first = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: c.bodies[0] });
          const reply = await first.text();
          if (first.status !== 200 || !succeeded(reply)) throw new Error(`${c.name}: ${first.status} ${reply.slice(0, 300)}`);
          const load = { url, body: c.bodies[0]!, verifyBody: succeeded, connections, ...(nextBody ? { nextBody } : {}) };
          if (warmupSeconds > 0) await runHttp({ ...load, seconds: warmupSeconds });
          const backends = (await monitor<{ pid: number }[]>`
            SELECT pid FROM pg_stat_activity WHERE application_name = 'inscription-gateway' AND datname = ${database}`).map((r) => r.pid);
          const dbCpu = () => backends.reduce((sum, p) => sum + (cpuMs(p) ?? 0), 0);
          const before = { node: cpuMs(pid), db: dbCpu(), lookups: await lookups(gateway.base) };
          const measurement = await runHttp({ ...load, seconds });
          const after = { node: cpuMs(pid), db: dbCpu(), lookups: await lookups(gateway.base) };
          const delta = (result: string) => (after.lookups.get(`${c.surface}:${result}`) ?? 0) - (before.lookups.get(`${c.surface}:${result}`) ?? 0);
          const per = (ms: number) => (measurement.requests > 0 ? Math.round((ms / measurement.requests) * 1000) / 1000 : null);
          const row: Row = {
            name: c.name, mode, measurement,
            gatewayCpuMs: before.node !== null && after.node !== null ? per(after.node - before.node) : null,
            dbCpuMs: per(after.db - before.db),
            hits: delta('hit'), misses: delta('miss'),
          };
          rows.push(row);
          log(`${c.name.padEnd(28)} ${mode.padEnd(4)} ${String(Math.round(measurement.rps)).padStart(6)} req/s  p50 ${measurement.p50.toFixed(2).padStart(6)}` +
            `  p99 ${measurement.p99.toFixed(2).padStart(7)} | cpu/req gateway ${row.gatewayCpuMs ?? '?'} ms, db ${row.dbCpuMs ?? '?'} ms` +
            ` | hits ${row.hits}, misses ${row.misses}${measurement.failures ? ` | ${measurement.failures} FAILED` : ''}`);
        }
      } finally {
        await gateway.stop();
      }
    }
  } finally {
    await monitor.end({ timeout: 5 });
  }

  const result = {
    startedAt: startedAt.toISOString(), finishedAt: new Date().toISOString(), scale: fixture.scale, database,
    settings: { connections, seconds, warmupSeconds, poolMax, variants },
    machine: { cpus: availableParallelism(), node: process.version, loadBefore, loadAfter: loadAverage() },
    rows,
  };
  mkdirSync(resultsDir, { recursive: true });
  const stamp = `${startedAt.toISOString().slice(0, 16).replace(/[T:]/g, (c) => (c === 'T' ? '-' : ''))}-cache-hit`;
  writeFileSync(`${resultsDir}${stamp}.json`, `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(`${resultsDir}${stamp}.md`, markdown(result.rows, result));
  log(`\nwrote bench/results/${stamp}.{json,md}`);
}

function markdown(rows: Row[], r: { startedAt: string; scale: number | null; settings: object; machine: { loadBefore: number[]; loadAfter: number[] } }): string {
  const byName = new Map<string, Partial<Record<Mode, Row>>>();
  for (const row of rows) byName.set(row.name, { ...byName.get(row.name), [row.mode]: row });
  const cell = (row: Row | undefined) => row
    ? `${Math.round(row.measurement.rps)} req/s, p99 ${row.measurement.p99.toFixed(1)} ms, **${row.gatewayCpuMs ?? '?'}** / ${row.dbCpuMs ?? '?'} ms (${row.hits} hits, ${row.misses} misses${row.measurement.failures ? `, ${row.measurement.failures} failed` : ''})`
    : '—';
  const ratio = (a?: Row, b?: Row) => (a?.gatewayCpuMs && b?.gatewayCpuMs ? (b.gatewayCpuMs / a.gatewayCpuMs).toFixed(1) : '?');
  const lines = [
    `# Response cache: a hit's CPU beside a miss's (${r.startedAt}, scale ${r.scale ?? '?'})`,
    '',
    `\`npm run bench:cache-hit\`; settings ${JSON.stringify(r.settings)}; load average before ${r.machine.loadBefore.join(' ')}, after ${r.machine.loadAfter.join(' ')}.`,
    'Each cell: requests/s, p99, **gateway CPU ms per request** / its PostgreSQL backends\' CPU ms per request, and the lookups the gateway counted.',
    '',
    '| request | cache off | miss (cache on, evicted) | hit | miss ÷ hit (gateway CPU) |',
    '|---|---|---|---|---|',
    ...[...byName].map(([name, m]) => `| ${name} | ${cell(m.off)} | ${cell(m.miss)} | ${cell(m.hit)} | ${ratio(m.hit, m.miss)} |`),
    '',
  ];
  return lines.join('\n');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
