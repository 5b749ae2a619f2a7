// Polling cannot see deletes (the indexer never deletes; an operator rewinding a chain by hand does).
// This sweep, run every --reconcile-interval-s while polling, compares the ids of the insert-only tables
// range by range and deletes from the read model the rows the source no longer has. Blocks are compared
// on every poll (whole reads); balances are not swept (a rewind corrects them by update).
import type { Sql } from '../db/client.js';
import { deleteHistory, deleteMovements, deleteTicks, deleteTransactions, deleteUtxos, type Tx } from '../db/writes.js';
import type { SourceConnection } from './source/connection.js';
import { sourceIds } from './source/reads.js';
import { readModelIds, readModelMaxId } from './target/rewind.js';
import type { Logger } from '../observability/logger.js';

/** Children before their tick, so that a rewind's tick delete finds no rows pointing at it. */
const sweeps: { source: string; target: string; remove: (tx: Tx, ids: string[]) => Promise<void> }[] = [
  { source: 'balance_txn', target: 'balance_history', remove: deleteHistory },
  { source: 'address_txs', target: 'address_txs', remove: deleteMovements },
  { source: 'txs', target: 'transactions', remove: deleteTransactions },
  { source: 'utxos', target: 'utxos', remove: deleteUtxos },
  { source: 'inscriptions', target: 'ticks', remove: deleteTicks },
];
const span = 50_000n;

/** Returns the number of read-model rows deleted per source table. */
export async function sweepDeletes(sql: Sql, conn: SourceConnection, log: Logger): Promise<Record<string, number>> {
  const deleted: Record<string, number> = {};
  for (const s of sweeps) {
    const max = await readModelMaxId(sql, s.target);
    let removed = 0;
    for (let lo = 0n; lo < max; lo += span) {
      const hi = lo + span;
      const present = await sourceIds(conn, s.source, lo, hi);
      const gone = (await readModelIds(sql, s.target, lo, hi)).filter((id) => !present.has(id));
      if (!gone.length) continue;
      try {
        await sql.begin((tx) => s.remove(tx as Tx, gone));
        removed += gone.length;
      } catch (error) {
        log.warn({ table: s.source, ids: gone.slice(0, 20), err: (error as Error).message }, 'rows deleted in the source could not be deleted here');
      }
    }
    if (removed) log.info({ table: s.source, rows: removed }, 'rows deleted in the source removed from the read model');
    deleted[s.source] = removed;
  }
  return deleted;
}
