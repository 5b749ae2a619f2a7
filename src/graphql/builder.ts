import SchemaBuilder from '@pothos/core';
import ComplexityPlugin from '@pothos/plugin-complexity';
import RelayPlugin from '@pothos/plugin-relay';
import type { Context } from './context.js';
import ResultBudgetPlugin from './result-budget.js';
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
  plugins: [RelayPlugin, ComplexityPlugin, ResultBudgetPlugin],
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    nodeQueryOptions: false,
    nodesQueryOptions: false,
    // a connection field already multiplies its selection by its page size (src/graphql/paging.ts)
    edgesFieldOptions: { nullable: false, complexity: { field: 1, multiplier: 1 } },
    nodeFieldOptions: { nullable: false },
  },
  // Each field's cost (1, a list's selection × its length) is declared here and on the list fields; the
  // limit is checked once per operation with the request's variables by src/graphql/cost.ts, so the
  // plugin's own check at each root field stays off.
  complexity: { defaultComplexity: 1, defaultListMultiplier: 10, disabled: true },
});

builder.addScalarType('Decimal', DecimalScalar);
builder.addScalarType('BigInt', BigIntScalar);
builder.addScalarType('DateTime', DateTimeScalar);

builder.queryType({});

builder.globalConnectionField('totalCount', (t) =>
  t.int({
    description: 'Number of items in the whole list (all pages).',
    // a count is a statement: none once the result is over its budget
    resolve: (parent, _args, ctx) => {
      ctx.budget.check();
      return parent.totalCount();
    },
  }),
);

export const OrderDirection = builder.enumType('OrderDirection', { values: ['ASC', 'DESC'] as const });
