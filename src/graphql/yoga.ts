import { createYoga } from 'graphql-yoga';
import type { Store } from '../db/store.js';
import { createContext, type PagingConfig } from './context.js';
import { maskError } from './errors.js';
import { schema } from './schema.js';

/** The example GraphiQL opens with: real data from the demo set on the first click. */
export const defaultQuery = `# Ticks with the most holders, their stats and top holders.
query TopTicks {
  ticks(orderBy: HOLDERS, direction: DESC, first: 5) {
    totalCount
    edges {
      node {
        chainName
        protocol
        tick
        totalSupply
        stats { minted holders txCount progress status }
        holders(first: 3) { edges { node { address balance } } }
      }
    }
    pageInfo { hasNextPage endCursor }
  }
}
`;

export interface YogaOptions {
  store: Store;
  paging: PagingConfig;
  introspection: boolean;
  corsOrigin: string;
}

export function createGraphqlServer(options: YogaOptions) {
  return createYoga({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    graphiql: options.introspection ? { title: 'Inscription gateway', defaultQuery } : false,
    cors: { origin: options.corsOrigin === '*' ? '*' : options.corsOrigin.split(','), methods: ['GET', 'POST', 'OPTIONS'] },
    maskedErrors: { maskError },
    context: () => createContext(options.store, options.paging),
  });
}

export type GraphqlServer = ReturnType<typeof createGraphqlServer>;
