import { initGraphQLTada } from 'gql.tada';
import type { introspection } from '../../schema/graphql-env.js';

// gql.tada: documents typed from the schema at compile time, no code generation step beyond the
// introspection file (schema/graphql-env.d.ts, made offline from schema/schema.graphql). The gateway's custom
// scalars all travel as strings.
export const graphql = initGraphQLTada<{
  introspection: introspection;
  scalars: { Decimal: string; BigInt: string; DateTime: string };
}>();

export type { FragmentOf, ResultOf, VariablesOf } from 'gql.tada';
