import { createYoga, type Plugin, type YogaServerOptions } from 'graphql-yoga';
import type { Store } from '../db/store.js';
import type { LiveHub } from '../live/hub.js';
import { createContext, type PagingConfig } from './context.js';
import { maskError } from './errors.js';
import { renderGraphiQLApart } from './graphiql-render.js';
import { guardPlugins, type GraphqlLimits } from './plugins/use-guards.js';
import { bodyLimitPlugin } from './plugins/use-body-limit.js';
import { httpCachingPlugin } from './plugins/use-http-caching.js';
import { inputLimitsPlugin, type InputLimits } from './plugins/use-input-limits.js';
import { jitPlugin } from './plugins/use-jit.js';
import { validationCachePlugin } from './plugins/use-validation-cache.js';
import { persistedOperationsPlugins, type PersistedOptions } from './plugins/use-persisted-operations.js';
import type { ResultLimits } from './result-budget.js';
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

const persistedDefaults: PersistedOptions = { only: false, apqMaxEntries: 1_000, apqMaxBytes: 4 * 1024 * 1024 };
const defaultCacheControl = 'public, max-age=5, stale-while-revalidate=30';

export interface YogaOptions {
  store: Store;
  paging: PagingConfig;
  introspection: boolean;
  limits: Omit<GraphqlLimits, 'introspection'>;
  /** The hard cap on each operation's result: src/graphql/result-budget.ts. */
  resultLimits: ResultLimits;
  /** Bounds on variables and arguments (sizes, string and list lengths): src/graphql/plugins/use-input-limits.ts. */
  inputLimits?: InputLimits;
  /** Request bodies above this get 413 (code REQUEST_ENTITY_TOO_LARGE) before they are read in full. */
  maxBodyBytes: number;
  /** Operations plugins (metrics, freshness extension, response cache): built in src/app.ts (src/graphql/plugins/use-metrics.ts, src/cache/graphql.ts). */
  plugins?: Plugin[];
  /** Persisted operations (manifest, APQ): src/graphql/plugins/use-persisted-operations.ts; default: APQ only, with its default bounds. */
  persisted?: PersistedOptions;
  /** Cache-Control of successful GET query answers (GRAPHQL_CACHE_CONTROL): src/graphql/plugins/use-http-caching.ts. */
  cacheControl?: string;
  /** Where yoga logs (masked unexpected errors with their stack); default: its console logger. */
  logging?: YogaServerOptions<object, object>['logging'];
  /** Live events for subscriptions (src/live/hub.ts) and their limits (src/graphql/plugins/use-subscription-limits.ts). */
  live?: LiveHub;
  /** Subscriptions' limits and event streams (src/graphql/plugins/use-subscription-limits.ts, src/graphql/plugins/use-streams.ts). */
  subscriptionPlugins?: Plugin[];
}

export function createGraphqlServer(options: YogaOptions) {
  return createYoga({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    graphiql: options.introspection ? { title: 'Inscription gateway', defaultQuery } : false,
    // GraphiQL's assets served by the gateway itself, not fetched from a CDN (works offline and behind a CSP),
    // rendered in a worker thread so that the 9 MB bundle never stays in this heap
    renderGraphiQL: renderGraphiQLApart,
    cors: false, // set by src/server/http.ts from the policy both surfaces share (corsPolicy, src/server/http.ts)
    maskedErrors: { maskError },
    logging: options.logging ?? true,
    maxRequestBodySize: false, // enforced by bodyLimitPlugin (same errors, no stream pipeline per request)
    multipart: false, // no uploads: one parser less facing the internet
    // parsed documents kept by yoga; their validation by validationCachePlugin (keyed by the document alone)
    parserAndValidationCache: { validationCache: false },
    // compiled execution (graphql-jit) last: the response cache short-circuits before it; src/graphql/plugins/use-jit.ts
    // persisted operations resolve a hash to its document before anything reads the document (the
    // response cache's key, the operation name in the logs)
    plugins: [...guardPlugins({ ...options.limits, introspection: options.introspection }),
      ...(options.inputLimits ? [inputLimitsPlugin(options.inputLimits)] : []),
      ...persistedOperationsPlugins({ ...(options.persisted ?? persistedDefaults), maxTokens: options.limits.maxTokens }),
      httpCachingPlugin(options.cacheControl ?? defaultCacheControl),
      ...(options.plugins ?? []), jitPlugin(), bodyLimitPlugin(options.maxBodyBytes),
      ...(options.subscriptionPlugins ?? []), validationCachePlugin()],
    context: () => ({ ...createContext(options.store, options.paging, options.resultLimits), live: options.live }),
  });
}

export type GraphqlServer = ReturnType<typeof createGraphqlServer>;
