import { readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { createTestDatabase } from '../test/support/db.js';
import { startGatewayProcess } from '../test/support/gateway-process.js';

// The response cache against huge answers (findings: 8 distinct huge nested pages drove RSS to 1.5 GB;
// a hit of a 106 MB entry cost 2 s). Starts the real gateway on a fresh database with the demo data
// (default cache limits), sends 8 distinct huge GraphQL pages twice each, then small ones, and records
// answer sizes, times, cache outcomes and the process's RSS to bench/results/cache-memory-<date>.json.
// Usage: tsx bench/cache-memory.ts   (needs PostgreSQL on 127.0.0.1:5432); CACHE_MAX_BYTES and
// CACHE_MAX_ENTRY_BYTES in the environment are passed on (e.g. huge values: what storing everything costs).

const rss = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
// every holder of the first $n ticks, each with its tick's top 20 holders: ~15 MB of JSON per answer
// (page sizes as variables: the cost guard counts a variable as 1)
const huge = `query Huge($n: Int!, $h: Int = 1000, $k: Int = 20) { ticks(first: $n) { edges { node { tick chainName deployBy
  holders(first: $h) { edges { cursor node { address balance tick { tick holders(first: $k) { edges { node { address balance } } } } } } } } } } }`;
const small = `query Small($n: Int!) { ticks(first: $n) { edges { node { tick holders(first: 3) { edges { node { address } } } } } } }`;

const db = await createTestDatabase();
const limits = {
  CACHE_MAX_BYTES: process.env.CACHE_MAX_BYTES ?? String(64 * 1024 * 1024),
  CACHE_MAX_ENTRY_BYTES: process.env.CACHE_MAX_ENTRY_BYTES ?? String(1024 * 1024),
};
const gateway = await startGatewayProcess({ DATABASE_URL: db.target.url!, SEED: 'true', ...limits }, 120_000);
const pid = gateway.child.pid!;
const rows: { query: string; n: number; round: number; bytes: number; ms: number; cache: string | null; rssMb: number }[] = [];
async function send(query: string, name: string, n: number, round: number) {
  const started = performance.now();
  const response = await fetch(`${gateway.base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables: { n } }) });
  const text = await response.text();
  if (text.includes('"errors"')) throw new Error(`${name} ${n}: ${text.slice(0, 300)}`);
  rows.push({ query: name, n, round, bytes: text.length, ms: Math.round((performance.now() - started) * 10) / 10, cache: response.headers.get('x-cache'), rssMb: Math.round(rss(pid)) });
}
try {
  const startRss = rss(pid);
  for (let round = 0; round < 2; round++) for (let i = 0; i < 8; i++) await send(huge, 'huge', 300 - i, round);
  for (let round = 0; round < 2; round++) for (let i = 0; i < 8; i++) await send(small, 'small', 50 - i, round);
  const scrape = await (await fetch(`${gateway.base}/metrics`)).text();
  const gauge = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(scrape)?.[1]);
  const result = {
    date: new Date().toISOString(),
    node: process.version,
    limits,
    startRssMb: Math.round(startRss),
    maxRssMb: Math.max(...rows.map((r) => r.rssMb)),
    cache: { bytes: gauge('igw_cache_bytes'), entries: gauge('igw_cache_entries'), oversized: gauge('igw_cache_oversized_total') },
    rows,
  };
  const file = `bench/results/cache-memory-${result.date.slice(0, 16).replace(/[T:]/g, '-')}-entry${limits.CACHE_MAX_ENTRY_BYTES}.json`;
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  console.table(rows);
  console.log({ ...result, rows: undefined, file });
} finally {
  await gateway.stop();
  await db.close();
}
