// npm run bench:data -- --scale <s> [--database-url URL] [--seed N] [--jobs N] [--replace]
//
// Fills a fresh PostgreSQL database with a deterministic synthetic inscription index shaped like the
// real one (see bench/lib/plan.ts for the shape and bench/README.md for the notable records):
//   scale 1 = 100,000 ticks · 10M balances · 20M address movements · 20M raw transactions.
// Default target: database igw_bench on postgres://postgres@127.0.0.1:5432, dropped and re-created.
//
// Phases: migrate (sql/ via src/db/migrate.ts) → drop secondary indexes and droppable keys → COPY each
// table (row triggers and FK checks off on the COPY connection) → refresh_counters() → rebuild the
// indexes from their captured definitions → VACUUM ANALYZE. Timings go to stdout and to
// bench/results/data-<scale>.json. A real PostgreSQL server only: COPY FROM STDIN kills the embedded engine.
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { createSql } from '../src/db/client.js';
import { migrate } from '../src/db/migrate.js';
import { copyInto, type CopyResult } from './lib/copy.js';
import { recreateDatabase, resolveTarget } from './lib/db.js';
import { captureIndexes, dropIndexes, rebuildIndexes } from './lib/indexes.js';
import { BENCH_NOTABLE, DEFAULT_SEED, buildPlan } from './lib/plan.js';
import { Rows } from './lib/rows.js';

const LOADED_TABLES = ['ticks', 'balances', 'address_txs', 'transactions', 'balance_history'];

