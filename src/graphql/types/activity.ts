import {
  maxRecentBlocks, windowHours, type BlockActivityRow, type ChainActivityRow, type ChainFiguresRow, type WindowFigures,
} from '../../db/activity.js';
import { builder } from '../builder.js';
import { badInput } from '../paging.js';
import { ChainRef } from './chain.js';
import { chainLoader, recentBlocksLoader } from '../../loaders/activity.js';

// Figures of a chain computed from the read model (inds_chainInfo, inds_chainStat, inds_chainBlockStat).
// Every field is batched per request: a list of chains costs one statement per figure, not one per chain.

const hourMs = 3_600_000;

/** Percent change from `previous` to `current`, two decimals, signed; null when there is no previous. */
export function percentChange(current: number, previous: number): string | null {
  if (previous === 0) return null;
  // hundredths of a percent, rounded half away from zero, in integers only
  const scaled = BigInt(current - previous) * 10_000n;
  const divisor = BigInt(previous);
  const quotient = scaled / divisor;
  const remainder = scaled % divisor;
  const rounded = remainder * 2n >= divisor ? quotient + 1n : remainder * 2n <= -divisor ? quotient - 1n : quotient;
  const sign = rounded < 0n ? '-' : '';
  const digits = (rounded < 0n ? -rounded : rounded).toString().padStart(3, '0');
  return `${sign}${digits.slice(0, -2)}.${digits.slice(-2)}`;
}

const ChainFiguresRef = builder.objectRef<ChainFiguresRow>('ChainFigures');
ChainFiguresRef.implement({
  description: 'Totals of a chain in the read model.',
  fields: (t) => ({
    tickCount: t.exposeInt('tick_count', { description: 'Ticks deployed on the chain.' }),
    addressCount: t.exposeInt('address_count', { description: 'Distinct addresses holding a positive balance of one of its ticks.' }),
    deployCount: t.exposeInt('deploy_count', { description: 'Deploy transactions.' }),
    mintCount: t.exposeInt('mint_count', { description: 'Mint transactions.' }),
    transferCount: t.exposeInt('transfer_count', { description: 'Transfer transactions.' }),
    transactionCount: t.exposeInt('transaction_count', { description: 'All indexed transactions of the chain.' }),
  }),
});

interface Window extends WindowFigures { from: Date | null; to: Date | null }

const ActivityWindowRef = builder.objectRef<Window>('ActivityWindow');
ActivityWindowRef.implement({
  description: `Activity of a chain in ${windowHours} hours: (from, to].`,
  fields: (t) => ({
    from: t.field({ type: 'DateTime', nullable: true, resolve: (w) => w.from }),
    to: t.field({ type: 'DateTime', nullable: true, resolve: (w) => w.to }),
    transactions: t.exposeInt('transactions', { description: 'Transactions with a block time in the window.' }),
    addresses: t.exposeInt('addresses', { description: 'Distinct senders and recipients of those transactions.' }),
    ticks: t.exposeInt('ticks', { description: 'Distinct ticks those transactions touched.' }),
  }),
});

const ActivityChangeRef = builder.objectRef<{ current: WindowFigures; previous: WindowFigures }>('ActivityChange');
ActivityChangeRef.implement({
  description: 'Percent change from the previous window to the current one ("25.00", "-50.00"); null when the previous is 0.',
  fields: (t) => ({
    transactions: t.string({ nullable: true, resolve: (c) => percentChange(c.current.transactions, c.previous.transactions) }),
    addresses: t.string({ nullable: true, resolve: (c) => percentChange(c.current.addresses, c.previous.addresses) }),
    ticks: t.string({ nullable: true, resolve: (c) => percentChange(c.current.ticks, c.previous.ticks) }),
  }),
});

const ChainActivityRef = builder.objectRef<ChainActivityRow>('ChainActivity');
ChainActivityRef.implement({
  description:
    `The last ${windowHours} hours of a chain's indexed activity compared with the ${windowHours} hours before. The ` +
    "windows end at the block time of the chain's newest indexed transaction (not at the wall clock).",
  fields: (t) => ({
    windowEnd: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'Block time of the newest indexed transaction of the chain; null if it has none.',
      resolve: (a) => a.window_end,
    }),
    current: t.field({
      type: ActivityWindowRef,
      resolve: (a) => ({ ...a.current, from: shift(a.window_end, -windowHours), to: a.window_end }),
    }),
    previous: t.field({
      type: ActivityWindowRef,
      resolve: (a) => ({ ...a.previous, from: shift(a.window_end, -2 * windowHours), to: shift(a.window_end, -windowHours) }),
    }),
    change: t.field({ type: ActivityChangeRef, resolve: (a) => a }),
  }),
});

const shift = (date: Date | null, hours: number) => (date ? new Date(date.getTime() + hours * hourMs) : null);

const BlockActivityRef = builder.objectRef<BlockActivityRow>('BlockActivity');
BlockActivityRef.implement({
  description: 'Indexed activity of one block.',
  fields: (t) => ({
    height: t.field({ type: 'BigInt', resolve: (b) => b.block_height }),
    time: t.field({ type: 'DateTime', description: 'Block time.', resolve: (b) => b.block_time }),
    transactionCount: t.exposeInt('transaction_count'),
    tickCount: t.exposeInt('tick_count', { description: 'Distinct ticks touched in the block.' }),
    addressCount: t.exposeInt('address_count', { description: 'Distinct senders and recipients in the block.' }),
  }),
});

builder.objectFields(ChainRef, (t) => ({
  figures: t.field({
    type: ChainFiguresRef,
    description: 'Totals of the chain (their cost grows with the size of the chain).',
    resolve: async (c, _a, ctx) =>
      (await chainLoader(ctx, 'chainFigures', (chains) => ctx.store.activity.figures(chains)).load(c.chain))!,
  }),
  activity: t.field({
    type: ChainActivityRef,
    resolve: async (c, _a, ctx) =>
      (await chainLoader(ctx, 'chainActivity', (chains) => ctx.store.activity.activity(chains)).load(c.chain))!,
  }),
  recentBlocks: t.field({
    type: [BlockActivityRef],
    description: 'The newest blocks of the chain that hold indexed transactions, newest first.',
    args: { last: t.arg.int({ defaultValue: 10, required: true, description: `At most ${maxRecentBlocks}.` }) },
    complexity: (args) => ({ field: 1, multiplier: Math.max(0, Math.min(args.last, maxRecentBlocks)) }),
    resolve: async (c, args, ctx) => {
      if (args.last < 0 || args.last > maxRecentBlocks) throw badInput(`\`last\` must be between 0 and ${maxRecentBlocks}`);
      if (args.last === 0) return [];
      return recentBlocksLoader(ctx, args.last).load(c.chain);
    },
  }),
}));
