import type postgres from 'postgres';
import type {
  BalanceWrite, BlockWrite, ChainWrite, HistoryWrite, MovementWrite, TickKey, TickWrite, TransactionWrite, UtxoWrite,
} from './write-rows.js';

/** The (chain, protocol, tick) key of a tick as one string (the same as src/sync/mapping.ts). */
const tickKeyString = (k: TickKey) => `${k.chain}\u0000${k.protocol}\u0000${k.tick}`;

// Row-by-row writes of the read model: the sync's follow (binlog and polling) and the demo player
// (src/db/seed/player.ts, which the gateway runs, so these stay in src/db). Every write is idempotent — an insert is
// an upsert, a delete of a missing row does nothing — because a follow resumed from a position slightly
// before the backfill's snapshot replays changes the snapshot already holds. The read model's row
// triggers keep the counters and bump the data version (one bump per transaction).

export type Tx = postgres.TransactionSql<Record<string, never>>;

/** The last row per key: one statement may not upsert a row twice (two updates in one source transaction). */
function lastBy<T>(rows: T[], key: (r: T) => string): T[] {
  return [...new Map(rows.map((r) => [key(r), r])).values()];
}
const byId = (r: { id: string }) => r.id;

/** A child row whose tick is not in the read model (the caller reports it as a bad row). */
class UnknownTickError extends Error {
  constructor(readonly ids: string[], readonly key: TickKey) {
    super(`no tick ${key.chain}/${key.protocol}/${key.tick}`);
  }
}

/** tick id per (chain, protocol, tick) for the keys given; missing keys are absent from the map. */
export async function tickIds(tx: Tx, keys: TickKey[]): Promise<Map<string, string>> {
  const unique = [...new Map(keys.map((k) => [tickKeyString(k), k])).values()];
  if (unique.length === 0) return new Map();
  const rows = await tx<{ id: string; chain: string; protocol: string; tick: string }[]>`
    SELECT t.id::text AS id, t.chain, t.protocol, t.tick
      FROM unnest(${unique.map((k) => k.chain)}::text[], ${unique.map((k) => k.protocol)}::text[],
                  ${unique.map((k) => k.tick)}::text[]) AS k (chain, protocol, tick)
      JOIN ticks t ON t.chain = k.chain AND t.protocol = k.protocol AND t.tick = k.tick`;
  return new Map(rows.map((r) => [tickKeyString(r), r.id]));
}

/** Rows with their tick id: the one the caller resolved (src/sync/apply.ts checks every child row's tick
 *  first, and passes the ids on), or looked up here. */
async function withTickIds<T extends TickKey & { id?: string; address?: string; tick_id?: string }>(tx: Tx, rows: T[]) {
  const unresolved = rows.filter((r) => r.tick_id === undefined);
  const ids = unresolved.length ? await tickIds(tx, unresolved) : new Map<string, string>();
  return rows.map((r) => {
    const tickId = r.tick_id ?? ids.get(tickKeyString(r));
    if (!tickId) throw new UnknownTickError([r.id ?? r.address ?? '?'], r);
    return { ...r, tick_id: tickId };
  });
}

/**
 * Runs `statement` with the counter row triggers standing aside (sql/009, sql/013: the statement adds the
 * counters' changes itself, once per tick and statement, instead of one update per row), then back to the
 * row triggers (deletes and every other write keep them). The three statements are pipelined: one round
 * trip to the server instead of three.
 */
async function batched(tx: Tx, statement: () => Promise<unknown>): Promise<void> {
  await Promise.all([
    tx`SELECT set_config('igw.counters', 'batched', true)`,
    statement(),
    tx`SELECT set_config('igw.counters', '', true)`,
  ]);
}

export async function upsertChains(tx: Tx, rows: ChainWrite[]): Promise<void> {
  if (!rows.length) return;
  await tx`
    INSERT INTO chains (chain, chain_id, outer_chain, name, logo, network_id, ext, display_order)
    SELECT chain, chain_id, outer_chain, name, logo, network_id, ext, display_order
      FROM jsonb_to_recordset(${tx.json(lastBy(rows, (r) => r.chain) as never)}::jsonb) AS r (chain text, chain_id bigint, outer_chain text,
           name text, logo text, network_id bigint, ext text, display_order int)
    ON CONFLICT (chain) DO UPDATE SET chain_id = EXCLUDED.chain_id, outer_chain = EXCLUDED.outer_chain,
       name = EXCLUDED.name, logo = EXCLUDED.logo, network_id = EXCLUDED.network_id, ext = EXCLUDED.ext`;
}