const { values } = parseArgs({
  options: {
    scale: { type: 'string' },
    'database-url': { type: 'string' },
    seed: { type: 'string' },
    jobs: { type: 'string' },
    replace: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
  strict: true,
});

if (values.help || values.scale === undefined) {
  console.error('usage: npm run bench:data -- --scale <s> [--database-url URL] [--seed N] [--jobs N] [--replace]');
  process.exit(values.help ? 0 : 2);
}
const scale = Number(values.scale);
if (!Number.isFinite(scale) || scale <= 0 || scale > 4) throw new Error(`--scale must be in (0, 4]: ${values.scale}`);
const seed = values.seed === undefined ? DEFAULT_SEED : Number(values.seed);
if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new Error(`--seed must be a uint32: ${values.seed}`);
const jobs = values.jobs === undefined ? Math.min(4, availableParallelism()) : Number(values.jobs);
const target = resolveTarget(values['database-url']);

const t0 = performance.now();
const seconds = (from: number) => (performance.now() - from) / 1000;
const log = (s: string) => console.log(s);
const n = (x: number) => x.toLocaleString('en-US');

// ---------------------------------------------------------------------------------------------------
let mark = performance.now();
const plan = buildPlan(scale, seed);
const planSeconds = seconds(mark);
const c = plan.counts;
log(`bench:data scale ${scale}, seed ${seed} → ${target.database}`);
log(`  plan: ${n(c.ticks)} ticks (${n(c.zeroTicks)} never minted), ${n(c.balances)} balances, ${n(c.movements)} movements ` +
  `(${n(c.transfers)} transfers), ${n(c.transactions)} transactions (${n(c.noise)} non-inscription); ` +
  `sats ${n(plan.targets.bigHolders)} holders (next largest ${n(plan.runnerUpHolders)}); ` +
  `busiest address ${n(c.busyMovements)} movements; addresses: evm ${n(plan.evm.whales + plan.evm.general)}, ` +
  `btc ${n(plan.btc.whales + plan.btc.general)} [${planSeconds.toFixed(1)} s]`);

mark = performance.now();
const serverVersion = await recreateDatabase(target, values.replace ?? false);
const sql = createSql({ url: target.url, poolMax: Math.max(2, jobs), statementTimeoutMs: 0, connectTimeoutS: 10, readOnly: false });
await migrate(sql);
const defs = await captureIndexes(sql, LOADED_TABLES);
await dropIndexes(sql, defs);
const prepareSeconds = seconds(mark);
log(`  database created and migrated; ${defs.length} indexes dropped for the load [${prepareSeconds.toFixed(1)} s]`);

// ---------------------------------------------------------------------------------------------------
const rows = new Rows(plan);
const copies: CopyResult[] = [];
copies.push(await copyInto(target.url, 'chains', Rows.chainsColumns, rows.chains(), 7));
copies.push(await copyInto(target.url, 'indexed_blocks', Rows.blocksColumns, rows.blocks(), 7));
copies.push(await copyInto(target.url, 'ticks', Rows.ticksColumns, rows.ticks(), c.ticks));
copies.push(await copyInto(target.url, 'balances', Rows.balancesColumns, rows.balances(), c.balances, { freeze: true }));
copies.push(await copyInto(target.url, 'address_txs', Rows.movementsColumns, rows.movements(), c.movements, { freeze: true }));
copies.push(await copyInto(target.url, 'transactions', Rows.transactionsColumns, rows.transactions(), c.transactions, { freeze: true }));
// one history row per movement but the deploys (every tick has one)
copies.push(await copyInto(target.url, 'balance_history', Rows.historyColumns, rows.history(), c.movements - c.ticks, { freeze: true }));
for (const table of ['ticks', 'address_txs', 'transactions', 'balance_history']) {
  await sql.unsafe(`SELECT setval(pg_get_serial_sequence('${table}', 'id'), greatest((SELECT max(id) FROM ${table}), 1))`);
}

// refresh_counters() before the index rebuild: its aggregates scan whole tables (no index helps), and its
// UPDATE of every tick changes indexed columns (minted → progress, holders, tx_cnt), so with the 16 ticks
// indexes in place it would add an entry to each and leave them half dead.
mark = performance.now();
await sql.begin(async (tx) => {
  // whole-table aggregates: hash aggregation in memory instead of spilling
  await tx`SET LOCAL work_mem = '512MB'`;
  await tx`SELECT refresh_counters()`;
});
const refreshSeconds = seconds(mark);
log(`  refresh_counters() ${refreshSeconds.toFixed(1)} s`);

mark = performance.now();
const indexTimings = await rebuildIndexes(sql, defs, jobs);
const indexSeconds = seconds(mark);
log(`  ${defs.length} indexes rebuilt in ${indexSeconds.toFixed(1)} s (${jobs} at a time)`);

mark = performance.now();
await sql`VACUUM ANALYZE`;
const vacuumSeconds = seconds(mark);
log(`  VACUUM ANALYZE ${vacuumSeconds.toFixed(1)} s`);

// ---------------------------------------------------------------------------------------------------
const [size] = await sql<{ bytes: string; pretty: string }[]>`
  SELECT pg_database_size(current_database())::text AS bytes, pg_size_pretty(pg_database_size(current_database())) AS pretty`;
const tables = await sql<{ table: string; heap: string; indexes: string; total: string; total_bytes: string }[]>`
  SELECT c.relname AS table, pg_size_pretty(pg_table_size(c.oid)) AS heap, pg_size_pretty(pg_indexes_size(c.oid)) AS indexes,
         pg_size_pretty(pg_total_relation_size(c.oid)) AS total, pg_total_relation_size(c.oid)::text AS total_bytes
    FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
   WHERE s.nspname = current_schema() AND c.relkind = 'r'
   ORDER BY pg_total_relation_size(c.oid) DESC`;
const [stats] = await sql<{ sats_holders: string; busy_movements: string }[]>`
  SELECT (SELECT holders::text FROM ticks WHERE chain = ${BENCH_NOTABLE.biggestTick.chain}
            AND protocol = ${BENCH_NOTABLE.biggestTick.protocol} AND tick = ${BENCH_NOTABLE.biggestTick.tick}) AS sats_holders,
         (SELECT count(*)::text FROM address_txs WHERE address_key = lower(${BENCH_NOTABLE.busiestAddress})) AS busy_movements`;
await sql.end({ timeout: 5 });
const totalSeconds = seconds(t0);

const phases = [
  { phase: 'plan', seconds: planSeconds },
  { phase: 'create+migrate+drop indexes', seconds: prepareSeconds },
  ...copies.map((x) => ({ phase: `copy ${x.table}`, rows: x.rows, seconds: x.seconds, rowsPerSecond: Math.round(x.rows / x.seconds) })),
  { phase: 'refresh_counters', seconds: refreshSeconds },
  { phase: 'index build', seconds: indexSeconds, indexes: defs.length, jobs },
  { phase: 'vacuum analyze', seconds: vacuumSeconds },
];
const round = (x: number) => Math.round(x * 100) / 100;
const result = {
  scale, seed, database: target.database, server: serverVersion, node: process.version,
  finishedAt: new Date().toISOString(),
  rows: { chains: 7, indexed_blocks: 7, ticks: c.ticks, balances: c.balances, address_txs: c.movements, transactions: c.transactions,
    balance_history: c.movements - c.ticks },
  shape: {
    transfers: c.transfers, nonInscriptionTransactions: c.noise, neverMintedTicks: c.zeroTicks,
    biggestTick: { ...BENCH_NOTABLE.biggestTick, holders: Number(stats?.sats_holders) },
    runnerUpHolders: plan.runnerUpHolders,
    busiestAddress: { address: BENCH_NOTABLE.busiestAddress, movements: Number(stats?.busy_movements), ticks: plan.targets.busyTicks },
    addresses: { evm: plan.evm.whales + plan.evm.general, btc: plan.btc.whales + plan.btc.general },
  },
  phases: phases.map((p) => ({ ...p, seconds: round(p.seconds) })),
  slowestIndexes: indexTimings.slice(0, 10).map((x) => ({ ...x, seconds: round(x.seconds) })),
  totalSeconds: round(totalSeconds),
  databaseSize: size?.pretty, databaseBytes: Number(size?.bytes),
  tables: tables.map((x) => ({ table: x.table, heap: x.heap, indexes: x.indexes, total: x.total })),
};

const resultsDir = fileURLToPath(new URL('./results/', import.meta.url));
mkdirSync(resultsDir, { recursive: true });
const resultFile = `${resultsDir}data-${scale}.json`;
writeFileSync(resultFile, `${JSON.stringify(result, null, 2)}\n`);

log('');
log(`phase                         rows          seconds     rows/s`);
for (const p of result.phases) {
  const r = 'rows' in p && typeof p.rows === 'number' ? n(p.rows) : '';
  const rate = 'rowsPerSecond' in p && typeof p.rowsPerSecond === 'number' ? n(p.rowsPerSecond) : '';
  log(`${p.phase.padEnd(28)}${r.padStart(12)}${p.seconds.toFixed(1).padStart(12)}${rate.padStart(11)}`);
}
log(`${'total'.padEnd(28)}${''.padStart(12)}${result.totalSeconds.toFixed(1).padStart(12)}`);
log(`slowest indexes: ${result.slowestIndexes.slice(0, 5).map((x) => `${x.name} ${x.seconds.toFixed(1)} s`).join(', ')}`);
log(`database size: ${result.databaseSize} (${result.tables.slice(0, 4).map((x) => `${x.table} ${x.total}`).join(', ')})`);
log(`biggest tick: btc/brc-20/sats, ${n(result.shape.biggestTick.holders)} holders; busiest address: ` +
  `${BENCH_NOTABLE.busiestAddress}, ${n(result.shape.busiestAddress.movements)} movements`);
log(`results: ${resultFile}`);
log(`DATABASE_URL=${target.url}`);
// the cached plan and address strings are large: do not wait for GC to exit
process.exit(0);
