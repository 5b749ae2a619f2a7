import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import Negotiator from 'negotiator';

// GraphiQL's page rendered once and split into a small page and immutable, content-hashed assets, each
// compressed once, since yoga's rendering inlines megabytes that every load would otherwise pull again.

export const assetPrefix = '/graphql/assets/';

interface Rendered {
  body: Buffer;
  headers: Record<string, string>;
}

interface Representation {
  body: Buffer;
  /** Strong ETag of this representation (the content hash, with the coding as a suffix). */
  etag: string;
}

interface Served {
  type: string;
  cacheControl: string;
  identity: Representation;
  br?: Representation;
  gzip?: Representation;
}

interface Bundle {
  page: Served;
  assets: Map<string, Served>;
}

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);
const hashOf = (body: Buffer | string) => createHash('sha256').update(body).digest('base64url').slice(0, 16);

const immutable = 'public, max-age=31536000, immutable';

export type GraphiqlHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface Graphiql {
  /** GraphiQL's page (GET /graphql accepting text/html). */
  page: GraphiqlHandler;
  /** One of its assets (GET /graphql/assets/…); an unknown name: 404. */
  asset: GraphiqlHandler;
  /** Renders, splits and compresses everything now (at start), so that no request waits for it. */
  warm(): Promise<void>;
}

/** Whether yoga would answer this request with GraphiQL's page (its own test: GET accepting text/html). */
export const wantsGraphiql = (req: IncomingMessage) => req.method === 'GET' && (req.headers.accept ?? '').includes('text/html');

interface Extracted { name: string; ext: string; type: string; body: Buffer }

/** The page with its inline stylesheet, scripts and data-URI icon moved out to assets. */
export function splitPage(html: string): { html: string; assets: Extracted[] } {
  const assets: Extracted[] = [];
  const add = (name: string, ext: string, type: string, body: Buffer) => {
    const file = `${name}-${hashOf(body)}.${ext}`;
    assets.push({ name: file, ext, type, body });
    return `${assetPrefix}${file}`;
  };
  const out = html
    .replace(/<link rel="icon" href="data:image\/x-icon;base64,([A-Za-z0-9+/=]+)"\s*\/?>/g, (_m, data: string) =>
      `<link rel="icon" href="${add('favicon', 'ico', 'image/x-icon', Buffer.from(data, 'base64'))}" />`)
    .replace(/<style>([\s\S]*?)<\/style>/g, (_m, css: string) =>
      `<link rel="stylesheet" href="${add('graphiql', 'css', 'text/css; charset=utf-8', Buffer.from(css))}" />`)
    // classic scripts run in document order whether inline or external, so the page behaves the same
    .replace(/<script>([\s\S]*?)<\/script>/g, (_m, js: string) =>
      `<script src="${add('graphiql', 'js', 'text/javascript; charset=utf-8', Buffer.from(js))}"></script>`);
  return { html: out, assets };
}

async function represent(body: Buffer, type: string, cacheControl: string, compress: boolean): Promise<Served> {
  const tag = hashOf(body);
  const served: Served = { type, cacheControl, identity: { body, etag: `"${tag}"` } };
  if (!compress || body.length < 1_024) return served;
  const [br, gz] = await Promise.all([
    brotli(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
    gzipAsync(body, { level: 6 }),
  ]);
  served.br = { body: br, etag: `"${tag}-br"` };
  served.gzip = { body: gz, etag: `"${tag}-gzip"` };
  return served;
}

// one bundle per rendered page and per process: every gateway of a process (tests start many) shares it
const bundles = new Map<string, Promise<Bundle>>();

async function bundleOf(rendered: Rendered, compress: boolean): Promise<Bundle> {
  const html = rendered.body.toString('utf8');
  const key = `${compress}:${hashOf(html)}`;
  let bundle = bundles.get(key);
  if (!bundle) {
    bundle = (async () => {
      const split = splitPage(html);
      const assets = new Map<string, Served>();
      for (const a of split.assets) assets.set(a.name, await represent(a.body, a.type, immutable, compress));
      const type = rendered.headers['content-type'] ?? 'text/html; charset=utf-8';
      return { page: await represent(Buffer.from(split.html), type, 'no-cache', compress), assets };
    })();
    bundles.set(key, bundle);
    bundle.catch(() => bundles.delete(key));
  }
  return bundle;
}

/** Whether If-None-Match holds one of this resource's tags (any representation's: weak comparison). */
function revalidated(req: IncomingMessage, served: Served): boolean {
  const header = req.headers['if-none-match'];
  if (header === undefined) return false;
  const tags = [served.identity, served.br, served.gzip].filter((r) => r !== undefined).map((r) => r.etag);
  const sent = header.split(',').map((t) => t.trim().replace(/^W\//, ''));
  return sent.includes('*') || tags.some((t) => sent.includes(t));
}

function send(req: IncomingMessage, res: ServerResponse, served: Served, vary: string) {
  // (negotiator takes the server's preference for ties; its typings lack that parameter)
  const negotiator = new Negotiator(req) as unknown as { encoding(available: string[], preferred: string[]): string | undefined };
  const available = served.br ? ['br', 'gzip', 'identity'] : ['identity'];
  const coding = negotiator.encoding(available, ['br', 'gzip']);
  const chosen = coding === 'br' ? served.br! : coding === 'gzip' ? served.gzip! : served.identity;
  const previous = res.getHeader('vary');
  const varies = [previous ? String(previous) : '', vary, served.br ? 'Accept-Encoding' : ''].filter(Boolean);
  if (varies.length) res.setHeader('vary', varies.join(', '));
  res.setHeader('cache-control', served.cacheControl);
  res.setHeader('etag', chosen.etag);
  if (revalidated(req, served)) {
    res.writeHead(304);
    return res.end();
  }
  res.setHeader('content-type', served.type);
  if (chosen !== served.identity) res.setHeader('content-encoding', coding!);
  res.setHeader('content-length', chosen.body.length);
  res.writeHead(200);
  res.end(req.method === 'HEAD' ? undefined : chosen.body);
}

function unavailable(res: ServerResponse) {
  if (res.headersSent) return void res.destroy();
  res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify({ errors: [{ message: 'GraphiQL is unavailable', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] }));
}

function notFound(res: ServerResponse) {
  res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify({ errors: [{ message: 'Not found: no such GraphiQL asset', extensions: { code: 'NOT_FOUND' } }] }));
}

export function graphiqlPage(render: () => Promise<Rendered>, options: { compress: boolean; retryAfterMs?: number }): Graphiql {
  let bundle: Promise<Bundle> | undefined;
  const ready = () => {
    bundle ??= render().then((rendered) => bundleOf(rendered, options.compress)).catch((error: unknown) => {
      // tried again a while later, not by every request: a render is a worker thread (src/graphql/graphiql-render.ts),
      // and a client must not be able to start one per load while rendering fails
      setTimeout(() => { bundle = undefined; }, options.retryAfterMs ?? 30_000).unref();
      throw error;
    });
    return bundle;
  };
  return {
    page(req, res) {
      req.resume();
      ready().then((b) => send(req, res, b.page, 'Accept'), () => unavailable(res));
    },
    asset(req, res) {
      req.resume();
      const name = (req.url ?? '').split('?')[0]!.slice(assetPrefix.length);
      ready().then((b) => {
        const served = b.assets.get(name);
        if (!served || (req.method !== 'GET' && req.method !== 'HEAD')) return notFound(res);
        send(req, res, served, '');
      }, () => unavailable(res));
    },
    warm: () => ready().then(() => undefined),
  };
}
