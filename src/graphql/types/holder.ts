import { holderSortKeys, type BalanceRow } from '../../db/balances.js';
import { builder, OrderDirection } from '../builder.js';
import { balanceKey, parseBalanceKey } from '../ids.js';
import { atBlockDescription, atHeight, balanceAtNode, checkHistoryOffset, historyComplexity, parseHeight } from '../history.js';
import { offsetArg, planPage, toConnection } from '../paging.js';
import { balanceLoader, holderCountAtLoader } from '../../loaders/balances.js';
import { TickRef } from './tick.js';

const HolderRef = builder.nodeRef<BalanceRow, { tickId: string; address: string; atBlock?: string }>('Holder', {
  id: {
    resolve: balanceKey, parse: parseBalanceKey,
    description: 'Global id (Relay): base64 of `Holder:<tick record id>:<address>`, with `@<height>` for a holder at a block height.',
  },
  // a copy: the relay plugin brands each loaded object with its type, and the row may be a Balance's too
  loadOne: (key, ctx) => (key.atBlock != null
    ? balanceAtNode(ctx, { ...key, atBlock: key.atBlock })
    : balanceLoader(ctx).load(key)).then((row) => row && { ...row }),
});
HolderRef.implement({
  description: 'An address holding a positive balance of a tick.',
  fields: (t) => ({
    address: t.exposeString('address'),
    balance: t.field({ type: 'Decimal', resolve: (b) => b.balance }),
    available: t.field({ type: 'Decimal', description: 'Part of the balance not locked in pending transfers.', resolve: (b) => b.available }),
    tick: t.field({ type: TickRef, resolve: (b, _a, ctx) => ctx.loaders.tickById.load(b.tick_id).then((r) => r!) }),
  }),
});

const HolderConnection = builder.connectionObject(
  { type: HolderRef, name: 'HolderConnection' },
  { name: 'HolderEdge' },
);

builder.objectField(TickRef, 'holders', (t) =>
  t.connection({
    type: HolderRef,
    complexity: historyComplexity,
    description: 'Holders by balance (the address breaks ties); totalCount is the maintained holder count ' +
      '(at a block height: an exact count). With atBlock: the holders as of the end of that block, zero balances left out.',
    args: {
      ...offsetArg(),
      direction: t.arg({ type: OrderDirection, defaultValue: 'DESC', required: true }),
      atBlock: t.arg({ type: 'BigInt', description: atBlockDescription }),
    },
    resolve: async (tick, args, ctx) => {
      const plan = planPage(args, holderSortKeys, args.direction, ctx);
      // now (no atBlock): the current tables, nothing of the history runs
      if (args.atBlock != null) {
        const h = parseHeight(args.atBlock)!;
        checkHistoryOffset(args, ctx);
        const page = await atHeight(ctx, tick.chain, h, () => ctx.loaders.holdersOfTickAt({ ...plan.request, extra: h }).load(tick.id));
        return toConnection<BalanceRow>(page, plan, holderSortKeys, () => holderCountAtLoader(ctx, h).load(tick.id));
      }
      const page = await ctx.loaders.holdersOfTick(plan.request).load(tick.id);
      return toConnection(page, plan, holderSortKeys, async () => Number(tick.holders));
    },
  }, HolderConnection),
);
