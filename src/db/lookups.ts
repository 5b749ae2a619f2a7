import type { Sql } from './client.js';
import type { Runner } from './statement-runner.js';
import { empty } from './paging.js';
import type { MovementRow } from './movements.js';
import type { TickRow } from './ticks.js';
import type { TransactionRow } from './transactions.js';

// Look-ups of the extended v2 surface: a tick by any combination of its identifiers (inds_getTick), tick
// names by prefix, an address's holdings per chain and transactions by hash (inds_search), and the
// movements a transaction caused (inds_getTransactionByHash).

export interface TickMatch {
  chain?: string | null;
  protocol?: string | null;
  tick?: string | null;
  deployHash?: string | null;
}

/** An address's positive balances summed per chain (inds_search, type Address). */
export interface AddressChainTotalRow {
  chain: string;
  address: string;
  balance: string;
}

/** A movement with the chain of its tick, so that legs of a hash are told apart per chain. */
export type ChainMovementRow = MovementRow & { chain: string };

// the columns of TickRow and TransactionRow (src/db/ticks.ts, src/db/transactions.ts)
const tickColumns = `t.id, t.chain, t.protocol, t.tick, t.name, t.limit_per_mint, t.deploy_by, t.total_supply,
  t.deploy_hash, t.deploy_time, t.transfer_type, t.decimals, t.created_at, t.updated_at,
  t.minted, t.holders, t.tx_cnt, t.progress`;
const transactionColumns = `x.id, x.chain, x.protocol, x.block_height, x.position_in_block, x.block_time, x.tx_hash,
  x.from_address, x.to_address, x.op, x.tick, x.amt, x.gas, x.gas_price, x.status, x.created_at, x.updated_at`;
const movementColumns = 'm.id, m.tick_id, m.address, m.tx_hash, m.amount, m.event, m.operate, m.created_at, m.updated_at';

/** prefix || U+10FFFF sorts (byte-wise) after every string that starts with the prefix. */
const maxCodePoint = '\u{10FFFF}';

export function createLookupStore(sql: Sql, run: Runner) {
  const none = empty(sql); // a condition that is not set
  const tickCols = sql.unsafe(tickColumns);
  const txCols = sql.unsafe(transactionColumns);
  const movementCols = sql.unsafe(movementColumns);

  return {
    /**
     * Ticks matching every identifier that is set (case-insensitive), by record id, at most `limit`.
     * A deploy hash without a chain is looked up on each chain (ticks_by_deploy_hash, one probe per chain).
     */
    async match(filter: TickMatch, limit: number): Promise<TickRow[]> {
      const hashWithoutChain = filter.deployHash != null && filter.chain == null;
      return run(sql<TickRow[]>`
        SELECT ${tickCols} FROM ticks t WHERE true
        ${filter.chain != null ? sql`AND t.chain = lower(${filter.chain})` : none}
        ${filter.protocol != null ? sql`AND t.protocol = lower(${filter.protocol})` : none}
        ${filter.tick != null ? sql`AND t.tick = lower(${filter.tick})` : none}
        ${filter.deployHash != null ? sql`AND t.deploy_hash_key = lower(${filter.deployHash})` : none}
        ${hashWithoutChain ? sql`AND t.chain = ANY(ARRAY(SELECT c.chain FROM chains c))` : none}
        ORDER BY t.id LIMIT ${limit}`);
    },

    /**
     * Ticks whose name starts with `prefix` (case-insensitive): the exact name first, then by holders
     * (most first), the record id breaking ties; with the number of all matches. A byte-wise range scan
     * of ticks_by_tick_prefix.
     */
    async byPrefix(prefix: string, chain: string | null, limit: number): Promise<{ rows: TickRow[]; total: number }> {
      const range = sql`(t.tick COLLATE "C") >= (lower(${prefix}) COLLATE "C")
        AND (t.tick COLLATE "C") < (lower(${prefix}) || ${maxCodePoint}) COLLATE "C"
        ${chain != null ? sql`AND t.chain = lower(${chain})` : none}`;
      const [rows, [count]] = await Promise.all([
        run(sql<TickRow[]>`
          SELECT ${tickCols} FROM ticks t WHERE ${range}
          ORDER BY (t.tick = lower(${prefix})) DESC, t.holders DESC, t.id LIMIT ${limit}`),
        run(sql<{ n: string }[]>`SELECT count(*) AS n FROM ticks t WHERE ${range}`),
      ]);
      return { rows, total: Number(count?.n ?? 0) };
    },

    /** Positive balances of an address summed per chain, largest first (balances_of_address). */
    async addressChainTotals(address: string, chain: string | null): Promise<AddressChainTotalRow[]> {
      return run(sql<AddressChainTotalRow[]>`
        SELECT t.chain, min(b.address) AS address, sum(b.balance)::text AS balance
          FROM balances b JOIN ticks t ON t.id = b.tick_id
         WHERE b.address_key = lower(${address}) AND b.balance > 0
           ${chain != null ? sql`AND t.chain = lower(${chain})` : none}
         GROUP BY t.chain
         ORDER BY sum(b.balance) DESC, t.chain`);
    },

    /**
     * Transactions whose hash is one of `hashes` (lower-case spellings), on one chain or on each chain
     * (transactions_by_hash, one probe per chain), in chain display order.
     */
    async transactionsByHash(hashes: readonly string[], chain: string | null, limit: number): Promise<TransactionRow[]> {
      return run(sql<TransactionRow[]>`
        SELECT ${txCols} FROM transactions x JOIN chains c ON c.chain = x.chain
         WHERE x.tx_hash_key = ANY(${hashes as string[]}::text[])
           ${chain != null ? sql`AND x.chain = lower(${chain})` : none}
         ORDER BY c.display_order, x.id LIMIT ${limit}`);
    },

    /** The movements (address legs) of transactions, by (chain, hash), in log order (address_txs_by_tx_hash). */
    async movementsOfTransactions(keys: readonly { chain: string; txHash: string }[]): Promise<ChainMovementRow[]> {
      return run(sql<ChainMovementRow[]>`
        SELECT ${movementCols}, t.chain FROM address_txs m JOIN ticks t ON t.id = m.tick_id
         WHERE lower(m.tx_hash) = ANY(${keys.map((k) => k.txHash.toLowerCase())}::text[])
           AND t.chain = ANY(${keys.map((k) => k.chain.toLowerCase())}::text[])
         ORDER BY m.id`);
    },
  };
}

export type LookupStore = ReturnType<typeof createLookupStore>;
