import type { Sql } from './client.js';
import type { Runner } from './statement-runner.js';

// Transferable UTXOs of ticks transferred by UTXO hash (sql/005_utxos.sql), for inds_getAddressBalance.

export interface UtxoRow {
  id: string;
  tick_id: string;
  address: string;
  root_hash: string;
  amount: string;
  created_at: Date;
  updated_at: Date;
}

export function createUtxoStore(sql: Sql, run: Runner) {
  return {
    /** Unspent outputs of (tick, address) pairs, newest first, at most `limit` per pair (utxos_unspent). */
    async unspent(keys: readonly { tickId: string; address: string }[], limit: number): Promise<(UtxoRow & { key: string })[]> {
      return run(sql<(UtxoRow & { key: string })[]>`
        SELECT k.ord::text AS key, u.* FROM unnest(${keys.map((k) => k.tickId)}::bigint[], ${keys.map((k) => k.address)}::text[])
                                             WITH ORDINALITY AS k (tick_id, address, ord)
        CROSS JOIN LATERAL (
          SELECT x.id, x.tick_id, x.address, x.root_hash, x.amount, x.created_at, x.updated_at FROM utxos x
           WHERE x.tick_id = k.tick_id AND x.address_key = lower(k.address) AND x.status = 1
           ORDER BY x.id DESC LIMIT ${limit}) u
        ORDER BY k.ord, u.id DESC`);
    },
  };
}

export type UtxoStore = ReturnType<typeof createUtxoStore>;
