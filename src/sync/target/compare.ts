// Read-model comparisons of the sync (polling, the rewind's re-sync, the backfill's cross-check): what is
// there already, so that only rows that differ are written.
import type postgres from 'postgres';
import type { Tx } from '../../db/writes.js';
import type { BalanceWrite } from '../../db/write-rows.js';

/** Polling reads the source's chain_info and block whole and writes the rows that differ: the read model's
 *  chains (chain → its columns joined by '|') and heights (chain → 'height|block time in ms'). */
export async function chainFingerprints(sql: postgres.Sql<Record<string, never>>): Promise<Map<string, string>> {
  const rows = await sql<{ chain: string; j: string }[]>`
    SELECT chain, concat_ws('|', chain_id, outer_chain, name, logo, network_id, ext) AS j FROM chains`;
  return new Map(rows.map((r) => [r.chain, r.j]));
}
export async function indexedFingerprints(sql: postgres.Sql<Record<string, never>>): Promise<Map<string, string>> {
  const rows = await sql<{ chain: string; j: string }[]>`
    SELECT chain, block_number::text || '|' || (extract(epoch FROM block_time) * 1000)::bigint AS j FROM indexed_blocks`;
  return new Map(rows.map((r) => [r.chain, r.j]));
}

/** The balances whose amounts differ from the read model's (polling re-reads a window of unchanged rows:
 *  writing them would bump the data version and empty the gateway's caches for nothing). */
export async function changedBalances<T extends BalanceWrite>(tx: Tx | postgres.Sql<Record<string, never>>, rows: T[]): Promise<T[]> {
  if (!rows.length) return [];
  const same = await tx<{ i: number }[]>`
    SELECT r.i FROM jsonb_to_recordset(${tx.json(rows.map((r, i) => ({ ...r, i })) as never)}::jsonb)
           AS r (i int, chain text, protocol text, tick text, address text, balance numeric, available numeric)
      JOIN ticks t ON t.chain = r.chain AND t.protocol = r.protocol AND t.tick = r.tick
      JOIN balances b ON b.tick_id = t.id AND b.address_key = lower(r.address)
     WHERE b.balance = r.balance AND b.available = r.available`;
  const skip = new Set(same.map((s) => s.i));
  return rows.filter((_, i) => !skip.has(i));
}

/** Ticks whose derived counters differ from an indexer's own stats (inscriptions_stats, a cross-check). */
export async function statsDisagreements(sql: postgres.Sql<Record<string, never>>, stats: { chain: string; protocol: string;
  tick: string; minted: string; holders: string; tx_cnt: string }[]) {
  if (!stats.length) return [];
  return sql<{ chain: string; protocol: string; tick: string; minted: string; holders: string; tx_cnt: string;
    source_minted: string; source_holders: string; source_tx_cnt: string }[]>`
    SELECT t.chain, t.protocol, t.tick, t.minted::text AS minted, t.holders::text AS holders, t.tx_cnt::text AS tx_cnt,
           s.minted::text AS source_minted, s.holders::text AS source_holders, s.tx_cnt::text AS source_tx_cnt
      FROM jsonb_to_recordset(${sql.json(stats as never)}::jsonb) AS s (chain text, protocol text, tick text, minted numeric,
           holders bigint, tx_cnt bigint)
      JOIN ticks t ON t.chain = s.chain AND t.protocol = s.protocol AND t.tick = s.tick
     WHERE t.minted <> s.minted OR t.holders <> s.holders OR t.tx_cnt <> s.tx_cnt`;
}
