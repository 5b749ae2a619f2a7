import type { Sql } from './client.js';
import type { Runner } from './statement-runner.js';
import { empty, fixed, groupPages, keysetAfter, limitOffset, orderBy, toPage, type Page, type PageRequest, type SortKey } from './paging.js';

export interface TransactionRow {
  id: string;
  chain: string;
  protocol: string;
  block_height: string;
  /** bigint, as a decimal string */
  position_in_block: string;
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
  { column: 'x.position_in_block', field: 'position_in_block', cast: 'bigint' },
  { column: 'x.id', field: 'id', cast: 'bigint' },
];

const columns = `x.id, x.chain, x.protocol, x.block_height, x.position_in_block, x.block_time, x.tx_hash,
  x.from_address, x.to_address, x.op, x.tick, x.amt, x.gas, x.gas_price, x.status, x.created_at, x.updated_at`;


/** chain/protocol/tick conditions (the address is handled by the callers: see list and count). */
function conditions(sql: Sql, filter: TransactionFilter) {
  const none = empty(sql);
  if (filter.chain == null && filter.protocol == null && filter.tick == null) return none;
  return sql`
    ${filter.chain != null ? sql`AND x.chain = lower(${filter.chain})` : none}
    ${filter.protocol != null ? sql`AND x.protocol = lower(${filter.protocol})` : none}
    ${filter.tick != null ? sql`AND x.tick = lower(${filter.tick})` : none}`;
}

/** The sort keys (and id) of the matching transactions in page order, before LIMIT/OFFSET. */
function keyScan(sql: Sql, side: 'from_key' | 'to_key' | null, filter: TransactionFilter, page: PageRequest) {
  return sql`
    SELECT x.block_height, x.position_in_block, x.id FROM transactions x
     WHERE ${side ? sql`${fixed(sql, `x.${side}`)} = lower(${filter.address!})` : fixed(sql, 'true')} ${conditions(sql, filter)}
    ${keysetAfter(sql, transactionSortKeys, page)} ${orderBy(sql, transactionSortKeys, page.direction)}`;
}

/**
 * Deferred join: the page's keys come from an index-only scan of the (filter, block, position, id)
 * index, so an offset skips index entries, not table rows; then only the page's rows are read by
 * primary key. With an address, the keys
 * are the union of two ordered index scans (transactions_from_by_block, transactions_to_by_block),
 * each cut at offset + limit + 1: `from = a OR to = a` in one scan has no index order (a generic
 * plan sorts all of the address's transactions; a custom one walks transactions_by_block filtering).
 */
async function listTransactions(sql: Sql, run: Runner, filter: TransactionFilter, page: PageRequest): Promise<Page<TransactionRow>> {
  const keys = filter.address != null
    ? sql`
      SELECT * FROM ((${keyScan(sql, 'from_key', filter, page)} LIMIT ${page.offset + page.limit + 1})
                     UNION
                     (${keyScan(sql, 'to_key', filter, page)} LIMIT ${page.offset + page.limit + 1})) x
      ${orderBy(sql, transactionSortKeys, page.direction)} ${limitOffset(sql, page)}`
    : sql`${keyScan(sql, null, filter, page)} ${limitOffset(sql, page)}`;
  // `id = ANY(ARRAY(…))`, not a join: a generic plan (LIMIT/OFFSET unknown, estimated at 10 % of the
  // table) would merge-join the whole primary key; this is a primary-key look-up of the page's ids in
  // every plan (bench/results/explain-*.txt)
  const rows = await run(sql<TransactionRow[]>`
    SELECT ${fixed(sql, columns)} FROM transactions x WHERE x.id = ANY(ARRAY(SELECT k.id FROM (${keys}) k))
    ${orderBy(sql, transactionSortKeys, page.direction)}`);
  return toPage(rows, page);
}

/**
 * Total of a transaction list, from a maintained counter where there is one: without an address
 * filter list_totals (one row, any combination of chain/protocol/tick); with an address alone
 * address_tx_totals (sql/006). An address with chain, protocol or tick: an exact count over
 * transactions_from_by_block ∪ transactions_to_by_block, bounded by that address's activity (the
 * union of ids from two index-only scans; an `OR` would visit every row in a bitmap heap scan).
 */
async function countTransactions(sql: Sql, run: Runner, filter: TransactionFilter): Promise<number> {
  if (filter.address != null && filter.chain == null && filter.protocol == null && filter.tick == null) {
    const [row] = await run(sql<{ n: string }[]>`
      SELECT n FROM address_tx_totals WHERE address_key = lower(${filter.address})`);
    return Number(row?.n ?? 0);
  }
  if (filter.address != null) {
    const side = (column: string) => sql`
      SELECT x.id FROM transactions x WHERE ${fixed(sql, `x.${column}`)} = lower(${filter.address!}) ${conditions(sql, filter)}`;
    const [row] = await run(sql<{ n: string }[]>`
      SELECT count(*) AS n FROM (${side('from_key')} UNION ${side('to_key')}) u`);
    return Number(row?.n ?? 0);
  }
  const dim = (column: string, value: string | null | undefined) =>
    value != null ? sql`AND ${fixed(sql, column)} = lower(${value})` : fixed(sql, `AND ${column} IS NULL`);
  const [row] = await run(sql<{ n: string }[]>`
    SELECT n FROM list_totals WHERE list = 'transactions'
    ${dim('chain', filter.chain)} ${dim('protocol', filter.protocol)} ${dim('tick', filter.tick)}`);
  return Number(row?.n ?? 0);
}

export function createTransactionStore(sql: Sql, run: Runner) {
  const cols = fixed(sql, columns);

  return {
    list: (filter: TransactionFilter, page: PageRequest) => listTransactions(sql, run, filter, page),

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

    count: (filter: TransactionFilter) => countTransactions(sql, run, filter),

    /** Transactions by record id (Relay's node(id)). */
    async byIds(ids: readonly string[]): Promise<TransactionRow[]> {
      return run(sql<TransactionRow[]>`SELECT ${cols} FROM transactions x WHERE x.id = ANY(${ids}::bigint[])`);
    },

    async byHashes(keys: readonly { chain: string; txHash: string }[]): Promise<TransactionRow[]> {
      return run(sql<TransactionRow[]>`
        SELECT ${cols} FROM unnest(${keys.map((k) => k.chain)}::text[], ${keys.map((k) => k.txHash)}::text[]) AS k (chain, hash)
        JOIN transactions x ON x.chain = lower(k.chain) AND x.tx_hash_key = lower(k.hash)`);
    },
  };
}

export type TransactionStore = ReturnType<typeof createTransactionStore>;
