import type { ChainRow, IndexedBlockRow } from '../../db/chains.js';
import { builder } from '../builder.js';
import { parseChainKey } from '../ids.js';

export const IndexedBlockRef = builder.objectRef<IndexedBlockRow>('IndexedBlock');
IndexedBlockRef.implement({
  description: 'The latest block of a chain that the indexer has processed.',
  fields: (t) => ({
    number: t.field({ type: 'BigInt', resolve: (b) => b.block_number }),
    time: t.field({ type: 'DateTime', description: 'Time of the block.', resolve: (b) => b.block_time }),
    indexedAt: t.field({ type: 'DateTime', description: 'When the indexer recorded it.', resolve: (b) => b.indexed_at }),
  }),
});

export const ChainRef = builder.nodeRef<ChainRow>('Chain', {
  id: { resolve: (c) => c.chain, parse: parseChainKey, description: 'Global id (Relay): base64 of `Chain:<name>`.' },
  loadOne: (name, ctx) => ctx.loaders.chainByName.load(name),
});
// Chain.ticks is added in tick.ts (builder.objectField), so this file needs nothing from it: no import cycle.
ChainRef.implement({
  description: 'An indexed blockchain.',
  fields: (t) => ({
    chain: t.exposeString('chain', { description: 'Chain name, the value of every `chain` argument.' }),
    chainId: t.int({ resolve: (c) => Number(c.chain_id) }),
    outerChain: t.exposeString('outer_chain', { description: 'External chain label.' }),
    name: t.exposeString('name', { description: 'Display name.' }),
    logo: t.exposeString('logo', { description: 'URL of an icon.' }),
    networkId: t.int({ resolve: (c) => Number(c.network_id) }),
    ext: t.exposeString('ext'),
    latestBlock: t.field({
      type: IndexedBlockRef,
      nullable: true,
      description: 'Latest indexed block; null while nothing is indexed.',
      resolve: (c, _args, ctx) => ctx.loaders.latestBlock.load(c.chain),
    }),
  }),
});

builder.queryFields((t) => ({
  chains: t.field({
    type: [ChainRef],
    description: 'Indexed chains in their display order; with `names`, only those (unknown names are left out).',
    args: { names: t.arg.stringList({ required: false }) },
    resolve: async (_root, args, ctx) => {
      const all = await ctx.store.chains.all();
      all.forEach((c) => ctx.loaders.chainByName.prime(c.chain, c));
      if (!args.names || args.names.length === 0) return all;
      const wanted = new Set(args.names.map((n) => n.toLowerCase()));
      return all.filter((c) => wanted.has(c.chain));
    },
  }),
  chain: t.field({
    type: ChainRef,
    nullable: true,
    args: { name: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => ctx.loaders.chainByName.load(args.name),
  }),
}));
