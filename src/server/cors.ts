import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';

// One CORS policy for both surfaces (CORS_ORIGIN, CORS_CREDENTIALS). `*` answers a plain `*` and never
// allows credentials (a browser would refuse the pair anyway; echoing the origin with credentials would
// let any site read answers with the user's cookies). A list answers only a listed origin, echoed, with
// `Vary: Origin`, and allows credentials only when CORS_CREDENTIALS says so. An origin not listed gets
// no Access-Control-Allow-Origin at all (not `null`, which sandboxed documents send as their origin).

export interface CorsPolicy {
  /**
   * The CORS response headers for a request with these headers. `methods` and `allowHeaders` are the
   * surface's own; `allowHeaders: 'reflect'` allows the headers a preflight asks for.
   */
  headers(request: IncomingHttpHeaders, surface: CorsSurface): Record<string, string>;
  /**
   * The same for one surface, as a function of the request; computed once when no request can change it
   * (`*` without reflected headers). The object returned is shared: copy it to change it.
   */
  forSurface(surface: CorsSurface): (req: IncomingMessage) => Readonly<Record<string, string>>;
}

export interface CorsSurface { methods: string; allowHeaders: string | 'reflect' }

export function corsPolicy(origins: string, credentials: boolean): CorsPolicy {
  const any = origins.trim() === '*';
  const listed = new Set(any ? [] : origins.split(',').map((o) => o.trim().toLowerCase()).filter(Boolean));
  if (any && credentials) throw new Error('CORS: credentials cannot be allowed with CORS_ORIGIN=*');
  const policy: CorsPolicy = {
    forSurface(surface) {
      if (any && surface.allowHeaders !== 'reflect') {
        const fixed = policy.headers({}, surface);
        return () => fixed;
      }
      return (req) => policy.headers(req.headers, surface);
    },
    headers(request, surface) {
      const out: Record<string, string> = {};
      if (any) {
        out['access-control-allow-origin'] = '*';
      } else {
        out.vary = 'Origin';
        const origin = request.origin;
        if (!origin || !listed.has(origin.toLowerCase())) return out;
        out['access-control-allow-origin'] = origin;
        if (credentials) out['access-control-allow-credentials'] = 'true';
      }
      out['access-control-allow-methods'] = surface.methods;
      if (surface.allowHeaders !== 'reflect') {
        out['access-control-allow-headers'] = surface.allowHeaders;
      } else {
        const asked = request['access-control-request-headers'];
        // only a plain header list is reflected (no CR/LF or other bytes a header value cannot hold)
        if (asked && /^[\w-]+(\s*,\s*[\w-]+)*$/.test(asked)) {
          out['access-control-allow-headers'] = asked;
          out.vary = out.vary ? `${out.vary}, Access-Control-Request-Headers` : 'Access-Control-Request-Headers';
        }
      }
      out['access-control-max-age'] = '86400';
      return out;
    },
  };
  return policy;
}
