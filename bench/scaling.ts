// npm run bench:scaling -- [--scale 0.01] [--seconds 4] [--rounds 2] [--connections 8] [--rate 5000]
//                          [--write-seconds 20] [--counters batched|rows] [--skip-capacity] [--only name,name]
//
// How far a read replica carries, measured on this machine (docs/scaling.md):
//   1. a private primary (test/support/pg-instance.ts) loaded with `--scale` of the benchmark data
//      (bench/lib/private-pg.ts), and a streaming standby of it (pg_basebackup -R);
//   2. read capacity: three gateway processes (response cache off) — P1 and P2 with DATABASE_URL = the
//      primary, R with DATABASE_URL = the primary and DATABASE_READ_URLS = the standby. For a cheap and a
//      medium JSON-RPC scenario, in interleaved rounds, autocannon (closed loop, --connections) against
//      `P` (one gateway on the primary), `R` (one gateway on the replica), `P+P` (two gateways, both on
//      the primary, the connections split between them) and `P+R` (two gateways, one per server). CPU
//      time of every process (gateways, each PostgreSQL server, the load generator) and the transactions
//      each server committed are recorded per measurement: which server did the work, and what it cost;
//   3. replication lag under the sync's write rate: a writer on the primary commits one transaction per
//      second of `--rate` rows (indexer-like mints: a transactions row, an address_txs row and a balances
//      upsert each, through the row triggers that keep the counters) while gateway R serves the medium
//      scenario from the replica. Sampled every 25 ms: the standby's replay LSN against the primary's
//      (bytes), now() − pg_last_xact_replay_timestamp(), and per flush the time from its commit until the
//      standby had replayed past its commit LSN; every 250 ms R's igw_replica_lag_seconds /
//      igw_replica_in_rotation (MAX_REPLICA_LAG_MS at its default, 5 s).
// Writes bench/results/<YYYY-MM-DD-HHMM>-scaling.{json,md}. Nothing is asserted. On 2 shared cores the
// load generator, the gateways and both servers compete for the same CPUs: see docs/scaling.md.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { createSql } from '../src/db/client.js';
import { cpuMs, loadAverage, percentile, runHttp, type Measurement } from './lib/load.js';
import { createPgInstance, startLoadedPrimary, type PgInstance } from './lib/private-pg.js';
import { buildScenarios, loadFixture, resultsDir, type Scenario } from './lib/scenarios.js';
import { freePort } from '../test/support/ports.js';
import { median } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    scale: { type: 'string', default: '0.01' },
    seconds: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '8' },
    rate: { type: 'string', default: '5000' },
    'write-seconds': { type: 'string', default: '20' },
    counters: { type: 'string', default: 'batched' },
    'skip-capacity': { type: 'boolean', default: false },
    only: { type: 'string', default: 'rpc getInscriptionByTick,rpc getHoldersByTick' },
    help: { type: 'boolean', short: 'h', default: false },
  },
  strict: true,
});
if (values.help) {
  console.log('usage: npm run bench:scaling -- [--scale 0.01] [--seconds 4] [--rounds 2] [--connections 8] [--rate 5000] [--write-seconds 20] [--only name,name]');
  process.exit(0);
}
const scale = Number(values.scale);
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const connections = Number(values.connections);
const rate = Number(values.rate);
const writeSeconds = Number(values['write-seconds']);
const counters = values.counters as 'batched' | 'rows';
if (counters !== 'batched' && counters !== 'rows') throw new Error('--counters batched|rows');
const log = (s: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${s}`);
const root = fileURLToPath(new URL('..', import.meta.url));
const r1 = (x: number) => Math.round(x * 10) / 10;
const r2 = (x: number) => Math.round(x * 100) / 100;

// ---------------------------------------------------------------------------------------------------
// processes

interface Gw { name: string; child: ChildProcess; base: string }
const gateways: Gw[] = [];
let primary: PgInstance | null = null;
let standby: PgInstance | null = null;

async function startGateway(name: string, env: Record<string, string>): Promise<Gw> {
  const port = await freePort();
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) =>
    !/^(DATABASE_.*|PORT|HOST|SEED|NODE_OPTIONS|LOG_.*|DB_.*|CACHE.*|REDIS_URL|MAX_REPLICA_LAG_MS)$/.test(k)));
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    env: { ...inherited, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', CACHE: 'off', DB_POOL_MAX: '10', SEED: 'false', ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const gw = { name, child, base: `http://127.0.0.1:${port}` };
  gateways.push(gw);
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`gateway ${name} exited with code ${child.exitCode}`);
    try {
      if ((await fetch(`${gw.base}/readyz`)).ok) return gw;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`gateway ${name} not ready in 60 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function cleanup() {
  for (const g of gateways) if (g.child.exitCode === null) g.child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 500));
  for (const g of gateways) if (g.child.exitCode === null) g.child.kill('SIGKILL');
  await standby?.destroy().catch(() => {});
  await primary?.destroy().catch(() => {});
}
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => void cleanup().then(() => process.exit(130)));
// a failed run (an exception, a rejected top-level await) takes its gateways with it; the servers stop
// through pg-instance's own exit handler
process.once('exit', () => {
  for (const g of gateways) if (g.child.exitCode === null) g.child.kill('SIGKILL');
});

/** CPU ms of a PostgreSQL server: the postmaster and every process it forked (backends, walsender, startup …). */
function serverCpuMs(instance: PgInstance): number {
  const dataDir = join(dirname(instance.logFile), 'data');
  const postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  let total = cpuMs(postmaster) ?? 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === postmaster) total += cpuMs(Number(entry)) ?? 0;
    } catch {
      // gone
    }
  }
  return total;
}
const selfCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

// ---------------------------------------------------------------------------------------------------
// 1. servers and data

const startedAt = new Date().toISOString();
const loadBefore = loadAverage();
log(`load average ${loadBefore.join(' ')}; starting a private primary and loading scale ${scale}`);
const loaded = await startLoadedPrimary(scale, 'igw_bench', ['max_wal_senders=5']);
primary = loaded.primary;
const primaryUrl = loaded.url;
log(`loaded ${JSON.stringify(loaded.rows)} in ${loaded.loadSeconds} s; pg_basebackup of a standby`);
{
  // pg_basebackup asks for a spread checkpoint: with the load's dirty buffers written first it is immediate
  const admin = postgres(primaryUrl, { max: 1, onnotice: () => {} });
  await admin`CHECKPOINT`;
  await admin.end({ timeout: 5 });
}
standby = await createPgInstance({ standbyOf: primary });
await standby.start();
const standbyUrl = standby.url.replace(/\/postgres$/, '/igw_bench');
const onPrimary = postgres(primaryUrl, { max: 2, onnotice: () => {} });
const onStandby = postgres(standbyUrl, { max: 2, onnotice: () => {} });
const lsnGap = async () => {
  const { lsn } = (await onStandby<{ lsn: string }[]>`SELECT pg_last_wal_replay_lsn()::text AS lsn`)[0]!;
  const { gap } = (await onPrimary<{ gap: string }[]>`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), ${lsn}::pg_lsn)::text AS gap`)[0]!;
  return Number(gap);
};
for (let i = 0; i < 300 && (await lsnGap()) > 0; i++) await new Promise((r) => setTimeout(r, 100));
const [server] = await onPrimary<{ v: string }[]>`SELECT version() AS v`;

const xacts = async (sql: postgres.Sql) =>
  Number((await sql<{ n: string }[]>`SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = current_database()`)[0]!.n);

// ---------------------------------------------------------------------------------------------------
// 2. read capacity

const fixtureSql = createSql({ url: primaryUrl, poolMax: 2, statementTimeoutMs: 30_000, connectTimeoutS: 10, readOnly: true });
const fixture = await loadFixture(fixtureSql, 'igw_bench');
await fixtureSql.end({ timeout: 5 });
const wanted = values.only!.split(',').map((s) => s.trim());
const all = buildScenarios(fixture);
const scenarios: Scenario[] = wanted.map((w) => all.find((s) => s.name === w)).filter((s): s is Scenario => s !== undefined);
if (scenarios.length === 0) throw new Error(`no scenario named ${wanted.join(', ')}`);

const p1 = await startGateway('P1', { DATABASE_URL: primaryUrl });
const p2 = await startGateway('P2', { DATABASE_URL: primaryUrl });
const rg = await startGateway('R', { DATABASE_URL: primaryUrl, DATABASE_READ_URLS: standbyUrl });
log(`gateways P1 ${p1.base}, P2 ${p2.base}, R ${rg.base} (R reads ${standbyUrl.replace(/\/\/.*@/, '//')})`);

const configs: { name: string; meaning: string; gws: Gw[] }[] = [
  { name: 'P', meaning: 'one gateway reading the primary', gws: [p1] },
  { name: 'R', meaning: 'one gateway reading the replica', gws: [rg] },
  { name: 'P+P', meaning: 'two gateways, both reading the primary', gws: [p1, p2] },
  { name: 'P+R', meaning: 'two gateways, one reading the primary, one the replica', gws: [p1, rg] },
];

interface Sample {
  scenario: string; config: string; round: number;
  rps: number; p50: number; p99: number; failures: number;
  /** transactions committed per second on each server during the window */
  primaryXactPerS: number; standbyXactPerS: number;
  /** CPU ms per request */
  cpuPerReq: { gateways: number; primary: number; standby: number; loadgen: number };
  /** CPU share of the window, in cores (2 = both cores of the machine) */
  cores: { gateways: number; primary: number; standby: number; loadgen: number; total: number };
  load1: number;
}
const samples: Sample[] = [];

async function measure(s: Scenario, config: typeof configs[number], round: number, secs: number): Promise<Sample> {
  const expect = await Promise.all(config.gws.map(async (g) => (await fetch(`${g.base}${s.path}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: s.body })).text()));
  const share = config.gws.map((_, i) => Math.floor(connections / config.gws.length) + (i < connections % config.gws.length ? 1 : 0));
  const [xp0, xs0] = [await xacts(onPrimary), await xacts(onStandby)];
  const cpu0 = { gw: config.gws.map((g) => cpuMs(g.child.pid!) ?? 0), p: serverCpuMs(primary!), s: serverCpuMs(standby!), me: selfCpuMs() };
  const t0 = performance.now();
  const results: Measurement[] = await Promise.all(config.gws.map((g, i) =>
    runHttp({ url: `${g.base}${s.path}`, body: s.body, expectBody: expect[i], connections: share[i]!, seconds: secs })));
  const wall = (performance.now() - t0) / 1000;
  const cpu1 = { gw: config.gws.map((g) => cpuMs(g.child.pid!) ?? 0), p: serverCpuMs(primary!), s: serverCpuMs(standby!), me: selfCpuMs() };
  const [xp1, xs1] = [await xacts(onPrimary), await xacts(onStandby)];
  const requests = results.reduce((n, m) => n + m.requests, 0);
  const gwCpu = cpu1.gw.reduce((n, v, i) => n + v - cpu0.gw[i]!, 0);
  const per = (ms: number) => r2(ms / Math.max(1, requests));
  const cores = (ms: number) => r2(ms / 1000 / wall);
  const sample: Sample = {
    scenario: s.name, config: config.name, round,
    rps: r1(requests / wall),
    // latency across both gateways: the per-gateway medians/p99s, the slower one
    p50: Math.max(...results.map((m) => m.p50)), p99: Math.max(...results.map((m) => m.p99)),
    failures: results.reduce((n, m) => n + m.failures, 0),
    // the counters' own reads are a few transactions: negligible next to thousands of requests
    primaryXactPerS: r1((xp1 - xp0) / wall), standbyXactPerS: r1((xs1 - xs0) / wall),
    cpuPerReq: { gateways: per(gwCpu), primary: per(cpu1.p - cpu0.p), standby: per(cpu1.s - cpu0.s), loadgen: per(cpu1.me - cpu0.me) },
    cores: {
      gateways: cores(gwCpu), primary: cores(cpu1.p - cpu0.p), standby: cores(cpu1.s - cpu0.s), loadgen: cores(cpu1.me - cpu0.me),
      total: cores(gwCpu + cpu1.p - cpu0.p + cpu1.s - cpu0.s + cpu1.me - cpu0.me),
    },
    load1: loadAverage()[0] ?? 0,
  };
  return sample;
}

