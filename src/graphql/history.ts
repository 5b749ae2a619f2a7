import { ClientLimitError } from '../db/errors.js';
import type { HistoricalBalanceRow } from '../db/history.js';
import { balanceAtLoader, type BalanceAtKey } from '../loaders/balances.js';
import type { Context } from './context.js';
import { badInput, pageSize, type ConnectionArgs } from './paging.js';

// `atBlock`: answers as of the end of a block, from the balance history (src/db/history.ts, sql/011).
// Omitted: now (the current tables, unchanged). A height is a chain's: fields that span chains need their
// chain named. A height above the chain's indexed height is refused rather than answered with today's
// balances: that answer could still change once the block is indexed, and a client (or a cache) would
// keep it as the past.

const maxHeight = 2n ** 63n - 1n;

export const atBlockDescription =
  'Answer as of the end of this block of the tick\'s chain (omitted: now). Above the chain\'s indexed height: an error.';

/** Index entries of the history skipped past per unit of cost (an entry is far cheaper than a result field). */
const skippedPerCostUnit = 10;

/**
 * Cost of a list at a height: like connectionComplexity, plus a fixed 5 for the interval scan, which reads
 * index entries of past balances too (and an exact count for totalCount), plus the history an `offset`
 * skips: the scan reads every skipped entry, so a deep offset costs what it scans (1 per 10 entries).
 */
export const historyComplexity = (args: ConnectionArgs & { atBlock?: string | null }, ctx: Context) => ({
  field: args.atBlock != null ? 5 + Math.ceil(Math.max(0, args.offset ?? 0) / skippedPerCostUnit) : 1,
  multiplier: pageSize(args, ctx.paging),
});

/**
 * Refuses an `offset` deeper than HISTORY_MAX_OFFSET on a list at a height: the interval scan reads every
 * skipped entry of the history (offset 2^31 scanned a tick's whole history). Cursors (`after`) cost what
 * the first page does. A client limit (LIMIT_EXCEEDED / -32005), before any statement.
 */
export function checkHistoryOffset(args: { offset?: number | null }, ctx: Context): void {
  const max = ctx.paging.historyMaxOffset ?? Infinity;
  if ((args.offset ?? 0) > max) {
    throw new ClientLimitError(`history offset too deep: at most ${max} (HISTORY_MAX_OFFSET) at a block height; page on with \`after\` cursors`);
  }
}

/** The height asked, as the canonical decimal string; null when `atBlock` is omitted. No statement. */
export function parseHeight(atBlock: string | null | undefined): string | null {
  if (atBlock == null) return null;
  // the BigInt scalar already refused negatives and non-digits
  if (BigInt(atBlock) > maxHeight) throw badInput(`atBlock ${atBlock} is out of range`);
  return BigInt(atBlock).toString();
}

/** Throws unless `chain` has indexed block `h` (one look-up per chain and request, batched). */
async function checkIndexed(ctx: Context, chain: string, h: string): Promise<void> {
  const block = await ctx.loaders.latestBlock.load(chain.toLowerCase());
  if (!block) throw badInput(`atBlock: chain ${chain} has no indexed block`);
  if (BigInt(h) > BigInt(block.block_number)) {
    throw badInput(`atBlock ${h} is above the indexed height ${block.block_number} of chain ${block.chain}`);
  }
}

/**
 * `load` at height `h` on `chain`, with the indexed-height check sent alongside (not before it: one round
 * trip less; a refused height discards the answer).
 */
export async function atHeight<T>(ctx: Context, chain: string, h: string, load: () => Promise<T>): Promise<T> {
  const answer = load();
  answer.catch(() => {}); // awaited below unless the check fails first
  await checkIndexed(ctx, chain, h);
  return answer;
}

/**
 * node(id) of a balance at a height (`…@<height>`): refused above its tick's chain's indexed height, as
 * `atBlock` is (an answer from today's rows would be kept as the past). An unknown tick: no node.
 */
export async function balanceAtNode(ctx: Context, key: BalanceAtKey): Promise<HistoricalBalanceRow | null> {
  const tick = await ctx.loaders.tickById.load(key.tickId);
  if (!tick) return null;
  return atHeight(ctx, tick.chain, key.atBlock, () => balanceAtLoader(ctx).load(key));
}
