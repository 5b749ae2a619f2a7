import { jsonText, type JsonText } from '../domain/json-text.js';
import type { Metrics } from '../observability/metrics.js';
import { rpcKey } from './keys.js';
import { bypassed, type CacheStore } from './store.js';

// JSON-RPC results in the same store as GraphQL responses. Only successful results are stored (errors
// are thrown past this layer), as the JSON text of the `result` member. A hit is that text, handed to the
// envelope writer (src/rpc/handler.ts) as it is: nothing is parsed or serialised again, and a cached reply
// is byte-identical to a computed one since a computed one is written from the very same text.

export interface RpcRequestCache {
  /**
   * Looks a call up; `key` is what `set` takes afterwards on a miss. Null when the store cannot be used
   * now (Redis failing, its breaker open): the call is answered without the cache (a bypass).
   */
  get(method: string, params: unknown): Promise<{ key: string; hit: true; value: JsonText } | { key: string; hit: false } | null>;
  /**
   * Serialises a computed result once, stores the text (unless it is over the entry limit) and returns it
   * for the reply; a result that cannot be serialised is returned as it is (and not stored).
   */
  set(key: string, value: unknown): JsonText | unknown;
}

export interface RpcCache {
  /**
   * The cache for one HTTP request: the interface version and the data version (read once, so every call
   * of a batch is keyed on the same one). Null when the data version is not known yet.
   */
  forRequest(iface: 'v1' | 'v2'): RpcRequestCache | null;
}

export function createRpcCache(store: CacheStore, currentVersion: () => string | null, metrics: Metrics): RpcCache {
  return {
    forRequest(iface) {
      const version = currentVersion();
      if (version === null) return null;
      return {
        async get(method, params) {
          if (!store.available()) {
            metrics.cacheLookups.inc({ surface: 'rpc', result: 'bypass' });
            return null;
          }
          const key = rpcKey(store.namespace, version, iface, method, params);
          const text = await store.get(key);
          if (text === bypassed) {
            metrics.cacheLookups.inc({ surface: 'rpc', result: 'bypass' });
            return null;
          }
          if (text !== undefined) {
            metrics.cacheLookups.inc({ surface: 'rpc', result: 'hit' });
            return { key, hit: true, value: jsonText(text) };
          }
          metrics.cacheLookups.inc({ surface: 'rpc', result: 'miss' });
          return { key, hit: false };
        },
        set(key, value) {
          let text: string | undefined;
          try {
            text = JSON.stringify(value ?? null);
          } catch {
            return value; // not serialisable: the reply fails the same way it would without the cache
          }
          if (text === undefined) return value;
          store.set(key, text);
          return jsonText(text);
        },
      };
    },
  };
}