// warm-up: every gateway, every scenario, 1 s
for (const s of scenarios) for (const c of configs.slice(0, 2)) await measure(s, c, 0, 1);
for (let round = 1; round <= (values['skip-capacity'] ? 0 : rounds); round++) {
  for (const s of scenarios) {
    // interleaved, and the order reversed every other round
    const order = round % 2 ? configs : [...configs].reverse();
    for (const c of order) {
      const m = await measure(s, c, round, seconds);
      samples.push(m);
      log(`round ${round} ${s.name.padEnd(26)} ${c.name.padEnd(4)} ${String(m.rps).padStart(7)} req/s p50 ${m.p50} p99 ${m.p99} ` +
        `fail ${m.failures} | xact/s primary ${m.primaryXactPerS} standby ${m.standbyXactPerS} | cores gw ${m.cores.gateways} ` +
        `pg ${m.cores.primary}+${m.cores.standby} loadgen ${m.cores.loadgen} | load ${m.load1}`);
    }
  }
}

const capacity = scenarios.map((s) => {
  const rows = configs.map((c) => {
    const ms = samples.filter((x) => x.scenario === s.name && x.config === c.name);
    return {
      config: c.name, meaning: c.meaning,
      rps: r1(median(ms.map((m) => m.rps))), p50: r2(median(ms.map((m) => m.p50))), p99: r2(median(ms.map((m) => m.p99))),
      failures: ms.reduce((n, m) => n + m.failures, 0),
      primaryXactPerS: r1(median(ms.map((m) => m.primaryXactPerS))), standbyXactPerS: r1(median(ms.map((m) => m.standbyXactPerS))),
      cpuPerReq: {
        gateways: r2(median(ms.map((m) => m.cpuPerReq.gateways))), primary: r2(median(ms.map((m) => m.cpuPerReq.primary))),
        standby: r2(median(ms.map((m) => m.cpuPerReq.standby))), loadgen: r2(median(ms.map((m) => m.cpuPerReq.loadgen))),
      },
      coresUsed: r2(median(ms.map((m) => m.cores.total))),
    };
  });
  const by = Object.fromEntries(rows.map((r) => [r.config, r.rps]));
  return {
    scenario: s.name, rows,
    ratios: { 'R/P': r2(by.R! / by.P!), 'P+R/P+P': r2(by['P+R']! / by['P+P']!), 'P+P/P': r2(by['P+P']! / by.P!) },
  };
});