export async function upsertBlocks(tx: Tx, rows: BlockWrite[]): Promise<void> {
  if (!rows.length) return;
  await tx`
    INSERT INTO indexed_blocks (chain, block_number, block_time, indexed_at)
    SELECT chain, block_number, block_time, indexed_at
      FROM jsonb_to_recordset(${tx.json(lastBy(rows, (r) => r.chain) as never)}::jsonb) AS r (chain text, block_number numeric,
           block_time timestamptz, indexed_at timestamptz)
    ON CONFLICT (chain) DO UPDATE SET block_number = EXCLUDED.block_number, block_time = EXCLUDED.block_time,
       indexed_at = EXCLUDED.indexed_at`;
}
export async function deleteBlocks(tx: Tx, chains: string[]): Promise<void> {
  if (chains.length) await tx`DELETE FROM indexed_blocks WHERE chain = ANY(${chains}::text[])`;
}

/** Upserts ticks by source id; returns the (chain, deploy_hash) duplicates these rows created. */
export async function upsertTicks(tx: Tx, rows: TickWrite[]): Promise<{ chain: string; deploy_hash: string; tick_id: string; first_id: string }[]> {
  if (!rows.length) return [];
  await tx`
    INSERT INTO ticks (id, chain, protocol, tick, name, limit_per_mint, deploy_by, total_supply, deploy_hash,
                       deploy_time, transfer_type, decimals, created_at, updated_at)
    SELECT id, chain, protocol, tick, name, limit_per_mint, deploy_by, total_supply, deploy_hash, deploy_time,
           transfer_type, decimals, created_at, updated_at
      FROM jsonb_to_recordset(${tx.json(lastBy(rows, byId) as never)}::jsonb) AS r (id bigint, chain text, protocol text, tick text,
           name text, limit_per_mint numeric, deploy_by text, total_supply numeric, deploy_hash text,
           deploy_time timestamptz, transfer_type smallint, decimals smallint, created_at timestamptz, updated_at timestamptz)
    ON CONFLICT (id) DO UPDATE SET chain = EXCLUDED.chain, protocol = EXCLUDED.protocol, tick = EXCLUDED.tick,
       name = EXCLUDED.name, limit_per_mint = EXCLUDED.limit_per_mint, deploy_by = EXCLUDED.deploy_by,
       total_supply = EXCLUDED.total_supply, deploy_hash = EXCLUDED.deploy_hash, deploy_time = EXCLUDED.deploy_time,
       transfer_type = EXCLUDED.transfer_type, decimals = EXCLUDED.decimals, created_at = EXCLUDED.created_at,
       updated_at = EXCLUDED.updated_at`;
  return recordDuplicateDeployHashes(tx, rows.map((r) => r.id));
}

/** Records ticks (of `ids`, or all when null) whose (chain, deploy hash) an older tick already has. */
export async function recordDuplicateDeployHashes(tx: Tx, ids: string[] | null) {
  return tx<{ chain: string; deploy_hash: string; tick_id: string; first_id: string }[]>`
    INSERT INTO sync_duplicate_deploy_hashes (chain, deploy_hash, tick_id, first_id)
    SELECT b.chain, b.deploy_hash, b.id, min(a.id)
      FROM ticks b JOIN ticks a ON a.chain = b.chain AND a.deploy_hash_key = b.deploy_hash_key AND a.id < b.id
     WHERE ${ids === null} OR b.id = ANY(${ids ?? []}::bigint[])
     GROUP BY b.chain, b.deploy_hash, b.id
    ON CONFLICT DO NOTHING
    RETURNING chain, deploy_hash, tick_id::text AS tick_id, first_id::text AS first_id`;
}

export async function deleteTicks(tx: Tx, ids: string[]): Promise<void> {
  if (ids.length) await tx`DELETE FROM ticks WHERE id = ANY(${ids}::bigint[])`;
}

