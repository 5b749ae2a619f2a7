import type { Sql } from './client.js';
import type { Runner } from './statement-runner.js';

// Figures of a chain computed from the read model (inds_chainInfo, inds_chainStat, inds_chainBlockStat).
//
// Time windows end at the block time of the chain's newest indexed transaction, not at the wall clock:
// the figures describe the last 24 h of the chain's indexed activity, so a replayed or lagging index (or
// the demo dataset) still answers with real numbers, and the same data always gives the same answer.

/** Totals of a chain. */
export interface ChainFiguresRow {
  chain: string;
  /** Ticks deployed on the chain. */
  tick_count: number;
  /** Distinct addresses holding a positive balance of a tick of the chain. */
  address_count: number;
  /** Transactions of the chain by operation, and all of them (non-inscription ones included). */
  deploy_count: number;
  mint_count: number;
  transfer_count: number;
  transaction_count: number;
}

/** Activity of one window. */
export interface WindowFigures {
  /** Transactions with a block time in the window. */
  transactions: number;
  /** Distinct addresses among their senders and recipients. */
  addresses: number;
  /** Distinct ticks they touched (inscription transactions only). */
  ticks: number;
}

export interface ChainActivityRow {
  chain: string;
  /** Block time of the newest indexed transaction; null when the chain has none. */
  window_end: Date | null;
  /** (end - 24 h, end] */
  current: WindowFigures;
  /** (end - 48 h, end - 24 h] */
  previous: WindowFigures;
}

/** Activity of one block. */
export interface BlockActivityRow {
  chain: string;
  block_height: string;
  block_time: Date;
  transaction_count: number;
  tick_count: number;
  address_count: number;
}

// Rows as the driver returns them: count(*) is a bigint, so the counts arrive as text.
type Count = string | number;
interface RawChainActivity {
  chain: string; window_end: Date | null;
  cur_tx: Count; prev_tx: Count; cur_ticks: Count; prev_ticks: Count; cur_addr: Count; prev_addr: Count;
}
interface RawBlockActivity {
  chain: string; block_height: string; block_time: Date;
  transaction_count: Count; inscription_count: Count; tick_count: Count; address_count: Count;
}

export const windowHours = 24;
export const maxRecentBlocks = 100;

/**
 * Totals per chain. tick_count is a count over ticks_chain_by_id; the other figures aggregate the
 * chain's balances and transactions, so their cost grows with the size of the chain.
 */
async function chainFigures(sql: Sql, run: Runner, chains: readonly string[]): Promise<ChainFiguresRow[]> {
  const rows = await run(sql<Record<string, string>[]>`
    SELECT c.chain,
           (SELECT count(*) FROM ticks t WHERE t.chain = c.chain) AS tick_count,
           (SELECT count(DISTINCT b.address_key) FROM ticks t JOIN balances b ON b.tick_id = t.id
             WHERE t.chain = c.chain AND b.balance > 0) AS address_count,
           x.deploy_count, x.mint_count, x.transfer_count, x.transaction_count
      FROM unnest(${chains as string[]}::text[]) AS c (chain)
      CROSS JOIN LATERAL (
        SELECT count(*) FILTER (WHERE y.op = 'deploy') AS deploy_count,
               count(*) FILTER (WHERE y.op = 'mint') AS mint_count,
               count(*) FILTER (WHERE y.op = 'transfer') AS transfer_count,
               count(*) AS transaction_count
          FROM transactions y WHERE y.chain = c.chain) x`);
  return rows.map((r) => ({
    chain: r.chain!,
    tick_count: Number(r.tick_count),
    address_count: Number(r.address_count),
    deploy_count: Number(r.deploy_count),
    mint_count: Number(r.mint_count),
    transfer_count: Number(r.transfer_count),
    transaction_count: Number(r.transaction_count),
  }));
}

/**
 * The last 24 h of each chain's activity and the 24 h before (transactions_chain_by_time): the newest
 * block time is one backward index step, each window a range scan.
 */
async function chainActivity(sql: Sql, run: Runner, chains: readonly string[]): Promise<ChainActivityRow[]> {
  const hours = sql.unsafe(`interval '${windowHours} hours'`);
  const rows = await run(sql<RawChainActivity[]>`
    WITH e AS (
      SELECT c.chain, (SELECT max(x.block_time) FROM transactions x WHERE x.chain = c.chain) AS window_end
        FROM unnest(${chains as string[]}::text[]) AS c (chain)),
    y AS (
      SELECT e.chain, x.protocol, x.tick, x.from_key, x.to_key, x.block_time > e.window_end - ${hours} AS cur
        FROM e JOIN transactions x ON x.chain = e.chain
                                  AND x.block_time > e.window_end - 2 * ${hours} AND x.block_time <= e.window_end),
    tx AS (
      SELECT chain,
             count(*) FILTER (WHERE cur) AS cur_tx, count(*) FILTER (WHERE NOT cur) AS prev_tx,
             count(DISTINCT (protocol, tick)) FILTER (WHERE cur AND tick <> '') AS cur_ticks,
             count(DISTINCT (protocol, tick)) FILTER (WHERE NOT cur AND tick <> '') AS prev_ticks
        FROM y GROUP BY chain),
    ad AS (
      SELECT y.chain,
             count(DISTINCT a.key) FILTER (WHERE y.cur) AS cur_addr,
             count(DISTINCT a.key) FILTER (WHERE NOT y.cur) AS prev_addr
        FROM y CROSS JOIN LATERAL (VALUES (y.from_key), (y.to_key)) AS a (key) GROUP BY y.chain)
    SELECT e.chain, e.window_end,
           coalesce(tx.cur_tx, 0) AS cur_tx, coalesce(tx.prev_tx, 0) AS prev_tx,
           coalesce(tx.cur_ticks, 0) AS cur_ticks, coalesce(tx.prev_ticks, 0) AS prev_ticks,
           coalesce(ad.cur_addr, 0) AS cur_addr, coalesce(ad.prev_addr, 0) AS prev_addr
      FROM e LEFT JOIN tx ON tx.chain = e.chain LEFT JOIN ad ON ad.chain = e.chain`);
  return rows.map((r) => ({
    chain: r.chain,
    window_end: r.window_end,
    current: { transactions: Number(r.cur_tx), addresses: Number(r.cur_addr), ticks: Number(r.cur_ticks) },
    previous: { transactions: Number(r.prev_tx), addresses: Number(r.prev_addr), ticks: Number(r.prev_ticks) },
  }));
}