// ---------------------------------------------------------------------------------------------------
// 3. lag under the sync's write rate

const writer = createSql({ url: primaryUrl, poolMax: 1, statementTimeoutMs: 60_000, connectTimeoutS: 10, readOnly: false });
const targetTicks = await writer<{ id: string; chain: string; protocol: string; tick: string }[]>`
  SELECT id::text, chain, protocol, tick FROM ticks WHERE holders > 0 ORDER BY id LIMIT 50`;
const perFlush = Math.max(1, Math.round(rate / 3)); // three rows per mint
interface Flush { at: number; ms: number; rows: number; lsn: string; replayedAfterMs: number | null }
const flushes: Flush[] = [];
let seq = 0;
const lsnValue = (lsn: string) => {
  const [hi, lo] = lsn.split('/');
  return (BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`);
};
const hex = (n: number) => n.toString(16).padStart(64, '0');

async function flush(): Promise<void> {
  const tickIdx: string[] = []; const chains: string[] = []; const protocols: string[] = []; const tickNames: string[] = [];
  const addrs: string[] = []; const hashes: string[] = []; const heights: string[] = []; const positions: string[] = [];
  for (let i = 0; i < perFlush; i++) {
    const t = targetTicks[seq % targetTicks.length]!;
    seq++;
    tickIdx.push(t.id); chains.push(t.chain); protocols.push(t.protocol); tickNames.push(t.tick);
    addrs.push(`0x${(seq * 2654435761 % 2 ** 32).toString(16).padStart(8, '0')}${'ab'.repeat(16)}`);
    hashes.push(`0x${hex(0x5ca1e000000 + seq)}`);
    heights.push(String(90_000_000 + Math.floor(seq / 100))); positions.push(String(seq % 100));
  }
  const t0 = performance.now();
  await writer.begin(async (tx) => {
    // as the sync commits: durably (the instance runs synchronous_commit=off by default)
    await tx`SET LOCAL synchronous_commit = on`;
    // batched: the row triggers stand aside (data_version_bump is ENABLE ALWAYS and still fires) and the
    // counters get one change per tick / list / address for the whole flush, as the sync's flushes do
    // (branch sync2, sql/009: hundreds of updates of one ticks row per flush were quadratic)
    if (counters === 'batched') await tx`SET LOCAL session_replication_role = replica`;
    await tx`
      INSERT INTO transactions (chain, protocol, block_height, position_in_block, block_time, tx_hash, from_address, to_address,
                                op, tick, amt, created_at, updated_at)
      SELECT c, p, h, pos, now(), hash, a, a, 'mint', t, 1, now(), now()
        FROM unnest(${chains}::text[], ${protocols}::text[], ${heights}::bigint[], ${positions}::int[], ${hashes}::text[],
                    ${addrs}::text[], ${tickNames}::text[]) AS u (c, p, h, pos, hash, a, t)`;
    await tx`
      INSERT INTO address_txs (tick_id, address, tx_hash, amount, event, operate, created_at, updated_at)
      SELECT id, a, hash, 1, 2, 'mint', now(), now()
        FROM unnest(${tickIdx}::bigint[], ${addrs}::text[], ${hashes}::text[]) AS u (id, a, hash)`;
    const upserted = await tx<{ tick_id: string; address_key: string; inserted: boolean }[]>`
      INSERT INTO balances (tick_id, address, balance, available)
      SELECT id, a, 1, 1 FROM unnest(${tickIdx}::bigint[], ${addrs}::text[]) AS u (id, a)
      ON CONFLICT (tick_id, address_key) DO UPDATE SET balance = balances.balance + 1, available = balances.available + 1
      RETURNING tick_id::text, address_key, (xmax = 0) AS inserted`;
    if (counters === 'batched') {
      const perTick = new Map<string, { n: number; h: number }>();
      for (const id of tickIdx) perTick.set(id, { n: (perTick.get(id)?.n ?? 0) + 1, h: 0 });
      for (const r of upserted) if (r.inserted) perTick.get(r.tick_id)!.h++;
      const newAddrs = upserted.filter((r) => r.inserted).map((r) => r.address_key);
      await tx`
        UPDATE ticks t SET tx_cnt = t.tx_cnt + d.n, minted = t.minted + d.n, holders = t.holders + d.h
          FROM unnest(${[...perTick.keys()]}::bigint[], ${[...perTick.values()].map((v) => v.n)}::bigint[],
                      ${[...perTick.values()].map((v) => v.h)}::bigint[]) AS d (id, n, h)
         WHERE t.id = d.id`;
      await tx`
        INSERT INTO list_totals AS lt (list, chain, protocol, tick, n)
        SELECT 'transactions', c, p, t, count(*)
          FROM unnest(${chains}::text[], ${protocols}::text[], ${tickNames}::text[]) AS u (c, p, t) GROUP BY CUBE (c, p, t)
        ON CONFLICT ON CONSTRAINT list_totals_key DO UPDATE SET n = lt.n + EXCLUDED.n`;
      await tx`
        INSERT INTO address_tx_totals AS a (address_key, n)
        SELECT lower(x), count(*) FROM unnest(${addrs}::text[]) AS u (x) GROUP BY 1
        ON CONFLICT (address_key) DO UPDATE SET n = a.n + EXCLUDED.n`;
      await tx`
        INSERT INTO address_totals AS a (address_key, movements, balances)
        SELECT k, sum(m), sum(b) FROM (
          SELECT lower(x) AS k, 1 AS m, 0 AS b FROM unnest(${addrs}::text[]) AS u (x)
          UNION ALL SELECT x, 0, 1 FROM unnest(${newAddrs}::text[]) AS v (x)) s GROUP BY k
        ON CONFLICT (address_key) DO UPDATE SET movements = a.movements + EXCLUDED.movements, balances = a.balances + EXCLUDED.balances`;
    }
  });
  const ms = performance.now() - t0;
  const { lsn } = (await onPrimary<{ lsn: string }[]>`SELECT pg_current_wal_lsn()::text AS lsn`)[0]!;
  flushes.push({ at: Date.now(), ms: r1(ms), rows: perFlush * 3, lsn, replayedAfterMs: null });
}

interface LagSample { t: number; bytes: number; replayAgeMs: number | null; gwLagS: number | null; inRotation: number | null }
const lagSamples: LagSample[] = [];
let writing = true;
const sampler = (async () => {
  let lastMetrics = 0;
  let gwLagS: number | null = null;
  let inRotation: number | null = null;
  while (writing) {
    const { lsn, age } = (await onStandby<{ lsn: string; age: string | null }[]>`
      SELECT pg_last_wal_replay_lsn()::text AS lsn,
             (extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp()) * 1000)::text AS age`)[0]!;
    const { gap } = (await onPrimary<{ gap: string }[]>`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), ${lsn}::pg_lsn)::text AS gap`)[0]!;
    const now = Date.now();
    for (const f of flushes) {
      if (f.replayedAfterMs !== null) continue;
      if (lsnValue(lsn) >= lsnValue(f.lsn)) f.replayedAfterMs = now - f.at;
    }
    if (now - lastMetrics >= 250) {
      lastMetrics = now;
      try {
        const text = await (await fetch(`${rg.base}/metrics`)).text();
        const line = (name: string) => text.split('\n').find((l) => l.startsWith(`${name}{`));
        const lag = line('igw_replica_lag_seconds');
        const rot = line('igw_replica_in_rotation');
        gwLagS = lag ? Number(lag.split(' ').pop()) : null;
        inRotation = rot ? Number(rot.split(' ').pop()) : null;
      } catch {
        // gateway busy: keep the last values
      }
    }
    lagSamples.push({ t: now, bytes: Number(gap), replayAgeMs: age === null ? null : Number(age), gwLagS, inRotation });
    await new Promise((r) => setTimeout(r, 25));
  }
})();

// the medium scenario: the last one named in --only
const medium = scenarios.find((s) => s.name === wanted[wanted.length - 1]) ?? scenarios[scenarios.length - 1]!;
log(`writes: ${perFlush * 3} rows per flush (${perFlush} mints), one flush a second for ${writeSeconds} s, while R serves ${medium.name}`);
const [xpw0, xsw0] = [await xacts(onPrimary), await xacts(onStandby)];
const readLoad = runHttp({ url: `${rg.base}${medium.path}`, body: medium.body, connections: Math.max(2, connections / 2), seconds: writeSeconds });
const writeStart = performance.now();
for (let i = 0; i < writeSeconds; i++) {
  const due = writeStart + i * 1000;
  const wait = due - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  await flush();
}
const writeWall = (performance.now() - writeStart) / 1000;
const underWrites = await readLoad;
const [xpw1, xsw1] = [await xacts(onPrimary), await xacts(onStandby)];
// let the last flush replay
const settle = Date.now();
while (flushes.some((f) => f.replayedAfterMs === null) && Date.now() - settle < 15_000) await new Promise((r) => setTimeout(r, 50));
writing = false;
await sampler;
const loadAfter = loadAverage();

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const visible = sorted(flushes.map((f) => f.replayedAfterMs).filter((x): x is number => x !== null));
const bytes = sorted(lagSamples.map((s) => s.bytes));
const firstFlush = flushes[0]?.at ?? 0;
const ages = sorted(lagSamples.filter((s) => s.t >= firstFlush + 1000).map((s) => s.replayAgeMs).filter((x): x is number => x !== null));
const gwLags = sorted(lagSamples.map((s) => s.gwLagS).filter((x): x is number => x !== null && Number.isFinite(x)).map((x) => x * 1000));
const lag = {
  counters, rowsPerFlush: perFlush * 3, flushes: flushes.length,
  achievedRowsPerS: r1((flushes.length * perFlush * 3) / writeWall),
  flushMs: { p50: percentile(sorted(flushes.map((f) => f.ms)), 50), p99: percentile(sorted(flushes.map((f) => f.ms)), 99), max: percentile(sorted(flushes.map((f) => f.ms)), 100) },
  commitToReplayedMs: { p50: percentile(visible, 50), p99: percentile(visible, 99), max: percentile(visible, 100), unreplayed: flushes.length - visible.length },
  lsnGapBytes: { p50: percentile(bytes, 50), p99: percentile(bytes, 99), max: percentile(bytes, 100) },
  replayTimestampAgeMs: { p50: percentile(ages, 50), p99: percentile(ages, 99), max: percentile(ages, 100) },
  gatewayLagMs: { p50: percentile(gwLags, 50), p99: percentile(gwLags, 99), max: percentile(gwLags, 100) },
  maxReplicaLagMs: 5000,
  samplesOutOfRotation: lagSamples.filter((s) => s.inRotation === 0).length,
  samples: lagSamples.length,
  readsUnderWrites: { scenario: medium.name, ...underWrites },
  xactPerS: { primary: r1((xpw1 - xpw0) / writeWall), standby: r1((xsw1 - xsw0) / writeWall) },
  perFlush: flushes.map((f) => ({ ms: f.ms, replayedAfterMs: f.replayedAfterMs })),
};
log(`lag: flush p50 ${lag.flushMs.p50} ms (max ${lag.flushMs.max}), ${lag.achievedRowsPerS} rows/s; commit→replayed p50 ${lag.commitToReplayedMs.p50} ` +
  `p99 ${lag.commitToReplayedMs.p99} ms; gap p50 ${lag.lsnGapBytes.p50} p99 ${lag.lsnGapBytes.p99} B; gateway lag p99 ${lag.gatewayLagMs.p99} ms; ` +
  `out of rotation in ${lag.samplesOutOfRotation}/${lag.samples} samples; reads ${underWrites.rps} req/s p99 ${underWrites.p99}`);

await writer.end({ timeout: 5 });
await onPrimary.end({ timeout: 5 });
await onStandby.end({ timeout: 5 });
await cleanup();

// ---------------------------------------------------------------------------------------------------
// report

const stamp = new Date().toISOString().slice(0, 16).replace('T', '-').replace(':', '');
const result = {
  startedAt, finishedAt: new Date().toISOString(), scale, rows: loaded.rows, loadSeconds: loaded.loadSeconds,
  server: server!.v, node: process.version, cpus: availableParallelism(),
  settings: { seconds, rounds, connections, rate, writeSeconds, poolMax: 10, cache: 'off', instance: 'fsync=off, shared_buffers=32MB (test/support/pg-instance.ts); the writer commits with synchronous_commit=on' },
  loadAverage: { before: loadBefore, after: loadAfter },
  capacity, lag, samples,
};
const base = `${resultsDir}${stamp}-scaling`;
writeFileSync(`${base}.json`, `${JSON.stringify(result, null, 2)}\n`);

const md: string[] = [];
md.push(`# Scaling: one read replica — ${stamp}`, '');
md.push(`Scale ${scale} (${Object.entries(loaded.rows).map(([k, v]) => `${k} ${v.toLocaleString('en-US')}`).join(', ')}), a private primary and one streaming standby on this ${availableParallelism()}-core shared machine; ${server!.v.split(' on ')[0]}, Node ${process.version}. Load average ${loadBefore.join(' ')} before, ${loadAfter.join(' ')} after. ${connections} connections, ${seconds} s per measurement, ${rounds} interleaved rounds (medians), response cache off, pool 10 per server.`, '');
md.push('## Read capacity', '');
md.push('| scenario | config | req/s | p50 ms | p99 ms | fail | primary xact/s | standby xact/s | CPU ms/req gw · primary · standby · loadgen | cores used |');
md.push('|---|---|--:|--:|--:|--:|--:|--:|---|--:|');
for (const c of capacity) {
  for (const r of c.rows) {
    md.push(`| ${c.scenario} | ${r.config} | ${r.rps.toLocaleString('en-US')} | ${r.p50} | ${r.p99} | ${r.failures} | ${r.primaryXactPerS} | ${r.standbyXactPerS} | ` +
      `${r.cpuPerReq.gateways} · ${r.cpuPerReq.primary} · ${r.cpuPerReq.standby} · ${r.cpuPerReq.loadgen} | ${r.coresUsed} |`);
  }
}
md.push('', 'Ratios (same run): ' + capacity.map((c) => `${c.scenario}: R/P ${c.ratios['R/P']}, P+P/P ${c.ratios['P+P/P']}, (P+R)/(P+P) ${c.ratios['P+R/P+P']}`).join('; ') + '.', '');
md.push('## Lag under the sync\'s write rate', '');
md.push(`${lag.flushes} flushes of ${lag.rowsPerFlush} rows (one transaction a second: ${perFlush} transactions + ${perFlush} address_txs + ${perFlush} balances upserts; counters ${counters === 'batched' ? 'batched once per flush, row triggers off, data version trigger on' : 'by the row triggers'}), ${lag.achievedRowsPerS} rows/s achieved, while gateway R served ${medium.name} from the replica.`, '');
md.push('| figure | p50 | p99 | max |', '|---|--:|--:|--:|');
md.push(`| flush (commit) ms | ${lag.flushMs.p50} | ${lag.flushMs.p99} | ${lag.flushMs.max} |`);
md.push(`| commit → replayed on the standby, ms | ${lag.commitToReplayedMs.p50} | ${lag.commitToReplayedMs.p99} | ${lag.commitToReplayedMs.max} |`);
md.push(`| LSN gap primary − standby replay, bytes (every 25 ms) | ${lag.lsnGapBytes.p50} | ${lag.lsnGapBytes.p99} | ${lag.lsnGapBytes.max} |`);
md.push(`| now() − pg_last_xact_replay_timestamp(), ms (from 1 s after the first flush) | ${lag.replayTimestampAgeMs.p50} | ${lag.replayTimestampAgeMs.p99} | ${lag.replayTimestampAgeMs.max} |`);
md.push(`| gateway R igw_replica_lag_seconds, ms | ${lag.gatewayLagMs.p50} | ${lag.gatewayLagMs.p99} | ${lag.gatewayLagMs.max} |`);
md.push('', `MAX_REPLICA_LAG_MS ${lag.maxReplicaLagMs}: replica out of rotation in ${lag.samplesOutOfRotation} of ${lag.samples} samples. Reads on R meanwhile: ${underWrites.rps} req/s, p50 ${underWrites.p50} ms, p99 ${underWrites.p99} ms, ${underWrites.failures} failures; transactions/s primary ${lag.xactPerS.primary}, standby ${lag.xactPerS.standby}.`, '');
md.push('What the figures mean: docs/scaling.md.');
writeFileSync(`${base}.md`, `${md.join('\n')}\n`);
log(`results: ${base}.json, ${base}.md`);
process.exit(0);
