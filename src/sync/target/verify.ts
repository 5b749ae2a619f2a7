import type { Sql } from '../../db/client.js';

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

/** Read-model tables whose rows `--verify` compares value by value with the source's, by source id. */
export type ValueTable = 'ticks' | 'transactions' | 'address_txs' | 'balance_history' | 'utxos';

const utc = (c: string) => `to_char(${c} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
/** Each table's compared columns as text, in the form the sync's mapping produces them (times as ISO UTC
 *  instants, numbers as text; a child row's chain, protocol and tick are its tick's). */
const valueSelects: Record<ValueTable, string> = {
  ticks: `SELECT x.id::text AS id, x.chain, x.protocol, x.tick, x.name, x.limit_per_mint::text AS limit_per_mint, x.deploy_by,
      x.total_supply::text AS total_supply, x.deploy_hash, ${utc('x.deploy_time')} AS deploy_time, x.transfer_type::text AS transfer_type,
      x.decimals::text AS decimals, ${utc('x.created_at')} AS created_at FROM ticks x`,
  transactions: `SELECT x.id::text AS id, x.chain, x.protocol, x.block_height::text AS block_height, x.position_in_block::text AS position_in_block,
      ${utc('x.block_time')} AS block_time, x.tx_hash, x.from_address, x.to_address, x.op, x.tick, x.amt::text AS amt, x.gas::text AS gas,
      x.gas_price::text AS gas_price, x.status::text AS status, ${utc('x.created_at')} AS created_at FROM transactions x`,
  address_txs: `SELECT x.id::text AS id, t.chain, t.protocol, t.tick, x.address, x.tx_hash, x.amount::text AS amount, x.event::text AS event,
      x.operate, ${utc('x.created_at')} AS created_at FROM address_txs x JOIN ticks t ON t.id = x.tick_id`,
  balance_history: `SELECT x.id::text AS id, t.chain, t.protocol, t.tick, x.address, x.amount::text AS amount, x.balance::text AS balance,
      x.available::text AS available, x.event::text AS event, x.tx_hash, ${utc('x.created_at')} AS created_at
      FROM balance_history x JOIN ticks t ON t.id = x.tick_id`,
  utxos: `SELECT x.id::text AS id, t.chain, t.protocol, t.tick, x.address, x.root_hash, x.amount::text AS amount, x.status::text AS status,
      ${utc('x.created_at')} AS created_at FROM utxos x JOIN ticks t ON t.id = x.tick_id`,
};

/** A read-model table's rows with ids in (lo, hi], their compared columns as text. */
export async function valueRows(sql: Sql, table: ValueTable, lo: string, hi: string): Promise<Record<string, string | null>[]> {
  return sql.unsafe(`${valueSelects[table]} WHERE x.id > $1 AND x.id <= $2 ORDER BY x.id`, [lo, hi]) as never;
}

/** The highest id of a read-model table (0 when empty). */
export async function maxValueId(sql: Sql, table: ValueTable): Promise<bigint> {
  const [row] = await sql.unsafe(`SELECT coalesce(max(id), 0)::text AS m FROM ${table}`);
  return BigInt((row as unknown as { m: string }).m);
}

/** The read model's balances of the (chain, protocol, tick, address) keys given, by key. */
export async function balancesOf(sql: Sql, keys: { chain: string; protocol: string; tick: string; address: string }[]) {
  if (!keys.length) return [];
  return sql<{ chain: string; protocol: string; tick: string; address_key: string; balance: string; available: string }[]>`
    SELECT t.chain, t.protocol, t.tick, b.address_key, b.balance::text AS balance, b.available::text AS available
      FROM (SELECT DISTINCT * FROM unnest(${keys.map((k) => k.chain)}::text[], ${keys.map((k) => k.protocol)}::text[],
                  ${keys.map((k) => k.tick)}::text[], ${keys.map((k) => k.address.toLowerCase())}::text[]) AS k (chain, protocol, tick, address_key)) k
      JOIN ticks t ON t.chain = k.chain AND t.protocol = k.protocol AND t.tick = k.tick
      JOIN balances b ON b.tick_id = t.id AND b.address_key = k.address_key`;
}