export async function upsertBalances(tx: Tx, rows: BalanceWrite[]): Promise<void> {
  if (!rows.length) return;
  const withIds = await withTickIds(tx, rows);
  // the first casing of an address is kept: a conflicting row only updates the amounts. Holders change
  // once per tick and statement (sql/009): balances > 0 after, minus those > 0 before (read in the same snapshot)
  await batched(tx, () => tx`
    WITH r AS (
      SELECT tick_id, address, balance, available, updated_at
        FROM jsonb_to_recordset(${tx.json(lastBy(withIds, (r) => `${r.tick_id}/${r.address.toLowerCase()}`) as never)}::jsonb)
             AS r (tick_id bigint, address text, balance numeric, available numeric, updated_at timestamptz)),
    old AS (SELECT b.tick_id, b.address_key, -1 AS n FROM balances b JOIN r ON b.tick_id = r.tick_id AND b.address_key = lower(r.address)
             WHERE b.balance > 0),
    ins AS (
      INSERT INTO balances (tick_id, address, balance, available, updated_at)
      SELECT tick_id, address, balance, available, updated_at FROM r
      ON CONFLICT (tick_id, address_key) DO UPDATE SET balance = EXCLUDED.balance, available = EXCLUDED.available,
         updated_at = EXCLUDED.updated_at
      RETURNING tick_id, address_key, balance),
    x AS (SELECT tick_id, address_key, 1 AS n FROM ins WHERE balance > 0 UNION ALL SELECT * FROM old),
    -- and the positive balances per address (sql/012)
    a AS (INSERT INTO address_totals AS t (address_key, movements, balances)
          SELECT address_key, 0, sum(n) FROM x GROUP BY address_key HAVING sum(n) <> 0
          ON CONFLICT (address_key) DO UPDATE SET balances = t.balances + EXCLUDED.balances),
    d AS (SELECT tick_id, sum(n) AS delta FROM x GROUP BY tick_id)
    UPDATE ticks t SET holders = t.holders + d.delta FROM d WHERE t.id = d.tick_id AND d.delta <> 0`);
}
export async function deleteBalances(tx: Tx, rows: BalanceWrite[]): Promise<void> {
  if (!rows.length) return;
  const ids = await tickIds(tx, rows);
  const keyed = rows.flatMap((r) => (ids.get(tickKeyString(r)) ? [{ tick_id: ids.get(tickKeyString(r))!, address: r.address }] : []));
  await tx`DELETE FROM balances b USING jsonb_to_recordset(${tx.json(keyed as never)}::jsonb) AS r (tick_id bigint, address text)
            WHERE b.tick_id = r.tick_id AND b.address_key = lower(r.address)`;
}

export async function upsertMovements(tx: Tx, rows: MovementWrite[]): Promise<void> {
  if (!rows.length) return;
  const withIds = await withTickIds(tx, rows);
  const unique = lastBy(withIds, byId);
  // minted changes once per tick and statement (sql/009): mints written, minus the mints they replace
  await batched(tx, () => tx`
    WITH prior AS (SELECT tick_id, address_key, amount, event FROM address_txs WHERE id = ANY(${unique.map((r) => r.id)}::bigint[])),
    old AS (SELECT tick_id, -amount AS amount FROM prior WHERE event = 2),
    ins AS (
      INSERT INTO address_txs (id, tick_id, address, tx_hash, amount, event, operate, created_at, updated_at)
      SELECT id, tick_id, address, tx_hash, amount, event, operate, created_at, updated_at
        FROM jsonb_to_recordset(${tx.json(unique as never)}::jsonb) AS r (id bigint, tick_id bigint, address text,
             tx_hash text, amount numeric, event smallint, operate text, created_at timestamptz, updated_at timestamptz)
      ON CONFLICT (id) DO UPDATE SET tick_id = EXCLUDED.tick_id, address = EXCLUDED.address, tx_hash = EXCLUDED.tx_hash,
         amount = EXCLUDED.amount, event = EXCLUDED.event, operate = EXCLUDED.operate, created_at = EXCLUDED.created_at,
         updated_at = EXCLUDED.updated_at
      RETURNING tick_id, amount, event, address_key),
    -- and the movements per address (sql/012)
    a AS (INSERT INTO address_totals AS t (address_key, movements, balances)
          SELECT address_key, sum(n), 0 FROM (SELECT address_key, 1 AS n FROM ins UNION ALL SELECT address_key, -1 FROM prior) x
           GROUP BY address_key HAVING sum(n) <> 0
          ON CONFLICT (address_key) DO UPDATE SET movements = t.movements + EXCLUDED.movements),
    d AS (SELECT tick_id, sum(amount) AS delta FROM (SELECT tick_id, amount FROM ins WHERE event = 2 UNION ALL SELECT * FROM old) x
           GROUP BY tick_id)
    UPDATE ticks t SET minted = t.minted + d.delta FROM d WHERE t.id = d.tick_id AND d.delta <> 0`);
}
export async function deleteMovements(tx: Tx, ids: string[]): Promise<void> {
  if (ids.length) await tx`DELETE FROM address_txs WHERE id = ANY(${ids}::bigint[])`;
}

