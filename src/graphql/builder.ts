import SchemaBuilder from '@pothos/core';
import RelayPlugin from '@pothos/plugin-relay';
import type { Context } from './context.js';
import { BigIntScalar, DateTimeScalar, DecimalScalar } from './scalars.js';

// The one SchemaBuilder of the program (Pothos plugin typings are global to a TS program).
export const builder = new SchemaBuilder<{
  Context: Context;
  Scalars: {
    Decimal: { Input: string; Output: string };
    BigInt: { Input: string; Output: string | number | bigint };
    DateTime: { Input: Date; Output: Date };
  };
  // Every connection carries a lazy total: computed only when a client selects totalCount.
  Connection: { totalCount: () => Promise<number> };
  DefaultFieldNullability: false;
  DefaultEdgesNullability: false;
  DefaultNodeNullability: false;
}>({
  defaultFieldNullability: false,
  plugins: [RelayPlugin],
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    nodeQueryOptions: false,
    nodesQueryOptions: false,
    edgesFieldOptions: { nullable: false },
    nodeFieldOptions: { nullable: false },
  },
});

builder.addScalarType('Decimal', DecimalScalar);
builder.addScalarType('BigInt', BigIntScalar);
builder.addScalarType('DateTime', DateTimeScalar);

builder.queryType({});

builder.globalConnectionField('totalCount', (t) =>
  t.int({ description: 'Number of items in the whole list (all pages).', resolve: (parent) => parent.totalCount() }),
);

export const OrderDirection = builder.enumType('OrderDirection', { values: ['ASC', 'DESC'] as const });
