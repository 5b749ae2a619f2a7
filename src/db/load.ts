import type { Sql } from './client.js';

// The write side used by the demo seed, the benchmark loader and test fixtures: whole datasets loaded in
// one transaction with row triggers off, then every counter recomputed once (refresh_counters) and the
// balance history derived from the movements (derive_balance_history, sql/011).
// An indexer writing row by row needs none of this: the triggers keep its counters right.

export interface ChainInput {
  chain: string; chain_id: number; outer_chain: string; name: string; logo: string;
  network_id: number; ext: string; display_order: number;
}
export interface BlockInput { chain: string; block_number: string; block_time: string; indexed_at: string }
export interface TickInput {
  id?: number;
  chain: string; protocol: string; tick: string; name: string;
  limit_per_mint: string; deploy_by: string; total_supply: string; deploy_hash: string;
  deploy_time: string; transfer_type: number; decimals: number;
  created_at: string; updated_at: string | null;
  /** Stats as an indexer snapshot had them, written after the recount (fixtures of very large ticks). */
  stats?: { minted?: string; holders?: number; tx_cnt?: number };
}
export interface BalanceInput {
  chain: string; protocol: string; tick: string; address: string; balance: string; available: string;
}
export interface MovementInput {
  chain: string; protocol: string; tick: string; address: string; tx_hash: string; amount: string;
  event: 1 | 2 | 3 | 4; operate: string; created_at: string; updated_at: string;
}
export interface TransactionInput {
  id?: number;
  chain: string; protocol: string; block_height: number; position_in_block: number; block_time: string;
  tx_hash: string; from_address: string; to_address: string; op: string; tick: string; amt: string;
  gas: number; gas_price: number; status: number; created_at: string; updated_at: string;
}
export interface Dataset {
  chains: ChainInput[];
  blocks: BlockInput[];
  ticks: TickInput[];
  balances: BalanceInput[];
  movements: MovementInput[];
  transactions: TransactionInput[];
}

const chunk = 5_000;

