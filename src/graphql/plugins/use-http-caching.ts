import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';

// Cache-Control for /graphql, so that a CDN or a browser may keep a GET query's error-free answer
// (GRAPHQL_CACHE_CONTROL) and never replays a POST's or an error's (`no-store`).

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
