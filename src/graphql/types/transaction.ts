import { transactionSortKeys, type TransactionRow } from '../../db/transactions.js';
import { builder, OrderDirection } from '../builder.js';
import { parseRecordId } from '../ids.js';
import { connectionComplexity, offsetArg, planPage, toConnection, totalOf } from '../paging.js';
import { ChainRef } from './chain.js';
import { TickRef } from './tick.js';

export const TransactionRef = builder.nodeRef<TransactionRow>('Transaction', {
  id: { resolve: (x) => x.id, parse: parseRecordId, description: 'Global id (Relay): base64 of `Transaction:<record id>`.' },
  loadOne: (id, ctx) => ctx.loaders.transactionById.load(id),
});
TransactionRef.implement({
  description: 'A raw transaction as the chain recorded it.',
  fields: (t) => ({
    recordId: t.exposeID('id', { description: 'Record id (the v2 interface\'s `id`).' }),
    chainName: t.exposeString('chain'),
    chain: t.field({ type: ChainRef, resolve: (x, _a, ctx) => ctx.loaders.chainByName.load(x.chain).then((c) => c!) }),
    protocol: t.exposeString('protocol', { description: 'Protocol; empty for a non-inscription transaction.' }),
    blockHeight: t.field({ type: 'BigInt', resolve: (x) => x.block_height }),
    positionInBlock: t.field({
      type: 'BigInt',
      // the source's column is bigint unsigned: an Int (32-bit) could not carry every value it holds
      description: 'Position of the transaction in its block.',
      resolve: (x) => x.position_in_block,
    }),
    blockTime: t.field({ type: 'DateTime', resolve: (x) => x.block_time }),
    txHash: t.exposeString('tx_hash'),
    from: t.exposeString('from_address'),
    to: t.exposeString('to_address'),
    op: t.exposeString('op', { description: 'Operation; may be empty.' }),
    tickName: t.exposeString('tick', { description: 'Tick symbol; may be empty.' }),
    tick: t.field({
      type: TickRef,
      nullable: true,
      description: 'The tick the transaction touched, if it is indexed.',
      resolve: (x, _a, ctx) =>
        x.tick === '' ? null : ctx.loaders.tickByKey.load({ chain: x.chain, protocol: x.protocol, tick: x.tick }),
    }),
    amount: t.field({ type: 'Decimal', resolve: (x) => x.amt }),
    gas: t.field({ type: 'BigInt', resolve: (x) => x.gas }),
    gasPrice: t.field({ type: 'BigInt', resolve: (x) => x.gas_price }),
    status: t.exposeInt('status'),
    createdAt: t.field({ type: 'DateTime', resolve: (x) => x.created_at }),
    updatedAt: t.field({ type: 'DateTime', resolve: (x) => x.updated_at }),
  }),
});

const TransactionConnection = builder.connectionObject(
  { type: TransactionRef, name: 'TransactionConnection' },
  { name: 'TransactionEdge' },
);

builder.queryFields((t) => ({
  transactions: t.connection({
    type: TransactionRef,
    complexity: connectionComplexity,
    description: 'Transactions in chain order (block height, position); the address matches sender or recipient.',
    args: {
      ...offsetArg(),
      address: t.arg.string(),
      chain: t.arg.string(),
      protocol: t.arg.string(),
      tick: t.arg.string(),
      direction: t.arg({ type: OrderDirection, defaultValue: 'DESC', required: true }),
    },
    resolve: async (_root, args, ctx, info) => {
      const plan = planPage(args, transactionSortKeys, args.direction, ctx);
      const rows = ctx.store.transactions.list(args, plan.request);
      const total = totalOf(info, () => ctx.store.transactions.count(args));
      return toConnection(await rows, plan, transactionSortKeys, total);
    },
  }, TransactionConnection),
}));

builder.objectField(TickRef, 'transactions', (t) =>
  t.connection({
    type: TransactionRef,
    complexity: connectionComplexity,
    description: "The tick's transactions in chain order; totalCount is the maintained tx count.",
    args: { ...offsetArg(), direction: t.arg({ type: OrderDirection, defaultValue: 'DESC', required: true }) },
    resolve: async (tick, args, ctx) => {
      const plan = planPage(args, transactionSortKeys, args.direction, ctx);
      const page = await ctx.loaders.transactionsOfTick(plan.request).load(tick);
      return toConnection(page, plan, transactionSortKeys, async () => Number(tick.tx_cnt));
    },
  }, TransactionConnection),
);
