import type { Sql } from '../../db/client.js';
import type { Tx } from '../../db/writes.js';

// Read-model side of a chain's re-sync after a manual rewind in the source (src/sync/rewind.ts) and of the
// polling delete sweep (src/sync/deletes.ts): the ids a chain (or a table) holds, and the balances of a
// chain the source no longer has.

/** Read-model table of each source table, and how its rows are tied to a chain. */
const chainScope: Record<string, { table: string; from: string; chain: string }> = {
  inscriptions: { table: 'ticks', from: 'ticks x', chain: 'x.chain' },
  txs: { table: 'transactions', from: 'transactions x', chain: 'x.chain' },
  address_txs: { table: 'address_txs', from: 'address_txs x JOIN ticks t ON t.id = x.tick_id', chain: 't.chain' },
  utxos: { table: 'utxos', from: 'utxos x JOIN ticks t ON t.id = x.tick_id', chain: 't.chain' },
  balance_txn: { table: 'balance_history', from: 'balance_history x JOIN ticks t ON t.id = x.tick_id', chain: 't.chain' },
};

/** The highest id of a chain's rows of a source table's read-model table. */
export async function maxChainId(sql: Sql | Tx, source: string, chain: string): Promise<bigint> {
  const s = chainScope[source]!;
  const [row] = await sql.unsafe(`SELECT coalesce(max(x.id), 0)::text AS m FROM ${s.from} WHERE ${s.chain} = $1`, [chain]);
  return BigInt(String(row!.m));
}

/** A chain's ids in (lo, hi] of a source table's read-model table. */
export async function chainIds(sql: Sql | Tx, source: string, chain: string, lo: bigint, hi: bigint): Promise<string[]> {
  const s = chainScope[source]!;
  const rows = await sql.unsafe(`SELECT x.id::text AS id FROM ${s.from} WHERE ${s.chain} = $1 AND x.id > $2 AND x.id <= $3`,
    [chain, String(lo), String(hi)]);
  return rows.map((r) => String(r.id));
}

/** The highest id of a read-model table (the polling delete sweep's range). */
export async function readModelMaxId(sql: Sql, table: string): Promise<bigint> {
  const [row] = await sql.unsafe(`SELECT coalesce(max(id), 0)::text AS m FROM ${table}`);
  return BigInt(String(row!.m));
}

/** A read-model table's ids in (lo, hi]. */
export async function readModelIds(sql: Sql, table: string, lo: bigint, hi: bigint): Promise<string[]> {
  const rows = await sql.unsafe(`SELECT id::text AS id FROM ${table} WHERE id > $1 AND id <= $2`, [String(lo), String(hi)]);
  return rows.map((r) => String(r.id));
}

/** Starts the list of a chain's balances to keep (a temporary table dropped at commit). */
export async function beginKeptBalances(tx: Tx): Promise<void> {
  await tx`CREATE TEMPORARY TABLE sync_kept_balances (chain text, protocol text, tick text, address_key text) ON COMMIT DROP`;
}
export async function keepBalances(tx: Tx, keys: { chain: string; protocol: string; tick: string; address: string }[]): Promise<void> {
  if (!keys.length) return;
  await tx`INSERT INTO sync_kept_balances SELECT chain, protocol, tick, lower(address)
             FROM jsonb_to_recordset(${tx.json(keys as never)}::jsonb) AS r (chain text, protocol text, tick text, address text)`;
}
/** Deletes the chain's balances not listed; returns how many. */
export async function deleteUnkeptBalances(tx: Tx, chain: string): Promise<number> {
  const rows = await tx`
    DELETE FROM balances b USING ticks t
     WHERE t.id = b.tick_id AND t.chain = ${chain}
       AND NOT EXISTS (SELECT 1 FROM sync_kept_balances k WHERE k.chain = t.chain AND k.protocol = t.protocol AND k.tick = t.tick
                          AND k.address_key = b.address_key)
    RETURNING 1`;
  return rows.length;
}
