// npm run bench:cache-levels -- [--seconds 10] [--rounds 3] [--rate 300] [--keys 200] [--write-every 2]
//                               [--gateways 1] [--admin-url postgres://…/postgres] [--label NAME]
//
// What a Redis outage sends to the database. A fresh database seeded with the demo data, a redis-server
// of its own, and real gateway processes (the compiled build, production defaults) on that Redis: some
// with the in-process level in front of it (the default), some without (CACHE_LOCAL_MAX_BYTES=0, as it
// was before). The same open-loop load in every mode — `--rate` requests per second drawn at random from
// `--keys` distinct cacheable requests (balances of an address, half JSON-RPC, half GraphQL) — while a
// writer moves the data version every `--write-every` seconds (as an indexer does with each block, so
// the cache keeps being refilled). Modes:
//
// - up:            Redis answers, local level in front;
// - down:          Redis killed, local level in front;
// - down-no-local: Redis killed, no local level (every lookup a bypass: the finding).
//
// "Database requests" are the requests the gateways computed on the database: cache misses and
// bypasses (igw_cache_lookups_total deltas); PostgreSQL's committed transactions on the database
// (pg_stat_database, flushed by the backends about once a second) are given beside them. Each round
// measures every mode once, order rotated; figures are medians over rounds. Writes
// bench/results/<YYYY-MM-DD-HHMM>-cache-levels[-label].{json,md}. Nothing is asserted.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { startRedis, type OwnRedis } from '../test/support/redis-server.js';
import { loadAverage } from './lib/load.js';
import { resultsDir } from './lib/scenarios.js';
import { createSeededDatabase, startGateway, type SoakDatabase, type SoakGateway } from './lib/soak-gateway.js';
import { median } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    rate: { type: 'string', default: '300' },
    keys: { type: 'string', default: '200' },
    'write-every': { type: 'string', default: '2' },
    gateways: { type: 'string', default: '1' },
    warmup: { type: 'string', default: '3' },
    'admin-url': { type: 'string', default: process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    label: { type: 'string' },
  },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const rate = Number(values.rate);
const keys = Number(values.keys);
const writeEveryS = Number(values['write-every']);
const perMode = Number(values.gateways);
const warmup = Number(values.warmup);
const root = fileURLToPath(new URL('..', import.meta.url));

type Mode = 'up' | 'down' | 'down-no-local';
const modes: Mode[] = ['up', 'down', 'down-no-local'];

interface AutocannonResult { errors: number; timeouts: number; non2xx: number; requests: { total: number } }
type Autocannon = (opts: Record<string, unknown>, cb: (err: Error | null, result: AutocannonResult) => void) => unknown;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const query = 'query B($address: String!) { balances(address: $address, first: 10) { totalCount edges { node { balance tick { tick } } } } }';
const prefix = Math.random().toString(16).slice(2, 10).padEnd(8, '0');
/** One of `keys` distinct requests, at random: an address's balances over JSON-RPC (even) or GraphQL (odd). */
function nextRequest(request: Record<string, unknown>) {
  const n = Math.floor(Math.random() * keys);
  const address = `0x${prefix}${(n >> 1).toString(16).padStart(32, '0')}`;
  if (n % 2 === 0) {
    request.path = '/v2/rpc';
    request.body = JSON.stringify({ jsonrpc: '2.0', id: n, method: 'inds_getBalancesByAddress', params: [10, 0, address, '', '', '', '', 2] });
  } else {
    request.path = '/graphql';
    request.body = JSON.stringify({ query, variables: { address } });
  }
  return request;
}

/** `rate` requests per second for `durationS`, spread over the gateways (open loop). */
function load(bases: string[], durationS: number): Promise<{ requests: number; failures: number }> {
  return Promise.all(bases.map((base) => new Promise<{ requests: number; failures: number }>((resolve, reject) => {
    autocannon({
      url: base, method: 'POST', headers: { 'content-type': 'application/json' }, connections: 16, pipelining: 1,
      overallRate: rate / bases.length, duration: durationS, timeout: 30, requests: [{ setupRequest: nextRequest }],
    }, (error, result) => (error ? reject(error) : resolve({ requests: result.requests.total, failures: result.errors + result.timeouts + result.non2xx })));
  }))).then((all) => ({ requests: all.reduce((n, r) => n + r.requests, 0), failures: all.reduce((n, r) => n + r.failures, 0) }));
}

