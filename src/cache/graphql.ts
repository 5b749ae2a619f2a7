import { useResponseCache } from '@graphql-yoga/plugin-response-cache';
import type { Plugin } from 'graphql-yoga';
import type { DataSnapshot } from '../db/version.js';
import { graphqlKey, keyVersion } from './keys.js';
import type { CacheStore } from './store.js';

/**
 * The data snapshot (version and indexed heights) each GraphQL request is answered from, taken once when
 * the request arrives: the cache key and the freshness extension of the response use the same one.
 */
export function createRequestSnapshots(current: () => DataSnapshot | null) {
  const byRequest = new WeakMap<Request, DataSnapshot | null>();
  return {
    capture(request: Request): DataSnapshot | null {
      if (!byRequest.has(request)) byRequest.set(request, current());
      return byRequest.get(request) ?? null;
    },
    get(request: Request): DataSnapshot | null {
      return byRequest.get(request) ?? null;
    },
  };
}

export type RequestSnapshots = ReturnType<typeof createRequestSnapshots>;

/**
 * yoga's response-cache plugin, keyed on document + operation name + variables + data version. The API
 * is public and user-agnostic (no session). Requests that arrive before the data version is known are
 * answered without the cache.
 */
export function graphqlResponseCache(store: CacheStore, snapshots: RequestSnapshots): Plugin {
  return useResponseCache({
    session: () => null,
    cache: store.responses,
    ttl: store.ttlMs,
    enabled: (request) => snapshots.capture(request) !== null,
    invalidateViaMutation: false,
    includeExtensionMetadata: false,
    // a data version that never matches: such a key is refused by the store
    buildResponseCacheKey: ({ documentString, operationName, variableValues, request }) => {
      const snapshot = snapshots.capture(request);
      return graphqlKey(store.namespace, snapshot ? keyVersion(snapshot) : 'none', { documentString, operationName, variableValues });
    },
  });
}

/** Set on results the response-cache plugin served from the store. */
export const servedFromCache = Symbol.for('servedFromResponseCache');
