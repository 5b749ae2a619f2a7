import { movementEventFilters, movementEvents } from '../../domain/codes.js';
import { movementSortKeys, type MovementRow } from '../../db/movements.js';
import { builder, OrderDirection } from '../builder.js';
import { parseRecordId } from '../ids.js';
import { connectionComplexity, offsetArg, planPage, toConnection, totalOf } from '../paging.js';
import { TickRef } from './tick.js';

const MovementEvent = builder.enumType('MovementEvent', {
  description: 'What a movement did to the address (v2 event 1–4).',
  values: Object.fromEntries(Object.entries(movementEvents).map(([name, code]) => [name, { value: code }])) as Record<
    keyof typeof movementEvents, { value: number }>,
});

const MovementEventFilter = builder.enumType('MovementEventFilter', {
  description: 'Which movements to list; TRANSFER keeps transfers in and out.',
  values: Object.keys(movementEventFilters) as (keyof typeof movementEventFilters)[],
});

export const AddressTransactionRef = builder.nodeRef<MovementRow>('AddressTransaction', {
  id: { resolve: (m) => m.id, parse: parseRecordId, description: 'Global id (Relay): base64 of `AddressTransaction:<record id>`.' },
  loadOne: (id, ctx) => ctx.loaders.movementById.load(id),
});
AddressTransactionRef.implement({
  description: "One leg of a transaction in an address's movement log.",
  fields: (t) => ({
    recordId: t.exposeID('id', { description: 'Record id.' }),
    address: t.exposeString('address'),
    txHash: t.exposeString('tx_hash'),
    amount: t.field({ type: 'Decimal', description: 'Amount moved.', resolve: (m) => m.amount }),
    event: t.field({ type: MovementEvent, resolve: (m) => m.event }),
    operate: t.exposeString('operate', { description: 'Operation name (deploy, mint, transfer).' }),
    createdAt: t.field({ type: 'DateTime', resolve: (m) => m.created_at }),
    updatedAt: t.field({ type: 'DateTime', resolve: (m) => m.updated_at }),
    tick: t.field({ type: TickRef, resolve: (m, _a, ctx) => ctx.loaders.tickById.load(m.tick_id).then((r) => r!) }),
  }),
});

const AddressTransactionConnection = builder.connectionObject(
  { type: AddressTransactionRef, name: 'AddressTransactionConnection' },
  { name: 'AddressTransactionEdge' },
);

builder.queryFields((t) => ({
  addressTransactions: t.connection({
    type: AddressTransactionRef,
    complexity: connectionComplexity,
    description: "An address's movement log, newest first by default.",
    args: {
      ...offsetArg(),
      address: t.arg.string({ required: true }),
      chain: t.arg.string(),
      protocol: t.arg.string(),
      tick: t.arg.string(),
      search: t.arg.string({ description: 'Case-insensitive substring of the tick (plain text, no wildcards).' }),
      event: t.arg({ type: MovementEventFilter, defaultValue: 'ALL', required: true }),
      direction: t.arg({ type: OrderDirection, defaultValue: 'DESC', required: true }),
    },
    resolve: async (_root, args, ctx, info) => {
      const plan = planPage(args, movementSortKeys, args.direction, ctx);
      const filter = { ...args, events: movementEventFilters[args.event] };
      const rows = ctx.store.movements.ofAddress(args.address, filter, plan.request);
      const total = totalOf(info, () => ctx.store.movements.countOfAddress(args.address, filter));
      return toConnection(await rows, plan, movementSortKeys, total);
    },
  }, AddressTransactionConnection),
}));
