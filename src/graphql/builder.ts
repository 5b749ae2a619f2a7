import SchemaBuilder, { decodeBase64, encodeBase64 } from '@pothos/core';
import { GraphQLError } from 'graphql';
import ComplexityPlugin from '@pothos/plugin-complexity';
import RelayPlugin from '@pothos/plugin-relay';
import type { Context } from './context.js';
import ResultBudgetPlugin from './result-budget.js';
import { BigIntScalar, DateTimeScalar, DecimalScalar } from './scalars.js';

/** The types that implement Node: a global id naming another type is refused before anything loads. */
const nodeTypes = new Set(['Tick', 'TickStats', 'Chain', 'Balance', 'Holder', 'Transaction', 'AddressTransaction']);
/** Ids of one nodes(ids) call. */
const maxNodeIds = 100;

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
    // Relay's Node interface (node(id), nodes(ids)) for normalising client caches (Apollo, urql, Relay);
    // the ids are the plugin's encoding, base64 of `Type:key` (src/graphql/ids.ts)
    nodeQueryOptions: { description: 'Any object with an `id`, refetched by its global id.' },
    nodesQueryOptions: {
      description: `Objects by global ids, in order (null where none); at most ${maxNodeIds} ids.`,
      complexity: (args) => ({ field: 1, multiplier: Math.min(args.ids.length, maxNodeIds) }),
      resolve: (_root, args, _ctx, _info, resolveNodes) => {
        if (args.ids.length > maxNodeIds) throw new GraphQLError(`at most ${maxNodeIds} ids`, { extensions: { code: 'BAD_USER_INPUT' } });
        return resolveNodes(args.ids);
      },
    },
    encodeGlobalID: (typename, id) => encodeBase64(`${typename}:${id}`),
    // an id that is not one of ours is the client's mistake (BAD_USER_INPUT), not a failure of the plugin
    decodeGlobalID: (globalID) => {
      let decoded = '';
      try {
        decoded = decodeBase64(globalID);
      } catch { /* reported below */ }
      const colon = decoded.indexOf(':');
      const typename = decoded.slice(0, colon);
      const id = decoded.slice(colon + 1);
      if (colon < 0 || !nodeTypes.has(typename) || id === '') {
        throw new GraphQLError(`Invalid global id: ${globalID.slice(0, 100)}`, { extensions: { code: 'BAD_USER_INPUT' } });
      }
      return { typename, id };
    },
    // a connection field already multiplies its selection by its page size (src/graphql/paging.ts)
    edgesFieldOptions: { nullable: false, complexity: { field: 1, multiplier: 1 } },
    nodeFieldOptions: { nullable: false },
  },
  // Each field's cost (1, a list's selection × its length) is declared here and on the list fields; the
  // limit is checked once per operation with the request's variables by src/graphql/plugins/use-cost-limit.ts, so the
  // plugin's own check at each root field stays off.
  complexity: { defaultComplexity: 1, defaultListMultiplier: 10, disabled: true },
});

builder.addScalarType('Decimal', DecimalScalar);
builder.addScalarType('BigInt', BigIntScalar);
builder.addScalarType('DateTime', DateTimeScalar);

builder.queryType({});

export const OrderDirection = builder.enumType('OrderDirection', { values: ['ASC', 'DESC'] as const });