/**
 * The newest `last` blocks of each chain that hold at least one indexed transaction, newest first
 * (transactions_chain_by_block, read backwards until `last` distinct heights are seen).
 */
async function recentBlocks(sql: Sql, run: Runner, chains: readonly string[], last: number): Promise<BlockActivityRow[]> {
  const rows = await run(sql<RawBlockActivity[]>`
    SELECT c.chain, b.block_height::text AS block_height, agg.block_time, agg.transaction_count, agg.tick_count,
           agg.address_count
      FROM unnest(${chains as string[]}::text[]) WITH ORDINALITY AS c (chain, ord)
      CROSS JOIN LATERAL (
        SELECT DISTINCT x.block_height FROM transactions x WHERE x.chain = c.chain
         ORDER BY x.block_height DESC LIMIT ${last}) b
      CROSS JOIN LATERAL (
        SELECT max(x.block_time) AS block_time, count(*) AS transaction_count,
               count(DISTINCT (x.protocol, x.tick)) FILTER (WHERE x.tick <> '') AS tick_count,
               (SELECT count(DISTINCT a.key) FROM transactions z
                  CROSS JOIN LATERAL (VALUES (z.from_key), (z.to_key)) AS a (key)
                 WHERE z.chain = c.chain AND z.block_height = b.block_height) AS address_count
          FROM transactions x WHERE x.chain = c.chain AND x.block_height = b.block_height) agg
     ORDER BY c.ord, b.block_height DESC`);
  return rows.map((r) => ({
    chain: r.chain,
    block_height: r.block_height,
    block_time: r.block_time,
    transaction_count: Number(r.transaction_count),
    tick_count: Number(r.tick_count),
    address_count: Number(r.address_count),
  }));
}

/**
 * Given blocks (a live notification's chain and height): their time (the newest transaction's, else the
 * indexed height's) and counts; a block without indexed transactions counts 0 (and is left out when
 * its time is not known any more: the height moved on before it was read).
 */
async function blocksAt(
  sql: Sql,
  run: Runner,
  blocks: readonly { chain: string; height: string }[],
): Promise<(BlockActivityRow & { inscription_count: number })[]> {
  const rows = await run(sql<RawBlockActivity[]>`
    SELECT c.chain, c.height::text AS block_height, coalesce(agg.block_time, ib.block_time) AS block_time,
           agg.transaction_count, agg.inscription_count, agg.tick_count, agg.address_count
      FROM unnest(${blocks.map((b) => b.chain)}::text[], ${blocks.map((b) => b.height)}::numeric[]) WITH ORDINALITY AS c (chain, height, ord)
      LEFT JOIN indexed_blocks ib ON ib.chain = c.chain AND ib.block_number = c.height
      CROSS JOIN LATERAL (
        SELECT max(x.block_time) AS block_time, count(*) AS transaction_count,
               count(*) FILTER (WHERE x.tick <> '') AS inscription_count,
               count(DISTINCT (x.protocol, x.tick)) FILTER (WHERE x.tick <> '') AS tick_count,
               (SELECT count(DISTINCT a.key) FROM transactions z
                  CROSS JOIN LATERAL (VALUES (z.from_key), (z.to_key)) AS a (key)
                 WHERE z.chain = c.chain AND z.block_height = c.height::bigint) AS address_count
          FROM transactions x WHERE x.chain = c.chain AND x.block_height = c.height::bigint) agg
     -- a block without transactions whose height has moved on since (or not visible yet): no time, no event
     WHERE coalesce(agg.block_time, ib.block_time) IS NOT NULL
     ORDER BY c.ord`);
  return rows.map((r) => ({
    chain: r.chain,
    block_height: r.block_height,
    block_time: r.block_time,
    transaction_count: Number(r.transaction_count),
    inscription_count: Number(r.inscription_count),
    tick_count: Number(r.tick_count),
    address_count: Number(r.address_count),
  }));
}

export function createActivityStore(sql: Sql, run: Runner) {
  return {
    figures: (chains: readonly string[]) => chainFigures(sql, run, chains),
    activity: (chains: readonly string[]) => chainActivity(sql, run, chains),
    recentBlocks: (chains: readonly string[], last: number) => recentBlocks(sql, run, chains, last),
    blocksAt: (blocks: readonly { chain: string; height: string }[]) => blocksAt(sql, run, blocks),
  };
}

export type ActivityStore = ReturnType<typeof createActivityStore>;
