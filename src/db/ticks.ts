import type { Sql } from './client.js';
import type { Runner } from './statement-runner.js';
import { empty, fixed, groupPages, keyRows, keysetAfter, limitOffset, orderBy, toPage, type Page, type PageRequest, type SortKey } from './paging.js';

export interface TickRow {
  id: string;
  chain: string;
  protocol: string;
  tick: string;
  name: string;
  limit_per_mint: string;
  deploy_by: string;
  total_supply: string;
  deploy_hash: string;
  deploy_time: Date;
  transfer_type: number;
  decimals: number;
  created_at: Date;
  updated_at: Date | null;
  minted: string;
  holders: string;
  tx_cnt: string;
  progress: string;
}

export interface TickFilter {
  chain?: string | null;
  protocol?: string | null;
  tick?: string | null;
  deployBy?: string | null;
}

export type TickSort = 'ID' | 'DEPLOY_TIME' | 'PROGRESS' | 'HOLDERS' | 'TX_COUNT';

/** Keyset orders of the tick list (inds_getTicks sort 0–4); the record id breaks ties. */
export const tickSortKeys: Record<TickSort, SortKey[]> = {
  ID: [{ column: 't.id', field: 'id', cast: 'bigint' }],
  DEPLOY_TIME: [
    { column: 't.deploy_time', field: 'deploy_time', cast: 'timestamptz' },
    { column: 't.id', field: 'id', cast: 'bigint' },
  ],
  PROGRESS: [
    { column: 't.progress', field: 'progress', cast: 'numeric' },
    { column: 't.id', field: 'id', cast: 'bigint' },
  ],
  HOLDERS: [
    { column: 't.holders', field: 'holders', cast: 'bigint' },
    { column: 't.id', field: 'id', cast: 'bigint' },
  ],
  TX_COUNT: [
    { column: 't.tx_cnt', field: 'tx_cnt', cast: 'bigint' },
    { column: 't.id', field: 'id', cast: 'bigint' },
  ],
};

const columns = `t.id, t.chain, t.protocol, t.tick, t.name, t.limit_per_mint, t.deploy_by, t.total_supply,
  t.deploy_hash, t.deploy_time, t.transfer_type, t.decimals, t.created_at, t.updated_at,
  t.minted, t.holders, t.tx_cnt, t.progress`;

export function createTickStore(sql: Sql, run: Runner) {
  const none = empty(sql); // a condition that is not set
  const cols = sql.unsafe(columns);

  // Only the filters that are set become conditions, so each combination is its own statement with
  // its own plan (a catch-all `$1 IS NULL OR …` would push prepared statements onto generic plans).
  function where(filter: TickFilter) {
    if (filter.chain == null && filter.protocol == null && filter.tick == null && filter.deployBy == null) return none;
    return sql`
      ${filter.chain != null ? sql`AND t.chain = lower(${filter.chain})` : none}
      ${filter.protocol != null ? sql`AND t.protocol = lower(${filter.protocol})` : none}
      ${filter.tick != null ? sql`AND t.tick = lower(${filter.tick})` : none}
      ${filter.deployBy != null ? sql`AND t.deploy_by_key = lower(${filter.deployBy})` : none}`;
  }

  return {
    async byIds(ids: readonly string[]): Promise<TickRow[]> {
      return run(sql<TickRow[]>`SELECT ${cols} FROM ticks t WHERE t.id = ANY(${ids as string[]}::bigint[])`);
    },

    /** Ticks by (chain, protocol, tick), compared case-insensitively; missing keys have no row. */
    async byKeys(keys: readonly { chain: string; protocol: string; tick: string }[]): Promise<TickRow[]> {
      return run(sql<TickRow[]>`
        SELECT ${cols} FROM ${keyRows(sql, [[keys.map((k) => k.chain), 'text'], [keys.map((k) => k.protocol), 'text'],
                                               [keys.map((k) => k.tick), 'text']])} AS k (chain, protocol, tick)
        JOIN ticks t ON t.chain = lower(k.chain) AND t.protocol = lower(k.protocol) AND t.tick = lower(k.tick)`);
    },

    /** Ticks by (chain, deploy hash), the hash compared case-insensitively; a hash shared by several ticks of a
     *  chain (an indexer's duplicate deploy, sql/008) answers the first. */
    async byDeployHashes(keys: readonly { chain: string; deployHash: string }[]): Promise<TickRow[]> {
      return run(sql<TickRow[]>`
        SELECT DISTINCT ON (k.ord) ${cols}
          FROM ${keyRows(sql, [[keys.map((k) => k.chain), 'text'], [keys.map((k) => k.deployHash), 'text']], true)}
               AS k (chain, deploy_hash, ord)
          JOIN ticks t ON t.chain = lower(k.chain) AND t.deploy_hash_key = lower(k.deploy_hash)
         ORDER BY k.ord, t.id`);
    },

    async list(filter: TickFilter, sort: TickSort, page: PageRequest): Promise<Page<TickRow>> {
      const keys = tickSortKeys[sort];
      const rows = await run(sql<TickRow[]>`
        SELECT ${cols} FROM ticks t WHERE true ${where(filter)} ${keysetAfter(sql, keys, page)}
        ${orderBy(sql, keys, page.direction)} ${limitOffset(sql, page)}`);
      return toPage(rows, page);
    },

    /** One page of ticks for each of several chains (Chain.ticks), in one statement. */
    async listOfChains(chains: readonly string[], sort: TickSort, page: PageRequest): Promise<Map<string, Page<TickRow>>> {
      const keys = tickSortKeys[sort];
      const rows = await run(sql<(TickRow & { parent: string })[]>`
        SELECT p.chain AS parent, x.* FROM unnest(${chains as string[]}::text[]) AS p (chain)
        CROSS JOIN LATERAL (
          SELECT ${cols} FROM ticks t WHERE t.chain = p.chain ${keysetAfter(sql, keys, page)}
          ${orderBy(sql, keys, page.direction)} ${limitOffset(sql, page)}) x`);
      return groupPages(chains, rows, page);
    },

    /**
     * Total of a tick list. Chain/protocol filters alone: the maintained counter (list_totals, one row).
     * With a tick or deployer filter: an exact count over ticks_by_tick / ticks_by_deploy_by, which
     * select a handful of rows.
     */
    async count(filter: TickFilter): Promise<number> {
      if (filter.tick != null || filter.deployBy != null) {
        const [row] = await run(sql<{ n: string }[]>`SELECT count(*) AS n FROM ticks t WHERE true ${where(filter)}`);
        return Number(row?.n ?? 0);
      }
      const [row] = await run(sql<{ n: string }[]>`
        SELECT n FROM list_totals WHERE list = 'ticks' AND tick IS NULL
          AND ${filter.chain != null ? sql`chain = lower(${filter.chain})` : fixed(sql, 'chain IS NULL')}
          AND ${filter.protocol != null ? sql`protocol = lower(${filter.protocol})` : fixed(sql, 'protocol IS NULL')}`);
      return Number(row?.n ?? 0);
    },
  };
}

export type TickStore = ReturnType<typeof createTickStore>;