async function computed(base: string): Promise<{ computed: number; localHits: number }> {
  const text = await (await fetch(`${base}/metrics`)).text();
  let sum = 0;
  let localHits = 0;
  for (const line of text.split('\n')) {
    const lookup = /^igw_cache_lookups_total\{[^}]*result="(miss|bypass)"[^}]*\} (\S+)$/.exec(line);
    if (lookup) sum += Number(lookup[2]);
    const local = /^igw_cache_local_hits_total (\S+)$/.exec(line);
    if (local) localHits = Number(local[1]);
  }
  return { computed: sum, localHits };
}

async function until(probe: () => Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Run { mode: Mode; round: number; rps: number; dbRequestsPerS: number; pgXactPerS: number; localHitsPerS: number; failures: number }

async function measure(
  mode: Mode, round: number, group: SoakGateway[], redis: OwnRedis, pg: postgres.Sql, dbName: string,
): Promise<Run> {
  const bases = group.map((g) => g.base);
  if (mode !== 'up') await redis.kill();
  await load(bases, warmup);
  const xacts = async () => Number((await pg<{ n: string }[]>`
    SELECT (xact_commit + xact_rollback)::text AS n FROM pg_stat_database WHERE datname = ${dbName}`)[0]!.n);
  const before = await Promise.all(bases.map(computed));
  const xactBefore = await xacts();
  const started = performance.now();
  const m = await load(bases, seconds);
  const elapsedS = (performance.now() - started) / 1000;
  const after = await Promise.all(bases.map(computed));
  // the backends flush their counts about once a second
  await new Promise((r) => setTimeout(r, 1_200));
  const xactAfter = await xacts();
  if (mode !== 'up') await redis.restart();
  const sum = (f: (i: number) => number) => bases.reduce((n, _, i) => n + f(i), 0);
  return {
    mode, round, failures: m.failures,
    rps: Math.round(m.requests / elapsedS),
    dbRequestsPerS: Math.round(sum((i) => after[i]!.computed - before[i]!.computed) / elapsedS),
    localHitsPerS: Math.round(sum((i) => after[i]!.localHits - before[i]!.localHits) / elapsedS),
    pgXactPerS: Math.round((xactAfter - xactBefore) / (elapsedS + 1.2)),
  };
}

async function main() {
  const startedAt = new Date();
  const loadBefore = loadAverage();
  // the gateways run the compiled build (npm start's command): build what is checked out
  const built = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
  if (built.status !== 0) throw new Error('npm run build failed');
  let db: SoakDatabase | undefined;
  let redis: OwnRedis | undefined;
  let pg: postgres.Sql | undefined;
  let writer: NodeJS.Timeout | undefined;
  const gateways: SoakGateway[] = [];
  const runs: Run[] = [];
  const cleanUp = async () => {
    clearInterval(writer);
    await Promise.all(gateways.map((g) => g.stop()));
    await redis?.stop();
    await pg?.end({ timeout: 5 });
    await db?.drop();
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void cleanUp().finally(() => process.exit(130)));
  try {
    db = await createSeededDatabase(values['admin-url']!);
    redis = await startRedis();
    pg = postgres(db.url, { max: 2, onnotice: () => {} });
    const twoLevel: SoakGateway[] = [];
    const redisOnly: SoakGateway[] = [];
    for (let i = 0; i < perMode; i++) {
      twoLevel.push(await startGateway(db.url, { REDIS_URL: redis.url }, () => null));
      redisOnly.push(await startGateway(db.url, { REDIS_URL: redis.url, CACHE_LOCAL_MAX_BYTES: '0' }, () => null));
    }
    gateways.push(...twoLevel, ...redisOnly);
    // the indexer: a new data version every few seconds (a statement-level trigger on indexed_blocks bumps it)
    const db2 = pg;
    writer = setInterval(() => void db2`UPDATE indexed_blocks SET indexed_at = now()`.catch(() => {}), writeEveryS * 1_000);
    const up = async (g: SoakGateway) => /^igw_redis_up 1$/m.test(await (await fetch(`${g.base}/metrics`)).text());
    for (let round = 0; round < rounds; round++) {
      for (const mode of modes.map((_, i) => modes[(i + round) % modes.length]!)) {
        const group = mode === 'down-no-local' ? redisOnly : twoLevel;
        const run = await measure(mode, round, group, redis, pg, db.name);
        runs.push(run);
        process.stdout.write(`round ${round + 1} ${mode.padEnd(13)} ${String(run.rps).padStart(5)} req/s  database ${String(run.dbRequestsPerS).padStart(5)} req/s ` +
          `(PostgreSQL ${run.pgXactPerS} xact/s)  local hits ${run.localHitsPerS}/s  failures ${run.failures}\n`);
        // every gateway back on Redis (a kill opens every breaker) before the next window
        for (const g of gateways) await until(() => up(g), 20_000, 'Redis in use again');
      }
    }
  } finally {
    await cleanUp();
  }

  const summary = Object.fromEntries(modes.map((mode) => {
    const of = runs.filter((r) => r.mode === mode);
    return [mode, {
      rps: median(of.map((r) => r.rps)), dbRequestsPerS: median(of.map((r) => r.dbRequestsPerS)), pgXactPerS: median(of.map((r) => r.pgXactPerS)),
      localHitsPerS: median(of.map((r) => r.localHitsPerS)), failures: of.reduce((n, r) => n + r.failures, 0),
      dbRequestsPerRound: of.map((r) => r.dbRequestsPerS),
    }];
  })) as Record<Mode, { rps: number; dbRequestsPerS: number; pgXactPerS: number; localHitsPerS: number; failures: number; dbRequestsPerRound: number[] }>;
  const ratio = (a: Mode) => Math.round((summary[a].dbRequestsPerS / summary.up.dbRequestsPerS) * 100) / 100;
  // per round, each down mode against up measured in the same round
  const perRound = (mode: Mode) => Array.from({ length: rounds }, (_, round) => {
    const of = (m: Mode) => runs.find((r) => r.round === round && r.mode === m)!.dbRequestsPerS;
    return Math.round((of(mode) / of('up')) * 100) / 100;
  });
  const result = {
    benchmark: 'cache-levels', startedAt: startedAt.toISOString(), finishedAt: new Date().toISOString(),
    settings: { seconds, rounds, rate, keys, writeEveryS, gatewaysPerMode: perMode, warmup, gateway: 'production defaults (CACHE_LOCAL_MAX_BYTES 16 MiB; down-no-local: 0)' },
    machine: { node: process.version, loadBefore, loadAfter: loadAverage() },
    summary, ratios: { downVsUp: ratio('down'), downNoLocalVsUp: ratio('down-no-local') },
    perRound: { downVsUp: perRound('down'), downNoLocalVsUp: perRound('down-no-local') }, runs,
  };
  const stamp = startedAt.toISOString().slice(0, 16).replace('T', '-').replace(':', '');
  const name = `${stamp}-cache-levels${values.label ? `-${values.label}` : ''}`;
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(`${resultsDir}${name}.json`, `${JSON.stringify(result, null, 2)}\n`);
  const md = [
    `# Redis down: what reaches the database — ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    '',
    `${rate} requests/s (open loop) over ${perMode} gateway${perMode > 1 ? 's' : ''} per mode, drawn at random from ${keys} distinct cacheable requests ` +
      `(an address's balances, half JSON-RPC, half GraphQL); a new data version every ${writeEveryS} s; ${seconds} s windows after ${warmup} s of warm-up, ` +
      `${rounds} rounds, order rotated; medians over rounds. Database requests: requests computed on the database (cache misses and bypasses). ` +
      `Load average ${loadBefore.join(' ')} before, ${result.machine.loadAfter.join(' ')} after (2 shared cores). Node ${process.version}.`,
    '',
    '| mode | req/s served | database req/s | × up | PostgreSQL xact/s | local hits/s | failures | database req/s per round |',
    '|---|--:|--:|--:|--:|--:|--:|---|',
    ...modes.map((m) => `| ${m} | ${summary[m].rps} | ${summary[m].dbRequestsPerS} | ${ratio(m)} | ${summary[m].pgXactPerS} | ${summary[m].localHitsPerS} | ` +
      `${summary[m].failures} | ${summary[m].dbRequestsPerRound.join(', ')} |`),
    '',
    `Redis down vs up, per round: ${result.perRound.downVsUp.join(', ')} (with the local level); ${result.perRound.downNoLocalVsUp.join(', ')} (without).`,
    '',
  ].join('\n');
  writeFileSync(`${resultsDir}${name}.md`, md);
  process.stdout.write(`\n${md}\nwrote bench/results/${name}.{json,md}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