export async function upsertTransactions(tx: Tx, rows: TransactionWrite[]): Promise<void> {
  if (!rows.length) return;
  const unique = lastBy(rows, byId);
  // tx counts and list totals change once per (chain, protocol, tick) and statement (sql/009)
  await batched(tx, () => tx`
    WITH prior AS (SELECT chain, protocol, tick, from_key, to_key FROM transactions WHERE id = ANY(${unique.map((r) => r.id)}::bigint[])),
    old AS (SELECT chain, protocol, tick, -1 AS n FROM prior),
    ins AS (
      INSERT INTO transactions (id, chain, protocol, block_height, position_in_block, block_time, tx_hash, from_address,
                                to_address, op, tick, amt, gas, gas_price, status, created_at, updated_at)
      SELECT id, chain, protocol, block_height, position_in_block, block_time, tx_hash, from_address, to_address, op,
             tick, amt, gas, gas_price, status, created_at, updated_at
        FROM jsonb_to_recordset(${tx.json(unique as never)}::jsonb) AS r (id bigint, chain text, protocol text,
             block_height bigint, position_in_block bigint, block_time timestamptz, tx_hash text, from_address text,
             to_address text, op text, tick text, amt numeric, gas bigint, gas_price bigint, status smallint,
             created_at timestamptz, updated_at timestamptz)
      ON CONFLICT (id) DO UPDATE SET chain = EXCLUDED.chain, protocol = EXCLUDED.protocol,
         block_height = EXCLUDED.block_height, position_in_block = EXCLUDED.position_in_block,
         block_time = EXCLUDED.block_time, tx_hash = EXCLUDED.tx_hash, from_address = EXCLUDED.from_address,
         to_address = EXCLUDED.to_address, op = EXCLUDED.op, tick = EXCLUDED.tick, amt = EXCLUDED.amt, gas = EXCLUDED.gas,
         gas_price = EXCLUDED.gas_price, status = EXCLUDED.status, created_at = EXCLUDED.created_at,
         updated_at = EXCLUDED.updated_at
      RETURNING chain, protocol, tick, from_key, to_key),
    -- and the transactions per address, one sent to itself counted once (sql/012)
    k AS (SELECT from_key AS k, 1 AS n FROM ins UNION ALL SELECT to_key, 1 FROM ins WHERE to_key <> from_key
          UNION ALL SELECT from_key, -1 FROM prior UNION ALL SELECT to_key, -1 FROM prior WHERE to_key <> from_key),
    a AS (INSERT INTO address_tx_totals AS t (address_key, n) SELECT k, sum(n) FROM k GROUP BY k HAVING sum(n) <> 0
          ON CONFLICT (address_key) DO UPDATE SET n = t.n + EXCLUDED.n),
    d AS (SELECT chain, protocol, tick, sum(n)::bigint AS delta
            FROM (SELECT chain, protocol, tick, 1 AS n FROM ins UNION ALL SELECT * FROM old) x GROUP BY chain, protocol, tick),
    u AS (UPDATE ticks t SET tx_cnt = t.tx_cnt + d.delta FROM d
           WHERE t.chain = d.chain AND t.protocol = d.protocol AND t.tick = d.tick AND d.delta <> 0)
    SELECT count(bump_list_total('transactions', chain, protocol, tick, delta)) FROM d WHERE delta <> 0`);
}
export async function deleteTransactions(tx: Tx, ids: string[]): Promise<void> {
  if (ids.length) await tx`DELETE FROM transactions WHERE id = ANY(${ids}::bigint[])`;
}

