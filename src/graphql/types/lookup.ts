import type { TickRow } from '../../db/ticks.js';
import type { UtxoRow } from '../../db/utxos.js';
import { balanceAtLoader, balanceLoader } from '../../loaders/balances.js';
import { movementsLoader, utxoLoader } from '../../loaders/lookups.js';
import { hashCandidates, isTxHash } from '../../domain/keyword.js';
import { builder } from '../builder.js';
import { atBlockDescription, atHeight, parseHeight } from '../history.js';
import { badInput } from '../paging.js';
import { BalanceRef } from './balance.js';
import { AddressTransactionRef } from './movement.js';
import { TickRef } from './tick.js';
import { TransactionRef } from './transaction.js';

// Single-record look-ups of the extended v2 surface: a tick by any of its identifiers (inds_getTick), a
// transaction by hash with the movements it caused (inds_getTransactionByHash), and an address's balance
// and unspent UTXOs of one tick (inds_getAddressBalance).

const maxUtxos = 1_000;
const maxAddressLength = 256;

const requireText = (name: string, value: string, max = 1_024) => {
  if (value === '') throw badInput(`${name} is required`);
  if (value.length > max) throw badInput(`${name} must be at most ${max} characters`);
};

const UtxoRef = builder.objectRef<UtxoRow>('Utxo');
UtxoRef.implement({
  description: 'An unspent transfer output of a tick transferred by UTXO hash.',
  fields: (t) => ({
    id: t.exposeID('id'),
    address: t.exposeString('address'),
    rootHash: t.exposeString('root_hash', { description: 'Hash of the transaction that created the output.' }),
    amount: t.field({ type: 'Decimal', resolve: (u) => u.amount }),
    createdAt: t.field({ type: 'DateTime', resolve: (u) => u.created_at }),
    tick: t.field({ type: TickRef, resolve: (u, _a, ctx) => ctx.loaders.tickById.load(u.tick_id).then((r) => r!) }),
  }),
});

builder.objectFields(TickRef, (t) => ({
  balanceOf: t.field({
    type: BalanceRef,
    nullable: true,
    description: "The address's balance of this tick (zero balances included); null if the address never held it " +
      '(with atBlock: had no change of it by the end of that block).',
    args: { address: t.arg.string({ required: true }), atBlock: t.arg({ type: 'BigInt', description: atBlockDescription }) },
    resolve: async (tick, args, ctx) => {
      requireText('address', args.address, maxAddressLength);
      const h = parseHeight(args.atBlock);
      if (h !== null) return atHeight(ctx, tick.chain, h, () => balanceAtLoader(ctx).load({ tickId: tick.id, address: args.address, atBlock: h }));
      return balanceLoader(ctx).load({ tickId: tick.id, address: args.address });
    },
  }),
  utxos: t.field({
    type: [UtxoRef],
    description:
      'Unspent transfer outputs of the address, newest first (ticks transferred by UTXO hash; empty for the others ' +
      'and when the indexer records none).',
    args: {
      address: t.arg.string({ required: true }),
      first: t.arg.int({ defaultValue: 100, required: true, description: `At most ${maxUtxos}.` }),
    },
    complexity: (args) => ({ field: 1, multiplier: Math.max(0, Math.min(args.first, maxUtxos)) }),
    resolve: (tick, args, ctx) => {
      requireText('address', args.address, maxAddressLength);
      if (args.first < 0 || args.first > maxUtxos) throw badInput(`\`first\` must be between 0 and ${maxUtxos}`);
      if (args.first === 0) return [];
      return utxoLoader(ctx, args.first).load({ tickId: tick.id, address: args.address });
    },
  }),
}));

builder.objectField(TransactionRef, 'movements', (t) =>
  t.field({
    type: [AddressTransactionRef],
    description: 'Address movements the transaction caused on its chain (one per address leg), in log order.',
    resolve: (x, _a, ctx) => movementsLoader(ctx).load({ chain: x.chain, txHash: x.tx_hash }),
  }),
);

builder.queryFields((t) => ({
  findTick: t.field({
    type: TickRef,
    nullable: true,
    description:
      'The one tick matching every identifier given (case-insensitive); at least a tick or a deploy hash. ' +
      'Null if none matches; an error if several do (add the chain or the protocol).',
    args: {
      chain: t.arg.string(),
      protocol: t.arg.string(),
      tick: t.arg.string(),
      deployHash: t.arg.string(),
    },
    resolve: async (_root, args, ctx) => {
      const filter = { chain: args.chain || null, protocol: args.protocol || null, tick: args.tick || null, deployHash: args.deployHash || null };
      for (const [name, value] of Object.entries(filter)) if (value) requireText(name, value);
      if (!filter.tick && !filter.deployHash) throw badInput('give a tick or a deploy hash');
      const rows: TickRow[] = await ctx.store.lookups.match(filter, 2);
      if (rows.length > 1) {
        throw badInput(`several ticks match (${rows.map((r) => `${r.tick} of ${r.protocol} on ${r.chain}`).join(', ')}, …): give the chain and the protocol`);
      }
      return rows[0] ? ctx.loaders.primeTick(rows[0]) : null;
    },
  }),
  transaction: t.field({
    type: TransactionRef,
    nullable: true,
    description: 'A transaction of a chain by hash (32 bytes of hex, with or without 0x; case-insensitive).',
    args: { chain: t.arg.string({ required: true }), hash: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => {
      requireText('chain', args.chain, 64);
      if (!isTxHash(args.hash)) throw badInput('hash must be 32 bytes of hex (64 hex digits, optionally after 0x)');
      const [row] = await ctx.store.lookups.transactionsByHash(hashCandidates(args.hash), args.chain, 1);
      return row ?? null;
    },
  }),
}));
