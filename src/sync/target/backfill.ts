import { totalmem } from 'node:os';
import postgres from 'postgres';
import type { Sql } from '../../db/client.js';
import { copyChunksInto } from './copy.js';
import { recordDuplicateDeployHashes, type Tx } from '../../db/writes.js';
import * as state from './state.js';

// The read model's side of the sync's backfill (src/sync/backfill.ts): the bulk connection the source's
// ranges are copied on, the ranges themselves (each committed with the record that it is done), and the
// finish (counters, the dropped indexes rebuilt, statistics).

/** Rows in the tables the backfill fills in bulk: their indexes are dropped for it only when all are empty. */
export async function bulkRowCount(sql: Sql): Promise<bigint> {
  const [row] = await sql<{ n: string }[]>`
    SELECT ((SELECT count(*) FROM balances) + (SELECT count(*) FROM address_txs) + (SELECT count(*) FROM transactions)
           + (SELECT count(*) FROM utxos) + (SELECT count(*) FROM balance_history))::text AS n`;
  return BigInt(row!.n);
}

export interface BulkSession {
  /** tick id per (chain, protocol, tick) as the read model keys it */
  ticks(): Promise<{ id: string; chain: string; protocol: string; tick: string }[]>;
  /** COPYs one source range (COPY text, whole lines per Buffer: `rows` of them) into `target` and records it
   *  as done (`source` up to `lastId`), in one transaction */
  copyRange(target: string, columns: string[], chunks: readonly Buffer[], range: { source: string; lastId: string; done: boolean; rows: number }): Promise<void>;
  /** records a range with nothing to copy */
  advance(source: string, lastId: string, done: boolean): Promise<void>;
}

/**
 * Runs `work` on one dedicated connection set up for bulk loading: row triggers and FK checks off
 * (session_replication_role = replica; the finish recomputes the counters) and asynchronous commit (a
 * range and its record commit together, so a crash loses both or neither: the next run copies the range again).
 */
export async function withBulkSession<T>(databaseUrl: string, work: (s: BulkSession) => Promise<T>): Promise<T> {
  const client = postgres(databaseUrl, {
    max: 1, onnotice: () => {}, idle_timeout: 0,
    connection: { application_name: 'igw-sync-backfill', statement_timeout: 0 },
  });
  try {
    const r = await client.reserve();
    try {
      await r`SET session_replication_role = replica`;
      await r`SET synchronous_commit = off`;
      const conn = r as unknown as Sql;
      return await work({
        ticks: () => conn<{ id: string; chain: string; protocol: string; tick: string }[]>`
          SELECT id::text AS id, chain, protocol, tick FROM ticks`,
        async copyRange(target, columns, chunks, range) {
          await r`BEGIN`;
          try {
            if (chunks.length > 0) await copyChunksInto(conn, target, columns, chunks);
            await state.advanceBackfill(conn, range.source, range.lastId, range.rows, range.done);
            await r`COMMIT`;
          } catch (error) {
            await r`ROLLBACK`.catch(() => {});
            throw error;
          }
        },
        advance: (source, lastId, done) => state.advanceBackfill(conn, source, lastId, 0, done),
      });
    } finally {
      r.release();
    }
  } finally {
    await client.end({ timeout: 5 });
  }
}

/**
 * The history's intervals (valid_to of every balance_history row: the backfill copies none), linked while
 * the bulk tables have no secondary index: the link rewrites nearly every history row, which with the
 * indexes in place costs an entry in each of them per row. Not visible to a reader before the backfill
 * is done (the counters are refreshed then).
 */
export async function linkHistory(sql: Sql): Promise<void> {
  await sql.begin(async (tx) => {
    // the link's window over the whole table: sorted in memory instead of spilling
    await tx`SET LOCAL work_mem = '512MB'`;
    await tx`SELECT link_balance_history()`;
  });
}

/** The staging table balance_txn is copied into before it becomes balance_history (sql/015_sync_history_stage.sql). */
export const historyStage = 'sync_history_stage';

/**
 * The staged rows of an unfinished history copy, checked against the rows recorded as copied: a crash of
 * the server empties the (unlogged) stage, and the copy then starts again from the first id (true). So
 * does a history copy begun by an older version straight into balance_history (no row of it is staged):
 * those rows go too (nothing else writes the history before the backfill is done).
 */
