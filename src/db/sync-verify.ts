import type { Sql } from './client.js';

// The read model's side of the sync's reconciliation (`--verify`, src/sync/verify.ts): counts over the
// read model, compared there with the same counts over the source. Read-only.

/** Read-model tables counted per chain by `--verify` (each filled from one source table). */
export type CountedTable = 'chains' | 'indexed_blocks' | 'ticks' | 'balances' | 'address_txs' | 'transactions' | 'utxos' | 'balance_history';

const perChain: Record<CountedTable, (sql: Sql) => Promise<{ chain: string; n: string }[]>> = {
  chains: (sql) => sql`SELECT chain, count(*)::text AS n FROM chains GROUP BY chain`,
  indexed_blocks: (sql) => sql`SELECT chain, count(*)::text AS n FROM indexed_blocks GROUP BY chain`,
  ticks: (sql) => sql`SELECT chain, count(*)::text AS n FROM ticks GROUP BY chain`,
  balances: (sql) => sql`SELECT t.chain, count(*)::text AS n FROM balances b JOIN ticks t ON t.id = b.tick_id GROUP BY t.chain`,
  address_txs: (sql) => sql`SELECT t.chain, count(*)::text AS n FROM address_txs a JOIN ticks t ON t.id = a.tick_id GROUP BY t.chain`,
  transactions: (sql) => sql`SELECT chain, count(*)::text AS n FROM transactions GROUP BY chain`,
  utxos: (sql) => sql`SELECT t.chain, count(*)::text AS n FROM utxos u JOIN ticks t ON t.id = u.tick_id GROUP BY t.chain`,
  balance_history: (sql) => sql`SELECT t.chain, count(*)::text AS n FROM balance_history h JOIN ticks t ON t.id = h.tick_id GROUP BY t.chain`,
};

/** Rows of a read-model table per chain (a child table's chain is its tick's). */
export async function rowsPerChain(sql: Sql, table: CountedTable): Promise<Map<string, bigint>> {
  return new Map((await perChain[table](sql)).map((r) => [String(r.chain), BigInt(r.n)]));
}

/** The indexed height per chain. */
export async function indexedHeights(sql: Sql): Promise<Map<string, string>> {
  const rows = await sql<{ chain: string; h: string }[]>`SELECT chain, block_number::text AS h FROM indexed_blocks`;
  return new Map(rows.map((r) => [r.chain, r.h]));
}

export interface TickCounts { chain: string; protocol: string; tick: string; holders: string; minted: string; moves: string; txs: string }

/** Per tick: its counters (holders, minted, tx count) and its movements counted. */
export async function tickCounts(sql: Sql): Promise<TickCounts[]> {
  return sql<TickCounts[]>`
    SELECT t.chain, t.protocol, t.tick, t.holders::text AS holders, t.minted::text AS minted, coalesce(m.n, 0)::text AS moves,
           t.tx_cnt::text AS txs
      FROM ticks t LEFT JOIN (SELECT tick_id, count(*) AS n FROM address_txs GROUP BY tick_id) m ON m.tick_id = t.id`;
}
