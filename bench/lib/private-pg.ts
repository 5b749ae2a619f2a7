// A private PostgreSQL server loaded with the benchmark data, for the scaling benchmark and the Citus
// simulation: the server comes from the standby tests' support code (test/support/pg-instance.ts: initdb
// in a temp dir, its own loopback port, fsync off, torn down at exit), the data from the generator's
// library (bench/lib/plan.ts + rows.ts + copy.ts), loaded the way bench/generate.ts loads it: migrate,
// drop the secondary indexes, COPY, refresh_counters(), rebuild the indexes, VACUUM ANALYZE.
import { createSql } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';
import { createPgInstance, type PgInstance } from '../../test/support/pg-instance.js';
import { copyInto } from './copy.js';
import { captureIndexes, dropIndexes, rebuildIndexes } from './indexes.js';
import { DEFAULT_SEED, buildPlan } from './plan.js';
import { Rows } from './rows.js';

export { createPgInstance, type PgInstance };

export interface Loaded {
  primary: PgInstance;
  /** The loaded database on the primary. */
  url: string;
  rows: Record<string, number>;
  loadSeconds: number;
}

/** Starts a private primary (extra server settings allowed) and loads `scale` of the benchmark data into `database`. */
export async function startLoadedPrimary(scale: number, database = 'igw_bench', settings: string[] = []): Promise<Loaded> {
  const primary = await createPgInstance({ settings });
  await primary.start();
  const t0 = performance.now();
  const admin = createSql({ url: primary.url, poolMax: 1, statementTimeoutMs: 0, connectTimeoutS: 10, readOnly: false });
  await admin.unsafe(`CREATE DATABASE ${database}`);
  await admin.end({ timeout: 5 });
  const url = primary.url.replace(/\/postgres$/, `/${database}`);
  const sql = createSql({ url, poolMax: 2, statementTimeoutMs: 0, connectTimeoutS: 10, readOnly: false });
  try {
    await migrate(sql);
    const tables = ['ticks', 'balances', 'address_txs', 'transactions', 'balance_history'];
    const defs = await captureIndexes(sql, tables);
    await dropIndexes(sql, defs);
    const plan = buildPlan(scale, DEFAULT_SEED);
    const c = plan.counts;
    const rows = new Rows(plan);
    await copyInto(url, 'chains', Rows.chainsColumns, rows.chains(), 7);
    await copyInto(url, 'indexed_blocks', Rows.blocksColumns, rows.blocks(), 7);
    await copyInto(url, 'ticks', Rows.ticksColumns, rows.ticks(), c.ticks);
    await copyInto(url, 'balances', Rows.balancesColumns, rows.balances(), c.balances, { freeze: true });
    await copyInto(url, 'address_txs', Rows.movementsColumns, rows.movements(), c.movements, { freeze: true });
    await copyInto(url, 'transactions', Rows.transactionsColumns, rows.transactions(), c.transactions, { freeze: true });
    await copyInto(url, 'balance_history', Rows.historyColumns, rows.history(), c.movements - c.ticks, { freeze: true });
    for (const table of ['ticks', 'address_txs', 'transactions', 'balance_history']) {
      await sql.unsafe(`SELECT setval(pg_get_serial_sequence('${table}', 'id'), greatest((SELECT max(id) FROM ${table}), 1))`);
    }
    await sql`SELECT refresh_counters()`;
    await rebuildIndexes(sql, defs, 2);
    await sql`VACUUM ANALYZE`;
    return {
      primary, url,
      rows: { ticks: c.ticks, balances: c.balances, address_txs: c.movements, transactions: c.transactions },
      loadSeconds: Math.round((performance.now() - t0) / 100) / 10,
    };
  } finally {
    await sql.end({ timeout: 5 });
  }
}