export async function upsertUtxos(tx: Tx, rows: UtxoWrite[]): Promise<void> {
  if (!rows.length) return;
  const withIds = await withTickIds(tx, rows);
  await tx`
    INSERT INTO utxos (id, tick_id, address, root_hash, amount, status, created_at, updated_at)
    SELECT id, tick_id, address, root_hash, amount, status, created_at, updated_at
      FROM jsonb_to_recordset(${tx.json(lastBy(withIds, byId) as never)}::jsonb) AS r (id bigint, tick_id bigint, address text,
           root_hash text, amount numeric, status smallint, created_at timestamptz, updated_at timestamptz)
    ON CONFLICT (id) DO UPDATE SET tick_id = EXCLUDED.tick_id, address = EXCLUDED.address,
       root_hash = EXCLUDED.root_hash, amount = EXCLUDED.amount, status = EXCLUDED.status,
       created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at`;
}
export async function deleteUtxos(tx: Tx, ids: string[]): Promise<void> {
  if (ids.length) await tx`DELETE FROM utxos WHERE id = ANY(${ids}::bigint[])`;
}

/**
 * Block heights of history rows that came without one (binlog rows): their transaction's in the read
 * model (same chain and hash; the flush's txs rows are written before its balance_txn rows). Returns the
 * rows with a height, and the ids of those whose transaction is not there (the caller's bad rows).
 */
export async function withBlockHeights(tx: Tx, rows: HistoryWrite[]): Promise<{ rows: HistoryWrite[]; missing: string[] }> {
  const need = rows.filter((r) => r.block_height === null);
  if (!need.length) return { rows, missing: [] };
  const found = await tx<{ i: number; h: string | null }[]>`
    SELECT r.i, (SELECT min(t.block_height)::text FROM transactions t WHERE t.chain = r.chain AND t.tx_hash_key = lower(r.tx_hash)) AS h
      FROM jsonb_to_recordset(${tx.json(need.map((r, i) => ({ i, chain: r.chain, tx_hash: r.tx_hash })) as never)}::jsonb)
           AS r (i int, chain text, tx_hash text)`;
  const heights = new Map(found.map((f) => [f.i, f.h]));
  const missing = new Set<HistoryWrite>();
  need.forEach((r, i) => {
    const h = heights.get(i) ?? null;
    if (h === null || r.tx_hash === '') missing.add(r);
    else r.block_height = h;
  });
  return { rows: rows.filter((r) => !missing.has(r)), missing: [...missing].map((r) => r.id) };
}

/** balance_txn rows by source id; the intervals (valid_to) follow by the table's statement triggers (sql/011). */
export async function upsertHistory(tx: Tx, rows: HistoryWrite[]): Promise<void> {
  if (!rows.length) return;
  const withIds = await withTickIds(tx, rows);
  await tx`
    INSERT INTO balance_history (id, tick_id, address, block_height, amount, balance, available, event, tx_hash, created_at)
    SELECT id, tick_id, address, block_height, amount, balance, available, event, tx_hash, created_at
      FROM jsonb_to_recordset(${tx.json(lastBy(withIds, byId) as never)}::jsonb) AS r (id bigint, tick_id bigint, address text,
           block_height bigint, amount numeric, balance numeric, available numeric, event smallint, tx_hash text, created_at timestamptz)
    ON CONFLICT (id) DO UPDATE SET tick_id = EXCLUDED.tick_id, address = EXCLUDED.address, block_height = EXCLUDED.block_height,
       amount = EXCLUDED.amount, balance = EXCLUDED.balance, available = EXCLUDED.available, event = EXCLUDED.event,
       tx_hash = EXCLUDED.tx_hash, created_at = EXCLUDED.created_at
     WHERE (balance_history.tick_id, balance_history.address, balance_history.block_height, balance_history.amount,
            balance_history.balance, balance_history.available, balance_history.event, balance_history.tx_hash,
            balance_history.created_at) IS DISTINCT FROM
           (EXCLUDED.tick_id, EXCLUDED.address, EXCLUDED.block_height, EXCLUDED.amount, EXCLUDED.balance, EXCLUDED.available,
            EXCLUDED.event, EXCLUDED.tx_hash, EXCLUDED.created_at)`;
}
export async function deleteHistory(tx: Tx, ids: string[]): Promise<void> {
  if (ids.length) await tx`DELETE FROM balance_history WHERE id = ANY(${ids}::bigint[])`;
}
