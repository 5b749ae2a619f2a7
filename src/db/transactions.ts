import type { Sql, Runner } from './client.js';
import { groupPages, keysetAfter, limitOffset, orderBy, toPage, type Page, type PageRequest, type SortKey } from './paging.js';

export interface TransactionRow {
  id: string;
  chain: string;
  protocol: string;
  block_height: string;
  position_in_block: number;
  block_time: Date;
  tx_hash: string;
  from_address: string;
  to_address: string;
  op: string;
  tick: string;
  amt: string;
  gas: string;
  gas_price: string;
  status: number;
  created_at: Date;
  updated_at: Date;
}

export interface TransactionFilter {
  /** Matches the sender or the recipient. */
  address?: string | null;
  chain?: string | null;
  protocol?: string | null;
  tick?: string | null;
}

/** Chain order: block height, then position in the block; the record id breaks ties. */
export const transactionSortKeys: SortKey[] = [
  { column: 'x.block_height', field: 'block_height', cast: 'bigint' },
  { column: 'x.position_in_block', field: 'position_in_block', cast: 'integer' },
  { column: 'x.id', field: 'id', cast: 'bigint' },
];

const columns = `x.id, x.chain, x.protocol, x.block_height, x.position_in_block, x.block_time, x.tx_hash,
  x.from_address, x.to_address, x.op, x.tick, x.amt, x.gas, x.gas_price, x.status, x.created_at, x.updated_at`;

export function createTransactionStore(sql: Sql, run: Runner) {
  const cols = sql.unsafe(columns);

  function conditions(filter: TransactionFilter) {
    return sql`
      ${filter.address != null ? sql`AND (x.from_key = lower(${filter.address}) OR x.to_key = lower(${filter.address}))` : sql``}
      ${filter.chain != null ? sql`AND x.chain = lower(${filter.chain})` : sql``}
      ${filter.protocol != null ? sql`AND x.protocol = lower(${filter.protocol})` : sql``}
      ${filter.tick != null ? sql`AND x.tick = lower(${filter.tick})` : sql``}`;
  }

  return {
    async list(filter: TransactionFilter, page: PageRequest): Promise<Page<TransactionRow>> {
      const rows = await run(sql<TransactionRow[]>`
        SELECT ${cols} FROM transactions x WHERE true ${conditions(filter)}
        ${keysetAfter(sql, transactionSortKeys, page)}
        ${orderBy(sql, transactionSortKeys, page.direction)} ${limitOffset(sql, page)}`);
      return toPage(rows, page);
    },

    /** One page of transactions for each tick (Tick.transactions), in one statement. */
    async ofTicks(ticks: readonly { id: string; chain: string; protocol: string; tick: string }[], page: PageRequest) {
      const rows = await run(sql<(TransactionRow & { parent: string })[]>`
        SELECT p.id AS parent, y.* FROM unnest(${ticks.map((t) => t.id)}::text[], ${ticks.map((t) => t.chain)}::text[],
                                                ${ticks.map((t) => t.protocol)}::text[], ${ticks.map((t) => t.tick)}::text[])
                                          AS p (id, chain, protocol, tick)
        CROSS JOIN LATERAL (
          SELECT ${cols} FROM transactions x WHERE x.chain = p.chain AND x.protocol = p.protocol AND x.tick = p.tick
          ${keysetAfter(sql, transactionSortKeys, page)}
          ${orderBy(sql, transactionSortKeys, page.direction)} ${limitOffset(sql, page)}) y`);
      return groupPages(ticks.map((t) => t.id), rows, page);
    },

    /**
     * Total of a transaction list. Without an address filter: the maintained counter (list_totals, one
     * row, any combination of chain/protocol/tick). With an address: an exact count over
     * transactions_from_by_block ∪ transactions_to_by_block, bounded by that address's activity.
     */
    async count(filter: TransactionFilter): Promise<number> {
      if (filter.address != null) {
        const [row] = await run(sql<{ n: string }[]>`SELECT count(*) AS n FROM transactions x WHERE true ${conditions(filter)}`);
        return Number(row?.n ?? 0);
      }
      const dim = (column: string, value: string | null | undefined) =>
        value != null ? sql`AND ${sql.unsafe(column)} = lower(${value})` : sql`AND ${sql.unsafe(column)} IS NULL`;
      const [row] = await run(sql<{ n: string }[]>`
        SELECT n FROM list_totals WHERE list = 'transactions'
        ${dim('chain', filter.chain)} ${dim('protocol', filter.protocol)} ${dim('tick', filter.tick)}`);
      return Number(row?.n ?? 0);
    },

    async byHashes(keys: readonly { chain: string; txHash: string }[]): Promise<TransactionRow[]> {
      return run(sql<TransactionRow[]>`
        SELECT ${cols} FROM unnest(${keys.map((k) => k.chain)}::text[], ${keys.map((k) => k.txHash)}::text[]) AS k (chain, hash)
        JOIN transactions x ON x.chain = lower(k.chain) AND x.tx_hash_key = lower(k.hash)`);
    },
  };
}

export type TransactionStore = ReturnType<typeof createTransactionStore>;