export async function resetLostHistoryStage(sql: Sql, source: string): Promise<boolean> {
  return sql.begin(async (tx) => {
    const [row] = await tx<{ staged: string; recorded: string }[]>`
      SELECT (SELECT count(*) FROM sync_history_stage)::text AS staged,
             (SELECT rows_copied FROM sync_backfill WHERE source_table = ${source})::text AS recorded`;
    if (row!.staged === (row!.recorded ?? '0')) return false;
    await tx`TRUNCATE sync_history_stage, balance_history`;
    await tx`UPDATE sync_backfill SET last_id = 0, rows_copied = 0, done = false WHERE source_table = ${source}`;
    return true;
  });
}

/**
 * The staged history moved into balance_history in one pass, each row written once with its block height
 * (its transaction's: the transactions row of the same chain and hash, the lowest height if the hash was
 * written twice — as the follow looks it up, src/db/writes.ts) and its interval (valid_to = the height
 * of the same holder's next row, in the order link_balance_history() uses); the stage emptied and the
 * source table marked done in the same transaction. A staged row whose transaction is not there is left
 * out and handed to `onMissing` (up to 1,000 ids, lowest first), which may throw to roll the move back.
 * Row triggers and FK checks off as on the bulk connection (the finish recomputes the counters). A history
 * partly copied straight into balance_history (a backfill begun by an older version) is linked over all of it.
 */
export async function moveStagedHistory(sql: Sql, source: string, lastId: string, onMissing: (ids: string[]) => void): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`SET LOCAL session_replication_role = replica`;
    // the join's hash table and the window's sort in memory instead of spilling
    await tx`SET LOCAL work_mem = '512MB'`;
    const [before] = await tx<{ any: boolean }[]>`SELECT EXISTS (SELECT 1 FROM balance_history) AS any`;
    const inserted = await tx`
      INSERT INTO balance_history (id, tick_id, address, block_height, valid_to, amount, balance, available, event, tx_hash, created_at)
      SELECT s.id, s.tick_id, s.address, t.block_height,
             lead(t.block_height) OVER (PARTITION BY s.tick_id, lower(s.address) ORDER BY t.block_height, s.id),
             s.amount, s.balance, s.available, s.event, s.tx_hash, s.created_at
        FROM sync_history_stage s
        JOIN (SELECT chain, tx_hash_key, min(block_height) AS block_height FROM transactions GROUP BY chain, tx_hash_key) t
          ON t.chain = s.chain AND t.tx_hash_key = lower(s.tx_hash)`;
    const [staged] = await tx<{ n: string }[]>`SELECT count(*)::text AS n FROM sync_history_stage`;
    if (BigInt(staged!.n) !== BigInt(inserted.count)) {
      const missing = await tx<{ id: string }[]>`
        SELECT s.id::text AS id FROM sync_history_stage s
         WHERE NOT EXISTS (SELECT FROM transactions t WHERE t.chain = s.chain AND t.tx_hash_key = lower(s.tx_hash))
         ORDER BY s.id LIMIT 1000`;
      onMissing(missing.map((r) => r.id));
    }
    if (before!.any) await tx`SELECT link_balance_history()`;
    await tx`TRUNCATE sync_history_stage`;
    await state.advanceBackfill(tx as Tx, source, lastId, 0, true);
  });
}

/**
 * Rebuilds the indexes the backfill dropped (recorded in sync_dropped_indexes; those of `tables` only when
 * given), `jobs` at a time, largest tables first; then, unless `attach` is false, re-attaches the
 * constraints one by one (ALTER TABLE waits for every build on its table; attachKeys does it in a
 * transaction of the caller's). Each index only if still missing, and its record goes once it is complete:
 * a resumed finish skips what is built.
 */
