import { addressBalanceSortKeys, type BalanceRow } from '../../db/balances.js';
import { builder, OrderDirection } from '../builder.js';
import { balanceKey, parseBalanceKey } from '../ids.js';
import { atBlockDescription, atHeight, balanceAtNode, checkHistoryOffset, historyComplexity, parseHeight } from '../history.js';
import { badInput, offsetArg, planPage, toConnection, totalOf } from '../paging.js';
import { ChainRef } from './chain.js';
import { balanceLoader } from '../../loaders/balances.js';
import { TickRef } from './tick.js';

export const BalanceRef = builder.nodeRef<BalanceRow, { tickId: string; address: string; atBlock?: string }>('Balance', {
  id: {
    resolve: balanceKey, parse: parseBalanceKey,
    description: 'Global id (Relay): base64 of `Balance:<tick record id>:<address>`, with `@<height>` for a balance at a block height.',
  },
  loadOne: (key, ctx) => (key.atBlock != null ? balanceAtNode(ctx, { ...key, atBlock: key.atBlock }) : balanceLoader(ctx).load(key)),
});
BalanceRef.implement({
  description: "An address's holding of one tick.",
  fields: (t) => ({
    address: t.exposeString('address'),
    balance: t.field({ type: 'Decimal', resolve: (b) => b.balance }),
    available: t.field({ type: 'Decimal', description: 'Part of the balance not locked in pending transfers.', resolve: (b) => b.available }),
    updatedAt: t.field({ type: 'DateTime', description: 'Last change (at a block height: the block time of the last change by then).', resolve: (b) => b.updated_at }),
    tick: t.field({ type: TickRef, resolve: (b, _a, ctx) => ctx.loaders.tickById.load(b.tick_id).then((r) => r!) }),
    chain: t.field({
      type: ChainRef,
      resolve: async (b, _a, ctx) => {
        const tick = await ctx.loaders.tickById.load(b.tick_id);
        return (await ctx.loaders.chainByName.load(tick!.chain))!;
      },
    }),
  }),
});

const BalanceConnection = builder.connectionObject(
  { type: BalanceRef, name: 'BalanceConnection' },
  { name: 'BalanceEdge' },
);

builder.queryFields((t) => ({
  balances: t.connection({
    type: BalanceRef,
    complexity: historyComplexity,
    description: 'Positive balances of an address, by balance (the tick breaks ties). With atBlock (which needs chain): ' +
      'the balances as of the end of that block of the chain, zero balances left out.',
    args: {
      ...offsetArg(),
      address: t.arg.string({ required: true }),
      chain: t.arg.string(),
      protocol: t.arg.string(),
      tick: t.arg.string(),
      search: t.arg.string({ description: 'Case-insensitive substring of the tick (plain text, no wildcards).' }),
      direction: t.arg({ type: OrderDirection, defaultValue: 'DESC', required: true }),
      atBlock: t.arg({ type: 'BigInt', description: `${atBlockDescription} Needs chain: block heights are per chain.` }),
    },
    resolve: async (_root, args, ctx, info) => {
      const plan = planPage(args, addressBalanceSortKeys, args.direction, ctx);
      if (args.atBlock != null) {
        if (args.chain == null) throw badInput('atBlock needs chain: block heights are per chain');
        const chain = args.chain;
        const h = parseHeight(args.atBlock)!;
        checkHistoryOffset(args, ctx);
        const page = await atHeight(ctx, chain, h, () => ctx.store.history.ofAddressAt(args.address, chain, h, args, plan.request));
        return toConnection<BalanceRow>(page, plan, addressBalanceSortKeys,
          () => ctx.store.history.countOfAddressAt(args.address, chain, h, args));
      }
      const rows = ctx.store.balances.ofAddress(args.address, args, plan.request);
      const total = totalOf(info, () => ctx.store.balances.countOfAddress(args.address, args));
      return toConnection(await rows, plan, addressBalanceSortKeys, total);
    },
  }, BalanceConnection),
}));
