import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { DataSnapshot } from '../db/version.js';
import { etagsOf, matchIfNoneMatch } from './etag.js';
import { graphqlKey, keyVersion } from './keys.js';
import { bypassed, type CacheStore } from './store.js';

/**
 * The data snapshot (version and indexed heights) each GraphQL request is answered from, taken once when
 * the request arrives: the cache key and the freshness extension of the response use the same one.
 */
export function createRequestSnapshots(current: () => DataSnapshot | null) {
  const byRequest = new WeakMap<Request, DataSnapshot | null>();
  // requests answered without the cache because the store could not be used (x-cache: bypass)
  const bypassing = new WeakSet<Request>();
  return {
    bypass(request: Request): void {
      bypassing.add(request);
    },
    bypassed(request: Request): boolean {
      return bypassing.has(request);
    },
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

/** Set on results served from the store. */
const servedFromCache = Symbol.for('servedFromResponseCache');

/** Whether a result was served from the store (for the cache-outcome metrics, src/graphql/plugins/use-metrics.ts). */
export const isServedFromCache = (result: object): boolean => Boolean((result as Record<symbol, unknown>)[servedFromCache]);

/**
 * A result whose body is (mostly) text already: yoga serialises a result with its `stringify` member
 * when it has one (graphql-yoga's result processor), and that member gets the result as it is at the
 * end, extensions added by later plugins (freshness) included.
 */
type TextResult = ExecutionResult & { stringify: (result: ExecutionResult) => string; [servedFromCache]?: true };

/** `{"data":…}` (as stored) with the response's extensions, other than yoga's internal `http`, appended. */
function withExtensions(dataText: string, result: ExecutionResult): string {
  const extensions = result.extensions ? Object.entries(result.extensions).filter(([name]) => name !== 'http') : [];
  if (extensions.length === 0) return dataText;
  return `${dataText.slice(0, -1)},"extensions":${JSON.stringify(Object.fromEntries(extensions))}}`;
}

const etag = (key: string) => ({ http: { headers: { ETag: `"${key}"` } } });

/**
 * The GraphQL response cache: the key is document + operation name + variables + data version (public
 * and user-agnostic: no session); the value is the `{"data":…}` text of an answer without errors.
 *
 * - Lookup in onParams, before parsing: a hit skips parse, validation and execution, and its text goes
 *   to the wire as it is (plus the freshness extension, serialised on its own).
 * - A miss is serialised once, by this plugin, when its result is processed: the same text is stored
 *   (unless it is over the store's entry limit) and becomes the response body.
 * - `ETag` is the key, quoted (strong; a compressed answer's tag gets the coding as a suffix:
 *   src/cache/etag.ts). `If-None-Match` (RFC 9110: weak comparison, lists, `*` on a hit only) holding a tag of
 *   this very GET request's current answer gets 304, on a hit at once and on a miss once the answer is
 *   computed; a POST never does. Keys
 *   hold the data version, so an old ETag never matches: it gets fresh data.
 *
 * Execution itself is not wrapped (graphql-jit replaces the execute function; src/graphql/plugins/use-jit.ts), so
 * no other plugin's execute function is overridden or overrides this one.
 * Requests that arrive before the data version is known are answered without the cache.
 */
export function graphqlResponseCache(store: CacheStore, snapshots: RequestSnapshots): Plugin {
  const byRequest = new WeakMap<Request, { key: string; hit: boolean }>();
  return {
    onParams({ params, request, setResult }) {
      const snapshot = snapshots.capture(request);
      // a request marked to bypass before it got here (an API key's raised page size: src/graphql/plugins/use-key-overrides.ts)
      if (!snapshot || typeof params.query !== 'string' || snapshots.bypassed(request)) return;
      if (!store.available()) return snapshots.bypass(request); // Redis breaker open: not even a key
      let key: string;
      try {
        key = graphqlKey(store.namespace, keyVersion(snapshot), {
          documentString: params.query, operationName: params.operationName, variableValues: params.variables,
        });
      } catch {
        return; // variables that cannot be keyed (absurdly deep): answered without the cache
      }
      const state = { key, hit: false };
      byRequest.set(request, state);
      return store.get(key).then((text) => {
        if (text === bypassed) {
          // the store failed: answer without it, and do not try to store the answer either
          byRequest.delete(request);
          snapshots.bypass(request);
          return;
        }
        if (text === undefined) return;
        state.hit = true;
        const hit: TextResult = { extensions: etag(key), stringify: (result) => withExtensions(text, result), [servedFromCache]: true };
        setResult(hit);
      });
    },
    onResultProcess({ request, result, setResult, resultProcessor, setResultProcessor }) {
      const state = byRequest.get(request);
      if (!state || Array.isArray(result) || !isExecutionResult(result)) return;
      if (!state.hit && (result.errors?.length || result.data == null)) return;
      const matched = notModified(request, state.key, state.hit);
      if (resultProcessor && matched !== null) {
        // the tag of the representation the client holds (304 carries no body, so no coding of its own)
        setResultProcessor((_result, fetchAPI) => new fetchAPI.Response(null, { status: 304, headers: { ETag: matched } }), '*/*');
      }
      if (state.hit) return;
      const text = JSON.stringify({ data: result.data });
      store.set(state.key, text);
      const processed: TextResult = {
        ...result,
        extensions: { ...result.extensions, ...etag(state.key) },
        stringify: (final) => withExtensions(text, final),
      };
      setResult(processed);
    },
  };
}

/**
 * The tag a 304 names, or null to answer in full. Only GET and HEAD are revalidated (a POST is not a
 * cacheable read: If-None-Match on it is ignored). `*` ("any current representation") matches only an
 * answer that was already there, a cache hit: on a miss there was nothing the client could hold, so it gets
 * the answer (a failing query never gets this far: errors are never keyed or stored).
 */
function notModified(request: Request, key: string, hit: boolean): string | null {
  if (request.method !== 'GET' && request.method !== 'HEAD') return null;
  const header = request.headers.get('if-none-match');
  if (header === null || (header.trim() === '*' && !hit)) return null;
  return matchIfNoneMatch(header, etagsOf(key));
}

function isExecutionResult(value: unknown): value is ExecutionResult {
  return typeof value === 'object' && value !== null && !(Symbol.asyncIterator in value);
}
