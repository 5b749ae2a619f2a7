import type { ExecutionResult } from 'graphql';
import type { Metrics } from '../observability/metrics.js';
import { rpcKey } from './keys.js';
import type { CacheStore } from './store.js';

// JSON-RPC results in the same store as GraphQL responses. Only successful results are stored (errors
// are thrown past this layer), as the JSON text of the `result` member: parsing it back and serialising
// it again yields the very same bytes, so a cached reply is byte-identical to a computed one.

export interface RpcRequestCache {
  /** Looks a call up; `key` is what `set` takes afterwards on a miss. */
  get(method: string, params: unknown): Promise<{ key: string; hit: true; value: unknown } | { key: string; hit: false }>;
  set(key: string, value: unknown): void;
}

export interface RpcCache {
  /**
   * The cache for one HTTP request: the interface version and the data version (read once, so every call
   * of a batch is keyed on the same one). Null when the data version is not known yet.
   */
  forRequest(iface: 'v1' | 'v2'): RpcRequestCache | null;
}

/** What is stored: the plugin's stores hold execution results, so the text rides in `data`. */
interface Entry extends ExecutionResult {
  data: { rpcResult: string };
}

export function createRpcCache(store: CacheStore, currentVersion: () => string | null, metrics: Metrics): RpcCache {
  return {
    forRequest(iface) {
      const version = currentVersion();
      if (version === null) return null;
      return {
        async get(method, params) {
          const key = rpcKey(store.namespace, version, iface, method, params);
          const entry = (await store.responses.get(key)) as Entry | undefined;
          const text = entry?.data?.rpcResult;
          if (typeof text === 'string') {
            let value: unknown;
            try {
              value = JSON.parse(text);
            } catch {
              value = undefined; // a damaged entry is a miss, and is overwritten
            }
            if (value !== undefined) {
              metrics.cacheLookups.inc({ surface: 'rpc', result: 'hit' });
              return { key, hit: true, value };
            }
          }
          metrics.cacheLookups.inc({ surface: 'rpc', result: 'miss' });
          return { key, hit: false };
        },
        set(key, value) {
          let text: string | undefined;
          try {
            text = JSON.stringify(value);
          } catch {
            return; // not serialisable (the reply would fail the same way): nothing to keep
          }
          if (text === undefined) return;
          const entry: Entry = { data: { rpcResult: text } };
          void store.responses.set(key, entry, [], store.ttlMs);
        },
      };
    },
  };
}
