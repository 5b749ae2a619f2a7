// tsx bench/redis-hung.ts [--seconds 10] [--rounds 3] [--connections 8] [--admin-url postgres://…/postgres] [--label NAME]
//
// What a hung Redis costs. A fresh database seeded with the demo data, a redis-server of its own, and two
// real gateway processes (node --import tsx src/main.ts, production defaults): one with REDIS_URL on that
// Redis, one without (in-memory cache). The load is cacheable but distinct requests — every request asks
// for the balances of a new address, half over JSON-RPC, half over GraphQL — so no answer is ever a hit
// and each one costs the same database work whatever the cache does; what differs between the modes is
// only what the cache costs:
//
// - healthy: Redis answers (a GET that misses and a SET per request);
// - hung:    Redis frozen with SIGSTOP at the very start of the measured window (the breaker opening is
//            part of the window, and so are its probes: one PING every REDIS_BREAKER_OPEN_MS);
// - down:    Redis killed (connection refused);
// - memory:  the other gateway, no Redis at all;
// - hung-no-breaker: hung, on a third gateway whose breaker never opens within the window
//            (REDIS_BREAKER_FAILURES 10000): what the 50 ms timeout alone would leave.
//
// Throughput on a shared 2-core machine moves by ±25 % from window to window, more than the effect
// measured; so each hung window also gets a noise-free bound of what Redis cost it: the lookups that
// waited for Redis and failed (igw_cache_errors_total{op="get"}) × the command timeout, as a share of the
// window's connection-time (stores never hold a request up: they are not awaited).
// Each round measures every mode once (the order rotates between rounds; the machine is shared and
// noisy), the figures per mode are the medians over rounds. Cache outcomes per mode come from /metrics
// (igw_cache_lookups_total deltas). Writes bench/results/<YYYY-MM-DD-HHMM>-redis-hung[-label].{json,md}.
// Nothing is asserted; whatever happens, it stops what it started and drops its database.
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { startRedis, type OwnRedis } from '../test/support/redis-server.js';
import { loadAverage, summarise, type Measurement } from './lib/load.js';
import { resultsDir } from './lib/scenarios.js';
import { createSeededDatabase, startGateway, type SoakDatabase, type SoakGateway } from './lib/soak-gateway.js';
import { median } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '8' },
    warmup: { type: 'string', default: '2' },
    'admin-url': { type: 'string', default: process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    label: { type: 'string' },
  },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const connections = Number(values.connections);
const warmup = Number(values.warmup);

type Mode = 'healthy' | 'hung' | 'down' | 'memory' | 'hung-no-breaker';
const modes: Mode[] = ['healthy', 'hung', 'down', 'memory', 'hung-no-breaker'];
const commandTimeoutMs = 50;

interface AutocannonResult { errors: number; timeouts: number; non2xx: number }
interface AutocannonInstance { on(event: 'response', fn: (client: unknown, status: number, bytes: number, ms: number) => void): void }
type Autocannon = (opts: Record<string, unknown>, cb: (err: Error | null, result: AutocannonResult) => void) => AutocannonInstance;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const query = 'query B($address: String!) { balances(address: $address, first: 10) { totalCount edges { node { balance tick { tick } } } } }';
let counter = 0;
const prefix = Math.random().toString(16).slice(2, 10).padEnd(8, '0');
/** A new address per request (no balances: a cheap, constant-cost answer that is cacheable and never repeated). */
function nextRequest(request: Record<string, unknown>) {
  const n = ++counter;
  const address = `0x${prefix}${n.toString(16).padStart(32, '0')}`;
  if (n % 2) {
    request.path = '/v2/rpc';
    request.body = JSON.stringify({ jsonrpc: '2.0', id: n, method: 'inds_getBalancesByAddress', params: [10, 0, address, '', '', '', '', 2] });
  } else {
    request.path = '/graphql';
    request.body = JSON.stringify({ query, variables: { address } });
  }
  return request;
}

function load(base: string, durationS: number): Promise<Measurement> {
  return new Promise((resolve, reject) => {
    const latencies: number[] = [];
    const started = performance.now();
    const instance = autocannon({
      url: base, method: 'POST', headers: { 'content-type': 'application/json' }, connections, pipelining: 1,
      duration: durationS, timeout: 30, requests: [{ setupRequest: nextRequest }],
    }, (error, result) => {
      if (error) return reject(error);
      resolve(summarise(latencies, (performance.now() - started) / 1000, result.errors + result.timeouts + result.non2xx));
    });
    instance.on('response', (_client, status, _bytes, ms) => {
      if (status >= 200 && status < 300) latencies.push(ms);
    });
  });
}

