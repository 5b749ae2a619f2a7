import { tickOrders, transferTypes } from '../../domain/codes.js';
import { compareDecimal } from '../../domain/decimal.js';
import { tickSortKeys, type TickRow } from '../../db/ticks.js';
import { builder, OrderDirection } from '../builder.js';
import { parseRecordId } from '../ids.js';
import { badInput, connectionComplexity, offsetArg, planPage, toConnection, totalOf } from '../paging.js';
import { ChainRef } from './chain.js';

const TransferType = builder.enumType('TransferType', {
  description: 'How the tick is transferred (v2 transfer_type 0, 1, 2).',
  values: Object.fromEntries(transferTypes.map((name, code) => [name, { value: code }])) as Record<
    (typeof transferTypes)[number], { value: number }>,
});

const TickStatus = builder.enumType('TickStatus', {
  description: 'MINTING while minted < total supply, COMPLETED once minted ≥ total supply.',
  values: ['MINTING', 'COMPLETED'] as const,
});

const TickOrderField = builder.enumType('TickOrderField', {
  description: 'Orders of a tick list; the record id breaks ties.',
  values: tickOrders,
});

// Stats are a node of their own (keyed on the tick): a client cache normalises them, so two queries that
// select different stats of one tick merge instead of replacing each other (Apollo's "Cache data may be lost").
const TickStatsRef = builder.nodeRef<TickRow>('TickStats', {
  id: { resolve: (r) => r.id, parse: parseRecordId, description: 'Global id (the tick\'s record id inside).' },
  // a copy: the relay plugin brands each loaded object with its type, and the row may be a Tick's too
  loadOne: (id, ctx) => ctx.loaders.tickById.load(id).then((row) => row && { ...row }),
});
TickStatsRef.implement({
  description: 'Live statistics of a tick, kept current by the indexer.',
  fields: (t) => ({
    minted: t.field({ type: 'Decimal', resolve: (r) => r.minted }),
    holders: t.int({ description: 'Addresses with a positive balance.', resolve: (r) => Number(r.holders) }),
    txCount: t.int({ description: 'Transactions of the tick.', resolve: (r) => Number(r.tx_cnt) }),
    progress: t.field({
      type: 'Decimal',
      description: 'minted ÷ total supply, capped at 1.',
      resolve: (r) => r.progress,
    }),
    status: t.field({
      type: TickStatus,
      resolve: (r) => (compareDecimal(r.minted, r.total_supply) >= 0 ? 'COMPLETED' : 'MINTING'),
    }),
  }),
});

export const TickRef = builder.nodeRef<TickRow>('Tick', {
  id: { resolve: (r) => r.id, parse: parseRecordId, description: 'Global id (Relay): base64 of `Tick:<record id>`.' },
  loadOne: (id, ctx) => ctx.loaders.tickById.load(id),
});
TickRef.implement({
  description: 'An inscribed token: one per (chain, protocol, tick).',
  fields: (t) => ({
    recordId: t.exposeID('id', { description: 'Record id (the v2 interface\'s `id`).' }),
    chainName: t.exposeString('chain', { description: 'Chain name.' }),
    chain: t.field({ type: ChainRef, resolve: (r, _a, ctx) => ctx.loaders.chainByName.load(r.chain).then((c) => c!) }),
    protocol: t.exposeString('protocol', { description: 'Inscription protocol, lower case (asc-20, brc-20, …).' }),
    tick: t.exposeString('tick', { description: 'Tick symbol, lower case.' }),
    name: t.exposeString('name', { description: 'Tick name as deployed.' }),
    limitPerMint: t.field({ type: 'Decimal', resolve: (r) => r.limit_per_mint }),
    deployBy: t.exposeString('deploy_by', { description: 'Deployer address.' }),
    totalSupply: t.field({ type: 'Decimal', resolve: (r) => r.total_supply }),
    deployHash: t.exposeString('deploy_hash', { description: 'Hash of the deploy transaction.' }),
    deployTime: t.field({ type: 'DateTime', resolve: (r) => r.deploy_time }),
    transferType: t.field({ type: TransferType, resolve: (r) => r.transfer_type }),
    decimals: t.exposeInt('decimals'),
    createdAt: t.field({ type: 'DateTime', resolve: (r) => r.created_at }),
    updatedAt: t.field({ type: 'DateTime', nullable: true, description: 'Null if never updated.', resolve: (r) => r.updated_at }),
    stats: t.field({ type: TickStatsRef, resolve: (r) => r }),
  }),
});