export async function loadDataset(sql: Sql, data: Partial<Dataset>): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`SET LOCAL session_replication_role = replica`;
    const insert = async (rows: object[] | undefined, statement: (json: unknown) => Promise<unknown>) => {
      // rows travel as one jsonb parameter per chunk (postgres.js serialises it)
      for (let i = 0; rows && i < rows.length; i += chunk) await statement(tx.json(rows.slice(i, i + chunk) as never));
    };
    await insert(data.chains, (j) => tx`
      INSERT INTO chains (chain, chain_id, outer_chain, name, logo, network_id, ext, display_order)
      SELECT chain, chain_id, outer_chain, name, logo, network_id, ext, display_order
        FROM jsonb_to_recordset(${j as never}::jsonb) AS r (chain text, chain_id bigint, outer_chain text, name text,
             logo text, network_id bigint, ext text, display_order int)`);
    await insert(data.blocks, (j) => tx`
      INSERT INTO indexed_blocks (chain, block_number, block_time, indexed_at)
      SELECT chain, block_number, block_time, indexed_at
        FROM jsonb_to_recordset(${j as never}::jsonb) AS r (chain text, block_number numeric, block_time timestamptz,
             indexed_at timestamptz)`);
    // rows without an explicit id take the sequence's next value: move it past the explicit ones first
    const reserveIds = async (table: string, rows: { id?: number }[] | undefined) => {
      const top = Math.max(0, ...(rows ?? []).map((r) => r.id ?? 0));
      if (top > 0) await tx`SELECT setval(pg_get_serial_sequence(${table}, 'id'), ${top})`;
    };
    await reserveIds('ticks', data.ticks);
    await reserveIds('transactions', data.transactions);
    await insert(data.ticks, (j) => tx`
      INSERT INTO ticks (id, chain, protocol, tick, name, limit_per_mint, deploy_by, total_supply, deploy_hash,
                         deploy_time, transfer_type, decimals, created_at, updated_at)
      SELECT coalesce(id, nextval(pg_get_serial_sequence('ticks', 'id'))), chain, protocol, tick, name,
             limit_per_mint, deploy_by, total_supply, deploy_hash, deploy_time, transfer_type, decimals,
             created_at, updated_at
        FROM jsonb_to_recordset(${j as never}::jsonb) AS r (id bigint, chain text, protocol text, tick text, name text,
             limit_per_mint numeric, deploy_by text, total_supply numeric, deploy_hash text, deploy_time timestamptz,
             transfer_type smallint, decimals smallint, created_at timestamptz, updated_at timestamptz)`);
    await insert(data.balances, (j) => tx`
      INSERT INTO balances (tick_id, address, balance, available)
      SELECT t.id, r.address, r.balance, r.available
        FROM jsonb_to_recordset(${j as never}::jsonb) AS r (chain text, protocol text, tick text, address text,
             balance numeric, available numeric)
        JOIN ticks t ON t.chain = r.chain AND t.protocol = r.protocol AND t.tick = r.tick`);
    await insert(data.movements, (j) => tx`
      INSERT INTO address_txs (tick_id, address, tx_hash, amount, event, operate, created_at, updated_at)
      SELECT t.id, r.address, r.tx_hash, r.amount, r.event, r.operate, r.created_at, r.updated_at
        FROM ROWS FROM (jsonb_to_recordset(${j as never}::jsonb) AS (chain text, protocol text, tick text,
             address text, tx_hash text, amount numeric, event smallint, operate text, created_at timestamptz,
             updated_at timestamptz)) WITH ORDINALITY
             AS r (chain, protocol, tick, address, tx_hash, amount, event, operate, created_at, updated_at, ord)
        JOIN ticks t ON t.chain = r.chain AND t.protocol = r.protocol AND t.tick = r.tick
       ORDER BY r.ord`);
    await insert(data.transactions, (j) => tx`
      INSERT INTO transactions (id, chain, protocol, block_height, position_in_block, block_time, tx_hash,
                                from_address, to_address, op, tick, amt, gas, gas_price, status, created_at, updated_at)
      SELECT coalesce(id, nextval(pg_get_serial_sequence('transactions', 'id'))), chain, protocol, block_height,
             position_in_block, block_time, tx_hash, from_address, to_address, op, tick, amt, gas, gas_price,
             status, created_at, updated_at
        FROM ROWS FROM (jsonb_to_recordset(${j as never}::jsonb) AS (id bigint, chain text, protocol text,
             block_height bigint, position_in_block bigint, block_time timestamptz, tx_hash text, from_address text,
             to_address text, op text, tick text, amt numeric, gas bigint, gas_price bigint, status smallint,
             created_at timestamptz, updated_at timestamptz)) WITH ORDINALITY
             AS r (id, chain, protocol, block_height, position_in_block, block_time, tx_hash, from_address,
                   to_address, op, tick, amt, gas, gas_price, status, created_at, updated_at, ord)
       ORDER BY r.ord`);
    for (const table of ['ticks', 'transactions']) {
      await tx`SELECT setval(pg_get_serial_sequence(${table}, 'id'),
                             greatest((SELECT max(id) FROM ${tx(table)}), 1))`;
    }
    await tx`SELECT refresh_counters()`;
    // the balance history (sql/011) of data without an indexer's: summed from the movements
    await tx`SELECT derive_balance_history()`;
    for (const t of data.ticks ?? []) {
      if (!t.stats) continue;
      await tx`
        UPDATE ticks SET minted = coalesce(${t.stats.minted ?? null}::numeric, minted),
                         holders = coalesce(${t.stats.holders ?? null}::bigint, holders),
                         tx_cnt = coalesce(${t.stats.tx_cnt ?? null}::bigint, tx_cnt)
         WHERE chain = ${t.chain} AND protocol = ${t.protocol} AND tick = ${t.tick}`;
    }
  });
}