export async function restoreDroppedIndexes(sql: Sql, jobs: number, progress: { add(n: number): void }, tables?: string[],
  attach = true): Promise<void> {
  const defs = (await state.readDroppedIndexes(sql)).filter((d) => tables === undefined || tables.includes(d.table_name));
  const sizes = new Map<string, number>();
  for (const t of new Set(defs.map((d) => d.table_name))) {
    const [row] = await sql<{ bytes: string }[]>`SELECT pg_table_size(${t}::regclass)::text AS bytes`;
    sizes.set(t, Number(row?.bytes ?? 0));
  }
  const queue = [...defs].sort((a, b) => sizes.get(b.table_name)! - sizes.get(a.table_name)! || a.name.localeCompare(b.name));
  const memMb = Math.max(64, Math.min(1024, Math.floor(totalmem() / 2 ** 20 / (4 * jobs))));
  const worker = async () => {
    for (let d = queue.shift(); d; d = queue.shift()) {
      const index = d;
      await sql.begin(async (tx) => {
        await tx.unsafe(`SET LOCAL maintenance_work_mem = '${memMb}MB'`);
        await tx.unsafe(index.def.replace(/^CREATE (UNIQUE )?INDEX /, (m) => `${m}IF NOT EXISTS `));
        if (!index.constraint_kind) await tx`DELETE FROM sync_dropped_indexes WHERE name = ${index.name}`;
      });
      if (!index.constraint_kind) progress.add(1);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, jobs) }, worker));
  if (!attach) return;
  for (const d of defs.filter((x) => x.constraint_kind)) {
    await sql.begin((tx) => attachKey(tx as Tx, d));
    progress.add(1);
  }
}

async function attachKey(tx: Tx, d: state.DroppedIndex): Promise<void> {
  const [exists] = await tx`SELECT 1 FROM pg_constraint WHERE conname = ${d.name}`;
  if (!exists) {
    await tx.unsafe(`ALTER TABLE "${d.table_name}" ADD CONSTRAINT "${d.name}" ${d.constraint_kind === 'p' ? 'PRIMARY KEY' : 'UNIQUE'} USING INDEX "${d.name}"`);
  }
  await tx`DELETE FROM sync_dropped_indexes WHERE name = ${d.name}`;
}

/**
 * The per-address transaction totals (refresh_address_tx_totals(): from the transactions alone), recomputed
 * as soon as the transactions are copied, while the copy goes on: one aggregate less at the end.
 */
export async function refreshTransactionTotals(sql: Sql): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`SET LOCAL work_mem = '512MB'`;
    await tx`SELECT refresh_address_tx_totals()`;
  });
}

/**
 * Completes the backfill in one transaction: recomputes the counters (refresh_counter_tables()'s parts,
 * sql/014, less the transaction totals when `transactionTotals` says they were recomputed after the copy
 * of the transactions; whole-table aggregates that use no index, so
 * they run while `builds`, the last index builds, go on), then once those are done re-attaches the keys
 * still recorded (ALTER TABLE … USING INDEX needs the lock this transaction's reads hold: here it is its
 * own) and marks the backfill done: a reader sees the copied rows' counters once the backfill is done.
 * Returns the (chain, deploy_hash) duplicates among the ticks, recorded now.
 */
export async function completeBackfill(sql: Sql, builds: Promise<void> = Promise.resolve(), progress: { add(n: number): void } = { add() {} },
  transactionTotals: 'fresh' | 'stale' = 'stale') {
  return sql.begin(async (tx) => {
    // whole-table aggregates: hash aggregation in memory instead of spilling
    await tx`SET LOCAL work_mem = '512MB'`;
    await tx`SELECT refresh_tick_and_list_counters()`;
    await tx`SELECT refresh_address_totals()`;
    if (transactionTotals === 'stale') await tx`SELECT refresh_address_tx_totals()`;
    await builds;
    for (const d of (await state.readDroppedIndexes(tx as Tx)).filter((x) => x.constraint_kind)) {
      await attachKey(tx as Tx, d);
      progress.add(1);
    }
    const duplicates = await recordDuplicateDeployHashes(tx as Tx, null);
    await state.markBackfillDone(tx);
    return duplicates;
  });
}

/** Planner statistics of the tables the backfill filled. */
export async function analyzeTables(sql: Sql, tables: string[]): Promise<void> {
  for (const t of tables) await sql.unsafe(`ANALYZE "${t.replace(/"/g, '""')}"`);
}
