import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';

// Cache-Control for /graphql, so that a CDN or a browser may keep answers:
// - a GET query answered without errors (and its 304): GRAPHQL_CACHE_CONTROL, by default
//   `public, max-age=5, stale-while-revalidate=30` (the answer is public: no session, no user data);
//   revalidation is cheap (ETag → 304, src/cache/graphql.ts);
// - POST answers, errors and anything else: `no-store` (a POST is not cacheable by shared caches anyway,
//   and an error such as "server busy" must not be replayed);
// - the GraphiQL page, should yoga serve it: `public, max-age=600` (the listener serves it itself, split into
//   a page revalidated on each load and immutable assets: src/server/graphiql.ts).
// `Vary: Accept` (GET /graphql answers GraphiQL's HTML or JSON) is set by src/server/http.ts beside CORS'
// `Vary: Origin`, and Accept-Encoding by the compression layer (src/server/http.ts).

export function httpCachingPlugin(cacheControl: string): Plugin {
  const failed = new WeakSet<Request>();
  return {
    onResultProcess({ request, result }) {
      const results = Array.isArray(result) ? result : [result];
      // (a response-cache hit carries its data as text: no `data` member, never errors)
      if (results.some((r) => !isExecutionResult(r) || (r.errors?.length ?? 0) > 0)) failed.add(request);
    },
    onResponse({ request, response }) {
      const headers = response.headers;
      const html = headers.get('content-type')?.startsWith('text/html') ?? false;
      const cacheable = (request.method === 'GET' || request.method === 'HEAD') && !failed.has(request) &&
        (response.status === 200 || response.status === 304);
      headers.set('cache-control', html && response.status === 200 ? 'public, max-age=600' : cacheable ? cacheControl : 'no-store');
    },
  };
}

function isExecutionResult(value: unknown): value is ExecutionResult {
  return typeof value === 'object' && value !== null && !(Symbol.asyncIterator in value);
}
