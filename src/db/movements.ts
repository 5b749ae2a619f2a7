import type { Sql } from './client.js';
import type { Runner } from './statement-runner.js';
import { empty, keysetAfter, limitOffset, orderBy, toPage, type Page, type PageRequest, type SortKey } from './paging.js';

/** A row of the per-address movement log (spec 2.6). event: 1 deploy, 2 mint, 3 transfer in, 4 transfer out. */
export interface MovementRow {
  id: string;
  tick_id: string;
  address: string;
  tx_hash: string;
  amount: string;
  event: number;
  operate: string;
  created_at: Date;
  updated_at: Date;
}

export interface MovementFilter {
  chain?: string | null;
  protocol?: string | null;
  tick?: string | null;
  /** Plain text matched as a case-insensitive substring of the tick. */
  search?: string | null;
  /** Event codes to keep; null or empty = all. */
  events?: readonly number[] | null;
}

/** Log order: the record id (insertion order), newest first by default. */
export const movementSortKeys: SortKey[] = [{ column: 'm.id', field: 'id', cast: 'bigint' }];

const columns = 'm.id, m.tick_id, m.address, m.tx_hash, m.amount, m.event, m.operate, m.created_at, m.updated_at';

export function createMovementStore(sql: Sql, run: Runner) {
  const none = empty(sql); // a condition that is not set
  const cols = sql.unsafe(columns);

  function conditions(filter: MovementFilter) {
    const events = filter.events && filter.events.length > 0 ? [...filter.events] : null;
    return sql`
      ${filter.chain != null ? sql`AND t.chain = lower(${filter.chain})` : none}
      ${filter.protocol != null ? sql`AND t.protocol = lower(${filter.protocol})` : none}
      ${filter.tick != null ? sql`AND t.tick = lower(${filter.tick})` : none}
      ${filter.search != null && filter.search !== '' ? sql`AND strpos(t.tick, lower(${filter.search})) > 0` : none}
      ${events ? sql`AND m.event = ANY(${events}::smallint[])` : none}`;
  }
  const needsTick = (f: MovementFilter) =>
    f.chain != null || f.protocol != null || f.tick != null || (f.search != null && f.search !== '');

  return {
    async ofAddress(address: string, filter: MovementFilter, page: PageRequest): Promise<Page<MovementRow>> {
      const rows = await run(sql<MovementRow[]>`
        SELECT ${cols} FROM address_txs m
        ${needsTick(filter) ? sql`JOIN ticks t ON t.id = m.tick_id` : none}
        WHERE m.address_key = lower(${address}) ${conditions(filter)} ${keysetAfter(sql, movementSortKeys, page)}
        ${orderBy(sql, movementSortKeys, page.direction)} ${limitOffset(sql, page)}`);
      return toPage(rows, page);
    },

    /**
     * Total of an address's movements. Without a filter: the maintained counter (address_totals.movements,
     * sql/007). With one: an exact count over address_txs_by_address(_event|_tick), bounded by one
     * address's activity (the busiest address of a real index has ~50,000 rows).
     */
    async countOfAddress(address: string, filter: MovementFilter): Promise<number> {
      if (!needsTick(filter) && !(filter.events && filter.events.length > 0)) {
        const [row] = await run(sql<{ n: string }[]>`
          SELECT movements AS n FROM address_totals WHERE address_key = lower(${address})`);
        return Number(row?.n ?? 0);
      }
      const [row] = await run(sql<{ n: string }[]>`
        SELECT count(*) AS n FROM address_txs m
        ${needsTick(filter) ? sql`JOIN ticks t ON t.id = m.tick_id` : none}
        WHERE m.address_key = lower(${address}) ${conditions(filter)}`);
      return Number(row?.n ?? 0);
    },

    /** Movements by record id (Relay's node(id)). */
    async byIds(ids: readonly string[]): Promise<MovementRow[]> {
      return run(sql<MovementRow[]>`SELECT ${cols} FROM address_txs m WHERE m.id = ANY(${ids}::bigint[])`);
    },
    /** Movements by id with their tick's key (the ids of a live notification), in log order. */
    async byIdsWithTick(ids: readonly string[]): Promise<LiveMovementRow[]> {
      return run(sql<LiveMovementRow[]>`
        SELECT ${cols}, m.address_key, t.chain, t.protocol, t.tick FROM address_txs m JOIN ticks t ON t.id = m.tick_id
         WHERE m.id = ANY(${ids as string[]}::bigint[]) ORDER BY m.id`);
    },

    /** Movements caused by a transaction (by hash), in log order. */
    async byTxHashes(hashes: readonly string[]): Promise<MovementRow[]> {
      return run(sql<MovementRow[]>`
        SELECT ${cols} FROM address_txs m WHERE lower(m.tx_hash) = ANY(${hashes.map((h) => h.toLowerCase())}::text[])
        ORDER BY m.id`);
    },
  };
}

/** A movement with its tick's key, as a live event needs it (src/live/hub.ts). */
export interface LiveMovementRow extends MovementRow {
  address_key: string;
  chain: string;
  protocol: string;
  tick: string;
}

export type MovementStore = ReturnType<typeof createMovementStore>;