async function metrics(base: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^(igw_cache_lookups_total\{[^}]*\}|igw_redis_breaker_transitions_total\{[^}]*\}|igw_redis_breaker_open|igw_redis_up|igw_cache_errors_total\{[^}]*\}) (\S+)$/.exec(line);
    if (match) values.set(match[1]!, Number(match[2]));
  }
  return values;
}

function delta(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, value] of after) {
    const d = value - (before.get(key) ?? 0);
    if (d !== 0 && /_total\{/.test(key)) out[key] = d;
  }
  return out;
}

async function until(probe: () => Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Run extends Measurement {
  mode: Mode; round: number; cache: Record<string, number>;
  /** Hung modes: failed lookups × timeout ÷ (connections × window), the most Redis can have cost. */
  waitedShare?: number;
}

async function main() {
  const startedAt = new Date();
  const loadBefore = loadAverage();
  let db: SoakDatabase | undefined;
  let redis: OwnRedis | undefined;
  const gateways: SoakGateway[] = [];
  const runs: Run[] = [];
  // Ctrl-C / SIGTERM: the same clean-up as the end of a run (no stray redis-server, gateway or database)
  const cleanUp = async () => {
    redis?.thaw();
    await Promise.all(gateways.map((g) => g.stop()));
    await redis?.stop();
    await db?.drop();
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void cleanUp().finally(() => process.exit(130)));
  }
  try {
    db = await createSeededDatabase(values['admin-url']!);
    redis = await startRedis();
    const withRedis = await startGateway(db.url, { REDIS_URL: redis.url }, () => null);
    gateways.push(withRedis);
    const memory = await startGateway(db.url, {}, () => null);
    gateways.push(memory);
    const noBreaker = await startGateway(db.url, { REDIS_URL: redis.url, REDIS_BREAKER_FAILURES: '10000' }, () => null);
    gateways.push(noBreaker);
    const closed = async (g: SoakGateway) => (await metrics(g.base)).get('igw_redis_breaker_open') === 0;
    // both processes start cold: JIT and pools warmed before anything is measured
    for (const g of gateways) await load(g.base, Math.max(5, warmup));

    for (let round = 0; round < rounds; round++) {
      const order = modes.map((_, i) => modes[(i + round) % modes.length]!);
      for (const mode of order) {
        const gateway = mode === 'memory' ? memory : mode === 'hung-no-breaker' ? noBreaker : withRedis;
        const hung = mode === 'hung' || mode === 'hung-no-breaker';
        if (!hung) await load(gateway.base, warmup);
        if (mode === 'down') await redis.kill();
        const before = await metrics(gateway.base);
        if (hung) redis.freeze();
        const m = await load(gateway.base, seconds);
        const after = await metrics(gateway.base);
        if (hung) redis.thaw();
        if (mode === 'down') await redis.restart();
        // every Redis gateway's breaker closed again (a kill opens them all) before the next window
        for (const g of [withRedis, noBreaker]) await until(() => closed(g), 15_000, 'breaker closed again');
        const cache = delta(before, after);
        const run: Run = { mode, round, ...m, cache };
        if (hung) {
          const waited = cache['igw_cache_errors_total{op="get"}'] ?? 0;
          run.waitedShare = Math.round(((waited * commandTimeoutMs) / (connections * m.seconds * 1000)) * 10_000) / 10_000;
        }
        runs.push(run);
        process.stdout.write(`round ${round + 1} ${mode.padEnd(7)} ${m.rps.toFixed(0).padStart(6)} req/s  p50 ${m.p50} ms  p99 ${m.p99} ms  failures ${m.failures}  ${JSON.stringify(run.cache)}\n`);
      }
    }
  } finally {
    await cleanUp();
  }

  const summary = Object.fromEntries(modes.map((mode) => {
    const of = runs.filter((r) => r.mode === mode);
    const shares = of.map((r) => r.waitedShare).filter((v): v is number => v !== undefined);
    return [mode, {
      rps: Math.round(median(of.map((r) => r.rps))), p50: median(of.map((r) => r.p50)), p99: median(of.map((r) => r.p99)),
      failures: of.reduce((n, r) => n + r.failures, 0), rpsPerRound: of.map((r) => r.rps),
      ...(shares.length ? { waitedShareMax: Math.max(...shares) } : {}),
    }];
  })) as Record<Mode, { rps: number; p50: number; p99: number; failures: number; rpsPerRound: number[]; waitedShareMax?: number }>;
  const ratio = (a: Mode, b: Mode) => Math.round((summary[a].rps / summary[b].rps) * 1000) / 1000;
  const ratios = {
    hungVsHealthy: ratio('hung', 'healthy'), hungVsDown: ratio('hung', 'down'), hungVsMemory: ratio('hung', 'memory'),
    downVsMemory: ratio('down', 'memory'), noBreakerVsDown: ratio('hung-no-breaker', 'down'),
  };
  // per round, hung against down measured back to back on the same process (order rotated)
  const paired = Array.from({ length: rounds }, (_, round) => {
    const of = (mode: Mode) => runs.find((r) => r.round === round && r.mode === mode)!.rps;
    return Math.round((of('hung') / of('down')) * 1000) / 1000;
  });
  const result = {
    benchmark: 'redis-hung', startedAt: startedAt.toISOString(), finishedAt: new Date().toISOString(),
    settings: { seconds, rounds, connections, warmup, requests: 'distinct inds_getBalancesByAddress (JSON-RPC) / balances (GraphQL), alternating', gateway: 'production defaults (REDIS_COMMAND_TIMEOUT_MS 50, REDIS_BREAKER_FAILURES 5, REDIS_BREAKER_OPEN_MS 2000)' },
    machine: { node: process.version, loadBefore, loadAfter: loadAverage() },
    summary, ratios, hungVsDownPerRound: paired, runs,
  };

  const stamp = startedAt.toISOString().slice(0, 16).replace('T', '-').replace(':', '');
  const name = `${stamp}-redis-hung${values.label ? `-${values.label}` : ''}`;
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(`${resultsDir}${name}.json`, `${JSON.stringify(result, null, 2)}\n`);
  const pct = (r: number) => `${((1 - r) * 100).toFixed(1)} %`;
  const md = [
    `# Redis hung — ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    '',
    `${connections} connections, ${seconds} s per mode after ${warmup} s of warm-up (hung: none — Redis is frozen when the window opens), ${rounds} rounds, order rotated; medians over rounds. ` +
      'Every request distinct (a new address; half JSON-RPC, half GraphQL): cacheable, never a hit. ' +
      `Load average ${loadBefore.join(' ')} before, ${result.machine.loadAfter.join(' ')} after (2 shared cores: load generator, two gateways, PostgreSQL, Redis). Node ${process.version}.`,
    '',
    '| mode | req/s | p50 ms | p99 ms | failures | req/s per round | Redis waits ÷ connection-time (max) |',
    '|---|--:|--:|--:|--:|---|--:|',
    ...modes.map((m) => `| ${m} | ${summary[m].rps.toLocaleString('en-US')} | ${summary[m].p50} | ${summary[m].p99} | ${summary[m].failures} | ` +
      `${summary[m].rpsPerRound.map((v) => Math.round(v)).join(', ')} | ${summary[m].waitedShareMax === undefined ? '' : `${(summary[m].waitedShareMax * 100).toFixed(2)} %`} |`),
    '',
    `Hung vs healthy: ${ratios.hungVsHealthy} · hung vs down: ${ratios.hungVsDown} (cost ${pct(ratios.hungVsDown)}; per round ${paired.join(', ')}) · ` +
      `hung vs no Redis (memory): ${ratios.hungVsMemory} (cost ${pct(ratios.hungVsMemory)}) · down vs memory: ${ratios.downVsMemory} · ` +
      `hung without a breaker vs down: ${ratios.noBreakerVsDown}.`,
    '',
    'Cache outcomes and breaker transitions per run (deltas of /metrics counters):',
    '',
    '| round | mode | req/s | outcomes |',
    '|--:|---|--:|---|',
    ...runs.map((r) => `| ${r.round + 1} | ${r.mode} | ${Math.round(r.rps)} | ${Object.entries(r.cache).map(([k, v]) => `${k.replace(/^igw_/, '')} ${v}`).join(', ')}` +
      `${r.waitedShare === undefined ? '' : `; waited for Redis: ${(r.waitedShare * 100).toFixed(2)} % of connection-time`} |`),
    '',
  ].join('\n');
  writeFileSync(`${resultsDir}${name}.md`, md);
  process.stdout.write(`\n${md}\nwrote bench/results/${name}.{json,md}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
