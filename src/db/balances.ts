import type { Sql } from './client.js';
import type { Runner } from './statement-runner.js';
import { empty, groupPages, keyRows, keysetAfter, limitOffset, orderBy, toPage, type Page, type PageRequest, type SortKey } from './paging.js';

export interface BalanceRow {
  tick_id: string;
  address: string;
  address_key: string;
  balance: string;
  available: string;
  updated_at: Date;
}

export interface AddressBalanceFilter {
  chain?: string | null;
  protocol?: string | null;
  tick?: string | null;
  /** Plain text matched as a case-insensitive substring of the tick (no pattern characters). */
  search?: string | null;
}

/** Holders of a tick: by balance, the address breaking ties (both follow the direction). */
export const holderSortKeys: SortKey[] = [
  { column: 'b.balance', field: 'balance', cast: 'numeric' },
  { column: 'b.address_key', field: 'address_key', cast: 'text' },
];

/** Balances of an address: by balance, the tick record id breaking ties. */
export const addressBalanceSortKeys: SortKey[] = [
  { column: 'b.balance', field: 'balance', cast: 'numeric' },
  { column: 'b.tick_id', field: 'tick_id', cast: 'bigint' },
];

const columns = 'b.tick_id, b.address, b.address_key, b.balance, b.available, b.updated_at';

export function createBalanceStore(sql: Sql, run: Runner) {
  const none = empty(sql); // a condition that is not set
  const cols = sql.unsafe(columns);

  function tickConditions(filter: AddressBalanceFilter) {
    if (!needsTick(filter)) return none;
    return sql`
      ${filter.chain != null ? sql`AND t.chain = lower(${filter.chain})` : none}
      ${filter.protocol != null ? sql`AND t.protocol = lower(${filter.protocol})` : none}
      ${filter.tick != null ? sql`AND t.tick = lower(${filter.tick})` : none}
      ${filter.search != null && filter.search !== '' ? sql`AND strpos(t.tick, lower(${filter.search})) > 0` : none}`;
  }
  const needsTick = (f: AddressBalanceFilter) =>
    f.chain != null || f.protocol != null || f.tick != null || (f.search != null && f.search !== '');

  return {
    /**
     * One page of positive balances (holders) for each tick, in one statement (balances_holders index).
     * Deferred join: the page's keys come from an index-only scan of balances_holders, so an offset skips
     * index entries, not table rows, then only the page's rows are read through the primary key.
     */
    async holdersOfTicks(tickIds: readonly string[], page: PageRequest): Promise<Map<string, Page<BalanceRow>>> {
      const rows = await run(sql<(BalanceRow & { parent: string })[]>`
        SELECT p.id::text AS parent, x.* FROM ${keyRows(sql, [[tickIds, 'bigint']])} AS p (id)
        CROSS JOIN LATERAL (
          SELECT ${cols} FROM (
            SELECT b.balance, b.address_key FROM balances b
             WHERE b.tick_id = p.id AND b.balance > 0 ${keysetAfter(sql, holderSortKeys, page)}
            ${orderBy(sql, holderSortKeys, page.direction)} ${limitOffset(sql, page)}) k
          JOIN balances b ON b.tick_id = p.id AND b.address_key = k.address_key
          ${orderBy(sql, holderSortKeys, page.direction)}) x`);
      return groupPages(tickIds, rows, page);
    },

    /** Positive balances of an address (balances_of_address index), optionally narrowed by tick fields. */
    async ofAddress(address: string, filter: AddressBalanceFilter, page: PageRequest): Promise<Page<BalanceRow>> {
      const rows = await run(sql<BalanceRow[]>`
        SELECT ${cols} FROM balances b
        ${needsTick(filter) ? sql`JOIN ticks t ON t.id = b.tick_id` : none}
        WHERE b.address_key = lower(${address}) AND b.balance > 0 ${tickConditions(filter)}
        ${keysetAfter(sql, addressBalanceSortKeys, page)}
        ${orderBy(sql, addressBalanceSortKeys, page.direction)} ${limitOffset(sql, page)}`);
      return toPage(rows, page);
    },

    /**
     * Total of an address's (positive) balances. Without a filter: the maintained counter
     * (address_totals.balances, sql/007). With one: an exact count over balances_of_address, bounded by
     * the number of ticks one address holds.
     */
    async countOfAddress(address: string, filter: AddressBalanceFilter): Promise<number> {
      if (!needsTick(filter)) {
        const [row] = await run(sql<{ n: string }[]>`
          SELECT balances AS n FROM address_totals WHERE address_key = lower(${address})`);
        return Number(row?.n ?? 0);
      }
      const [row] = await run(sql<{ n: string }[]>`
        SELECT count(*) AS n FROM balances b JOIN ticks t ON t.id = b.tick_id
        WHERE b.address_key = lower(${address}) AND b.balance > 0 ${tickConditions(filter)}`);
      return Number(row?.n ?? 0);
    },

    /** The balance rows of (tick, address) pairs, zero balances included (for a single lookup). */
    async byTickAndAddress(keys: readonly { tickId: string; address: string }[]): Promise<BalanceRow[]> {
      return run(sql<BalanceRow[]>`
        SELECT ${cols} FROM unnest(${keys.map((k) => k.tickId)}::bigint[], ${keys.map((k) => k.address)}::text[])
                              AS k (tick_id, address)
        JOIN balances b ON b.tick_id = k.tick_id AND b.address_key = lower(k.address)`);
    },
  };
}

export type BalanceStore = ReturnType<typeof createBalanceStore>;