const TickConnection = builder.connectionObject(
  { type: TickRef, name: 'TickConnection' },
  { name: 'TickEdge' },
);

const TickSelector = builder.inputType('TickSelector', {
  fields: (t) => ({
    chain: t.string({ required: true }),
    deployHash: t.string({ required: true }),
  }),
});

const maxSelectors = 1_000;

builder.queryFields((t) => ({
  tick: t.field({
    type: TickRef,
    nullable: true,
    description: 'One tick by (chain, protocol, tick), compared case-insensitively.',
    args: {
      chain: t.arg.string({ required: true }),
      protocol: t.arg.string({ required: true }),
      tick: t.arg.string({ required: true }),
    },
    resolve: (_root, args, ctx) => ctx.loaders.tickByKey.load(args),
  }),
  tickByDeployHash: t.field({
    type: TickRef,
    nullable: true,
    args: { chain: t.arg.string({ required: true }), deployHash: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => ctx.loaders.tickByDeployHash.load(args),
  }),
  ticksByDeployHash: t.field({
    type: [TickRef],
    description: 'Ticks for a batch of selectors, in selector order; selectors that match nothing are left out.',
    args: { selectors: t.arg({ type: [TickSelector], required: true }) },
    complexity: (args) => ({ field: 1, multiplier: Math.min(args.selectors.length, maxSelectors) }),
    resolve: async (_root, args, ctx) => {
      if (args.selectors.length > maxSelectors) throw badInput(`at most ${maxSelectors} selectors`);
      // loadMany resolves failed keys to Error values instead of rejecting: a failed load (database
      // down, timeout) must fail the field, not be dropped like a selector that matched nothing
      const rows = await ctx.loaders.tickByDeployHash.loadMany(args.selectors);
      const failed = rows.find((r): r is Error => r instanceof Error);
      if (failed) throw failed;
      return rows.filter((r): r is TickRow => r != null);
    },
  }),
  ticks: t.connection({
    type: TickRef,
    complexity: connectionComplexity,
    description: 'Ticks, filtered exactly (case-insensitive) and ordered; the v2 inds_getTicks list.',
    args: {
      ...offsetArg(),
      chain: t.arg.string(),
      protocol: t.arg.string(),
      tick: t.arg.string(),
      deployBy: t.arg.string(),
      orderBy: t.arg({ type: TickOrderField, defaultValue: 'ID', required: true }),
      direction: t.arg({ type: OrderDirection, defaultValue: 'DESC', required: true }),
    },
    resolve: async (_root, args, ctx, info) => {
      const keys = tickSortKeys[args.orderBy];
      const plan = planPage(args, keys, args.direction, ctx);
      const rows = ctx.store.ticks.list(args, args.orderBy, plan.request);
      const total = totalOf(info, () => ctx.store.ticks.count(args));
      const page = await rows;
      page.rows.forEach(ctx.loaders.primeTick);
      return toConnection(page, plan, keys, total);
    },
  }, TickConnection),
}));

builder.objectField(ChainRef, 'ticks', (t) =>
  t.connection({
    type: TickRef,
    complexity: connectionComplexity,
    description: "The chain's ticks.",
    args: {
      ...offsetArg(),
      orderBy: t.arg({ type: TickOrderField, defaultValue: 'ID', required: true }),
      direction: t.arg({ type: OrderDirection, defaultValue: 'DESC', required: true }),
    },
    resolve: async (c, args, ctx) => {
      const keys = tickSortKeys[args.orderBy];
      const plan = planPage(args, keys, args.direction, ctx);
      const page = await ctx.loaders.ticksOfChain({ ...plan.request, extra: args.orderBy }).load(c.chain);
      page.rows.forEach(ctx.loaders.primeTick);
      return toConnection(page, plan, keys, () => ctx.store.ticks.count({ chain: c.chain }));
    },
  }, TickConnection));
