import type { Sql } from './client.js';
import type { Runner } from './statement-runner.js';
import { addressBalanceSortKeys, holderSortKeys, type AddressBalanceFilter, type BalanceRow } from './balances.js';
import { empty, groupPages, keysetAfter, limitOffset, orderBy, toPage, type Page, type PageRequest } from './paging.js';

// Balances as of the end of a block (sql/011: balance_history). A row holds the balance of (tick, address)
// for heights block_height <= H < valid_to, so "at H" is a filter on index entries. Rows have the shape of
// balances rows (BalanceRow) plus the height asked, so the GraphQL types and cursors are the same; the
// time is the block time of the change that set the balance. The address is spelled as in the balances
// row (its first-seen casing, as the current lists show it): history rows keep each change's own casing.

export interface HistoricalBalanceRow extends BalanceRow {
  /** the height the row answers for (part of its global id) */
  at_block: string;
}

const validAt = (sql: Sql, h: string) => sql`b.block_height <= ${h}::bigint AND (b.valid_to IS NULL OR b.valid_to > ${h}::bigint)`;

export function createHistoryStore(sql: Sql, run: Runner) {
  const none = empty(sql); // a condition that is not set
  const cols = sql.unsafe(`b.tick_id::text AS tick_id, coalesce(c.address, b.address) AS address, b.address_key, b.balance,
    b.available, b.created_at AS updated_at`);
  const spelling = sql.unsafe('LEFT JOIN balances c ON c.tick_id = b.tick_id AND c.address_key = b.address_key');
  function tickConditions(filter: AddressBalanceFilter) {
    return sql`
      ${filter.protocol != null ? sql`AND t.protocol = lower(${filter.protocol})` : none}
      ${filter.tick != null ? sql`AND t.tick = lower(${filter.tick})` : none}
      ${filter.search != null && filter.search !== '' ? sql`AND strpos(t.tick, lower(${filter.search})) > 0` : none}`;
  }

  return {
    /**
     * A page of the holders of each tick at height `h`, one statement. Deferred join as for the current
     * holders: the keys come from an index-only scan of balance_history_holders in holder order (the
     * interval filter decided on index entries), then only the page's rows are read by id.
     */
    async holdersOfTicksAt(tickIds: readonly string[], h: string, page: PageRequest): Promise<Map<string, Page<HistoricalBalanceRow>>> {
      const rows = await run(sql<(HistoricalBalanceRow & { parent: string })[]>`
        SELECT p.id::text AS parent, x.* FROM unnest(${tickIds as string[]}::bigint[]) AS p (id)
        CROSS JOIN LATERAL (
          SELECT ${cols}, ${h}::text AS at_block
            FROM (
            SELECT b.balance, b.address_key, b.id FROM balance_history b
             WHERE b.tick_id = p.id AND b.balance > 0 AND ${validAt(sql, h)} ${keysetAfter(sql, holderSortKeys, page)}
            ${orderBy(sql, holderSortKeys, page.direction)} ${limitOffset(sql, page)}) k
          JOIN balance_history b ON b.id = k.id ${spelling}
          ${orderBy(sql, holderSortKeys, page.direction)}) x`);
      return groupPages(tickIds, rows, page);
    },

    /** Holders (positive balances) of each tick at `h`: an exact count over balance_history_holders. */
    async holderCountsAt(tickIds: readonly string[], h: string): Promise<Map<string, number>> {
      const rows = await run(sql<{ id: string; n: string }[]>`
        SELECT p.id::text AS id, x.n FROM unnest(${tickIds as string[]}::bigint[]) AS p (id)
        CROSS JOIN LATERAL (SELECT count(*) AS n FROM balance_history b
                             WHERE b.tick_id = p.id AND b.balance > 0 AND ${validAt(sql, h)}) x`);
      return new Map(rows.map((r) => [r.id, Number(r.n)]));
    },

    /** Positive balances of an address on one chain at `h` (balance_history_of_address), by balance then tick. */
    async ofAddressAt(address: string, chain: string, h: string, filter: AddressBalanceFilter, page: PageRequest): Promise<Page<HistoricalBalanceRow>> {
      const rows = await run(sql<HistoricalBalanceRow[]>`
        SELECT ${cols}, ${h}::text AS at_block
          FROM balance_history b JOIN ticks t ON t.id = b.tick_id ${spelling}
         WHERE b.address_key = lower(${address}) AND b.balance > 0 AND t.chain = lower(${chain}) AND ${validAt(sql, h)}
               ${tickConditions(filter)} ${keysetAfter(sql, addressBalanceSortKeys, page)}
        ${orderBy(sql, addressBalanceSortKeys, page.direction)} ${limitOffset(sql, page)}`);
      return toPage(rows, page);
    },

    async countOfAddressAt(address: string, chain: string, h: string, filter: AddressBalanceFilter): Promise<number> {
      const [row] = await run(sql<{ n: string }[]>`
        SELECT count(*) AS n FROM balance_history b JOIN ticks t ON t.id = b.tick_id
         WHERE b.address_key = lower(${address}) AND b.balance > 0 AND t.chain = lower(${chain}) AND ${validAt(sql, h)}
               ${tickConditions(filter)}`);
      return Number(row?.n ?? 0);
    },

    /** The balance of (tick, address) pairs at their heights, zero included; pairs without a change by then have no row. */
    async byTickAndAddressAt(keys: readonly { tickId: string; address: string; atBlock: string }[]): Promise<HistoricalBalanceRow[]> {
      return run(sql<HistoricalBalanceRow[]>`
        SELECT x.* FROM unnest(${keys.map((k) => k.tickId)}::bigint[], ${keys.map((k) => k.address)}::text[],
                               ${keys.map((k) => k.atBlock)}::bigint[]) AS k (tick_id, address, h)
        CROSS JOIN LATERAL (
          SELECT ${cols}, k.h::text AS at_block
            FROM balance_history b ${spelling}
           WHERE b.tick_id = k.tick_id AND b.address_key = lower(k.address) AND b.block_height <= k.h
           ORDER BY b.block_height DESC, b.id DESC LIMIT 1) x`);
    },
  };
}

export type HistoryStore = ReturnType<typeof createHistoryStore>;
